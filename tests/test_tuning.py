"""knnweights.evaluation.tuning: the internal CV of the reproduction's tuned methods."""

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier

from knnweights import ReliefF
from knnweights.evaluation import fit_cache, tune, weighter_pipeline
from knnweights.evaluation import pipelines as _pipelines


class _CountingReliefF(ReliefF):
    """ReliefF that counts its fits (class attribute, reset by the test)."""

    fits = 0

    def _fit(self, X, y):
        type(self).fits += 1
        return super()._fit(X, y)


def _data(seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(60, 6)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.randn(60) > 0).astype(int)
    return X, y


GRID = {"weights__weighter__n_neighbors": [3, 5], "clf__n_neighbors": [1, 3, 5]}


def test_tune_fits_the_weighter_once_per_setting_and_fold():
    # GridSearchCV visits every fold of a candidate before the next one: with a cache smaller
    # than (weighter settings x folds; here 10, more than the default 8) every fit would be
    # evicted before its reuse (2 x 3 x 5 + 1 fits)
    X, y = _data()
    est = weighter_pipeline(_CountingReliefF(random_state=0), KNeighborsClassifier())
    _CountingReliefF.fits = 0
    tune(est, GRID, X, y, cv=5, random_state=0)
    assert _CountingReliefF.fits == 2 * 5 + 1


def test_tune_equals_an_uncached_search():
    X, y = _data(1)
    est = weighter_pipeline(ReliefF(random_state=0), KNeighborsClassifier())
    best, params, score = tune(est, GRID, X, y, cv=4, random_state=3)
    ref = GridSearchCV(est, GRID, cv=StratifiedKFold(4, shuffle=True, random_state=3)).fit(X, y)
    assert params == ref.best_params_
    assert score == pytest.approx(ref.best_score_, abs=1e-15)
    np.testing.assert_array_equal(best.predict(X), ref.best_estimator_.predict(X))


def test_nested_fit_cache_restores_the_outer_size():
    with fit_cache(maxsize=4):
        assert _pipelines._local.maxsize == 4
        with fit_cache(maxsize=50):
            assert _pipelines._local.maxsize == 50
        assert _pipelines._local.maxsize == 4
        with fit_cache(maxsize=2):  # an inner block never shrinks the outer cache
            assert _pipelines._local.maxsize == 4
    assert _pipelines._local.cache is None


def test_log_grid_values_are_the_correctly_rounded_powers_of_ten(monkeypatch):
    """Each value is the double nearest to ``10 ** e`` (``e``: np.linspace's exponent), whatever NumPy's
    CPU-dispatched ``power`` / ``log10`` give (stood in for by ones off by one ulp): the same grid on every CPU."""
    import decimal

    from knnweights.evaluation import log_grid

    for name in ("logspace", "power", "log10", "exp"):
        real = getattr(np, name)
        monkeypatch.setattr(np, name, lambda *a, _real=real, **k: np.nextafter(_real(*a, **k), np.inf))
    grid = log_grid(1e-3, 1e2, 100)
    monkeypatch.undo()
    exps = np.linspace(-3.0, 2.0, 100)
    assert len(grid) == 100 and grid[0] == 1e-3 and grid[-1] == 100.0
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        for e, v in zip(exps, grid, strict=True):
            # 10 ** e lies between the midpoints of v and its two neighbours: log10 of them brackets e
            below = (decimal.Decimal(v) + decimal.Decimal(np.nextafter(v, 0.0))) / 2
            above = (decimal.Decimal(v) + decimal.Decimal(np.nextafter(v, np.inf))) / 2
            assert below.log10() < decimal.Decimal(float(e)) < above.log10(), (e, v)
