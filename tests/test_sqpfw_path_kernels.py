"""The compiled pieces of the SQP-FW path and of the fresh EQP solve reproduce, bit for bit,
the NumPy / row-by-row reference code they replaced."""

import numpy as np
import pytest
from numba import njit

from knnweights._solvers import _active_set_kernels as K
from knnweights._solvers import _active_set_linalg as KL
from knnweights._solvers import _active_set_path as KP


def _state(rng, n, width, p_eq=0.25, p_less=0.15):
    """Random candidate lists and ``-1/0/+1`` states with at least one ``[=]`` member per row."""
    cand = np.array([rng.permutation(n)[:width] for _ in range(n)], dtype=np.int64)
    state = rng.choice(np.array([-1, 0, 1], np.int8), size=(n, width), p=[p_less, p_eq, 1 - p_eq - p_less])
    state[np.arange(n), rng.randint(0, width, n)] = 0
    return cand, state


def _reference_events(Z, alpha0, alpha1, sides, ii_all, tt_all, mth, mu0, mu1, ton, inv_n, dt):
    """The path's dual events as the NumPy code before the compiled pass computed them."""
    event = None
    if Z.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            a1 = np.where(Z & (alpha1 > 1e-15), alpha1, np.nan)
            t = np.where(np.isfinite(a1), np.maximum(-alpha0 / a1, 0.0), np.inf)
        j = int(np.argmin(t))
        if t[j] < dt:
            dt, event = t[j], (1, j, -1, 0)
    n = sides[0][1].shape[0]
    for s, (_cand, state, krank) in enumerate(sides):
        lo, hi = (0, mth) if s == 0 else (mth, ii_all.size)
        ii, tt = ii_all[lo:hi], tt_all[lo:hi]
        rep = np.argmax(state == 0, axis=1)
        Ms = []
        for mu, total in ((mu0, ton), (mu1, inv_n)):
            total = total if s == 0 else -total
            B = np.zeros(state.shape)
            B[ii, tt] = mu[1:][lo:hi]
            B[np.arange(n), rep] = total - np.bincount(ii, mu[1:][lo:hi], n) if ii.size else total
            Ms.append(B)
        nl, ne = (state == -1).sum(axis=1), (state == 0).sum(axis=1)
        eq = state == 0
        less = eq & ((ne >= 2) & (nl <= krank - 2))[:, None]
        more = eq & ((ne >= 2) & (nl + ne > krank))[:, None]
        for mask, sign, target in ((less, -1.0, -1), (more, 1.0, 1)):
            m1 = sign * Ms[1]
            ok = mask & (m1 > 1e-15)
            if ok.any():
                t = np.full(state.shape, np.inf)
                t[ok] = np.maximum(-(sign * Ms[0][ok]) / m1[ok], 0.0)
                f = int(np.argmin(t))
                if t.flat[f] < dt:
                    i, k = np.unravel_index(f, t.shape)
                    dt, event = t.flat[f], (2 + s, int(i), int(k), target)
    return dt, event


@pytest.mark.parametrize("seed", range(12))
def test_path_dual_events_match_numpy_reference(seed):
    rng = np.random.RandomState(seed)
    n, d, kh, km = 15, 30, 6, 8
    hc, hs = _state(rng, n, kh)
    mc, ms = _state(rng, n, km)
    kappa, lam = 1 + seed % 3, 1 + (seed // 3) % 3
    hrep, mrep = np.argmax(hs == 0, axis=1), np.argmax(ms == 0, axis=1)
    ties = [(i, k) for i in range(n) for k in range(kh) if hs[i, k] == 0 and k != hrep[i]]
    mth = len(ties)
    ties += [(i, k) for i in range(n) for k in range(km) if ms[i, k] == 0 and k != mrep[i]]
    ii = np.array([t[0] for t in ties], np.int64)
    tt = np.array([t[1] for t in ties], np.int64)
    mu1 = rng.randn(ii.size + 1)
    mu0 = -mu1 * (0.5 + rng.rand(ii.size + 1))  # mostly not yet at the release sign: t > 0
    Z = rng.rand(d) < 0.6
    alpha0 = np.where(Z, -np.abs(rng.randn(d)), -np.inf)
    alpha1 = np.where(Z, rng.randn(d), -np.inf)
    if seed % 3 == 1:  # a zero weight released first
        alpha0[Z] *= 1e-6
    elif seed % 3 == 2:  # no zero weight and the hits late: a miss released first
        alpha1[Z] = -1.0
        mu0[1:mth + 1] *= 1e6
    if seed % 4 == 0:  # exact ties between candidates: the first in C order must win
        alpha0[Z] = -1.0
        alpha1[Z] = 2.0
    theta, inv_n = 0.3 * seed, 1.0 / n
    for dt in (np.inf, 0.5, 1e-3):
        ref_dt, ref_event = _reference_events(Z, alpha0, alpha1, [(hc, hs, kappa), (mc, ms, lam)], ii, tt, mth, mu0,
                                              mu1, theta * inv_n, inv_n, dt)
        got = KP._path_dual_events(Z, alpha0, alpha1, hc, hs, mc, ms, kappa, lam, ii, tt, mth, mu0, mu1,
                                  theta * inv_n, inv_n, dt)
        assert got[0] == ref_dt or (np.isinf(got[0]) and np.isinf(ref_dt))
        assert (None if got[1] == 0 else (got[1], got[2], got[3] if got[1] > 1 else -1, got[4])) == ref_event


@pytest.mark.parametrize("seed", range(4))
def test_path_eqp_matches_full_tie_rows(seed):
    """Tie rows over P and Z filled directly give the bits of E built over all features."""
    rng = np.random.RandomState(seed)
    n, d = 14, 40
    X = rng.randn(n, d)
    hc, hs = _state(rng, n, 6, p_eq=0.3)
    mc, ms = _state(rng, n, 7, p_eq=0.3)
    Z = rng.rand(d) < 0.5
    G = rng.randn(2, d)
    dw, mu, EZT, ii, tt, mth = KP._path_eqp(X, hc, hs, mc, ms, Z, G)
    parts = []
    every = np.arange(d, dtype=np.int64)
    for cand, state in ((hc, hs), (mc, ms)):
        m = int(K._n_ties(state))
        AT = np.empty((d, m + 1))
        K._fill_ties_at(X, cand, state, np.argmax(state == 0, axis=1).astype(np.int64), every, d, AT,
                        np.empty(m, np.int64), np.empty(m, np.int64), 0)
        parts.append(AT[:, 1:].T)
    E = np.vstack(parts)
    assert np.array_equal(EZT, E[:, Z].T) and mth == parts[0].shape[0]
    P = np.flatnonzero(~Z).astype(np.int64)
    AT = np.ones((P.size, E.shape[0] + 1))
    AT[:, 1:] = E[:, P].T
    dw_ref, mu_ref = np.zeros_like(dw), np.empty_like(mu)
    KL._eqp_multi(G, P, P.size, AT, dw_ref, mu_ref)
    assert np.array_equal(dw, dw_ref) and np.array_equal(mu, mu_ref)


@njit(cache=False)
def _row_by_row(AT, p, m, x, t, subtract):
    for q in range(p):
        s = t[q]
        for r in range(m):
            if subtract:
                s -= AT[q, r] * x[r]
            else:
                s += AT[q, r] * x[r]
        t[q] = s


@pytest.mark.parametrize("p, m", [(1, 1), (7, 3), (300, 29), (64, 65)])
def test_residual_pass_matches_row_by_row_loop(p, m):
    """The residual passes of the fresh EQP solve, run along the rows of AT^T, equal the row loop bit for bit."""
    rng = np.random.RandomState(p + m)
    AT = rng.randn(p, m) * np.exp(rng.randn(p, m) * 3)
    x = rng.randn(m)
    for subtract in (True, False):
        t0 = rng.randn(p)
        a, b, c = t0.copy(), t0.copy(), t0.copy()
        KL._acc_rows(AT, np.ascontiguousarray(AT.T), p, m, x, a, subtract)  # along the rows of AT^T
        KL._acc_rows(AT, np.empty((0, 0)), p, m, x, c, subtract)  # the small-system loop
        _row_by_row(AT, p, m, x, b, subtract)
        assert np.array_equal(a, b) and np.array_equal(c, b)


@njit(cache=False)
def _forward_row_by_row(U, fm, y):
    for r in range(fm):
        y[r] /= U[r, r]
        yr = y[r]
        for j in range(r + 1, fm):
            y[j] -= yr * U[r, j]


@njit(cache=False)
def _sub_row_by_row(B, fm, p, x, res):
    for f in range(fm):
        xf = x[f]
        for q in range(p):
            res[q] -= B[f, q] * xf


@pytest.mark.parametrize("fm", [1, 3, 4, 9, 130])
def test_four_row_passes_match_row_at_a_time(fm):
    """Forward substitution and residual passes of the maintained-factor solve, four rows per
    pass, give the row-at-a-time loops' bits (multiply-subtracts in the same order, none fused)."""
    rng = np.random.RandomState(fm)
    A = rng.randn(fm, fm + 5)
    U = np.linalg.cholesky(A @ A.T).T.copy()
    b = rng.randn(fm)
    y1, y2 = b.copy(), b.copy()
    KL._forward_solve(U, fm, y1)
    _forward_row_by_row(U, fm, y2)
    assert np.array_equal(y1, y2)
    np.testing.assert_allclose(U.T @ y1, b, rtol=1e-5, atol=1e-8)  # and it solves U^T y = b
    p = 37
    B, x, r0 = rng.randn(fm, p), rng.randn(fm), rng.randn(p)
    r1, r2 = r0.copy(), r0.copy()
    KL._sub_rows(B, fm, p, x, r1)
    _sub_row_by_row(B, fm, p, x, r2)
    assert np.array_equal(r1, r2)
