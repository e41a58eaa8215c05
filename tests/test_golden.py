"""Golden regression tests: every method's result on a small fixed problem, recorded with its version.

A method's results may change only together with its ``_algorithm_version`` (the key of the stored
reproduction cells, :mod:`knnweights.reproduce._versions`):

* same version: the result must equal the recorded one within a stated tolerance (a refactor, a
  faster kernel or a moved helper passes, and every stored cell stays valid);
* another version: the recorded value is out of date; record it again in the same commit with
  ``python tests/test_golden.py [NAME ...]``.

So a commit that changes a method's results without bumping its version fails here.  The tolerances
are far above rounding (another CPU, another BLAS kernel) and far below any change of the algorithm.
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

GOLDEN = Path(__file__).parent / "data" / "golden.json"
RTOL, ATOL = 1e-6, 1e-9  # of the result's scale (max |value|)


def _problem(n=60, d=8, n_classes=2, seed=0):
    """Two informative features (0 and 1), the rest noise; continuous, no ties."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    score = X[:, 0] - 0.8 * X[:, 1] + 0.4 * rng.randn(n)
    if n_classes == 2:
        y = (score > 0).astype(int)
    else:
        y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    return X, y


def _weighter(name, **params):
    """A weighter's weights; run with the recorded parameters, so a change of a default alone (which the stored
    cells' fingerprints see) needs no version bump."""
    import knnweights

    def run(recorded=None):
        X, y = _problem()
        est = knnweights.WEIGHTERS[name](**(params if recorded is None else recorded)).fit(X, y)
        return np.asarray(est.feature_importances_, dtype=float)

    def params_now():
        p = knnweights.WEIGHTERS[name](**params).get_params(deep=False)
        return {k: v for k, v in p.items() if v is None or isinstance(v, (bool, int, float, str))}

    run.params = params_now
    return getattr(knnweights, name), run


def _classifier(name):
    from knnweights import ReliefF, classifiers

    def run():
        X, y = _problem(n_classes=3, seed=1)
        Xte, _ = _problem(n=20, n_classes=3, seed=2)
        cls = getattr(classifiers, name)
        clf = cls(ReliefF(n_neighbors=5), n_neighbors=3) if name == "WeightedKNN" else cls()
        clf.fit(X, y)
        return np.asarray(clf.predict_proba(Xte) if hasattr(clf, "predict_proba") else clf.predict(Xte), float)

    return getattr(classifiers, name), run


def _selector(name):
    from knnweights import ReliefF, SelectTopK, TuRF

    def run():
        X, y = _problem(d=12)
        sel = SelectTopK(ReliefF(), 3) if name == "SelectTopK" else TuRF(ReliefF(), n_features_to_select=3)
        return sel.fit(X, y).get_support().astype(float)

    return {"SelectTopK": SelectTopK, "TuRF": TuRF}[name], run


def _regression(name):
    """The continuous-target components on ``y = x0 * x1 + noise`` (RReliefF, IRelief's graded form, ...),
    and the Relief family's p-values
    (:class:`~knnweights.significance.PairMoments`: ReliefF's on classes, MultiSURF's on the continuous target)."""
    import knnweights
    from knnweights import classifiers

    def run():
        rng = np.random.RandomState(4)
        X = rng.randn(70, 6)
        yc = X[:, 0] * X[:, 1] + 0.1 * rng.randn(70)
        if name == "MLKRDiagonal":
            return np.asarray(knnweights.MLKRDiagonal().fit(X, yc).feature_importances_, float)
        if name == "WeightedKNNRegressor":
            reg = classifiers.WeightedKNNRegressor(knnweights.ReliefF(n_neighbors=5), n_neighbors=4).fit(X, yc)
            return np.asarray(reg.predict(X[:15]), float)
        if name == "KNNRegressor":
            return np.asarray(classifiers.KNNRegressor(n_neighbors=4, weights="distance").fit(X, yc).predict(X[:15]))
        if name == "RReliefF":
            return np.asarray(knnweights.ReliefF(n_neighbors=5).fit(X, yc).feature_importances_, float)
        if name == "IRelief continuous":
            return np.asarray(knnweights.IRelief().fit(X, yc).feature_importances_, float)
        if name == "PairMoments":
            Xb, yb = _problem()
            return np.r_[knnweights.ReliefF(n_neighbors=5, pvalues=True).fit(Xb, yb).pvalues_,
                         knnweights.MultiSURF(pvalues=True).fit(X, yc).pvalues_]
        raise KeyError(name)

    owner = {"MLKRDiagonal": lambda: knnweights.MLKRDiagonal,
             "WeightedKNNRegressor": lambda: classifiers.WeightedKNNRegressor,
             "KNNRegressor": lambda: classifiers.KNNRegressor,
             "PairMoments": lambda: knnweights.significance.PairMoments,
             "IRelief continuous": lambda: knnweights.IRelief}.get(name, lambda: knnweights.ReliefF)
    return owner(), run


def _reproduction(name):
    """The reproduction's own components on one split of a small problem."""

    def run():
        X, y = _problem(n=80, d=10, seed=3)
        tr, te = np.arange(0, 80, 2), np.arange(1, 80, 2)
        if name == "_Run":
            from knnweights.reproduce.mdm import _Run as cls

            out = cls("soft", C=1.0)(X[tr], y[tr], X[te], y[te], random_state=0)
            return np.array([out["accuracy"], out.get("n_nonzero", 0)], float)
        if name == "_SQPFWPathKNN":
            from knnweights.reproduce.sqpfw import _SQPFWPathKNN as cls

            out = cls([0.1, 1.0, 10.0], max_breakpoints=200)(X[tr], y[tr], X[te], y[te], X_val=X[te], y_val=y[te],
                                                             random_state=0)
            return np.array([out["accuracy"] if isinstance(out, dict) else out], float)
        if name == "HalvingElimination":
            from knnweights import ReliefF
            from knnweights.evaluation.elimination import HalvingElimination as cls

            est = cls(ReliefF(), min_features=3, cv=3, random_state=0).fit(X[tr], y[tr])
            return np.r_[est.get_support().astype(float), est.score(X[te], y[te])]
        if name == "RemoveLowestWeights":
            from knnweights import ReliefF
            from knnweights.evaluation.pipelines import RemoveLowestWeights as cls

            return np.asarray(cls(ReliefF(), share=0.5).fit(X[tr], y[tr]).transform(X[te]), float)
        if name == "WekaNaiveBayes":
            from knnweights.reproduce._weka import WekaNaiveBayes as cls

            return np.asarray(cls().fit(X[tr], y[tr]).predict(X[te]), float)
        if name == "weka_chi_squared":
            from knnweights.reproduce._weka_chi2 import weka_chi_squared

            return np.asarray(weka_chi_squared(X, y), float)
        raise KeyError(name)

    def owner():
        import importlib

        where = {"_Run": "knnweights.reproduce.mdm", "_SQPFWPathKNN": "knnweights.reproduce.sqpfw",
                 "HalvingElimination": "knnweights.evaluation.elimination",
                 "RemoveLowestWeights": "knnweights.evaluation.pipelines",
                 "WekaNaiveBayes": "knnweights.reproduce._weka",
                 "weka_chi_squared": "knnweights.reproduce._weka_chi2"}[name]
        return getattr(importlib.import_module(where), name)

    return owner, run


def cases():
    """``{name: (owner or a function returning it, run)}``: one small fixed computation per versioned component."""
    fast = {"IM4E": {"max_iter": 200, "random_state": 0}, "EFW": {"random_state": 0}, "ERelief": {"random_state": 0},
            "Simba": {"random_state": 0}, "GFlip": {"random_state": 0}, "NCADiagonal": {"random_state": 0},
            "Relief": {"random_state": 0}, "ReliefF": {"n_neighbors": 5}, "SQPFW": {"theta": 1.0},
            "LHRelief": {"max_iter": 200}}
    out = {}
    import knnweights

    for name in knnweights.WEIGHTERS:
        out[name] = _weighter(name, **fast.get(name, {}))
    for name in ("ExpectedDistanceClassifier", "HKNN", "CKNN", "WeightedKNN", "KNNClassifier"):
        out[name] = _classifier(name)
    for name in ("SelectTopK", "TuRF"):
        out[name] = _selector(name)
    for name in ("MLKRDiagonal", "WeightedKNNRegressor", "KNNRegressor", "RReliefF", "IRelief continuous",
                 "PairMoments"):
        out[name] = _regression(name)
    for name in ("_Run", "_SQPFWPathKNN", "HalvingElimination", "RemoveLowestWeights", "WekaNaiveBayes",
                 "weka_chi_squared"):
        out[name] = _reproduction(name)
    return out


def _owner(obj):
    return obj() if callable(obj) and not isinstance(obj, type) and obj.__name__ == "owner" else obj


def _version(owner):
    return owner.__dict__.get("_algorithm_version")


def _compute(run, rec=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if rec is not None and "params" in rec:
            return run(rec["params"])
        return run()


def _recorded():
    return json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}


@pytest.mark.parametrize("name", sorted(cases()))
def test_result_matches_the_record_of_its_version(name):
    owner, run = cases()[name]
    version = _version(_owner(owner))
    assert isinstance(version, int), f"{name} declares no _algorithm_version"
    rec = _recorded().get(name)
    assert rec is not None, f"{name}: no golden record; run `python tests/test_golden.py {name}`"
    assert rec["version"] == version, (
        f"{name}: _algorithm_version is {version}, the golden record is of version {rec['version']}: record it "
        f"again in the commit that bumps the version (`python tests/test_golden.py {name}`)")
    got = _compute(run, rec)
    want = np.asarray(rec["value"], float)
    scale = max(float(np.abs(want).max(initial=0.0)), 1e-300)
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL * scale,
                               err_msg=f"{name} changed its results without a version bump (version {version})")


def test_every_versioned_class_has_a_golden_case():
    from knnweights.reproduce._versions import current_versions

    missing = set(current_versions()) - set(cases()) - {"protocol", "BaseWeighter"}
    assert not missing, f"versioned components without a golden case: {sorted(missing)}"


def record(names=None):
    """Compute and write the golden values of ``names`` (default: all) with their current versions."""
    data = _recorded()
    for name, (owner, run) in sorted(cases().items()):
        if names and name not in names:
            continue
        data[name] = {"version": _version(_owner(owner)), "value": np.asarray(_compute(run), float).tolist()}
        if hasattr(run, "params"):
            data[name]["params"] = run.params()
        print(f"recorded {name} (version {data[name]['version']})")
    GOLDEN.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    record(sys.argv[1:] or None)
