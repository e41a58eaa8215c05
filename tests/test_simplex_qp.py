"""The batched simplex QP solver: KKT conditions and agreement with independent references."""

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize

from knnweights._solvers.simplex_qp import hull_projections, simplex_least_squares, solve_simplex_qp


def _kkt_violation(G, b, a):
    """Largest violation of dual feasibility and complementarity (the multiplier is a.g)."""
    g = np.einsum("nij,nj->ni", G, a) - b
    mu = np.einsum("ni,ni->n", a, g)
    slack = g - mu[:, None]
    return np.maximum(-slack.min(axis=1), np.abs(a * slack).max(axis=1))


def _brute_force(G, b):
    """Minimum over every support S of the affine minimiser on S that is feasible."""
    k = G.shape[0]
    best_val, best_a = np.inf, None
    for m in range(1, k + 1):
        for S in itertools.combinations(range(k), m):
            S = list(S)
            M = np.zeros((m + 1, m + 1))
            M[:m, :m] = G[np.ix_(S, S)]
            M[:m, m] = 1.0
            M[m, :m] = 1.0
            rhs = np.concatenate([b[S], [1.0]])
            sol = np.linalg.lstsq(M, rhs, rcond=None)[0]
            if np.abs(M @ sol - rhs).max() > 1e-9 or sol[:m].min() < -1e-12:
                continue
            a = np.zeros(k)
            a[S] = np.maximum(sol[:m], 0)
            a /= a.sum()
            val = 0.5 * a @ G @ a - b @ a
            if val < best_val:
                best_val, best_a = val, a
    return best_val, best_a


def _random_instances(rng, n, k, d, degenerate):
    x = rng.normal(size=(n, d))
    H = rng.normal(size=(n, k, d))
    w = rng.random(d)
    if degenerate:
        w[rng.random(d) < 0.3] = 0.0  # zero weights
        H[:, 1] = H[:, 0]  # duplicate neighbours
        H[::3, -1] = 2 * x[::3] - H[::3, 0]  # x inside the hull (midpoint of two prototypes)
        H[1::5, -1] = x[1::5]  # x is one of the prototypes
    return x, H, w


@pytest.mark.parametrize("k, d", [(2, 3), (4, 2), (5, 3), (5, 40), (7, 4), (8, 2)])
@pytest.mark.parametrize("degenerate", [False, True])
def test_least_squares_meets_kkt_and_brute_force(k, d, degenerate):
    rng = np.random.default_rng(1000 * k + d + degenerate)
    n = 60
    x, H, w = _random_instances(rng, n, k, d, degenerate)
    res = simplex_least_squares(x, H, w)
    assert res.success and (res.status == 0).all()
    A = res.x
    assert A.min() >= 0.0
    np.testing.assert_allclose(A.sum(axis=1), 1.0, atol=1e-12)
    D = H - x[:, None, :]
    Q = np.einsum("nid,njd,d->nij", D, D, w)
    assert _kkt_violation(Q, np.zeros((n, k)), A).max() < 1e-8
    for i in range(n):
        val, _ = _brute_force(Q[i], np.zeros(k))
        assert abs(res.fun[i] - val) < 1e-9 * max(1.0, abs(val))
    # the projection is the weighted combination of the prototypes
    np.testing.assert_allclose(res.projection, np.einsum("nk,nkd->nd", A, H), atol=1e-12)


def test_general_form_matches_slsqp_and_kkt():
    rng = np.random.default_rng(7)
    n, k = 40, 6
    R = rng.normal(size=(n, k, 3))
    G = R @ np.swapaxes(R, 1, 2)  # rank 3 < k: singular
    b = rng.normal(size=(n, k))
    res = solve_simplex_qp(G, b)
    assert res.success
    assert _kkt_violation(G, b, res.x).max() < 1e-8
    for i in range(n):
        Gi, bi = G[i], b[i]
        sl = minimize(
            lambda a, Gi=Gi, bi=bi: 0.5 * a @ Gi @ a - bi @ a,
            np.full(k, 1 / k),
            jac=lambda a, Gi=Gi, bi=bi: Gi @ a - bi,
            method="SLSQP",
            bounds=[(0, None)] * k,
            constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1, "jac": lambda a: np.ones(k)}],
            options={"ftol": 1e-14, "maxiter": 500},
        )
        assert res.fun[i] <= sl.fun + 1e-9
        assert res.fun[i] >= _brute_force(G[i], b[i])[0] - 1e-9


def test_nearest_point_of_hull_is_the_known_geometric_answer():
    # x outside a segment's end; x above the middle of a square's side; x inside a triangle
    x = np.array([[3.0, 0.0], [0.5, 2.0], [0.2, 0.2]])
    H = np.array(
        [
            [[0.0, 0.0], [1.0, 0.0], [1.0, 0.0]],
            [[0.0, 0.0], [1.0, 0.0], [0.5, -1.0]],
            [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
        ]
    )
    res = simplex_least_squares(x, H)
    np.testing.assert_allclose(res.projection, [[1.0, 0.0], [0.5, 0.0], [0.2, 0.2]], atol=1e-12)
    np.testing.assert_allclose(res.x[2], [0.6, 0.2, 0.2], atol=1e-12)
    np.testing.assert_allclose(res.x[1], [0.5, 0.5, 0.0], atol=1e-12)


def test_all_zero_weights_and_scale_invariance():
    rng = np.random.default_rng(3)
    x, H, w = _random_instances(rng, 30, 5, 6, False)
    res0 = simplex_least_squares(x, H, np.zeros(6))
    assert res0.success and np.all(res0.fun == 0)
    np.testing.assert_allclose(res0.x.sum(axis=1), 1, rtol=1e-5, atol=1e-8)
    r1 = simplex_least_squares(x, H, w)
    r2 = simplex_least_squares(x, H, 1e6 * w)
    np.testing.assert_allclose(r1.projection, r2.projection, atol=1e-9)


def test_indexed_hull_projections_equal_the_dense_form():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(50, 7))
    XB = rng.normal(size=(30, 7))
    idx = rng.integers(0, 30, size=(50, 4))
    w = rng.random(7)
    c1, p1, s1 = hull_projections(X, XB, idx, w)
    dense = simplex_least_squares(X, XB[idx], w)
    np.testing.assert_allclose(p1, dense.projection, atol=1e-12)
    np.testing.assert_allclose(c1, dense.x, atol=1e-10)
    np.testing.assert_allclose(p1, np.einsum("nk,nkd->nd", c1, XB[idx]), atol=1e-12)
    assert (s1 == 0).all()


def test_bad_shapes_raise():
    with pytest.raises(ValueError, match="shape"):
        solve_simplex_qp(np.zeros((3, 2, 3)))
    with pytest.raises(ValueError, match="b must"):
        solve_simplex_qp(np.zeros((3, 2, 2)), np.zeros((3, 3)))


def test_hull_projections_reuses_the_rows_of_x_for_a_multiple_of_its_rows():
    # the hits' and the misses' hulls of the same samples in one batch (LH-RELIEF) without
    # stacking X twice: the same coefficients and projections as with X stacked, bit for bit
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 41))
    w = rng.random(41)
    idx = rng.integers(0, 30, size=(60, 4))
    a1, p1, _ = hull_projections(X, X, idx, w)
    a2, p2, _ = hull_projections(np.vstack([X, X]), X, idx, w)
    np.testing.assert_array_equal(a1, a2)
    np.testing.assert_array_equal(p1, p2)
    # and the Gram entries agree with a plain NumPy evaluation
    D = X[idx] - np.vstack([X, X])[:, None, :]
    Q = np.einsum("skf,f,slf->skl", D, w, D)
    ref = np.einsum("sk,skl,sl->s", a1, Q, a1)
    dist = np.einsum("sf,f,sf->s", p1 - np.vstack([X, X]), w, p1 - np.vstack([X, X]))
    np.testing.assert_allclose(dist, ref, rtol=1e-10)
    with pytest.raises(ValueError, match="multiple"):
        hull_projections(X, X, idx[:45], w)


def test_hull_gram_and_projection_kernels_give_the_same_bits_serial_and_parallel():
    from knnweights._solvers import simplex_qp as sq

    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 103))
    w = rng.random(103)
    idx = rng.integers(0, 40, size=(80, 5))
    A = rng.random((80, 5))
    Q1, Q2 = np.empty((80, 5, 5)), np.empty((80, 5, 5))
    sq._indexed_gram.serial(X, X, idx, w, Q1)
    sq._indexed_gram.threaded(X, X, idx, w, Q2)
    np.testing.assert_array_equal(Q1, Q2)
    P1, P2 = np.empty((80, 103)), np.empty((80, 103))
    sq.indexed_combination.serial(X, idx, A, P1)
    sq.indexed_combination.threaded(X, idx, A, P2)
    np.testing.assert_array_equal(P1, P2)
    np.testing.assert_allclose(P1, np.einsum("sk,skf->sf", A, X[idx]), rtol=1e-13)
