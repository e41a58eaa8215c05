"""Metamorphic properties of every weighter.

Transforming the input in a way the method must not notice has to transform the weights
the matching way:

- permuting the features permutes the weights;
- permuting the rows leaves them unchanged (methods whose result does not depend on a
  random draw of rows; the data have no distance ties);
- renaming the classes (order kept) or reordering them leaves them unchanged;
- float32 input gives float64 weights equal to the float64 fit's to float32 tolerance.

Exemptions say why (a random visiting order of the features, random row subsamples);
known failures are ``xfail(strict=True)`` with the cause, so that a fix shows up.
"""

import warnings

import numpy as np
import pytest

import knnweights

NAMES = sorted(knnweights.WEIGHTERS)
TOL = 1e-6  # relative to the largest weight (iterative solvers stop at tolerances of this order)
TOL32 = 1e-3

# randomness over the features: the same seed visits other features after a permutation
FEATURE_ORDER_RANDOM = {"GFlip": "GFlip flips features in a random visiting order (random_state), so a "
                                 "permutation of the features changes the local optimum reached"}
# randomness over the rows: a row permutation changes which rows are drawn
ROW_DRAWS = {"EFW": "EFW's subsamples are random draws of rows",
             "ERelief": "ERelief's subsamples are random draws of rows",
             "Simba": "Simba visits the rows in a random order"}


@pytest.fixture(scope="module")
def data(informative_problem):
    """``(X, y)``: 3 informative features, 5 noise features, 3 classes."""
    return informative_problem(n=60, n_informative=3, n_noise=5, n_classes=3, random_state=1)


@pytest.fixture(scope="module")
def fit(fast_weighter):
    """``fit(name, X, y)``: the weights of the fast weighter ``name`` (the test is skipped where it is not
    implemented)."""
    def fit_weights(name, X, y):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return fast_weighter(name).fit(X, y).feature_importances_
            except NotImplementedError as exc:
                pytest.skip(f"{name}: not implemented ({str(exc)[:60]})")

    return fit_weights


@pytest.fixture(scope="module")
def reference(fit, data):
    """``reference(name)``: the weights of ``name`` on ``data``, fitted once per module."""
    cache = {}

    def reference_weights(name):
        if name not in cache:
            cache[name] = fit(name, *data)
        return cache[name]

    return reference_weights


def _close(got, want, tol, what):
    scale = max(float(np.max(np.abs(want))), 1e-300)
    err = float(np.max(np.abs(np.asarray(got, float) - want))) / scale
    assert err <= tol, (f"{what}: relative difference {err:.2e} > {tol:g}\n got  {np.round(got, 6)}\n"
                        f" want {np.round(want, 6)}")


@pytest.mark.parametrize("name", NAMES)
def test_feature_permutation_permutes_weights(name, data, fit, reference):
    if name in FEATURE_ORDER_RANDOM:
        pytest.skip(FEATURE_ORDER_RANDOM[name])
    w = reference(name)
    X, y = data
    perm = np.random.default_rng(0).permutation(X.shape[1])
    _close(fit(name, X[:, perm], y), w[perm], TOL, f"{name}, features permuted")


@pytest.mark.parametrize("name", NAMES)
def test_row_permutation_leaves_weights(name, data, fit, reference):
    if name in ROW_DRAWS:
        pytest.skip(ROW_DRAWS[name])
    w = reference(name)
    X, y = data
    perm = np.random.default_rng(1).permutation(X.shape[0])
    _close(fit(name, X[perm], y[perm]), w, TOL, f"{name}, rows permuted")


@pytest.mark.parametrize("name", NAMES)
def test_renamed_classes_leave_weights(name, data, fit, reference):
    w = reference(name)
    X, y = data
    _close(fit(name, X, np.array(["ant", "bee", "cat"])[y]), w, TOL, f"{name}, classes renamed (order kept)")
    _close(fit(name, X, y + 10), w, TOL, f"{name}, classes shifted")


@pytest.mark.parametrize("name", NAMES)
def test_reordered_classes_leave_weights(name, data, fit, reference):
    w = reference(name)
    X, y = data
    _close(fit(name, X, np.array([2, 0, 1])[y]), w, TOL, f"{name}, class labels reordered")
    _close(fit(name, X, np.array(["z", "m", "a"])[y]), w, TOL, f"{name}, classes renamed in reverse order")


@pytest.mark.parametrize("name", NAMES)
def test_float32_input_gives_float64_weights(name, data, fit, reference):
    w = reference(name)
    X, y = data
    X32 = X.astype(np.float32)
    w32 = fit(name, X32, y)
    assert w32.dtype == np.float64, f"{name}: float32 input gave {w32.dtype} weights"
    # the float64 fit of the rounded data: the float32 path must not lose more than the rounding does
    _close(w32, fit(name, X32.astype(np.float64), y), TOL32, f"{name}, float32 vs float64 of the same values")
    _close(w32, w, 10 * TOL32, f"{name}, float32 vs float64 input")


# scale laws the docstrings state: feature j multiplied by c_j -> the weights' rule
SCALE_LAWS = {"MDM": ("scaling feature j by c scales w_j by 1 / c**2 and leaves every weighted distance unchanged",
                      lambda w, c: w / c**2)}


@pytest.mark.parametrize("name", sorted(SCALE_LAWS))
def test_scale_invariance_where_documented(name, data, fast_weighter):
    _, law = SCALE_LAWS[name]
    X, y = data
    c = np.random.default_rng(2).uniform(0.05, 20.0, X.shape[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = fast_weighter(name).fit(X, y)
        scaled = fast_weighter(name).fit(X * c, y)
    _close(scaled.feature_importances_, law(ref.feature_importances_, c), TOL, f"{name}, features rescaled")
    np.testing.assert_allclose(scaled.transform(X * c), ref.transform(X), rtol=1e-6, atol=1e-9)


# a duplicated feature: both copies get the same weight, except where the method picks one copy
DUPLICATE_ONE_COPY = {
    "GFlip": "a greedy 0/1 selection keeps one copy (the second adds nothing to the margin)",
    "MDM": "the LP's vertex solution puts the weight on one copy (only their sum enters the distances)",
    "SBMLR": "the L1 problem's minimisers split the weight between copies in any proportion",
    "SVMRFE": "recursive elimination drops one copy before the other, so their ranks differ",
}


@pytest.mark.parametrize("name", NAMES)
def test_duplicated_feature_copies_get_equal_weights(name, data, fit):
    X, y = data
    w = fit(name, np.c_[X, X[:, 0]], y)
    if name in DUPLICATE_ONE_COPY:
        pytest.skip(DUPLICATE_ONE_COPY[name])
    assert abs(w[0] - w[-1]) <= TOL * max(float(w.max()), 1e-300), f"{name}: copies weighted {w[0]} and {w[-1]}"
