"""Lmba is not faithful-implementable from the available material: fit must say so."""

import numpy as np
import pytest
from sklearn.base import clone

from knnweights import WEIGHTERS, Lmba
from knnweights.weighters.lmba import LMBA_NOT_IMPLEMENTED_REASON


def _data():
    rng = np.random.RandomState(0)
    return rng.normal(size=(20, 3)), np.repeat([0, 1], 10)


def test_fit_raises_not_implemented_with_the_reason():
    X, y = _data()
    with pytest.raises(NotImplementedError) as exc:
        Lmba().fit(X, y)
    msg = str(exc.value)
    assert msg == LMBA_NOT_IMPLEMENTED_REASON
    for needed in ("Li & Lu 2009", "loss function", "optimiser", "not available"):
        assert needed in msg
    assert not hasattr(Lmba(), "feature_importances_")


def test_parameters_are_validated_before_the_refusal():
    X, y = _data()
    with pytest.raises(ValueError, match="n_neighbors"):
        Lmba(n_neighbors=0).fit(X, y)
    with pytest.raises(ValueError, match="2 classes"):
        Lmba().fit(X, np.zeros(20))


def test_is_a_registered_estimator_with_params():
    assert WEIGHTERS["Lmba"] is Lmba
    est = clone(Lmba(n_neighbors=3))
    assert est.get_params() == {"n_neighbors": 3}
