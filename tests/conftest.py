import numba
import numpy as np
import pytest
from hypothesis import HealthCheck
from hypothesis import settings as _hsettings
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


# fast settings per weighter for the suites that loop over knnweights.WEIGHTERS
# (they check the contract and robustness, not accuracy)
FAST = {
    "IM4E": {"max_iter": 10},
    "IRelief": {"max_iter": 5},
    "MulRel": {"n_rounds": 3},
    "GFlip": {"max_iter": 3},
    "ReliefF": {"n_neighbors": 1},
    "LHRelief": {"n_neighbors": 1, "max_iter": 5},
    "EFW": {"n_estimators": 2, "max_iter": 50},
    "ERelief": {"n_estimators": 2},
    "Logo": {"max_iter": 5},
    "NCADiagonal": {"max_iter": 15},
    "SQPFW": {"max_iter": 200},
    "SVMRFE": {"step": 0.5},
}


def fast_weighter(name, **overrides):
    """``knnweights.WEIGHTERS[name]`` with the FAST settings (and overrides), seeded."""
    import knnweights

    cls = knnweights.WEIGHTERS[name]
    valid = cls().get_params()
    params = {k: v for k, v in {**FAST.get(name, {}), **overrides}.items() if k in valid}
    est = cls(**params)
    if "random_state" in valid:
        est.set_params(random_state=0)
    return est


# hypothesis profiles: `ci` (the default: the suite keeps its time) and `thorough`
# (`python -m pytest tests/test_reliability.py --hypothesis-profile thorough`: >= 10,000
# generated cases over every weighter and classifier); the per-test case count is
# `max_examples` (KNNWEIGHTS_HYPOTHESIS_EXAMPLES overrides it)
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
_hsettings.register_profile("ci", max_examples=60, deadline=None, derandomize=True, suppress_health_check=_QUIET,
                            print_blob=True)
_hsettings.register_profile("thorough", max_examples=500, deadline=None, suppress_health_check=_QUIET,
                            print_blob=True)
_hsettings.load_profile("ci")
