"""The ramp ``diff`` on genotype bytes: scored without a float copy where it is the 0/1 mismatch of two codes,
equal to the float copy's ramp; refused, naming the fix, where it is not."""

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from ramp_reference import ramp_diff_function

from knnweights import SURF, IRelief, MultiSURF, Relief, ReliefF

ESTIMATORS = [ReliefF(n_neighbors=4), Relief(), SURF(), MultiSURF(), IRelief(max_iter=4)]
IDS = ["ReliefF", "Relief", "SURF", "MultiSURF", "IRelief"]


def _genotypes(top=2, dtype=np.uint8):
    rs = np.random.RandomState(3)
    G = rs.randint(0, top + 1, size=(40, 12)).astype(dtype)
    G[:, 3] = rs.randint(0, 2, 40)  # a SNP seen with two adjacent genotypes
    G[:, 4] = rs.randint(1, 3, 40)
    G[:, 5] = 1  # constant
    y = (G[:, 0] + rs.randint(0, 2, 40) > 1).astype(int)
    return G, y


def _fit(est, X, y, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # IRelief's few iterations
        return est.set_params(**params).fit(X, y)


@pytest.mark.parametrize("est", ESTIMATORS, ids=IDS)
def test_default_ramp_on_bytes_is_the_float_copys(est):
    G, y = _genotypes()
    X = G.astype(float)
    diff = ramp_diff_function(X, 0.04, 0.1)  # the definition: on 0/1/2 codes every two different codes differ by 1
    assert all(np.array_equal(diff(i, j), (X[i] != X[j]) * 1.0) for i in range(40) for j in range(40))
    on_bytes = _fit(est, G, y, diff="ramp")
    w, disc = on_bytes.feature_importances_.copy(), on_bytes.discrete_features_.copy()
    on_floats = _fit(est, X, y, diff="ramp")
    assert_allclose(w, on_floats.feature_importances_, rtol=1e-12, atol=1e-15)
    assert np.array_equal(disc, on_floats.discrete_features_)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_ramp_within_one_step_of_wider_codes(dtype):
    G, y = _genotypes(top=9, dtype=dtype)  # ranges 9, 1 and 1: a step is at least 1/9 > t_diff
    est = _fit(ReliefF(n_neighbors=4), G, y, diff="ramp", ramp=(0.02, 0.1))
    assert_allclose(est.scores_, _fit(ReliefF(n_neighbors=4), G.astype(float), y, diff="ramp",
                                      ramp=(0.02, 0.1)).scores_, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("top, ramp", [(2, (0.1, 0.6)), (2, (0.6, 0.9)), (15, (0.04, 0.1))])
def test_ramp_between_0_and_1_on_bytes_is_refused(top, ramp):
    G, y = _genotypes(top=top)
    with pytest.raises(NotImplementedError, match=r"astype\(float\).*genotype_diff"):
        ReliefF(diff="ramp", ramp=ramp).fit(G, y)


def test_ramp_on_bytes_with_unknown_values_is_refused():
    G, y = _genotypes()
    G[2, 1] = 255
    with pytest.raises(NotImplementedError, match="missing"):
        ReliefF(diff="ramp", missing="diff").fit(G, y)


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=4), MultiSURF()], ids=["ReliefF", "MultiSURF"])
def test_default_ramp_pvalues_on_bytes_are_the_float_copys(est):
    G, y = _genotypes()
    on_bytes = _fit(est, G, y, diff="ramp", pvalues=True).pvalues_.copy()
    assert_allclose(on_bytes, _fit(est, G.astype(float), y, diff="ramp", pvalues=True).pvalues_, rtol=1e-10,
                    atol=1e-15)
