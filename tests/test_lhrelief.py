"""LH-RELIEF: the update against a brute-force reference, recovery, invariances, contract."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import LHRelief
from knnweights.datasets import add_irrelevant_features, make_spiral


def _hull_point_slsqp(x, H, w):
    """argmin over the simplex of 1/2 (x - H a)^T W (x - H a), by SLSQP (H is k x d)."""
    k = H.shape[0]

    def f(a):
        r = x - a @ H
        return 0.5 * np.sum(w * r * r)

    def jac(a):
        return -(H @ (w * (x - a @ H)))

    res = minimize(
        f,
        np.full(k, 1 / k),
        jac=jac,
        method="SLSQP",
        bounds=[(0, None)] * k,
        constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1}],
        options={"ftol": 1e-16, "maxiter": 1000},
    )
    return res.x @ H, res.fun


def _margins_reference(X, y, w, k):
    """Per-sample loop: weighted-L1 k nearest hits/misses, SLSQP hull points, z_n (eqs. 5-8)."""
    n = len(X)
    Z = np.empty_like(X)
    objective = []
    for i in range(n):
        dist = np.abs(X - X[i]) @ w
        order = np.lexsort((np.arange(n), dist))
        hits = [j for j in order if y[j] == y[i] and j != i][:k]
        misses = [j for j in order if y[j] != y[i]][:k]
        ph, fh = _hull_point_slsqp(X[i], X[hits], w)
        pm, fm = _hull_point_slsqp(X[i], X[misses], w)
        Z[i] = np.abs(X[i] - pm) - np.abs(X[i] - ph)
        objective.append((fh, fm))
    return Z, np.array(objective)


def _small_problem(seed=0, n=36, d=5, n_classes=3):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None] * (np.arange(d) < 2)
    return X, y


@pytest.mark.parametrize("k", [1, 3, 4])
def test_margin_vectors_equal_per_sample_reference(k):
    X, y = _small_problem(k)
    w = np.random.default_rng(1).random(X.shape[1])
    Z = LHRelief(n_neighbors=k)._margin_vectors(X, y, w)
    Zref, _ = _margins_reference(X, y, w, k)
    np.testing.assert_allclose(Z, Zref, atol=2e-5)


def test_first_iteration_is_normalised_mean_margin_from_uniform_start():
    X, y = _small_problem(5)
    d = X.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = LHRelief(n_neighbors=3, max_iter=1, damping=1.0).fit(X, y)
    Zref, _ = _margins_reference(X, y, np.full(d, 1.0 / d), 3)
    v = np.maximum(Zref.mean(axis=0), 0)
    np.testing.assert_allclose(est.feature_importances_, v / np.linalg.norm(v), atol=1e-5)
    assert est.n_iter_ == 1
    # eq. 8 at w = 1/d
    np.testing.assert_allclose(est.cost_history_[0], Zref.mean(axis=0).sum() / d, atol=1e-6)


def test_spiral_with_100_noise_features_puts_the_two_true_features_on_top():
    # the paper does not give its spiral's size: here the spiral has radius 3 and one turn,
    # the 100 irrelevant features are N(0, 1) (with make_spiral's default radius 1 and two
    # turns neither LH-RELIEF nor I-RELIEF finds the two features at 100 noise features)
    X, y = make_spiral(n_per_class=100, turns=1.0, random_state=0)
    X = add_irrelevant_features(3.0 * X, 100, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        w = LHRelief(n_neighbors=5, max_iter=20, update="additive").fit(X, y).feature_importances_
    assert set(np.argsort(w)[-2:]) == {0, 1}
    assert w[:2].min() > 2 * np.sort(w[2:])[-1]


def test_weights_are_invariant_to_global_scale_and_follow_feature_permutations():
    X, y = _small_problem(7, n=45, d=6)
    kw = dict(n_neighbors=3, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        w = LHRelief(**kw).fit(X, y).feature_importances_
        w_scaled = LHRelief(**kw).fit(7.5 * X, y).feature_importances_
        perm = np.array([3, 0, 5, 1, 4, 2])
        w_perm = LHRelief(**kw).fit(X[:, perm], y).feature_importances_
    np.testing.assert_allclose(w_scaled, w, atol=1e-8)
    np.testing.assert_allclose(w_perm, w[perm], atol=1e-8)


def test_constant_feature_gets_zero_weight_and_weights_are_unit_norm():
    X, y = _small_problem(2)
    X = np.column_stack([X, np.full(len(X), 4.2)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = LHRelief(n_neighbors=3, max_iter=10).fit(X, y)
    w = est.feature_importances_
    assert w[-1] == 0.0 and np.all(w >= 0) and np.isfinite(w).all()
    np.testing.assert_allclose(np.linalg.norm(w), 1.0)
    assert len(est.cost_history_) == est.n_iter_ and est.metric_ == "manhattan"


def test_max_iter_warns_and_convergence_stops_early():
    X, y = _small_problem(3)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        LHRelief(n_neighbors=2, max_iter=1).fit(X, y)
    # two well-separated informative features, no noise: a fixed point is reached
    rng = np.random.default_rng(0)
    y2 = np.repeat([0, 1], 20)
    X2 = np.column_stack([y2 * 5.0 + rng.normal(size=40), y2 * 5.0 + rng.normal(size=40)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = LHRelief(n_neighbors=3, max_iter=50, tol=1e-8, update="additive").fit(X2, y2)
    assert est.n_iter_ < 50 and est.step_history_[-1] < 1e-8


def test_too_many_neighbors_raises_with_small_classes_error():
    X, y = _small_problem(4, n=12)
    with pytest.raises(ValueError, match="n_neighbors=5"):
        LHRelief(n_neighbors=5, small_classes="error").fit(X, y)


def _with_class_of_two(seed=0):
    X, y = _small_problem(seed, n=40, n_classes=2)
    X[:, :2] += 1.2 * y[:, None]
    rng = np.random.default_rng(seed + 10)
    X2 = rng.normal(size=(2, X.shape[1])) + 3.0 * (np.arange(X.shape[1]) < 2)
    return np.vstack([X, X2]), np.append(y, [2, 2])


def test_class_of_two_samples_is_clamped_with_a_warning_and_margins_match_the_reference():
    X, y = _with_class_of_two()
    w = np.random.default_rng(1).random(X.shape[1])
    Z = LHRelief(n_neighbors=5)._margin_vectors(X, y, w)
    Zref, _ = _margins_reference(X, y, w, 5)  # the reference's lists hold what each class has
    np.testing.assert_allclose(Z, Zref, atol=2e-5)
    with pytest.warns(UserWarning, match="n_neighbors=5 is larger than the number of hits of class 2.*Clamped"):
        est = LHRelief(n_neighbors=5).fit(X, y)
    assert sorted(np.argsort(est.feature_importances_)[-2:].tolist()) == [0, 1]


def test_margins_on_the_weighted_columns_equal_the_reference_with_zero_weights():
    # zero-weight columns leave the neighbour search and the QPs; their margins still match
    X, y = _small_problem(9, d=6)
    w = np.array([0.5, 0.0, 0.3, 0.0, 0.8, 0.1])
    Zref, _ = _margins_reference(X, y, w, 3)
    np.testing.assert_allclose(LHRelief(n_neighbors=3)._margin_vectors(X, y, w), Zref, atol=2e-5)
    cols = np.flatnonzero(w > 0)
    np.testing.assert_allclose(LHRelief(n_neighbors=3)._margin_vectors(X, y, w, cols), Zref[:, cols], atol=2e-5)


def _spiral(n_per_class, noise=0):
    X, y = make_spiral(n_per_class=n_per_class, turns=1.0, random_state=0)
    return add_irrelevant_features(3.0 * X, noise, random_state=1), y


@pytest.mark.parametrize("update", ["multiplicative", "additive"])
def test_damped_iteration_converges_on_the_spiral_where_the_undamped_one_cycles(update):
    X, y = _spiral(60)
    # the paper's undamped iteration: a 2-cycle between two weight vectors, reported as such
    with pytest.warns(ConvergenceWarning, match="2-cycle"):
        und = LHRelief(update=update, damping=1.0, adaptive_damping=False, max_iter=30).fit(X, y)
    assert und.stop_reason_ == "cycle" and und.step_history_[-1] > 1e-3
    # damped (the default eta = 0.5, fixed): a fixed point, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = LHRelief(update=update, damping=0.5, adaptive_damping=False).fit(X, y)
    assert est.stop_reason_ == "converged" and est.step_history_[-1] < est.tol
    assert est.damping_ == 0.5 and est.n_iter_ < est.max_iter
    # ... and it is a fixed point of the undamped map T too (T(w) = w up to tol / eta)
    w = est.feature_importances_
    z = est._margin_vectors(X, y, w).mean(axis=0)
    t = np.maximum(w * z if update == "multiplicative" else z, 0)
    np.testing.assert_allclose(t / np.linalg.norm(t), w, atol=1e-4)


def test_multiplicative_reading_ranks_the_two_spiral_features_first_with_1000_noise_features():
    X, y = _spiral(100, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = LHRelief(update="multiplicative").fit(X, y)
    w = est.feature_importances_
    assert set(np.argsort(w)[-2:]) == {0, 1} and est.stop_reason_ == "converged"
    assert w[:2].min() > 0.5 and np.linalg.norm(w[2:]) < 0.05  # the noise features are driven to ~0
    # the additive (I-RELIEF) reading leaves every noise feature a weight of order n^-1/2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        wa = LHRelief(update="additive", max_iter=10).fit(X, y).feature_importances_
    assert np.linalg.norm(wa[2:]) > 0.5


def test_verbose_prints_one_line_per_iteration(capsys):
    X, y = _small_problem(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = LHRelief(n_neighbors=2, max_iter=4, verbose=1).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[LHRelief] iter")]
    assert len(lines) == len(est.step_history_) >= 1 and "step" in lines[0]


@parametrize_with_checks([LHRelief(n_neighbors=1, max_iter=3)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


# -- the robustness protocol (evaluation.robustness, plotting.robustness) -------------------


def test_irrelevant_feature_curve_is_seeded_and_error_rises_for_plain_knn():
    from sklearn.neighbors import KNeighborsClassifier

    from knnweights.evaluation.robustness import irrelevant_feature_curve

    X, y = make_spiral(n_per_class=60, turns=1.0, random_state=0)
    X = 3.0 * X
    knn = KNeighborsClassifier(n_neighbors=1)
    r1 = irrelevant_feature_curve(knn, X, y, [0, 200], cv=4, n_repeats=2, random_state=3)
    r2 = irrelevant_feature_curve(
        {"a": knn, "b": KNeighborsClassifier(n_neighbors=3)}, X, y, [0, 200], cv=4, n_repeats=2, random_state=3
    )
    assert r1.fold_errors.shape == (2, 2, 4) and r1.errors.shape == (2, 2)
    np.testing.assert_array_equal(r1.mean_error, r2["a"].mean_error)  # same noise, same folds
    np.testing.assert_allclose(r1.mean_error, r1.errors.mean(axis=1))
    assert r1.mean_error[0] < 0.1 and r1.mean_error[1] > r1.mean_error[0] + 0.15


def test_irrelevant_feature_curve_fits_on_training_folds_with_the_noise_appended():
    from sklearn.base import BaseEstimator, ClassifierMixin

    from knnweights.evaluation.robustness import irrelevant_feature_curve

    seen = []

    class Spy(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            seen.append(X.shape)
            self.classes_ = np.unique(y)
            return self

        def predict(self, X):
            return np.full(len(X), self.classes_[0])

    X, y = _small_problem(0, n=40, d=3, n_classes=2)
    irrelevant_feature_curve(Spy(), X, y, [0, 7], cv=5, n_repeats=1, random_state=0)
    assert seen == [(32, 3)] * 5 + [(32, 10)] * 5


def test_plot_irrelevant_feature_curve_writes_a_labelled_png(tmp_path):
    pytest.importorskip("matplotlib")
    from sklearn.utils import Bunch

    from knnweights.plotting.robustness import plot_irrelevant_feature_curve

    r = Bunch(counts=np.array([0, 10]), mean_error=np.array([0.1, 0.3]), std_error=np.array([0.01, 0.02]))
    path = tmp_path / "curve.png"
    ax = plot_irrelevant_feature_curve({"m": r}, path=path)
    assert path.stat().st_size > 1000
    assert "irrelevant" in ax.get_xlabel() and "error" in ax.get_ylabel()
    import matplotlib.pyplot as plt

    plt.close(ax.figure)


def test_default_max_iter_reaches_the_fixed_point_on_a_slowly_converging_set():
    # standardised Ionosphere, the training folds of `knnweights demo`: the step falls ~10x per 100
    # iterations; the slowest fold needs ~740 iterations, which the former default (200) cut short
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    from knnweights import datasets

    X, y = datasets.load("ionosphere", return_X_y=True)
    X = StandardScaler().fit_transform(X[:, X.std(0) > 0])
    tr = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = LHRelief().fit(X[tr], y[tr])
    assert est.stop_reason_ == "converged" and 200 < est.n_iter_ < est.max_iter
    assert est.step_history_[-1] < est.tol <= est.step_history_[-2]


def test_first_margins_of_the_spiral_are_at_the_noise_level_at_radius_1_and_above_it_at_radius_3():
    # the docstring's "Scale" note: from w = 1/d the first neighbours are chosen by the irrelevant
    # features, so the spiral's first margins stand out of the irrelevant ones' spread only at radius 3
    X, y = make_spiral(n_per_class=200, turns=1.0, random_state=0)
    d = 302
    for radius, stands_out in [(1.0, False), (3.0, True)]:
        Xr = add_irrelevant_features(radius * X, d - 2, random_state=1)
        z = LHRelief()._margin_vectors(Xr, y, np.full(d, 1.0 / d)).mean(axis=0)
        spread = z[2:].std()
        assert (z[:2].max() > 1.5 * spread) == stands_out, (radius, z[:2], spread)
