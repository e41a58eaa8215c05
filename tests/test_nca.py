"""NCADiagonal: objective and gradient against brute force and finite differences,
optimality (KKT) of the returned weights, recovery of informative features."""

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import NCADiagonal
from knnweights.weighters.nca import _mean_pairwise_sqdist, nca_diagonal_objective

# many small kernel and BLAS calls: one thread each (see conftest.one_thread)
pytestmark = pytest.mark.usefixtures("one_thread")


def _brute_force_nca(w, X, y):
    """sum_i p_i and its gradient with the full n x n x d difference array (tiny data only)."""
    diff2 = (X[:, None, :] - X[None, :, :]) ** 2
    D = diff2 @ w
    np.fill_diagonal(D, np.inf)
    E = np.exp(-(D - D.min(axis=1, keepdims=True)))
    P = E / E.sum(axis=1, keepdims=True)
    same = y[:, None] == y[None, :]
    p = (P * same).sum(axis=1)
    coef = p[:, None] * P - same * P
    grad = np.einsum("ij,ijk->k", coef, diff2)
    return p.sum(), grad


def _two_class_data(n=40, d=6, seed=0):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    X = rng.normal(size=(n, d))
    X[:, 0] += 1.5 * y
    return X, y


def _shifted_data(n=100, d=53, n_informative=3, shift=2.0, seed=1):
    rng = np.random.RandomState(seed)
    y = rng.randint(0, 2, n)
    X = rng.normal(size=(n, d))
    X[:, :n_informative] += shift * y[:, None]
    return X, y


@parametrize_with_checks([NCADiagonal(max_iter=15)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


@pytest.mark.parametrize("seed", [0, 1])
def test_objective_and_gradient_match_brute_force(seed):
    X, y = _two_class_data(seed=seed)
    y = np.where(np.arange(y.size) % 7 == 0, 2, y)  # three classes
    w = np.random.RandomState(seed).uniform(0.1, 1.5, X.shape[1])
    f, g = nca_diagonal_objective(w, X, y)
    f_ref, g_ref = _brute_force_nca(w, X, y)
    assert f == pytest.approx(f_ref, rel=1e-12)
    np.testing.assert_allclose(g, g_ref, rtol=1e-10, atol=1e-12)


def test_objective_is_blockwise_exact():
    X, y = _two_class_data(n=60)
    w = np.linspace(0.2, 1.2, X.shape[1])
    f, g = nca_diagonal_objective(w, X, y)
    f_small, g_small = nca_diagonal_objective(w, X, y, working_memory=0.001)  # a few rows per block
    assert f_small == pytest.approx(f, rel=1e-13)
    np.testing.assert_allclose(g_small, g, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("scale", [0.3, 1.0, 3.0])
def test_gradient_matches_finite_differences(scale):
    X, y = _two_class_data(n=30, d=5)
    w0 = scale * np.random.RandomState(3).uniform(0.5, 1.5, X.shape[1])
    err = check_grad(lambda w: nca_diagonal_objective(w, X, y)[0], lambda w: nca_diagonal_objective(w, X, y)[1], w0,
                     epsilon=1e-7)
    g = nca_diagonal_objective(w0, X, y)[1]
    assert err <= 1e-5 * max(1.0, np.linalg.norm(g))


def test_kkt_projected_gradient_vanishes():
    X, y = _shifted_data(n=60, d=12, shift=1.0)
    est = NCADiagonal(max_iter=2000, tol=1e-10).fit(X, y)
    w = est.feature_importances_
    _, g = nca_diagonal_objective(w, X, y)
    # maximisation over w >= 0: g_j = 0 where w_j > 0, g_j <= 0 where w_j = 0
    pg = np.where(w > 0, g, np.maximum(g, 0.0))
    assert np.max(np.abs(pg)) < 1e-6 * max(1.0, np.abs(g).max(), X.shape[0])
    assert est.objective_ == pytest.approx(nca_diagonal_objective(w, X, y)[0], rel=1e-12)
    assert est.cost_history_[-1] == pytest.approx(est.objective_, rel=1e-12)
    # L-BFGS-B never lowers the objective it maximises
    assert np.all(np.diff(est.cost_history_) >= -1e-9)


def test_recovers_informative_features():
    # from w = 1 (nearly hard neighbourhoods): a local optimum near the start.  The default
    # soft start ("scaled") reaches f = 99.999 here, memorising 100 samples with the 50
    # noise features, where feature 21 outweighs feature 1: a higher objective, not this
    # recovery (see test_scaled_init_recovers_5_informative_among_100_noise)
    X, y = _shifted_data(n=100, d=53, n_informative=3, shift=2.0)
    w = NCADiagonal(init="ones").fit(X, y).feature_importances_
    assert set(np.argsort(-w)[:3]) == {0, 1, 2}
    # and beats the unweighted metric on its own objective
    assert nca_diagonal_objective(w, X, y)[0] > nca_diagonal_objective(np.ones(X.shape[1]), X, y)[0]


def test_scaled_init_recovers_5_informative_among_100_noise():
    # labels set by the sum of the first 5 features; 100 noise features
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 105))
    y = (X[:, :5].sum(axis=1) > 0).astype(int)
    est = NCADiagonal(init="scaled").fit(X, y)
    w = est.feature_importances_
    assert set(np.argsort(-w)[:5]) == set(range(5))
    assert w[:5].min() > 1.5 * w[5:].max()
    # the scaled start is 1 / mean pairwise squared distance
    diff2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    assert _mean_pairwise_sqdist(X) == pytest.approx(diff2[~np.eye(200, dtype=bool)].mean(), rel=1e-12)


def test_n_init_keeps_the_best_start():
    X, y = _two_class_data(n=30, d=6, seed=2)
    single = NCADiagonal(max_iter=200).fit(X, y)
    multi = NCADiagonal(max_iter=200, n_init=3, random_state=0).fit(X, y)
    assert multi.objective_ >= single.objective_ - 1e-12  # the first start is the same "ones" start
    a = NCADiagonal(init="random", n_init=2, max_iter=30, random_state=5).fit(X, y).feature_importances_
    b = NCADiagonal(init="random", n_init=2, max_iter=30, random_state=5).fit(X, y).feature_importances_
    np.testing.assert_array_equal(a, b)


def test_constant_feature_gets_zero_weight():
    X, y = _two_class_data(n=40, d=4)
    X = np.column_stack([X, np.full(40, 3.0)])
    w = NCADiagonal().fit(X, y).feature_importances_
    assert w[-1] == 0.0 and np.all(np.isfinite(w)) and w[0] > 0


def test_float32_input():
    X, y = _two_class_data(n=40, d=5)
    w64 = NCADiagonal().fit(X, y).feature_importances_
    est = NCADiagonal().fit(X.astype(np.float32), y)
    np.testing.assert_allclose(est.feature_importances_, w64, rtol=1e-3, atol=1e-4)
    assert est.transform(X.astype(np.float32)).dtype == np.float32


def test_max_iter_warns():
    X, y = _two_class_data()
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        NCADiagonal(max_iter=1, tol=0.0).fit(X, y)


def test_gradient_in_the_sqrt_parametrisation_matches_check_grad():
    from knnweights.weighters.nca import _negated

    X, y = _two_class_data(n=35, d=6, seed=5)
    a0 = np.random.RandomState(1).uniform(0.3, 1.2, X.shape[1])
    err = check_grad(lambda a: _negated(a, X, y)[0], lambda a: _negated(a, X, y)[1], a0, epsilon=1e-7)
    assert err <= 1e-5 * max(1.0, np.linalg.norm(_negated(a0, X, y)[1]))


def test_all_constant_features_give_zero_weights_with_a_warning():
    X = np.zeros((12, 4))
    y = np.arange(12) % 3
    with pytest.warns(UserWarning, match="every feature of X is constant"):
        est = NCADiagonal().fit(X, y)
    assert np.array_equal(est.feature_importances_, np.zeros(4)) and est.n_iter_ == 0


def test_verbose_prints_iterations(capsys):
    X, y = _two_class_data(n=30, d=4)
    est = NCADiagonal(verbose=1).fit(X, y)
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.strip()[:1].isdigit()]
    assert "Objective Value" in out and len(lines) == est.n_iter_
    assert float(lines[-1].split()[1]) == pytest.approx(est.objective_, rel=1e-6)


def test_iterations_comparable_to_sklearn_nca():
    # the same tolerance as scikit-learn's full-matrix NCA from the identity: comparable
    # iteration counts (the diagonal problem is smaller), a higher objective than w = 1
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    X, y = _shifted_data(n=120, d=10, n_informative=2, shift=1.5)
    ours = NCADiagonal(tol=1e-5, max_iter=200).fit(X, y)
    sk = NeighborhoodComponentsAnalysis(init="identity", tol=1e-5, max_iter=200).fit(X, y)
    assert ours.n_iter_ <= 2 * sk.n_iter_ + 5
    assert ours.objective_ > nca_diagonal_objective(np.ones(X.shape[1]), X, y)[0]


def test_nca_terms_against_brute_force_blocked_and_float32():
    # the BLAS engine path (G = A A^T, in-place softmax and coefficients, C X) against the
    # n x n x d brute force, on offset data (cancellation in ||a||^2 + ||b||^2 - 2 a.b),
    # three classes and a zero weight; row blocks of a few rows give the same numbers
    from knnweights.engine.neighbors import nca_terms

    rng = np.random.RandomState(7)
    X = rng.normal(size=(64, 9)) + 50.0
    y = rng.randint(0, 3, 64)
    w = rng.uniform(0.05, 1.0, 9)
    w[4] = 0.0
    f_ref, g_ref = _brute_force_nca(w, X, y)
    p, g = nca_terms(X, y, w)
    assert p.shape == (64,) and np.all((p >= 0) & (p <= 1))
    assert p.sum() == pytest.approx(f_ref, rel=1e-11)
    np.testing.assert_allclose(g, g_ref, rtol=1e-9, atol=1e-9 * np.abs(g_ref).max())
    p_b, g_b = nca_terms(X, y, w, working_memory=0.002)  # 3 rows per block
    np.testing.assert_allclose(p_b, p, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(g_b, g, rtol=1e-12, atol=1e-12 * np.abs(g).max())
    p32, g32 = nca_terms(X.astype(np.float32), y, w)
    assert g32.dtype == np.float64
    assert p32.sum() == pytest.approx(f_ref, rel=1e-4)
    np.testing.assert_allclose(g32, g_ref, rtol=1e-3, atol=1e-3 * np.abs(g_ref).max())


def test_float32_gradient_matches_finite_differences():
    # float32 products: the gradient still matches central differences of the exact objective
    X, y = _two_class_data(n=40, d=6, seed=4)
    X32 = X.astype(np.float32)
    X64 = X32.astype(np.float64)
    w0 = np.random.RandomState(2).uniform(0.2, 1.0, X.shape[1])
    g32 = nca_diagonal_objective(w0, X32, y)[1]
    h = 1e-6
    fd = np.array([(nca_diagonal_objective(w0 + h * e, X64, y)[0] - nca_diagonal_objective(w0 - h * e, X64, y)[0])
                   / (2 * h) for e in np.eye(X.shape[1])])
    np.testing.assert_allclose(g32, fd, rtol=1e-3, atol=1e-4 * np.abs(fd).max())


def test_default_start_recovers_planted_features():
    # y = [x_1 + x_2 + x_3 > 0] among 27 noise features: the soft default start gives the
    # three relevant features the largest weights, well apart from the noise
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 30))
    y = (X[:, :3].sum(axis=1) > 0).astype(int)
    est = NCADiagonal().fit(X, y)
    w = est.feature_importances_
    assert set(np.argsort(-w)[:3]) == {0, 1, 2}
    assert w[:3].min() > 1.5 * w[3:].max()
    assert est.objective_ > nca_diagonal_objective(np.ones(30), X, y)[0]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nca_kernels_against_numpy(dtype):
    # the two compiled steps of nca_terms on a block of rows 5..16 of 30 (row_offset), against NumPy
    from knnweights.engine import kernels as _kernels

    rng = np.random.RandomState(11)
    A = rng.normal(size=(30, 4)).astype(dtype)
    y = rng.randint(0, 3, 30).astype(np.int64)
    sq = np.einsum("ij,ij->i", A, A, dtype=np.float64)
    s, e = 5, 17
    G = A[s:e] @ A.T
    _kernels.nca_shifted_logits(G, sq[s:e], sq, s)
    D = np.maximum(sq[s:e, None] + sq[None, :] - 2.0 * (A[s:e] @ A.T).astype(np.float64), 0.0)
    D[np.arange(e - s), np.arange(s, e)] = np.inf
    ref = D.min(axis=1, keepdims=True) - D
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(G, ref, rtol=rtol, atol=rtol * 10)
    assert np.all(np.isneginf(G[np.arange(e - s), np.arange(s, e)]))
    np.testing.assert_allclose(G.max(axis=1), 0.0, rtol=1e-5, atol=1e-8)
    E = np.exp(G)
    P = E / E.sum(axis=1, keepdims=True)
    same = y[s:e, None] == y[None, :]
    p_ref = (P * same).sum(axis=1)
    C_ref = P * (p_ref[:, None] - same)
    p = np.empty(e - s)
    _kernels.nca_coefficients(E, y[s:e], y, p)
    np.testing.assert_allclose(p, p_ref, rtol=rtol)
    np.testing.assert_allclose(E, C_ref, rtol=rtol, atol=rtol * 1e-2)
    np.testing.assert_allclose(E.sum(axis=1), 0.0, atol=1e-6 if dtype == np.float32 else 1e-14)
    # the parallel path (what large blocks run) gives the same bits as the serial one
    G2 = A[s:e] @ A.T
    _kernels.nca_shifted_logits.threaded(G2, sq[s:e], sq, s)
    E2 = np.exp(G2)
    p2 = np.empty(e - s)
    _kernels.nca_coefficients.threaded(E2, y[s:e], y, p2)
    np.testing.assert_array_equal(E2, E)
    np.testing.assert_array_equal(p2, p)
