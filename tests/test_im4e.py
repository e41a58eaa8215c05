"""I-M4E (Bei & Hong): cost, update, fixed points, cycling, Sec. 5.1 illustration."""

import warnings
from collections import namedtuple

import mpmath
import numpy as np
import pytest
from scipy.optimize import approx_fprime
from scipy.special import softmax
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights import IM4E
from knnweights.datasets import load
from knnweights.engine.neighbors import soft_neighbor_log_probabilities, weighted_distances
from knnweights.weighters.im4e import NoPositiveWeightsWarning, im4e_cost, im4e_step

# -- independent NumPy reference of eq. (3) for arbitrary alpha, beta -----------------------


def _reference_parts(X, y, w):
    """Per-pair |x_n - x_m| (n x n x d, small data only) and the hit / miss masks."""
    A = np.abs(X[:, None, :] - X[None, :, :])
    same = y[:, None] == y[None, :]
    hit = same & ~np.eye(len(y), dtype=bool)
    miss = ~same
    return A, hit, miss


def _reference_probabilities(X, y, w, sigma):
    A, hit, miss = _reference_parts(X, y, w)
    D = A @ w
    alpha = np.zeros_like(D)
    beta = np.zeros_like(D)
    for n in range(len(y)):
        alpha[n, hit[n]] = softmax(-D[n, hit[n]] / sigma)
        beta[n, miss[n]] = softmax(-D[n, miss[n]] / sigma)
    return alpha, beta


def _reference_cost(X, y, w, sigma, lam, alpha, beta):
    """Eq. (3) term by term for given probabilities."""
    A, hit, miss = _reference_parts(X, y, w)
    D = A @ w
    quantity = np.sum(alpha * D) - np.sum(beta * D)

    def ent(p):
        q = p[p > 0]
        return -np.sum(q * np.log(q))

    quality = sigma * (ent(beta) - ent(alpha))
    return quantity + quality + lam * w @ w


@pytest.fixture(scope="module")
def three_class(informative_problem):
    X, y = informative_problem(n=30, n_informative=2, n_noise=3, n_classes=3, random_state=1)
    return X, y


@pytest.fixture(scope="module")
def ionosphere():
    X, y = load("ionosphere", return_X_y=True)
    y = (y == np.unique(y)[0]).astype(int)
    return StandardScaler().fit_transform(X), y


def test_cost_and_update_match_bruteforce_reference(three_class):
    X, y = three_class
    w = np.random.default_rng(0).uniform(size=X.shape[1])
    w /= w.sum()
    sigma, lam = 0.7, 11.0
    alpha, beta = _reference_probabilities(X, y, w, sigma)
    st = im4e_step(X, y, w, sigma, lam)
    assert st.cost == pytest.approx(_reference_cost(X, y, w, sigma, lam, alpha, beta), rel=1e-10)
    assert st.quantity + st.quality + st.regularization == pytest.approx(st.cost, rel=1e-12)
    # v of Sec. 3.2: hits = same class, misses = the two other classes together
    A, _, _ = _reference_parts(X, y, w)
    v_ref = (np.einsum("nm,nmd->d", beta, A) - np.einsum("nh,nhd->d", alpha, A)) / (2 * lam)
    np.testing.assert_allclose(st.v, v_ref, rtol=1e-10, atol=1e-13)
    vp = np.maximum(v_ref, 0)
    np.testing.assert_allclose(st.update, vp / vp.sum(), rtol=1e-10)
    # the closed form (soft-min hit minus soft-min miss distances) is the same number
    assert im4e_cost(X, y, w, sigma, lam) == pytest.approx(st.cost, rel=1e-10)


def test_probabilities_are_a_saddle_point_of_the_cost(three_class):
    """Sec. 3.1: at fixed w, eq. (5) minimises C over alpha and eq. (6) maximises it over beta."""
    X, y = three_class
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    sigma, lam = 0.3, 30.0
    alpha, beta = _reference_probabilities(X, y, w, sigma)
    c0 = _reference_cost(X, y, w, sigma, lam, alpha, beta)
    rng = np.random.default_rng(0)
    for _ in range(20):
        for which in ("alpha", "beta"):
            p = alpha if which == "alpha" else beta
            noise = rng.uniform(size=p.shape) * (p > 0)
            q = 0.9 * p + 0.1 * noise / noise.sum(axis=1, keepdims=True)
            c = _reference_cost(X, y, w, sigma, lam, q, beta) if which == "alpha" else \
                _reference_cost(X, y, w, sigma, lam, alpha, q)
            assert (c > c0) if which == "alpha" else (c < c0)


def test_cost_gradient_is_minus_margin_sum_plus_ridge(three_class):
    """Envelope theorem: dC/dw = -sum_n z_n + 2 lambda w, so eq. (9)'s v zeroes it."""
    X, y = three_class
    w = np.random.default_rng(3).uniform(0.2, 1.0, size=X.shape[1])
    sigma, lam = 0.5, 7.0
    st = im4e_step(X, y, w, sigma, lam)
    grad_fd = approx_fprime(w, lambda u: im4e_cost(X, y, u, sigma, lam), 1e-7)
    grad = -2 * lam * st.v + 2 * lam * w
    np.testing.assert_allclose(grad_fd, grad, rtol=1e-4, atol=1e-4)


def test_line_search_cost_never_increases_on_ionosphere(ionosphere):
    """Eq. (9) alone is not a descent step; with the Sec. 3.2 line search C is monotone."""
    X, y = ionosphere
    est = IM4E(sigma=0.25, line_search=True, max_iter=15, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(X, y)
    c = np.asarray(est.cost_history_)
    assert len(c) >= 3
    assert np.all(np.diff(c) <= 1e-10 * np.abs(c[:-1]))
    assert c[-1] < c[0]
    np.testing.assert_allclose(est.feature_importances_.sum(), 1.0)


def test_plain_update_is_not_monotone_on_colon():
    """Documents the finding stated in the docstring: eq. (9) can raise C (colon, sigma=1/4)."""
    X, y = load("colon_alon", return_X_y=True)
    X = StandardScaler().fit_transform(X)
    est = IM4E(sigma=0.25, random_state=0, max_iter=30).fit(X, y)
    c = np.asarray(est.cost_history_)
    assert np.diff(c[1:]).max() > 1e-3 * np.abs(c).max()
    # ... yet the line search version, from the same start, ends lower than the plain one
    ls = IM4E(sigma=0.25, random_state=0, max_iter=30, line_search=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ls.fit(X, y)
    assert ls.cost_history_[-1] < c[-1]


def test_converged_weights_are_a_fixed_point_of_eq9(ionosphere):
    X, y = ionosphere
    est = IM4E(sigma=1.0, tol=1e-13, max_iter=300, random_state=0).fit(X, y)
    assert est.stop_reason_ == "tol"
    w = est.feature_importances_
    assert est.fixed_point_residual_ < 1e-6
    assert np.abs(est.update(X, y) - w).sum() < 1e-6
    # and a different start converges to the same point
    w2 = IM4E(sigma=1.0, tol=1e-13, max_iter=300, random_state=5).fit(X, y).feature_importances_
    assert np.abs(w2 - w).sum() < 1e-5


def test_recovers_informative_features_among_1000_noise_features():
    rng = np.random.default_rng(0)
    n, k = 80, 5
    y = np.arange(n) % 2
    X = rng.normal(size=(n, k + 1000))
    X[:, :k] += 2.0 * y[:, None] - 1.0  # class means +-1 on the informative features
    perm = rng.permutation(X.shape[1])  # hide them among the noise
    X = X[:, perm]
    informative = np.flatnonzero(perm < k)
    w = IM4E(sigma=1.0, random_state=0).fit(X, y).feature_importances_
    assert set(np.argsort(-w)[:k]) == set(informative)
    assert w[informative].sum() > 0.05  # 5 of 1005 features hold a clear share of the mass


def test_log_space_probabilities_match_mpmath_at_sigma_1e6():
    rng = np.random.default_rng(4)
    n, d, sigma = 9, 3, 1e-6
    X = rng.normal(size=(n, d)) * 3e-6  # distance gaps of the order of sigma: non-trivial softmax
    X[:, 0] += np.arange(n) * 1e-3  # plus a large offset the exponentials must survive
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    w = np.array([1e-3, 0.6, 0.399])
    mpmath.mp.dps = 50
    Xm = [[mpmath.mpf(float(v)) for v in row] for row in X]
    wm = [mpmath.mpf(float(v)) for v in w]
    s = mpmath.mpf(sigma)
    D = np.array([[float(sum(wm[k] * abs(Xm[i][k] - Xm[j][k]) for k in range(d))) for j in range(n)]
                  for i in range(n)])
    la, lb, lse_h, lse_m = soft_neighbor_log_probabilities(D, y, y, sigma)
    cost_ref = mpmath.mpf(0)
    for i in range(n):
        dist = [sum(wm[k] * abs(Xm[i][k] - Xm[j][k]) for k in range(d)) for j in range(n)]
        hits = [j for j in range(n) if y[j] == y[i] and j != i]
        misses = [j for j in range(n) if y[j] != y[i]]
        for group, logp in ((hits, la), (misses, lb)):
            lse = mpmath.log(mpmath.fsum(mpmath.exp(-dist[j] / s) for j in group))
            for j in group:
                p_ref = mpmath.exp(-dist[j] / s - lse)
                assert np.exp(logp[i, j]) == pytest.approx(float(p_ref), rel=1e-6, abs=1e-300)
            cost_ref += s * lse * (1 if group is misses else -1)
    cost_ref += len(y) * sum(v * v for v in wm)
    # I-M4E's cost at sigma = 1e-6 (three-term eq. 3 and closed form) against the reference
    st = im4e_step(X, y, w, sigma)
    assert st.cost == pytest.approx(float(cost_ref), rel=1e-6)
    assert im4e_cost(X, y, w, sigma) == pytest.approx(float(cost_ref), rel=1e-8)


def test_cycling_is_detected_and_lowest_cost_iterate_returned(informative_problem):
    X, y = informative_problem(n=90, n_informative=5, n_noise=10, n_classes=3, random_state=0)
    est = IM4E(sigma=0.05, random_state=0)
    with pytest.warns(ConvergenceWarning, match="cycling"):
        est.fit(X, y)
    assert est.stop_reason_ == "cycle"
    assert est.n_iter_ < est.max_iter
    c = np.asarray(est.cost_history_)
    lowest = c[1:].min()  # among the eq. (9) iterates
    assert est.cost(X, y) == pytest.approx(lowest, rel=1e-12)
    assert c[-1] > lowest  # the iteration had moved away from it
    np.testing.assert_allclose(est.feature_importances_.sum(), 1.0)


def test_no_positive_margin_warns_and_keeps_last_valid_weights():
    # alternating labels on a line: every nearest miss is closer than every nearest hit
    x = np.arange(12.0)
    X = np.column_stack([x, 2 * x])
    y = np.arange(12) % 2
    est = IM4E(sigma=0.1, random_state=0)
    with pytest.warns(NoPositiveWeightsWarning, match="no positive entry"):
        est.fit(X, y)
    assert est.stop_reason_ == "no_positive"
    w = est.feature_importances_
    assert np.all(np.isfinite(w)) and np.all(w > 0)
    np.testing.assert_allclose(w.sum(), 1.0)
    np.testing.assert_allclose(w, IM4E(random_state=0)._start(X))
    assert issubclass(NoPositiveWeightsWarning, ConvergenceWarning)


def test_lambda_scales_only_the_cost(three_class):
    X, y = three_class
    w = np.full(X.shape[1], 1.0 / X.shape[1])
    a, b = im4e_step(X, y, w, 0.5, None), im4e_step(X, y, w, 0.5, 3.0)
    np.testing.assert_allclose(a.update, b.update, rtol=1e-12)
    assert a.regularization == pytest.approx(len(y) * w @ w)
    assert a.cost - b.cost == pytest.approx((len(y) - 3.0) * w @ w)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        assert IM4E(sigma=0.5, max_iter=1, tol=0).fit(X, y).lambda_used_ == len(y)


def test_seeded_start_and_constant_features(informative_problem):
    X, y = informative_problem(n=60, n_informative=3, n_noise=5, random_state=2)
    X[:, 4] = 7.0
    a = IM4E(sigma=0.5, random_state=3).fit(X, y)
    b = IM4E(sigma=0.5, random_state=3).fit(X, y)
    np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
    assert a.feature_importances_[4] == 0.0
    w0 = a._start(X)
    assert np.all(w0[np.arange(8) != 4] > 0) and w0.sum() == pytest.approx(1.0)
    assert a.cost_history_[0] == pytest.approx(a.cost(X, y, w0), rel=1e-12)


# -- Sec. 5.1, Tables 1 and 2 -------------------------------------------------------------------

#: per-sample terms of Sec. 5.1 (Tables 1, 2): ``L = -rho_bar`` (expected hit distance minus expected miss
#: distance), the hit / miss entropies, ``Q = E_miss - E_hit`` and the total ``T = L + Q``
MarginQualityTerms = namedtuple("MarginQualityTerms", ["L", "E_hit", "E_miss", "Q", "T"])


def margin_quality_terms(X, y, w, sigma, target, removed=None):
    """``L``, ``E_hit``, ``E_miss``, ``Q``, ``T = L + Q`` of one target sample (Sec. 5.1).

    The soft hits / misses of the target are those of eqs. (5), (6) under ``w``; with
    ``removed`` (an index or indices, not the target) those samples are left out of the
    data first ("after losing z_r", Tables 1 and 2).  ``Q`` is not multiplied by
    ``sigma`` (Tables 1, 2 add ``L`` and ``Q`` directly, i.e. ``sigma = 1``).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Class labels.
    w : ndarray of shape (d,)
    sigma : float
    target : int
        Row of ``X`` whose margin is examined.
    removed : int, sequence of int or None

    Returns
    -------
    MarginQualityTerms
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.unique(np.asarray(y), return_inverse=True)[1].astype(np.int64)
    keep = np.ones(X.shape[0], bool)
    if removed is not None:
        removed = np.atleast_1d(removed)
        if np.any(removed == target):
            raise ValueError("the removed sample must not be the target")
        keep[removed] = False
    idx = np.flatnonzero(keep)
    t = int(np.searchsorted(idx, target))
    Xk, ck = X[idx], codes[idx]
    D = weighted_distances(Xk[t:t + 1], Xk, w, "manhattan")
    la, lb, _, _ = soft_neighbor_log_probabilities(D, ck[t:t + 1], ck, sigma, row_offset=t)
    with np.errstate(under="ignore"):
        a, b = np.exp(la[0]), np.exp(lb[0])
    d = D[0]
    L = float(a @ d - b @ d)
    e_hit = float(-np.sum(a[a > 0] * la[0][a > 0]))
    e_miss = float(-np.sum(b[b > 0] * lb[0][b > 0]))
    Q = e_miss - e_hit
    return MarginQualityTerms(L, e_hit, e_miss, Q, L + Q)


def illustration_points(example=1):
    """Constructed 3-D two-class data showing the claims of Sec. 5.1 (Figs. 1, 2).

    The paper gives no coordinates; these points are ours.  In both examples the target
    ``z_t`` is the origin (row 0) and the two candidate weightings are
    ``w_(1,2) = [.5, .5, 0]`` and ``w_(2,3) = [0, .5, .5]`` (with ``sigma = 1``).

    ``example=1`` (Table 1, hit entropy): under ``w_(1,2)`` the target's six hits lie
    evenly around it (high ``E_hit``); under ``w_(2,3)`` one hit ``z_r`` is almost on top
    of it and the others are far.  The misses have ``|x_1| = |x_3|``, so they look the
    same under both weightings.  ``w_(2,3)`` has the lower ``L``; ``w_(1,2)`` the lower
    ``T = L + Q``, before and after losing ``z_r``.

    ``example=2`` (Table 2, miss entropy): the mirror image with the roles of hits and
    misses swapped, ``z_q`` the outlier-like close miss.  ``w_(1,2)`` has the lower ``L``;
    ``w_(2,3)`` the lower ``T``, before and after losing ``z_q``.

    Returns
    -------
    X : ndarray of shape (13, 3)
    y : ndarray of shape (13,)
        ``0`` for the target's class.
    target : int
        ``0``.
    removed : int
        The row of ``z_r`` (example 1) or ``z_q`` (example 2).
    """
    # six points on the L1 "circle" of radius 3 in the (x1, x2) plane; the first is the
    # special one: close to the target in (x2, x3), the others at L1 distance 8 there
    ring = np.array([[2.8, 0.0], [0.0, 3.0], [-3.0, 0.0], [0.0, -3.0], [1.5, 1.5], [-1.5, -1.5]])
    x3 = np.where(np.arange(6) == 0, 0.2, 8.0 - np.abs(ring[:, 1]))
    special = np.column_stack([ring, x3])
    # six points seen identically by both weightings: |x1| = |x3|
    s = np.array([3.0, 3.5, 4.0, 4.5, 5.0, 5.5])
    t = np.array([1.0, -1.0, 0.5, -0.5, 1.5, -1.5])
    symmetric = np.column_stack([s, t, -s]) * (1.0 if example == 1 else 0.25)
    target = np.zeros((1, 3))
    X = np.vstack([target, special, symmetric])
    if example == 1:
        y = np.array([0] + [0] * 6 + [1] * 6)
    elif example == 2:
        y = np.array([0] + [1] * 6 + [0] * 6)
    else:
        raise ValueError(f"example must be 1 or 2, got {example!r}")
    return X, y, 0, 1


W12 = np.array([0.5, 0.5, 0.0])
W23 = np.array([0.0, 0.5, 0.5])


def _terms(example, removed):
    X, y, t, r = illustration_points(example)
    return [margin_quality_terms(X, y, w, 1.0, t, r if removed else None) for w in (W12, W23)]


@pytest.mark.parametrize("example", [1, 2])
@pytest.mark.parametrize("removed", [False, True])
def test_illustration_terms_add_up_and_match_bruteforce(example, removed):
    X, y, t, r = illustration_points(example)
    keep = np.ones(len(y), bool)
    if removed:
        keep[r] = False
    Xk, yk = X[keep], y[keep]
    for w, tm in zip((W12, W23), _terms(example, removed), strict=True):
        alpha, beta = _reference_probabilities(Xk, yk, w, 1.0)
        D = np.abs(Xk - Xk[t]) @ w
        assert tm.L == pytest.approx(alpha[t] @ D - beta[t] @ D, rel=1e-12)
        e_hit = -np.sum(alpha[t][alpha[t] > 0] * np.log(alpha[t][alpha[t] > 0]))
        assert tm.E_hit == pytest.approx(e_hit, rel=1e-12)
        assert tm.Q == pytest.approx(tm.E_miss - tm.E_hit)
        assert tm.T == pytest.approx(tm.L + tm.Q)


def test_table1_hit_entropy_claims():
    (b12, b23), (a12, a23) = _terms(1, False), _terms(1, True)
    assert b23.L < b12.L  # by margin quantity alone w(2,3) wins ...
    assert b12.T < b23.T and a12.T < a23.T  # ... with quality w(1,2) wins, with and without z_r
    assert b12.E_hit > b23.E_hit
    assert b12.E_miss == pytest.approx(b23.E_miss) == pytest.approx(a12.E_miss)  # misses unchanged
    # losing z_r raises L slightly under w(1,2), dramatically under w(2,3)
    assert 0 < a12.L - b12.L < 0.1 * (a23.L - b23.L)


def test_table2_miss_entropy_claims():
    (b12, b23), (a12, a23) = _terms(2, False), _terms(2, True)
    assert b12.L < b23.L  # by margin quantity alone w(1,2) wins ...
    assert b23.T < b12.T and a23.T < a12.T  # ... with quality w(2,3) wins, with and without z_q
    assert b12.E_miss > b23.E_miss
    assert b12.E_hit == pytest.approx(b23.E_hit) == pytest.approx(a23.E_hit)  # hits unchanged
    # losing z_q barely moves L under w(1,2) and lowers it dramatically under w(2,3)
    assert abs(a12.L - b12.L) < 0.1 * (b23.L - a23.L)


@parametrize_with_checks([IM4E(sigma=1.0, max_iter=5)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_verbose_prints_one_line_per_update(capsys):
    from knnweights import IM4E

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] > 0).astype(int)
    est = IM4E(sigma=0.5, max_iter=5, tol=0.0, random_state=0, verbose=1).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.strip() and ln.split()[0].isdigit()]
    assert len(lines) == est.n_iter_ + 1  # the start and every update
    assert float(lines[-1].split()[1]) == pytest.approx(est.cost_history_[-1], rel=1e-8)


def test_default_max_iter_reaches_tol_on_a_slowly_converging_fold():
    # standardised BUPA, the third training fold of `knnweights demo --dataset bupa_liver`: the relative
    # cost change falls slowly and the fit needs ~350 updates from most random starts (seeds 0-7: 317-357,
    # one 37), which the former default (100) cut short; the start is seeded, as the demo seeds it
    from sklearn.model_selection import StratifiedKFold

    X, y = load("bupa_liver", return_X_y=True, missing="median")
    tr = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[2][0]
    Xt = StandardScaler().fit_transform(X[tr])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = IM4E(random_state=0).fit(Xt, y[tr])
    c = est.cost_history_
    assert est.stop_reason_ == "tol" and 100 < est.n_iter_ < est.max_iter
    assert abs(c[-1] - c[-2]) <= est.tol * abs(c[-2]) < abs(c[-2] - c[-3])
