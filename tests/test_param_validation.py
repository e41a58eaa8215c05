"""Constructor-parameter validation (``knnweights.utils.validate_params``).

Our constraint classes replace scikit-learn's private ``sklearn.utils._param_validation``;
that module is imported here only as the independent reference: for every estimator,
every parameter and a set of probe values, both accept the same values and word the
same error.
"""

import numbers
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils import _param_validation as sk_validation  # the reference only

import knnweights
from knnweights.classifiers import CKNN, HKNN, ExpectedDistanceClassifier, WeightedKNN, WeightedKNNRegressor
from knnweights.evaluation import HalvingElimination, RemoveLowestWeights
from knnweights.selection import SelectTopK, TuRF
from knnweights.utils import HasMethods, Interval, InvalidParameterError, StrOptions, validate_params


def _estimators():
    weighter = knnweights.ReliefF(n_neighbors=1)
    ests = [cls() for cls in knnweights.WEIGHTERS.values()]
    ests += [knnweights.MLKRDiagonal(), ExpectedDistanceClassifier(), HKNN(), CKNN(), WeightedKNN(weighter),
             WeightedKNNRegressor(knnweights.MLKRDiagonal(max_iter=5)), SelectTopK(weighter, k=2), TuRF(weighter),
             RemoveLowestWeights(weighter), HalvingElimination(weighter, min_features=2, cv=2)]
    return ests


ESTIMATORS = _estimators()
IDS = [type(e).__name__ for e in ESTIMATORS]


def _constraints(est):
    merged = {}
    for klass in reversed(type(est).__mro__):
        merged.update(vars(klass).get("_parameter_constraints", {}))
    return merged


def _as_sklearn(spec):
    if isinstance(spec, Interval):
        return sk_validation.Interval(spec.type, spec.left, spec.right, closed=spec.closed)
    if isinstance(spec, StrOptions):
        return sk_validation.StrOptions(set(spec.options))
    if isinstance(spec, HasMethods):
        return sk_validation.HasMethods(list(spec.methods))
    return spec


class _BadType:
    pass


def _probes(specs):
    values = [_BadType(), None, True, False, np.True_, 0, 1, -1, 2, 3, 0.0, 0.5, 1.0, 1.5, -0.5, 2**33, np.nan, np.inf,
              -np.inf, np.int64(4), np.float32(0.25), "auto", "bogus", "", [1, 2], np.array([0.5, 1.0]),
              np.random.RandomState(0), np.random.default_rng(0), knnweights.ReliefF(), WeightedKNN]
    for s in specs:
        if isinstance(s, StrOptions):
            values += sorted(s.options)
        if isinstance(s, Interval):
            values += [b for b in (s.left, s.right) if b is not None]
            values += [np.nextafter(float(b), d) for b in (s.left, s.right) if b is not None for d in (-np.inf, np.inf)]
    return values


def _sorted_options(message):
    # scikit-learn lists a StrOptions set in its iteration order; ours sorts it
    return re.sub(r"among \{([^}]*)\}", lambda m: "among {" + ", ".join(sorted(m.group(1).split(", "))) + "}",
                  message)


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_every_parameter_is_declared(est):
    assert set(_constraints(est)) == set(est.get_params(deep=False)), type(est).__name__


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_accepts_and_words_errors_as_scikit_learn(est):
    constraints = _constraints(est)
    reference = {name: [_as_sklearn(s) for s in specs] for name, specs in constraints.items()}
    validate_params(est)  # the defaults are valid
    n_rejected = 0
    for name, specs in constraints.items():
        for value in _probes(specs):
            probe = clone(est).set_params(**{name: value})
            try:
                validate_params(probe)
                ours = None
            except InvalidParameterError as exc:
                ours = str(exc)
                n_rejected += 1
            try:
                sk_validation.validate_parameter_constraints(reference, probe.get_params(deep=False),
                                                             caller_name=type(est).__name__)
                theirs = None
            except sk_validation.InvalidParameterError as exc:
                theirs = _sorted_options(str(exc))
            assert ours == theirs, (name, value)
    assert n_rejected > 0


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_fit_rejects_a_value_of_no_accepted_type(est):
    # scikit-learn's check_param_validation, first part: every parameter, through fit
    rng = np.random.RandomState(0)
    X = rng.uniform(size=(20, 5))
    y = rng.uniform(size=20) if isinstance(est, WeightedKNNRegressor) else rng.randint(0, 2, size=20)
    for name in est.get_params(deep=False):
        probe = clone(est).set_params(**{name: _BadType()})
        match = rf"The '{name}' parameter of {type(est).__name__} must be .* Got .* instead\."
        with pytest.raises(InvalidParameterError, match=match):
            probe.fit(X, y)


def test_error_is_a_value_and_type_error():
    with pytest.raises(ValueError, match=r"^The 'n_neighbors' parameter of ReliefF must be an int in the range "
                                         r"\[1, inf\)\. Got 0 instead\.$"):
        knnweights.ReliefF(n_neighbors=0).fit(np.eye(4), [0, 0, 1, 1])
    with pytest.raises(TypeError, match="'normalize' parameter of ReliefF"):
        knnweights.ReliefF(normalize="yes").fit(np.eye(4), [0, 0, 1, 1])


@pytest.mark.parametrize("closed, inside", [("left", [0, 0.5]), ("right", [0.5, 1]), ("both", [0, 0.5, 1]),
                                            ("neither", [0.5])])
def test_interval_bounds(closed, inside):
    real = Interval(numbers.Real, 0, 1, closed=closed)
    for v in (0, 0.5, 1, -1e-12, 1 + 1e-12, np.nan):
        assert real.is_satisfied_by(v) == (v in inside), v
    integral = Interval(numbers.Integral, 1, None, closed="left")
    assert integral.is_satisfied_by(np.int32(1)) and integral.is_satisfied_by(True)
    assert not integral.is_satisfied_by(1.0) and not integral.is_satisfied_by(0)
    assert str(real).startswith("a float in the range ") and str(integral) == "an int in the range [1, inf)"


def test_bad_constraints_are_refused():
    with pytest.raises(ValueError, match="type must be"):
        Interval(float, 0, 1, closed="both")
    with pytest.raises(ValueError, match="closed must be"):
        Interval(numbers.Real, 0, 1, closed="open")
    with pytest.raises(ValueError, match="right must be larger"):
        Interval(numbers.Real, 1, 0, closed="both")
    with pytest.raises(TypeError, match="bounds"):
        Interval(numbers.Integral, 0.5, None, closed="left")

    class Odd(knnweights.ReliefF):
        _parameter_constraints = {**knnweights.ReliefF._parameter_constraints, "n_neighbors": ["an int"]}

    with pytest.raises(ValueError, match="unknown parameter constraint 'an int'"):
        validate_params(Odd())


def test_a_subclass_entry_replaces_its_base_entry():
    class Wider(knnweights.ReliefF):
        _parameter_constraints = {"n_neighbors": [Interval(numbers.Integral, 0, None, closed="left")]}

    validate_params(Wider(n_neighbors=0))  # the subclass's own entry
    with pytest.raises(InvalidParameterError, match="'normalize' parameter of Wider"):  # the base's entry
        validate_params(Wider(normalize="yes"))
