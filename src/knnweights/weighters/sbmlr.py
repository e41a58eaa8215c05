"""SBMLR: sparse multinomial logistic regression with Bayesian L1 regularisation.

Cawley, Talbot & Girolami (NIPS 2006), a baseline of LH-RELIEF Table 2 (Cai & Ng 2012).
Defined by its fixed point: ``W*`` minimises the
convex ``E_D(W) + alpha* ||W||_1`` and ``alpha* = ||W*||_0 / ||W*||_1``.  The inner
problem is solved exactly (an active-set Newton method to the optimality conditions,
L-BFGS-B on the split ``W = P - N`` as its fallback start), the outer loop iterates
``alpha`` (secant steps on a fixed support, inside a bracket).
"""

import numbers
import warnings

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax
from sklearn.exceptions import ConvergenceWarning

from ..engine.linalg import single_thread_blas
from ..utils import Interval
from ._base import BaseWeighter

__all__ = ["SBMLR", "multinomial_loss_grad", "l1_kkt_residual", "solve_l1_multinomial", "sparsest_representative"]


def multinomial_loss_grad(W, X, T):
    """``E_D = -sum_n sum_k t_nk log y_nk`` and its gradient ``X^T (Y - T)``.

    Parameters
    ----------
    W : ndarray of shape (p, c)
        Weights.
    X : ndarray of shape (n, p)
        Samples.
    T : ndarray of shape (n, c)
        One-hot targets.

    Returns
    -------
    loss : float
        ``E_D``.
    grad : ndarray of shape (p, c)
        Its gradient.
    """
    A = X @ W
    logY = log_softmax(A, axis=1)
    return float(-np.sum(T * logY)), X.T @ (np.exp(logY) - T)


def l1_kkt_residual(W, G, alpha):
    """Largest violation of the optimality conditions of ``min E_D + alpha ||W||_1``.

    ``|g + alpha sign(w)|`` on the non-zero weights, ``max(|g| - alpha, 0)`` on the
    zeros, divided by ``alpha`` (scale-free; 0 at the minimiser).

    Parameters
    ----------
    W : ndarray of shape (p, c)
        Weights.
    G : ndarray of shape (p, c)
        The gradient of ``E_D`` at ``W``.
    alpha : float or array-like of shape (c,)
        The L1 penalty (per class).

    Returns
    -------
    residual : float
        The largest scaled violation.
    """
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (W.shape[1],))[None, :]
    nz = W != 0
    r = np.where(nz, np.abs(G + alpha * np.sign(W)), np.maximum(np.abs(G) - alpha, 0.0)) / alpha
    return float(r.max()) if r.size else 0.0


def _hessian_active(X, Y, rows, cols):
    """Hessian of ``E_D`` restricted to the weights ``(rows[i], cols[i])``.

    ``H[(j, k), (j', l)] = sum_n x_nj x_nj' y_nk (delta_kl - y_nl)``, one matrix
    product per pair of classes.
    """
    m = rows.size
    H = np.empty((m, m))
    classes = np.unique(cols)
    groups = {k: np.flatnonzero(cols == k) for k in classes}
    for k in classes:
        ak = groups[k]
        for l in classes:
            al = groups[l]
            s = Y[:, k] * ((k == l) - Y[:, l])
            H[np.ix_(ak, al)] = (X[:, rows[ak]] * s[:, None]).T @ X[:, rows[al]]
    return H


def solve_l1_multinomial(X, T, alpha, W0=None, tol=1e-9, max_iter=200, working_set=True, tight=False):
    """Minimise ``E_D(W) + alpha ||W||_1`` (convex), to the optimality conditions.

    1. L-BFGS-B on ``W = P - N``, ``P, N >= 0``, objective ``E_D(P - N) + alpha
       sum(P + N)`` (smooth, bound-constrained; its solutions are the L1 problem's);
    2. active-set Newton polish: on the non-zero weights with their signs fixed,
       Newton steps on ``E_D + alpha sign(W).W`` with a backtracking line search (a
       weight that would change sign stops at 0 and leaves the set); a zero weight
       with ``|g| > alpha`` joins it with the sign of ``-g``; until
       :func:`l1_kkt_residual` ``<= tol``.

    With ``working_set`` (and more than 200 columns), step 1 and the polish after it run
    on a working set of columns (:func:`_solve_on_working_sets`): the rows of ``W`` that
    are non-zero or violate ``|g| <= alpha`` most, grown until no column outside it
    violates the optimality conditions, so the result is the whole problem's minimiser.

    Step 2 alone is tried first, from the warm start ``W0`` (the previous ``alpha``'s
    solution; a few Newton steps) or from ``W = 0`` (growing the support from the worst
    violators, at most ``max(25, N_W)`` joining per step); step 1 runs only if that does
    not reach ``tol``.  Either way the result meets :func:`l1_kkt_residual` ``<= tol``.

    Parameters
    ----------
    X : ndarray of shape (n, p)
        Samples.
    T : ndarray of shape (n, c)
        One-hot targets.
    alpha : float or array-like of shape (c,)
        The L1 penalty (per class).
    W0 : ndarray of shape (p, c) or None, default=None
        Warm start.
    tol : float, default=1e-9
        The optimality residual to reach.
    max_iter : int, default=200
        Most Newton steps of the polish.
    working_set : bool, default=True
        Solve on a working set of columns when there are more than 200.
    tight : bool, default=False
        Tighter L-BFGS-B tolerances (a working set's small problems).

    Returns
    -------
    W : ndarray of shape (p, c)
        The minimiser.
    residual : float
        :func:`l1_kkt_residual` at ``W``.
    """
    n, p = X.shape
    c = T.shape[1]
    W = np.zeros((p, c)) if W0 is None else np.array(W0, dtype=np.float64)
    alpha = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (c,)).copy()
    A = np.broadcast_to(alpha[None, :], (p, c))

    def split_fun(v):
        P, N = v[: p * c].reshape(p, c), v[p * c:].reshape(p, c)
        f, G = multinomial_loss_grad(P - N, X, T)
        f += float(np.sum(A * (P + N)))
        return f, np.concatenate([(G + A).ravel(), (A - G).ravel()])

    def value(W):
        # E_D + alpha ||W||_1 over the non-zero rows of W only (the polish's line search needs the
        # value alone; its gradient, a pass over all of X, only at the accepted step)
        on = np.flatnonzero(np.any(W != 0, axis=1))
        logY = log_softmax(X[:, on] @ W[on] if on.size < 0.5 * p else X @ W, axis=1)
        return float(-np.sum(T * logY)) + float(np.sum(A * np.abs(W))), logY

    def grad(W, logY):
        return X.T @ (np.exp(logY) - T)

    # the Newton polish alone first: from a warm start (the previous alpha's solution) it usually
    # needs a few steps; from W = 0 it is an active-set Newton method growing the support from the
    # worst violators (on wide data it replaces a long L-BFGS-B over all split variables)
    W1, resid = _polish(X, T, A, alpha, W, value, grad, tol, min(max_iter, 30 if W0 is not None else 100),
                        max_active=2 * n * c)
    if resid <= tol:
        return (sparsest_representative(W1) if np.all(alpha == alpha[0]) else W1), resid
    if value(W1)[0] < value(W)[0]:  # L-BFGS-B from where the polish got to (a convex problem)
        W = W1
    if working_set and p > 200:
        return _solve_on_working_sets(X, T, alpha, W, tol, max_iter)
    v0 = np.concatenate([np.maximum(W, 0).ravel(), np.maximum(-W, 0).ravel()])
    res = minimize(split_fun, v0, jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * p * c),
                   options={"maxiter": 5000, "ftol": 1e-10, "gtol": 1e-6 * alpha.min(), "maxcor": 20}
                   if not tight else  # a working set's few columns: iterations are cheap, go closer
                   {"maxiter": 20000, "ftol": 1e-15, "gtol": 1e-9 * alpha.min(), "maxcor": 20})
    W = res.x[: p * c].reshape(p, c) - res.x[p * c:].reshape(p, c)
    W[np.abs(W) < 1e-12 * max(np.abs(W).max(), 1e-300)] = 0.0
    # L-BFGS-B leaves many tiny non-zero weights that the polish would remove
    # one Newton step (a dense solve of the whole support) at a time; a weight whose gradient is
    # well inside (-alpha, alpha) is 0 at the minimiser: start the polish without it (the polish
    # re-admits any zero weight with |g| > alpha, so the optimality conditions decide, not this guess)
    _, G = multinomial_loss_grad(W, X, T)
    inside = (W != 0) & (np.abs(G) < 0.9 * A)
    if inside.any() and np.count_nonzero(W) > 2 * np.count_nonzero(np.abs(G) >= 0.9 * A):
        W[inside] = 0.0
    W, resid = _polish(X, T, A, alpha, W, value, grad, tol, max_iter)
    if np.all(alpha == alpha[0]):
        W = sparsest_representative(W)
    return W, resid


def _solve_on_working_sets(X, T, alpha, W, tol, max_iter):
    """:func:`solve_l1_multinomial` on a growing working set of columns of ``X``.

    A minimiser has at most about ``n c`` non-zero weights, so on wide data L-BFGS-B over
    all ``2 p c`` split variables spends its time on columns whose weights stay 0 (each
    iteration two passes over ``X``).  Here the restricted problem on the columns ``S`` is solved to ``tol``, then
    the gradient of the whole problem says which columns outside ``S`` violate
    ``|g| <= alpha`` (their weights are 0, so that is their whole optimality condition);
    the worst ``max(100, |S|)`` of them join and the restricted problem is solved again,
    warm-started, until none violates: the result meets the whole problem's optimality
    conditions (:func:`l1_kkt_residual` ``<= tol``), as the full L-BFGS-B's does.
    """
    p, c = W.shape
    A = np.broadcast_to(np.asarray(alpha, dtype=np.float64), (c,))[None, :]
    _, G = multinomial_loss_grad(W, X, T)
    score = np.max(np.abs(G) / A, axis=1)  # > 1: the column violates |g| <= alpha
    on = np.any(W != 0, axis=1)
    ws = np.flatnonzero(on)
    grow = max(100, 2 * ws.size)
    for _ in range(p):
        out = np.flatnonzero(~on & (score > 1 + tol))
        ws = np.union1d(ws, out[np.argsort(-score[out], kind="stable")[:grow]])
        on[ws] = True
        if ws.size > p // 2:  # most columns in: the whole problem at once
            return solve_l1_multinomial(X, T, alpha, W0=W, tol=tol, max_iter=max_iter, working_set=False)
        Ws, _ = solve_l1_multinomial(X[:, ws], T, alpha, W0=W[ws], tol=tol, max_iter=max_iter, working_set=False,
                                     tight=True)
        W = np.zeros_like(W)
        W[ws] = Ws
        _, G = multinomial_loss_grad(W, X, T)
        score = np.max(np.abs(G) / A, axis=1)
        if not np.any(~on & (score > 1 + tol)):
            break
        grow = max(100, ws.size)
    return W, l1_kkt_residual(W, G, alpha)


def _polish(X, T, A, alpha, W, value, grad, tol, max_iter, max_active=None):
    """Active-set Newton on the non-zero weights with their signs fixed (see
    :func:`solve_l1_multinomial`); returns ``(W, residual)``.  Gives up (residual above
    ``tol``) when the set would exceed ``max_active`` weights: a minimiser has at most about
    ``n c`` non-zero weights, and the dense Newton systems of a larger set are costly."""
    f, logY = value(W)
    G = grad(W, logY)
    resid = l1_kkt_residual(W, G, alpha)
    for _ in range(max_iter):
        if resid <= tol:
            break
        # zero weights violating |g| <= alpha join the active set with the descent sign
        viol = (W == 0) & (np.abs(G) > A * (1 + tol))
        cap = max(25, int(np.count_nonzero(W)))
        if np.count_nonzero(viol) > cap:
            # admit the worst violators only (a step's Hessian is dense in the set's size: after one
            # long Newton step on wide data most weights can violate at once, a large dense solve and
            # many more steps to remove them again); the rest join later, if still violating
            r = np.where(viol, np.abs(G) / A, 0.0).ravel()
            keep = np.argpartition(-r, cap - 1)[:cap]
            viol = np.zeros(r.size, dtype=bool)
            viol[keep] = True
            viol = viol.reshape(W.shape)
        S = (W != 0) | viol
        sign = np.where(W != 0, np.sign(W), -np.sign(G))
        rows, cols = np.nonzero(S)
        if max_active is not None and rows.size > max_active:
            break
        g = G[rows, cols] + A[rows, cols] * sign[rows, cols]
        H = _hessian_active(X, np.exp(logY), rows, cols)
        # minimum-norm Newton step: H is singular along a shift of one feature's weights
        # over all classes (E_D does not change), where g has no component either
        step = -np.linalg.lstsq(H, g, rcond=1e-10)[0]
        D = np.zeros_like(W)
        D[rows, cols] = step
        # the longest step before a non-zero weight reaches zero (ratio test)
        cross = (W != 0) & (D * sign < 0)
        t_zero = float(np.min(-W[cross] / D[cross])) if cross.any() else np.inf
        # projected search: halve t from 1, clipping the weights that cross zero (many can leave
        # the set in one step), the first crossing t_zero in its place (one weight leaves there).
        # t_zero second would remove one weight per Newton step, each a dense solve, after a
        # cold L-BFGS-B start on wide data
        trials = sorted([0.5 ** i for i in range(40)] + ([t_zero] if 0 < t_zero < 1 else []), reverse=True)
        improved = False
        for t in trials:
            Wn = W + t * D
            # the sign-fixed model: a weight crossing zero stops at zero
            Wn[(Wn * sign < 0) & S] = 0.0
            fn, logYn = value(Wn)
            if fn <= f + 1e-4 * t * float(g @ step) or fn < f:
                improved = True
                break
        if not improved:
            break
        W, f, logY = Wn, fn, logYn
        G = grad(W, logY)
        resid = l1_kkt_residual(W, G, alpha)
    return W, resid


def sparsest_representative(W):
    """The sparsest of the minimisers equivalent to ``W`` (one L1 penalty for all classes).

    ``E_D`` is unchanged by adding a constant to all classes' weights of one feature
    (``softmax`` is shift-invariant), so the L1 problem's minimisers differ by such
    shifts ``v_j``; the penalty ``sum_k |w_jk + v_j|`` is smallest for ``-v_j`` in the
    median interval of ``w_j.``, which holds 0 at a minimiser.  With an even number of
    classes that interval can be proper (e.g. ``(a, -a)`` and ``(2a, 0)`` with two
    classes): move each feature to the interval's end nearest to 0, which zeroes one
    more weight, as the authors' optimiser does (it activates one weight at a time, and
    the partner's pseudo-gradient then sits exactly at ``alpha``).

    Parameters
    ----------
    W : array-like of shape (p, c)
        A minimiser.

    Returns
    -------
    W_sparse : ndarray of shape (p, c)
        The equivalent minimiser with the most zeros.
    """
    W = np.array(W, dtype=np.float64)
    c = W.shape[1]
    if c % 2:
        return W
    S = np.sort(W, axis=1)
    lo, hi = S[:, c // 2 - 1], S[:, c // 2]
    shift = np.where(np.abs(lo) <= np.abs(hi), lo, hi)
    shift[(lo == 0) | (hi == 0) | (lo > 0) | (hi < 0)] = 0.0  # already sparsest, or not a minimiser
    out = W - shift[:, None]
    out[np.isclose(W, shift[:, None], rtol=0, atol=0)] = 0.0
    return out


class SBMLR(BaseWeighter):
    """SBMLR: sparse Bayesian multinomial logistic regression (Cawley, Talbot & Girolami).

    A multinomial logistic model with a full ``p x c`` weight matrix ``W`` (no reference
    class), outputs ``y_nk = softmax(x_n W)_k``, data misfit
    ``E_D = -sum_n sum_k t_nk log y_nk`` and a Laplace prior whose scale ``alpha`` is
    integrated out under a Jeffreys prior, giving ``Q = E_D + N_W log E_W`` with
    ``E_W = ||W||_1`` and ``N_W`` the number of non-zero weights (Cawley et al., eq. 9).
    ``Q`` has no minimum (shrinking the support sends ``N_W log E_W`` to ``-inf``); on the
    active weights its gradient is that of ``E_D + alpha ||W||_1`` with
    ``alpha = N_W / E_W``, so SBMLR's result is the fixed point (the spec's definition)

    ``W* = argmin_W E_D(W) + alpha* ||W||_1``,  ``alpha* = ||W*||_0 / ||W*||_1``.

    Here it is computed by an exact convex solver for the inner problem
    (:func:`solve_l1_multinomial`, to the L1 optimality conditions) and the fixed-point
    loop ``alpha <- N_W(W(alpha)) / E_W(W(alpha))`` from a small ``alpha``, warm-started;
    not by the authors' coordinate-wise optimiser (one Newton step on the coordinate of
    largest ``G^2 / h`` at a time), which the spec reports reaches the same support and
    ranking.  Features are scored by ``sum_k w_jk^2`` (the ASU wrapper's ranking).

    Parameters
    ----------
    fit_intercept : bool, default=True
        Append a column of ones (a bias per class).  As in the authors' code, the bias
        is penalised like any weight and counts in ``N_W`` and ``E_W``; it has no
        feature score.
    alpha_init : float, default=1e-2
        The first ``alpha``, relative to ``max |X^T (Y - T)|`` at ``W = 0`` (the smallest
        ``alpha`` for which ``W = 0`` is optimal).  It must be small: ``W = 0`` is a
        degenerate fixed point, reached from a large ``alpha``.
    max_iter : int, default=100
        Iterations of the ``alpha`` loop.
    tol : float, default=1e-8
        Stop when ``|alpha_new - alpha| <= tol * alpha`` (an exact fixed point), or when
        the bracket ``[lo, hi]`` around a support change where ``alpha - N_W / E_W``
        changes sign is narrower than ``max(tol, 1e-7) * hi`` (``N_W`` is an integer, so
        an exact fixed point need not exist; ``fixed_point_`` says which); the inner
        problem is solved to :func:`l1_kkt_residual` ``<= min(tol, 1e-7)``.
    verbose : int, default=0
        Print ``alpha``, ``N_W`` and the inner residual per iteration.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``sum_k w_jk^2`` (not normalised; 0 for a feature the model prunes).
    coef_ : ndarray of shape (n_features, n_classes)
        ``W*`` without the bias row.
    intercept_ : ndarray of shape (n_classes,)
        The bias row (zeros when ``fit_intercept=False``).
    alpha_ : float
        ``alpha*``, equal to ``n_nonzero_ / ||W*||_1`` when ``fixed_point_ == "exact"``.
    fixed_point_ : {"exact", "support_change", "no_features"} or None
        ``"no_features"``: no feature of ``X`` varies, so every weight is 0 at once.
        ``"exact"``: ``alpha_ = N_W / E_W`` to ``tol``.  ``"support_change"``: no exact
        fixed point; ``alpha - N_W / E_W`` changes sign where a weight enters or leaves
        the support, and ``alpha_`` is the upper end of the bracket around that point
        (``W*`` the sparser solution there, ``alpha_ > N_W / E_W`` by less than the
        jump of one weight), with a ``ConvergenceWarning`` giving the gap.  ``None``:
        stopped at ``max_iter`` (with a warning).  Only ``"exact"`` (and
        ``"no_features"``) meet the fixed point to ``tol``.
    n_nonzero_ : int
        ``N_W`` (bias included).
    alpha_history_ : list of float
    kkt_residual_ : float
        :func:`l1_kkt_residual` of the inner problem at ``alpha_``.
    n_iter_ : int
    metric_ : ``"manhattan"``

    Notes
    -----
    The scores depend on the scale of the features (a Laplace prior on ``W`` is not
    scale-invariant): standardise first, as the LH-RELIEF reproduction does.

    The fixed point need not exist: ``E_W(alpha)`` is continuous along the path of
    the inner problem, but ``N_W`` is an integer that jumps where a weight enters, so
    ``N_W / E_W - alpha`` can change sign at a jump without a root; this is common,
    not a corner case, and such a fit warns.

    References
    ----------
    G. C. Cawley, N. L. C. Talbot and M. Girolami, "Sparse multinomial logistic
    regression via Bayesian L1 regularisation", NIPS 19, 2007.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import SBMLR
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randn(120, 8); y = (X[:, 0] - X[:, 3] > 0).astype(int)
    >>> est = SBMLR().fit(X, y)
    >>> sorted(np.argsort(est.feature_importances_)[-2:].tolist())
    [0, 3]
    """

    _algorithm_version = 1

    _metric = "manhattan"
    _min_class_size = 1
    _parameter_constraints = {
        "fit_intercept": ["boolean"],
        "alpha_init": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "verbose": ["verbose"],
    }

    def __init__(self, fit_intercept=True, alpha_init=1e-2, max_iter=100, tol=1e-8, verbose=0):
        self.fit_intercept = fit_intercept
        self.alpha_init = alpha_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose

    def _fit(self, X, y):
        with single_thread_blas():  # small dense solves (the polish's Newton systems)
            return self._fit_blas(X, y)

    def _fit_blas(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        c = int(y.max()) + 1
        T = np.zeros((n, c))
        T[np.arange(n), y] = 1.0
        if not np.any(np.ptp(X, axis=0) > 0):
            # no feature varies: no feature can enter the model, every weight is 0 (the base
            # class warns); the intercept is the class log-priors (the unpenalised optimum)
            self.n_iter_, self.alpha_history_, self.fixed_point_ = 0, [], "no_features"
            self.alpha_, self.kkt_residual_, self.n_nonzero_ = 0.0, 0.0, 0
            self.coef_ = np.zeros((d, c))
            prior = np.bincount(y, minlength=c) / n
            self.intercept_ = np.log(prior) - np.log(prior).mean() if self.fit_intercept else np.zeros(c)
            return np.zeros(d)
        Xa = np.hstack([X, np.ones((n, 1))]) if self.fit_intercept else X
        _, G0 = multinomial_loss_grad(np.zeros((Xa.shape[1], c)), Xa, T)
        alpha = float(self.alpha_init) * max(np.abs(G0).max(), 1e-12)
        inner_tol = min(float(self.tol), 1e-7)
        self.alpha_history_ = []
        lo, hi = 0.0, np.inf  # alpha < N_W / E_W below lo's side, alpha > N_W / E_W at hi
        sol = {}
        W = None
        prev = None  # (alpha, N_W / E_W, N_W) of the last iteration, for the secant step
        self.fixed_point_ = None
        for it in range(1, self.max_iter + 1):
            self.n_iter_ = it
            W, resid = solve_l1_multinomial(Xa, T, alpha, W0=W, tol=inner_tol)
            nnz = int(np.count_nonzero(W))
            l1 = float(np.abs(W).sum())
            sol[alpha] = (W, resid)
            self.alpha_history_.append(alpha)
            if self.verbose:
                print(f"[SBMLR] iter {it:3d}  alpha {alpha:.8g}  N_W {nnz}  E_W {l1:.6g}  kkt {resid:.2e}")
            if nnz == 0:
                hi = min(hi, alpha)  # past the largest fixed point: come back down
                target = 0.0
            else:
                target = nnz / l1
                if abs(target - alpha) <= self.tol * alpha:
                    self.fixed_point_ = "exact"
                    break
                if target > alpha:
                    lo = max(lo, alpha)
                else:
                    hi = min(hi, alpha)
            if np.isfinite(hi) and hi - lo <= max(self.tol, 1e-7) * hi:
                # N_W / E_W - alpha changes sign across a support change: no exact fixed point
                self.fixed_point_ = "support_change"
                n_lo = int(np.count_nonzero(sol[lo][0])) if lo in sol else None
                alpha = hi
                W, resid = sol[hi]
                break
            new = target
            if prev is not None and prev[2] == nnz and nnz > 0 and prev[1] - prev[0] != target - alpha:
                # on a fixed support E_W(alpha) is smooth: a secant step on h(alpha) = N_W / E_W - alpha
                # (the plain iteration alpha <- N_W / E_W converges only linearly); the bracket below
                # keeps it safe, the fixed point is the same
                h0, h1 = prev[1] - prev[0], target - alpha
                sec = alpha - h1 * (alpha - prev[0]) / (h1 - h0)
                if lo < sec < hi and np.isfinite(sec):
                    new = sec
            prev = (alpha, target, nnz)
            if not (lo < new < hi):  # safeguard: bisect the bracket (geometric mean)
                new = np.sqrt(lo * hi) if lo > 0 and np.isfinite(hi) else (2.0 * lo if lo > 0 else 0.5 * hi)
            alpha = float(new)
            if alpha in sol:
                W = sol[alpha][0]
        if self.fixed_point_ is None:
            warnings.warn(f"SBMLR stopped at max_iter={self.max_iter} before alpha reached its fixed point "
                          "N_W / E_W; increase max_iter.", ConvergenceWarning, stacklevel=3)
        elif not np.count_nonzero(W):
            warnings.warn("SBMLR: every weight is 0 (the degenerate fixed point W = 0); lower alpha_init.",
                          ConvergenceWarning, stacklevel=3)
        elif self.fixed_point_ == "support_change":
            nnz = int(np.count_nonzero(W))
            target = nnz / float(np.abs(W).sum())
            entering = f" (N_W {nnz} -> {n_lo} just below it)" if n_lo is not None else ""
            warnings.warn(
                f"SBMLR found no exact fixed point alpha = N_W / E_W: N_W / E_W jumps across alpha_={alpha:.6g} "
                f"where a weight enters the model{entering}. The returned W, the sparser solution there, has "
                f"N_W / E_W = {target:.6g} ({(alpha - target) / alpha:.1%} below alpha_), so it meets the fixed "
                f"point only to that gap, not to tol={self.tol:g}. N_W and E_W count the bias row "
                f"(fit_intercept={self.fit_intercept}).", ConvergenceWarning, stacklevel=3)
        self.alpha_ = alpha
        self.kkt_residual_ = resid
        self.n_nonzero_ = int(np.count_nonzero(W))
        self.coef_ = W[:d]
        self.intercept_ = W[d] if self.fit_intercept else np.zeros(c)
        return np.sum(self.coef_ ** 2, axis=1)
