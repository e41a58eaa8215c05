"""The serial / threaded choice of the compiled kernels (knnweights.engine.jit)."""

import importlib
import json
import os
import pkgutil
import subprocess
import sys
import warnings

import numba
import numpy as np
import pytest

import knnweights
from knnweights import IM4E, SQPFW, GFlip, IRelief, LHRelief, MultiSURF, NCADiagonal, ReliefF
from knnweights.engine import jit

two_threads = pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="numba runs one thread here")


def _toy(combine=None):
    @jit.njit(nogil=True)
    def row_sums(A, out, part, parts):
        for i in jit.task_range(A.shape[0], part, parts):
            s = 0.0
            for k in range(A.shape[1]):
                s += A[i, k]
            out[i] = s
        return out

    @jit.njit(nogil=True)
    def count_positive(a, part, parts):
        m = 0
        for i in jit.task_range(a.shape[0], part, parts):
            m += a[i] > 0
        return m

    if combine is None:
        return jit.size_dispatch(row_sums, lambda A, out: A.size)
    return jit.size_dispatch(count_positive, lambda a: a.size, combine=combine)


class _SpyPool:
    """Counts the parts a call hands to the pool (and runs them there)."""

    def __init__(self, monkeypatch):
        self.parts = 0
        pool = jit._pool

        def spy(threads):
            real = pool(threads)
            spy_self = self

            class Wrapped:
                def map(self, fn, parts):
                    parts = list(parts)
                    spy_self.parts += len(parts)
                    return real.map(fn, parts)

            return Wrapped()

        monkeypatch.setattr(jit, "_pool", spy)


@pytest.mark.parametrize("n, parts", [(0, 3), (1, 4), (7, 3), (12, 12), (13, 5), (100, 8)])
def test_the_parts_cover_every_task_once_in_order(n, parts):
    @jit.njit
    def tasks(n, part, parts):
        out = []
        for i in jit.task_range(n, part, parts):
            out.append(i)
        return out

    seen = [i for part in range(parts) for i in tasks(n, part, parts)]
    assert seen == list(range(n))


def test_a_small_call_runs_on_the_calling_thread(monkeypatch):
    spy = _SpyPool(monkeypatch)
    k = _toy()
    A = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(k(A, np.empty(3)), A.sum(axis=1))
    assert spy.parts == 0
    assert k.__name__ == "row_sums" and "row_sums" in repr(k)


@two_threads
def test_a_large_call_runs_its_parts_on_the_pool_with_the_same_bits(monkeypatch):
    spy = _SpyPool(monkeypatch)
    k = _toy()
    A = np.random.default_rng(0).normal(size=(50, 7))
    small = k(A, np.empty(50))
    monkeypatch.setattr(jit, "SERIAL_WORK", A.size)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        large = k(A, np.full(50, np.nan))
        assert spy.parts == 2 * jit.PARTS_PER_THREAD
        numba.set_num_threads(1)  # one thread: the calling thread, whatever the size
        k(A, np.empty(50))
        assert spy.parts == 2 * jit.PARTS_PER_THREAD
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(small, large)


def test_combine_joins_the_parts_returns():
    k = _toy(combine=sum)
    a = np.random.default_rng(1).normal(size=101)
    assert k.threaded(a, threads=3) == k.serial(a) == int((a > 0).sum())


def _library_modules():
    for info in pkgutil.walk_packages(knnweights.__path__, "knnweights."):
        if info.name.split(".")[1] in ("engine", "_solvers", "weighters"):
            yield importlib.import_module(info.name)


def test_every_threaded_kernel_of_the_library_is_size_dispatched():
    """No kernel compiles for numba's threads (a ``parallel=True`` twin costs its compilation again
    on a first fit), and every kernel written in parts is called through a :class:`SizedKernel`."""
    dispatchers = [(f"{m.__name__}.{name}", obj) for m in _library_modules() for name, obj in vars(m).items()
                   if isinstance(obj, numba.core.registry.CPUDispatcher)]
    assert not [name for name, obj in dispatchers if obj.targetoptions.get("parallel") not in (None, jit.TASK_PIPELINE)]
    in_parts = [obj for m in _library_modules() for obj in vars(m).values() if isinstance(obj, jit.SizedKernel)]
    assert all(k.kernel.targetoptions.get("parallel") in (None, jit.TASK_PIPELINE) for k in in_parts)
    bare = [name for name, obj in dispatchers if obj is not jit.task_range
            and obj.py_func.__code__.co_varnames[:obj.py_func.__code__.co_argcount][-2:] == ("part", "parts")]
    assert not bare, bare
    sized = [obj for m in _library_modules() for obj in vars(m).values() if isinstance(obj, jit.SizedKernel)]
    assert len(sized) >= 40


def _fits():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 9)
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.randn(60) > 0).astype(int)
    G = rng.randint(0, 3, size=(60, 40)).astype(np.int8)
    G[rng.rand(60, 40) < 0.05] = -127
    yg = (G[:, 0] + G[:, 1] + rng.randint(0, 2, 60) > 2).astype(int)
    out = {}
    for est in (ReliefF(n_neighbors=5), MultiSURF(), IRelief(max_iter=20), IM4E(max_iter=10, random_state=0),
                NCADiagonal(max_iter=10), SQPFW(theta=1.0), GFlip(max_iter=3, random_state=0),
                LHRelief(max_iter=5)):
        out[type(est).__name__] = est.fit(X, y).feature_importances_
    out["ReliefF bytes"] = ReliefF(n_neighbors=3, missing="diff").fit(G, yg).feature_importances_
    Xm = X.copy()
    Xm[rng.rand(*X.shape) < 0.05] = np.nan
    out["ReliefF missing"] = ReliefF(n_neighbors=3, missing="diff").fit(Xm, y).feature_importances_
    out["p-values"] = ReliefF(n_neighbors=5, pvalues="mantel").fit(X, y).pvalues_
    return out


@two_threads
def test_serial_and_threaded_kernels_give_the_same_weights(monkeypatch):
    serial = _fits()
    monkeypatch.setattr(jit, "SERIAL_WORK", 0)
    before = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        threaded = _fits()
    finally:
        numba.set_num_threads(before)
    for name in serial:
        np.testing.assert_array_equal(serial[name], threaded[name], err_msg=name)


@pytest.mark.slow
def test_the_library_runs_uncompiled_under_numba_disable_jit():
    """``NUMBA_DISABLE_JIT=1`` (numba's switch for debugging kernels in Python) gives the compiled weights."""
    script = ("import json, numpy as np; from knnweights import ReliefF; rng = np.random.RandomState(0); "
              "X = rng.randn(30, 4); y = (X[:, 0] > 0).astype(int); "
              "print(json.dumps(ReliefF(n_neighbors=3).fit(X, y).feature_importances_.tolist()))")
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    res = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    rng = np.random.RandomState(0)
    X = rng.randn(30, 4)
    y = (X[:, 0] > 0).astype(int)
    expected = knnweights.ReliefF(n_neighbors=3).fit(X, y).feature_importances_
    np.testing.assert_allclose(json.loads(res.stdout), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("dtype, value", [(np.float64, -np.inf), (np.float64, 0.0), (np.int64, -1), (np.bool_, True)])
def test_full_helpers_equal_numpy_full(dtype, value):
    """The allocation helpers of compiled code return NumPy's ``full`` (shape, dtype and values)."""

    @jit.njit
    def both(n, r, c, value, dtype):
        return jit.full_1d(n, value, dtype), jit.full_2d(r, c, value, dtype)

    a, b = both(5, 3, 4, value, dtype)
    for got, want in ((a, np.full(5, value, dtype)), (b, np.full((3, 4), value, dtype))):
        assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want)
    assert both(0, 0, 3, value, dtype)[0].shape == (0,)


@two_threads
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_runs_large_calls_on_pools_of_its_own(monkeypatch):
    """The parent's pool threads do not exist in a forked child: a large call there must not wait on them."""
    import multiprocessing

    k = _toy()
    A = np.random.default_rng(2).normal(size=(40, 5))
    monkeypatch.setattr(jit, "SERIAL_WORK", 1)
    expected = k.threaded(A, np.empty(40), threads=2)  # the parent's pool exists now
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_threaded_row_sums, (A,)).get(timeout=120)
    np.testing.assert_array_equal(got, expected)


def _threaded_row_sums(A):
    return _toy().threaded(A, np.empty(A.shape[0]), threads=2)


def test_no_kernel_in_parts_is_made_a_parfor():
    """The task pipeline leaves a kernel's arithmetic as written: numba made no parfor (a threaded
    reduction, whose order would change the bits) of any kernel these fits compiled."""
    _fits()
    checked = 0
    for m in _library_modules():
        for name, obj in vars(m).items():
            if not isinstance(obj, jit.SizedKernel) or obj.kernel.targetoptions.get("parallel") is None:
                continue  # the plain pipeline makes no parfor
            for cres in obj.kernel.overloads.values():
                diagnostics = cres.metadata.get("parfor_diagnostics") if cres.metadata else None
                if diagnostics is None:  # loaded from numba's cache: nothing recorded
                    continue
                checked += 1
                assert not diagnostics.initial_parfors, f"{m.__name__}.{name} holds a parfor"
    if not checked:
        pytest.skip("every kernel came from numba's cache")


def test_compiling_a_kernel_in_parts_warns_nothing():
    """numba warns that ``parallel=True`` made no parfor; for a task kernel that is the intent, and a
    caller recording warnings (the command line's reports) must not see it on a cold cache."""
    @jit.njit(task_pipeline=True, nogil=True)
    def scaled(a, out, part, parts):
        for i in jit.task_range(a.shape[0], part, parts):
            out[i] = 2.0 * a[i]
        return out

    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = scaled(np.arange(5.0), np.empty(5), 0, 1)
    np.testing.assert_array_equal(out, 2.0 * np.arange(5.0))
    assert not [str(w.message) for w in record]
    (cres,) = scaled.overloads.values()
    assert not cres.metadata["parfor_diagnostics"].initial_parfors  # still the parallel pipeline, no parfor
