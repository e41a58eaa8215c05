"""SQP-FW at microarray shapes (d >= 64: the maintained Gram factor, the all-pairs ratio test) and on
badly scaled (raw) features.

``tests/data/sqpfw_reference_maint.npz`` holds recorded weights and objectives on four d >> n cases.
The pivot sequence on such data is decided by rounding at degenerate points (it differs between
AVX2 and AVX-512 CPUs, and between data one ulp apart), and so may the local minimum it ends in; the
tests assert what the method guarantees: a feasible point, descent, local minimality, and at least half
the recorded descent from the uniform start (a run that stops early fails; another local minimum does not).
Regenerate with ``python tests/test_sqpfw_reference.py``.
"""

from pathlib import Path

import numpy as np
import pytest

from knnweights._solvers import _active_set_linalg
from knnweights._solvers.active_set import sqpfw_active_set, sqpfw_objective
from knnweights.engine.neighbors import nearest_hits_misses

REFERENCE = Path(__file__).parent / "data" / "sqpfw_reference_maint.npz"
# (n, d, seed, theta): every case reaches |P| >= 64 with >= 16 constraint rows (maintained factor)
CASES = [(40, 100, 0, 1.0), (36, 150, 1, 3.0), (50, 80, 2, 10.0), (30, 200, 3, 0.5)]


def _data(n, d, seed):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = (X[:, 0] + 0.8 * X[:, 1] + 0.3 * rng.randn(n) > 0).astype(np.int64)
    return X, y


def _raw(n, d, seed):
    """Features of scales 1 ... 1000 around offsets up to 5000 (as raw microarray intensities)."""
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d) * 10 ** rng.uniform(0, 3, d) + 5 * 10 ** rng.uniform(0, 3, d)
    Xs = (X - X.mean(0)) / X.std(0)
    return X, (Xs[:, 0] + Xs[:, 1] > 0).astype(np.int64)


@pytest.mark.parametrize("k", range(len(CASES)))
def test_microarray_shapes_reach_a_local_minimum_as_good_as_the_reference(k, assert_descent_to_local_minimum):
    ref = np.load(REFERENCE)
    n, d, seed, theta = CASES[k]
    X, y = _data(n, d, seed)
    r = sqpfw_active_set(X, y, theta)
    assert r.status == 0
    assert r.x.min() >= 0 and r.x.sum() == pytest.approx(1.0, abs=1e-10)
    assert_descent_to_local_minimum(X, y, r, theta, history_tol=1e-9, move=1e-7, min_tol=("rel", 1e-9), seed=k)
    # another local minimum than the recorded one is allowed, a much worse one is not: on cases 1 and 3, data one
    # ulp apart end in local minima from 86 % to 118 % of the recorded descent from the uniform start
    start = sqpfw_objective(X, y, np.full(d, 1.0 / d), theta)
    assert r.fun - start <= 0.5 * (float(ref[f"fun{k}"]) - start)


def _assert_tn_consistent(X, y, w, state_hits, cand_hits):
    """The target hit of every sample (kappa = 1) is at the distance of its first '=' member."""
    nb = nearest_hits_misses(X, y, w, 1, "sqeuclidean")
    rep = cand_hits[np.arange(len(y)), np.argmax(state_hits == 0, axis=1)]
    d_rep = ((X - X[rep]) ** 2) @ w
    d_nn = ((X - X[nb.hit_idx[:, 0]]) ** 2) @ w
    np.testing.assert_allclose(d_rep, d_nn, rtol=1e-9, atol=1e-12 * np.abs(d_rep).max())


@pytest.mark.parametrize("maint_min_p", [64, -1])
def test_badly_scaled_features_keep_the_simplex(monkeypatch, maint_min_p, assert_descent_to_local_minimum):
    """Raw-scale features (tie rows ~1e6 x the all-ones row): the EQP equilibrates its rows, so the
    sum constraint holds (the unscaled SVD fallback dropped it: sum(w) - 1 = 3e5 on this case) and
    the result is a TN-consistent local minimum (Theorem 7) with a non-increasing objective."""
    import knnweights._solvers.active_set as aset

    monkeypatch.setattr(aset, "MAINT_MIN_P", maint_min_p)
    X, y = _raw(40, 80, 0)
    r = sqpfw_active_set(X, y, 1.0)
    assert r.status == 0
    assert abs(r.x.sum() - 1.0) < 1e-9 and r.x.min() >= 0.0
    _assert_tn_consistent(X, y, r.x, r.hit_state, r.hit_candidates)
    assert_descent_to_local_minimum(X, y, r, 1.0, history_tol=1e-9, move=1e-7, min_tol=("rel", 1e-9), seed=1)


def test_equilibrated_eqp_is_the_least_squares_projection():
    """EQP (4) with constraint rows of scales 1 ... 1e8: the fresh solve returns the projection of -g
    onto the null space of the rows (sum(dw) = 0 included), as a column-scaled lstsq gives it."""

    rng = np.random.RandomState(3)
    p, m = 60, 20
    AT = np.empty((p, m))
    AT[:, 0] = 1.0
    AT[:, 1:] = rng.randn(p, m - 1) * 10 ** rng.uniform(4, 8, m - 1)
    g = rng.randn(p)
    P = np.arange(p, dtype=np.int64)
    dw, mu = np.zeros(p), np.empty(m)
    _active_set_linalg._eqp_multi(g[None], P, p, np.ascontiguousarray(AT), dw[None], mu[None])
    s = 1.0 / np.linalg.norm(AT, axis=0)
    x = np.linalg.lstsq(AT * s, -g, rcond=None)[0]
    ref = -(g + (AT * s) @ x)
    np.testing.assert_allclose(dw, ref, rtol=0, atol=1e-10)
    assert abs(dw.sum()) < 1e-10
    np.testing.assert_allclose(mu, s * x, rtol=1e-6)


def _make_reference():
    from knnweights.engine.linalg import single_thread_blas

    out = {}
    with single_thread_blas():
        for k, (n, d, seed, theta) in enumerate(CASES):
            r = sqpfw_active_set(*_data(n, d, seed), theta)
            out[f"w{k}"], out[f"nit{k}"], out[f"fun{k}"] = r.x, r.nit, r.fun
    np.savez_compressed(REFERENCE, **out)


if __name__ == "__main__":
    _make_reference()


def test_zero_step_multiplier_combination_matches_the_tie_rows():
    """``E^T mu`` of the zero steps (expanded form: per-sample sums of rows of X) equals the sum
    over the tie rows ``mu_r (eps_{i,c_r} - eps_{i,rep_i})``."""
    from knnweights._solvers import _active_set_kernels as k

    rng = np.random.RandomState(0)
    n, d, kh, km = 30, 300, 12, 15
    X = 3.0 * rng.randn(n, d)
    hc = np.array([rng.permutation(n)[:kh] for _ in range(n)], np.int64)
    mc = np.array([rng.permutation(n)[:km] for _ in range(n)], np.int64)
    hs = rng.choice([-1, 0, 1], size=(n, kh)).astype(np.int8)
    ms = rng.choice([-1, 0, 1], size=(n, km)).astype(np.int8)
    hs[:, 3] = 0
    ms[:, 2] = 0
    hrep = np.argmax(hs == 0, 1).astype(np.int64)
    mrep = np.argmax(ms == 0, 1).astype(np.int64)
    mth = k._n_ties(hs)
    mt = mth + k._n_ties(ms)
    skey, ii, tt = np.zeros((mt + 1, 4), np.int64), np.empty(mt, np.int64), np.empty(mt, np.int64)
    k._tie_keys(hs, hrep, 1, skey, ii, tt, 0)
    k._tie_keys(ms, mrep, 2, skey, ii, tt, mth)
    mu = rng.randn(mt + 1)
    acc = np.empty(d)
    k._tie_combination(X, hc, hrep, mc, mrep, ii, tt, mth, mt, mu, acc)
    ref = np.zeros(d)
    for r in range(mt):
        i = ii[r]
        cand, rep = (hc, hrep) if r < mth else (mc, mrep)
        ref += mu[r + 1] * ((X[i] - X[cand[i, tt[r]]]) ** 2 - (X[i] - X[cand[i, rep[i]]]) ** 2)
    np.testing.assert_allclose(acc, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
