"""Reliability: bad input, numerical extremes and long runs never crash, never give NaN.

A property-based suite (hypothesis) over every weighter of ``knnweights.WEIGHTERS``
and the classifiers: each generated case must end either in finite, non-negative
weights (predictions) or in a documented exception -- ``ValueError`` whose message
says what to change, or ``NotImplementedError`` for a method not yet faithful to its
paper.  Anything else (``FloatingPointError``, ``ZeroDivisionError``, ``IndexError``,
``LinAlgError``, NaN weights, ...) is a failure.  Then: a kill-and-resume test of
the results store, and bit-identical determinism across runs and ``n_jobs``.
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import knnweights
from knnweights.classifiers import WeightedKNN

TRIED = {}
ERRORS = []


#: the library's own ValueError messages (knnweights' validation and scikit-learn's validate_data):
#: a fuzzed input must fail with one of these, never with an error from deep inside NumPy
DOCUMENTED_ERRORS = re.compile(
    r"^Input (X|y)\b|^y \(the class labels\)|\bneeds at least \d+ (classes|samples per class)|"
    r"\bis larger than the number of (hits|misses|samples|other samples)|\bis infeasible: samples \d+ and \d+|"
    r"\brequires y to be passed|\bgot a continuous target y|\bthe continuous target y is constant|"
    r"^Found input variables with inconsistent numbers of samples|^Expected 2D array")
INTERNAL_ERRORS = re.compile(
    r"could not be broadcast|setting an array element|out of bounds|not aligned|zero-size array|cannot reshape|"
    r"math domain|dimension mismatch|operands", re.IGNORECASE)


def assert_documented_error(exc, who):
    """A ValueError the library raises on purpose: one of its own messages, not a NumPy internal one."""
    text = str(exc)
    assert not INTERNAL_ERRORS.search(text), f"{who}: an internal error escaped: {exc!r}"
    assert DOCUMENTED_ERRORS.search(text), f"{who}: not one of the library's messages: {exc!r}"


def examples():
    """Generated cases per test: the hypothesis profile's ``max_examples`` (``ci``: 60, ``thorough``: 500)."""
    env = os.environ.get("KNNWEIGHTS_HYPOTHESIS_EXAMPLES")
    return int(env) if env else settings.default.max_examples


@pytest.fixture(scope="module")
def weighter(fast_weighter):
    """``weighter(name)``: the fast weighter ``name``; SQP-FW with 50 iterations (its active-set steps are the
    slowest per call, and the suite makes 60 generated cases per weighter)."""
    def fast_weighter_for_fuzzing(name):
        return fast_weighter(name, **({"max_iter": 50} if name == "SQPFW" else {}))

    return fast_weighter_for_fuzzing


def fit_outcome(est, X, y):
    """'ok' with finite weights >= 0, or the documented exception's class name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            est.fit(X, y)
        except NotImplementedError:
            return "NotImplementedError"
        except ValueError as exc:
            assert_documented_error(exc, type(est).__name__)
            ERRORS.append(str(exc)[:60])
            return "ValueError"
    w = est.feature_importances_
    assert w.shape == (np.asarray(X).shape[1],)
    assert np.all(np.isfinite(w)), f"{type(est).__name__} gave non-finite weights {w}"
    assert np.all(w >= 0), f"{type(est).__name__} gave negative weights"
    Xt = est.transform(X)
    assert np.all(np.isfinite(Xt)) or not np.all(np.isfinite(np.asarray(X, dtype=float)))
    return "ok"


@st.composite
def datasets(draw):
    n = draw(st.integers(2, 60))
    d = draw(st.sampled_from([5, 20, 300, 3, 2, 1]))  # hypothesis favours early entries
    n_classes = draw(st.sampled_from([2, 3, 4, 1]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    kind = draw(st.sampled_from(["plain", "duplicates", "constant", "tiny_feature", "large_feature", "ties",
                                 "integer", "tiny", "huge"]))
    if kind == "duplicates":
        X[n // 2:] = X[: n - n // 2]
    elif kind == "constant":
        X[:, rng.integers(0, d)] = 3.0
    elif kind == "tiny_feature":  # one feature at 1e-300 scale among ordinary ones
        X[:, rng.integers(0, d)] *= 1e-300
    elif kind == "large_feature":  # one feature at 1e100 scale: it dominates every distance
        X[:, rng.integers(0, d)] *= 1e100
    elif kind == "tiny":  # everything at 1e-300: squared differences underflow (documented ValueError)
        X *= 1e-300
    elif kind == "huge":  # everything at 1e300: squared differences overflow (documented ValueError)
        X *= 1e300
    elif kind in ("ties", "integer"):
        X = np.round(X)
    if draw(st.booleans()):  # balanced: every class has >= 2 samples when n allows
        y = rng.permutation(np.arange(n) % n_classes)
    else:  # anything, singleton classes included
        y = rng.integers(0, n_classes, n)
    label_kind = draw(st.sampled_from(["int", "str", "bool"]))
    if label_kind == "str":
        y = np.array([f"class-{v}" for v in y])
    elif label_kind == "bool" and n_classes <= 2:
        y = y.astype(bool)
    return X, y


@pytest.mark.parametrize("name", sorted(knnweights.WEIGHTERS))
def test_weighters_never_crash_or_return_nan(name, weighter):
    outcomes = []

    n = examples()

    @settings(max_examples=n, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(datasets())
    def check(data):
        X, y = data
        outcomes.append(fit_outcome(weighter(name), X, y))

    check()
    TRIED[name] = {k: outcomes.count(k) for k in sorted(set(outcomes))}
    assert len(outcomes) >= min(n, 5)
    if "NotImplementedError" not in outcomes:
        assert "ok" in outcomes, f"{name}: no generated case was fitted ({set(outcomes)})"


@pytest.mark.parametrize("name", sorted(knnweights.WEIGHTERS))
def test_clear_errors_for_bad_input(name, weighter):
    est = weighter(name)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), np.repeat([0, 1, 2], 10)
    if fit_outcome(weighter(name), X, y) == "NotImplementedError":
        pytest.skip("not implemented")
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="column 2"):
        est.fit(bad, y)
    bad[3, 2] = -np.inf
    with pytest.raises(ValueError, match="column 2"):
        est.fit(bad, y)
    with pytest.raises(ValueError, match="1 class"):
        est.fit(X, np.zeros(30))
    with pytest.raises((TypeError, ValueError), match="[Ss]parse"):
        est.fit(sp.csr_matrix(X), y)
    with pytest.raises(ValueError, match="requires y"):
        est.fit(X, None)


def test_pandas_input_with_column_names(weighter):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.normal(size=(30, 3)), columns=["alpha", "beta", "gamma"])
    y = pd.Series(np.repeat(["a", "b"], 15))
    for name in sorted(knnweights.WEIGHTERS):
        est = weighter(name)
        if fit_outcome(est, df, y) == "ok":
            assert list(est.get_feature_names_out()) == ["alpha", "beta", "gamma"], name
    df.iloc[2, 1] = np.nan
    with pytest.raises(ValueError, match="column 1|column 'beta'"):
        knnweights.ReliefF(n_neighbors=1).fit(df, y)


def test_n_neighbors_larger_than_a_class_is_explained():
    rng = np.random.default_rng(2)
    X, y = rng.normal(size=(20, 3)), np.array([0] * 17 + [1] * 3)
    # clamped per class with a warning that says so; small_classes='error' raises instead
    for cls in (knnweights.ReliefF, knnweights.MulRel):
        with pytest.warns(UserWarning, match="n_neighbors=5 is larger than the number of hits of class 1"):
            cls(n_neighbors=5).fit(X, y)
        with pytest.raises(ValueError, match="n_neighbors=5 is larger than the number of hits"):
            cls(n_neighbors=5, small_classes="error").fit(X, y)


@pytest.mark.parametrize("sigma", [1e-4, 1e-6, 1e-8])
def test_tiny_kernel_widths_stay_finite(sigma, weighter):
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(40, 6)), np.repeat([0, 1], 20)
    for name in ("IRelief", "IM4E", "Logo"):
        cls = knnweights.WEIGHTERS[name]
        if "sigma" not in cls().get_params():
            continue
        assert fit_outcome(weighter(name).set_params(sigma=sigma), X, y) in ("ok", "NotImplementedError")


def test_classifiers_never_return_nan_probabilities():
    from knnweights import classifiers

    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(40, 5)), np.repeat(["x", "y"], 20)
    X[5] = X[6]  # duplicate rows
    found = 0
    for name in ("ExpectedDistanceClassifier", "HKNN", "CKNN"):
        cls = getattr(classifiers, name, None)
        if cls is None:
            continue
        found += 1
        clf = cls().fit(X, y)
        pred = clf.predict(X)
        assert set(pred) <= {"x", "y"}
        if hasattr(clf, "predict_proba"):
            assert np.all(np.isfinite(clf.predict_proba(X)))
    clf = WeightedKNN(knnweights.ReliefF(n_neighbors=1)).fit(X, y)
    assert np.all(np.isfinite(clf.predict_proba(X)))
    assert found >= 1


# -- classifiers under the same generated data ------------------------------------------
def _classifiers():
    from knnweights import classifiers

    return {"ExpectedDistanceClassifier": lambda: classifiers.ExpectedDistanceClassifier(),
            "ExpectedDistanceClassifier+IM4E": lambda: classifiers.ExpectedDistanceClassifier(
                weights=knnweights.IM4E(max_iter=5)),
            "HKNN": lambda: classifiers.HKNN(n_neighbors=3),
            "CKNN": lambda: classifiers.CKNN(n_neighbors=3),
            "WeightedKNN+ReliefF": lambda: WeightedKNN(knnweights.ReliefF(n_neighbors=1), 3)}


def predict_outcome(clf, X, y):
    """'ok' with predictions among the training labels and finite probabilities summing to 1, or the ValueError."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            clf.fit(X, y)
        except NotImplementedError:
            return "NotImplementedError"
        except ValueError as exc:
            assert_documented_error(exc, type(clf).__name__)
            return "ValueError"
        pred = clf.predict(X)
        proba = clf.predict_proba(X) if hasattr(clf, "predict_proba") else None
    assert pred.shape == (len(y),)
    assert set(np.unique(pred)) <= set(np.unique(y)), f"{type(clf).__name__} predicted an unseen label"
    if proba is not None:
        assert proba.shape == (len(y), np.unique(y).size)
        assert np.all(np.isfinite(proba)) and np.all(proba >= -1e-12), f"{type(clf).__name__}: bad probabilities"
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    return "ok"


@pytest.mark.parametrize("name", sorted(_classifiers()))
def test_classifiers_never_crash_or_return_nan(name):
    outcomes = []
    build = _classifiers()[name]
    n = examples()

    @settings(max_examples=n, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(datasets())
    def check(data):
        X, y = data
        outcomes.append(predict_outcome(build(), X, y))

    check()
    TRIED[name] = {k: outcomes.count(k) for k in sorted(set(outcomes))}
    assert "ok" in outcomes, f"{name}: no generated case was fitted ({set(outcomes)})"


# -- deliberate degenerate cases ---------------------------------------------------------
def _degenerate(case):
    rng = np.random.default_rng(11)
    if case == "all_constant":  # every feature constant (a matrix of zeros), 3 classes
        return np.zeros((30, 4)), np.repeat([0, 1, 2], 10), [0, 1, 2, 3]
    if case == "all_constant_nonzero":
        return np.full((20, 5), 2.5), np.repeat(["a", "b"], 10), [0, 1, 2, 3, 4]
    y = np.repeat([0, 1], 10)
    if case == "one_informative":  # one non-constant feature, which sets the label
        return np.c_[np.ones((20, 2)), y + 0.3 * rng.normal(size=20), np.full((20, 2), -3.0)], y, [0, 1, 3, 4]
    if case == "one_noise":  # one non-constant feature, unrelated to the label
        return np.c_[np.ones((20, 2)), rng.normal(size=20), np.full((20, 2), -3.0)], y, [0, 1, 3, 4]
    if case == "two_per_class":
        return rng.normal(size=(4, 3)), np.array([0, 0, 1, 1]), []
    if case == "two_per_class_3":
        return rng.normal(size=(6, 3)), np.array([0, 0, 1, 1, 2, 2]), []
    raise AssertionError(case)


DEGENERATE = ["all_constant", "all_constant_nonzero", "one_informative", "one_noise", "two_per_class",
              "two_per_class_3"]
# 45 (method, case) pairs end with every weight 0 (all features constant, for every method that fits
# them; one noise feature or two samples per class, for Relief, ReliefF, MulRel, GFlip, Logo, ERelief,
# SURF, NCADiagonal; one informative feature among constants, for SURF and MultiSURF).  Each says so
# with one ZeroWeightsWarning from BaseWeighter.fit naming the cause: a silent all-zero fit gives
# all-zero transformed data, on which a kNN predicts one class for every sample.
_CONST = ("all_constant", "all_constant_nonzero")


@pytest.mark.parametrize("name, case", [(name, case) for name in sorted(knnweights.WEIGHTERS) for case in DEGENERATE])
def test_degenerate_data(name, case, weighter):
    """Constant features get weight 0; all-zero weights come with a warning; else a clear ValueError.

    Never an AttributeError, IndexError, ZeroDivisionError or NaN (the NCADiagonal crash on a
    matrix of zeros, ``AttributeError: nit``, was one).
    """
    X, y, constant = _degenerate(case)
    est = weighter(name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est.fit(X, y)
        except NotImplementedError:
            pytest.skip("not implemented")
        except ValueError as exc:
            assert_documented_error(exc, name)
            return
    w = est.feature_importances_
    assert w.shape == (X.shape[1],) and np.all(np.isfinite(w)) and np.all(w >= 0), w
    assert np.all(w[constant] == 0), f"constant features got weight: {w}"
    zero_warnings = [c for c in caught if issubclass(c.category, knnweights.ZeroWeightsWarning)]
    if not np.any(w > 0):
        assert len(zero_warnings) == 1, f"all-zero weights without one ZeroWeightsWarning ({case}): {caught}"
        cause = "every feature of X is constant" if case in _CONST else "no feature separates the classes"
        assert cause in str(zero_warnings[0].message), zero_warnings[0].message
    else:
        assert not zero_warnings, f"ZeroWeightsWarning with positive weights {w}"
    if case in _CONST:  # constant features weigh 0 by definition, so these cases always take the branch above
        assert zero_warnings
    elif case == "one_informative" and np.any(w > 0):
        assert w[2] == w.max() > 0, w


def test_zero_weights_warning_points_at_the_callers_line():
    """One ZeroWeightsWarning, attributed to the user's ``fit`` call (also through EFW's own fit and
    ERelief's inner Relief fits, which stay silent)."""
    X, y = np.zeros((20, 3)), np.repeat([0, 1], 10)
    for est in (knnweights.ReliefF(), knnweights.EFW(n_estimators=2), knnweights.ERelief(n_estimators=2)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(X, y)
        zero = [c for c in caught if issubclass(c.category, knnweights.ZeroWeightsWarning)]
        assert len(zero) == 1 and zero[0].filename == __file__, [(c.category, c.filename) for c in caught]
        assert str(zero[0].message).startswith(f"{type(est).__name__} returned all-zero weights: every feature")


@pytest.mark.parametrize("name", sorted(_classifiers()))
@pytest.mark.parametrize("case", DEGENERATE)
def test_classifiers_on_degenerate_data(name, case):
    X, y, _ = _degenerate(case)
    assert predict_outcome(_classifiers()[name](), X, y) in ("ok", "ValueError")


def test_hknn_with_a_huge_feature():
    """The case the fuzz found (numpy's LinAlgError escaped: ``G + alpha I`` singular in float64)."""
    X = np.random.default_rng(0).normal(size=(10, 5))
    X[:, 4] *= 1e100
    assert predict_outcome(_classifiers()["HKNN"](), X, np.repeat([0, 1], 5)) == "ok"
    for alpha in (1.0, 0.0):
        D = knnweights.classifiers.HKNN(n_neighbors=3, alpha=alpha).fit(X, np.repeat([0, 1], 5))
        assert np.all(np.isfinite(D.class_distances(X))) and np.all(D.class_distances(X) >= 0)


@pytest.mark.parametrize("alpha", [1.0, 1e-3, 0.0])
def test_hknn_scaled_solve_matches_the_direct_one(alpha):
    """The fallback solve (scaled, eigendecomposition) is the direct ridge solve wherever that is well posed."""
    from knnweights.classifiers import HKNN
    from knnweights.classifiers._hyperplane import _hyperplane_distance_scaled

    rng = np.random.default_rng(8)
    N = rng.normal(size=(40, 4, 12)) * rng.uniform(0.01, 100.0, 12)
    x = 3.0 * rng.normal(size=(40, 12))
    c = N.mean(axis=1)
    V, r = N - c[:, None], x - c
    # independent reference: the ridge problem as an augmented least-squares problem, one query at a time
    ref = []
    for m in range(40):
        A = np.vstack([V[m].T, np.sqrt(alpha) * np.eye(4)])
        a = np.linalg.lstsq(A, np.r_[r[m], np.zeros(4)], rcond=None)[0]
        ref.append(np.linalg.norm(r[m] - V[m].T @ a))
    np.testing.assert_allclose(_hyperplane_distance_scaled(V, r, alpha), ref, rtol=1e-9)
    np.testing.assert_allclose(HKNN(alpha=alpha)._local_distance(x, N), ref, rtol=1e-9)


# -- determinism ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["Simba", "EFW", "ERelief", "IM4E", "Relief"])
def test_same_seed_bit_identical_weights(name, weighter):
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(50, 8)), np.repeat([0, 1], 25)
    est = weighter(name)
    if "random_state" in est.get_params():
        est.set_params(random_state=7)
    if name == "Relief":
        est.set_params(n_iter=30)
    if fit_outcome(est, X, y) != "ok":
        pytest.skip("not fitted")
    a = est.feature_importances_.copy()
    b = weighter(name).set_params(**est.get_params()).fit(X, y).feature_importances_
    assert np.array_equal(a, b)


def test_grid_results_identical_across_n_jobs():
    from knnweights.evaluation import RepeatedCV, run_grid

    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(60, 6)), np.repeat([0, 1], 30)
    methods = {"relief": WeightedKNN(knnweights.Relief(n_iter=20), 1), "simba": WeightedKNN(knnweights.Simba(), 1)}
    kw = dict(protocol=RepeatedCV(3, 2), random_state=3, progress=False, as_frame=False)
    serial = run_grid(methods, {"d": (X, y)}, n_jobs=1, **kw)
    parallel = run_grid(methods, {"d": (X, y)}, n_jobs=2, **kw)
    key = lambda r: (r["method"], r["repeat"], r["fold"])  # noqa: E731
    assert [(key(r), r["accuracy"]) for r in serial] == [(key(r), r["accuracy"]) for r in parallel]


# -- kill and resume -------------------------------------------------------------------
RUNNER = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    from knnweights import Relief
    from knnweights.classifiers import WeightedKNN
    from knnweights.evaluation import RepeatedCV, run_grid

    def slow(X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        time.sleep(float(sys.argv[2]))
        clf = WeightedKNN(Relief(n_iter=10, random_state=random_state), 1).fit(X_train, y_train)
        return float((clf.predict(X_test) == y_test).mean())

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 5)), np.repeat([0, 1], 30)
    run_grid({"slow": slow}, {"d": (X, y)}, protocol=RepeatedCV(4, 3), random_state=1, n_jobs=1,
             store=sys.argv[1], progress=False, as_frame=False)
    """
)


def _run(store, delay, tmp_path):
    script = tmp_path / "runner.py"
    script.write_text(RUNNER)
    return subprocess.Popen([sys.executable, str(script), str(store), str(delay)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)


@pytest.mark.slow
def test_killed_run_resumes_without_losing_or_duplicating_cells(tmp_path):
    from knnweights.evaluation import ResultStore

    store = tmp_path / "cells.jsonl"
    proc = _run(store, 0.3, tmp_path)
    deadline = time.time() + 120
    while time.time() < deadline:
        if store.exists() and len(ResultStore(store).read()) >= 3:
            break
        if proc.poll() is not None:
            pytest.fail(f"runner ended early: {proc.stderr.read().decode()[-2000:]}")
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = len(ResultStore(store).read())
    assert 3 <= done_before < 12
    resumed = _run(store, 0.0, tmp_path)
    assert resumed.wait(timeout=120) == 0, resumed.stderr.read().decode()[-2000:]
    rows = ResultStore(store).read()
    keys = [(r["repeat"], r["fold"]) for r in rows]
    assert len(keys) == 12 and len(set(keys)) == 12  # none lost, none duplicated
    clean = tmp_path / "clean.jsonl"
    assert _run(clean, 0.0, tmp_path).wait(timeout=120) == 0
    acc = {(r["repeat"], r["fold"]): r["accuracy"] for r in rows}
    ref = {(r["repeat"], r["fold"]): r["accuracy"] for r in ResultStore(clean).read()}
    assert acc == ref


def test_report_cases_tried(capsys):
    """Prints how many generated cases each weighter and classifier was tried on (the size of the fuzzing run)."""
    with capsys.disabled():
        if TRIED:
            total = sum(sum(v.values()) for v in TRIED.values())
            print(f"\nhypothesis cases: {total} in all over {len(TRIED)} estimators;", dict(sorted(TRIED.items())))
    assert all(sum(v.values()) >= 1 for v in TRIED.values())
