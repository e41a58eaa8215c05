import numba
import numpy as np
import pytest
from threadpoolctl import threadpool_limits


def informative_problem(n=120, n_informative=5, n_noise=100, n_classes=2, random_state=0):
    """Labels set by the first ``n_informative`` features; the rest is noise."""
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n, n_informative + n_noise))
    score = X[:, :n_informative].sum(axis=1)
    if n_classes == 2:
        y = (score > 0).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y


@pytest.fixture
def problem():
    return informative_problem()


@pytest.fixture(scope="module")
def one_thread():
    """Numba and BLAS on one thread: for tests making many tiny kernel / BLAS calls,
    where starting threads costs more than the work on a loaded machine."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    with threadpool_limits(1):
        yield
    numba.set_num_threads(previous)
