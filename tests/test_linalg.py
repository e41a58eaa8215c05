"""engine.linalg.single_thread_blas: one BLAS thread inside, the previous limits restored after."""

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from knnweights.engine import linalg
from knnweights.engine.linalg import single_thread_blas


def _blas_threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_one_thread_inside_and_restored_after():
    before = _blas_threads()
    if not before:
        pytest.skip("no BLAS library visible to threadpoolctl")
    with single_thread_blas():
        assert all(t == 1 for t in _blas_threads())
        with single_thread_blas():  # nested: still one thread, and leaving it keeps the outer limit
            x = np.linalg.lstsq(np.eye(3), np.arange(3.0), rcond=None)[0]
        assert all(t == 1 for t in _blas_threads())
    assert _blas_threads() == before
    np.testing.assert_array_equal(x, np.arange(3.0))


def test_controller_reused_until_modules_change(monkeypatch):
    with single_thread_blas():
        pass
    first = linalg._controller["ctl"]
    with single_thread_blas():
        pass
    assert linalg._controller["ctl"] is first  # no rescan of the loaded libraries per entry
    monkeypatch.setitem(linalg.__dict__, "_controller", {"n_modules": -1, "ctl": first})
    with single_thread_blas():  # sys.modules "changed": the libraries are scanned again
        pass
    assert linalg._controller["ctl"] is not first


def test_limit_released_on_exception():
    before = _blas_threads()
    with pytest.raises(RuntimeError):
        with single_thread_blas():
            raise RuntimeError("boom")
    assert _blas_threads() == before
    with single_thread_blas():  # usable again (the nesting depth was reset)
        assert all(t == 1 for t in _blas_threads())


def test_blas_threads_for_work_picks_one_thread_for_small_work():
    from knnweights.engine import blas_thread_count, blas_threads_for_work
    from knnweights.engine.linalg import threadpool_controller

    with threadpool_controller().limit(limits=2, user_api="blas"):  # two threads in force, even on one core
        before = blas_thread_count()
        assert before == 2
        with blas_threads_for_work(10, 1000):
            assert blas_thread_count() == 1
        with blas_threads_for_work(10_000, 1000):
            assert blas_thread_count() == 2  # large work keeps the threads in force
        with blas_threads_for_work(10_000, 1000, threads=1):
            assert blas_thread_count() == 1
        assert blas_thread_count() == before
