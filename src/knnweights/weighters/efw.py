"""EFW, EFWWD and E-Relief: ensemble feature weighting (Li, Gao & Chen, AAAI 2012).

``m`` subsamples of ``beta n`` samples; on each, the base margins
``z_i = |x_i - NM(x_i)| - |x_i - NH(x_i)|`` (nearest miss / hit, Manhattan distance);
one weight vector ``w_k`` per subsample, all fitted jointly on the logistic loss of the
margins plus a diversity term (eqs. 1, 2, 4), on ``{w_k >= 0, ||w_k||_2 = 1}``.  The
ensemble weight is the mean ``w_e = (1/m) sum_k w_k``.  Neighbour search and margin
vectors come from :mod:`knnweights.engine.neighbors`.
"""

import numbers
import warnings

import numpy as np
from scipy.special import expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ..engine._docs import data_doc
from ..engine.linalg import single_thread_blas
from ..engine.neighbors import hard_margin_vectors, nearest_hits_misses, soft_margins
from ..utils import Interval, StrOptions
from ._base import BaseWeighter
from .relief import Relief

__all__ = [
    "EFW",
    "ERelief",
    "ensemble_subsamples",
    "base_margins",
    "soft_base_margins",
    "efw_objective",
    "project_sphere_orthant",
    "stationarity_residual",
]


# --- the pieces of the method ------------------------------------------------------
def ensemble_subsamples(y, n_estimators, subsample, random_state=None):
    """The ``m`` random subsamples of about ``beta n`` samples (drawn without replacement).

    Drawn per class (``round(beta n_c)`` of the ``n_c`` samples of class ``c``, at least
    2 where the class has 2), so that every sample of a subsample has a nearest hit and
    a nearest miss inside it; the paper draws "randomly" without saying more. Each draw is
    one random permutation of all rows, of which the first ``round(beta n_c)`` rows of each
    class are kept, so the subsamples do not depend on the names or the order of the classes.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Class labels (or codes).
    n_estimators : int
        ``m``, the number of subsamples.
    subsample : float in (0, 1]
        ``beta``, the share of each class drawn.
    random_state : int, RandomState or None
        Seeds the draws.

    Returns
    -------
    subsamples : list of ndarray of int
        ``n_estimators`` sorted row-index arrays.
    """
    rng = check_random_state(random_state)
    y = np.asarray(y)
    _, codes = np.unique(y, return_inverse=True)
    counts = np.bincount(codes)
    sizes = np.clip(np.round(subsample * counts).astype(np.int64), np.minimum(2, counts), counts)
    out = []
    for _ in range(n_estimators):
        # one permutation of all rows, then the first ``sizes[c]`` rows of each class in that
        # order: the draw does not depend on how the classes are named or ordered
        perm = rng.permutation(y.shape[0])
        rank_in_class = np.empty(y.shape[0], dtype=np.int64)
        pc = codes[perm]
        order = np.argsort(pc, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        rank_in_class[order] = np.arange(y.shape[0]) - np.repeat(starts, counts)
        keep = rank_in_class < sizes[pc]
        out.append(np.sort(perm[keep]))
    return out


@data_doc
def base_margins(X, y):
    """``z_i = |x_i - NM(x_i)| - |x_i - NH(x_i)|`` for every sample (eq. 2's margins).

    Nearest hit and miss by the unweighted Manhattan distance, self excluded.

    {X_y}

    Returns
    -------
    Z : ndarray of shape (n, d)
        Each sample's margin vector.
    """
    nb = nearest_hits_misses(X, y, None, 1, "manhattan")
    return hard_margin_vectors(X, nb.hit_idx, nb.miss_idx, "manhattan", per_sample=True)


@data_doc
def soft_base_margins(X, y, sigma=1.0):
    """Base margins with kernel-soft nearest hit and miss (LOGO's, Sun et al. 2010).

    ``z_i = E[|x_i - NM(x_i)|] - E[|x_i - NH(x_i)|]`` with
    ``P(x_j = NH(x_i)) ∝ exp(-d(x_i, x_j) / sigma)`` over the hits (likewise the misses),
    ``d`` the mean absolute difference (Manhattan distance with weights ``1/d``).

    {X_y}
    sigma : float, default=1.0
        Kernel width.

    Returns
    -------
    Z : ndarray of shape (n, d)
        Each sample's margin vector.
    """
    d = X.shape[1]
    return soft_margins(X, y, np.full(d, 1.0 / d), sigma, "manhattan", per_sample=True).z


def _logistic_loss_grad(Z, w, scale):
    """``sum_i log(1 + exp(-scale w.z_i))`` and its gradient (eq. 8 with ``scale = 1/m``)."""
    u = scale * (Z @ w)
    loss = np.logaddexp(0.0, -u).sum()
    grad = -scale * (Z.T @ expit(-u))
    return loss, grad


def efw_objective(W, Zs, gamma):
    """The EFW loss ``L(E)`` (eq. 1 with eqs. 2 and 4) and its gradient (eqs. 6-9).

    ``L(E) = sum_k sum_{i in k} log(1 + exp(-w_k.z_i / m))
    + gamma / (m (m - 1)) sum_{k < k'} ||w_k + w_k'||^2``.

    The gradient is the exact one of this ``L``: the ``1/(beta n)`` factor in front of
    the loss term of eq. (7) and the extra factor 2 of its diversity term are not in
    eqs. (2) and (4), whose sum the method minimises (eq. 5); we follow eqs. (2), (4).
    Eq. (7) is the gradient of ``L`` with ``gamma`` replaced by ``2 beta n gamma`` (and
    divided by ``beta n``), so pass that ``gamma`` to reproduce eq. (7)'s balance.

    Parameters
    ----------
    W : ndarray of shape (m, d)
        The members' weight vectors.
    Zs : list of m ndarray of shape (n_k, d)
        The margins of each subsample.
    gamma : float
        Weight of the diversity term.

    Returns
    -------
    loss : float
        ``L(E)``.
    grad : ndarray of shape (m, d)
        Its gradient.
    """
    m = W.shape[0]
    loss = 0.0
    G = np.empty_like(W)
    for k in range(m):
        lk, G[k] = _logistic_loss_grad(Zs[k], W[k], 1.0 / m)
        loss += lk
    return loss + _diversity_value(W, gamma), G + _diversity_grad(W, gamma)


def _diversity_value(W, gamma):
    """The diversity term of ``L`` (eq. 4): ``gamma / (m (m - 1)) sum_{k < k'} ||w_k + w_k'||^2``."""
    m = W.shape[0]
    if not (gamma > 0 and m > 1):
        return 0.0
    S = W.sum(axis=0)
    # sum_{k<k'} ||w_k + w_k'||^2 = (m - 2) sum_k ||w_k||^2 + ||sum_k w_k||^2
    return gamma / (m * (m - 1)) * ((m - 2) * np.sum(W * W) + S @ S)


def _diversity_grad(W, gamma):
    """The gradient of :func:`_diversity_value` (0 for one member or ``gamma = 0``)."""
    m = W.shape[0]
    if not (gamma > 0 and m > 1):
        return 0.0
    return 2.0 * gamma / (m * (m - 1)) * ((m - 2) * W + W.sum(axis=0)[None, :])


def project_sphere_orthant(V):
    """Row-wise projection onto ``{w >= 0, ||w||_2 = 1}``: clip at 0, then normalise.

    A row with no positive entry goes to the unit vector of its largest entry (the
    nearest point of the set).

    Parameters
    ----------
    V : array-like of shape (m, d) or (d,)
        The points.

    Returns
    -------
    P : ndarray of shape (m, d)
        Their projections.
    """
    V = np.atleast_2d(V)
    P = np.maximum(V, 0.0)
    norms = np.linalg.norm(P, axis=1)
    out = np.zeros_like(P)
    ok = norms > 0
    out[ok] = P[ok] / norms[ok, None]
    for k in np.flatnonzero(~ok):
        out[k, np.argmax(V[k])] = 1.0
    return out


def stationarity_residual(W, G):
    """First-order optimality residual on ``{w_k >= 0, ||w_k|| = 1}``, row-wise.

    On the support ``w_kj > 0``: the gradient's component tangent to the sphere,
    ``g_kj - (g_k.w_k) w_kj`` (zero at a stationary point: ``g = lambda w`` there); off the
    support: ``min(g_kj, 0)`` (raising a zero weight must not decrease ``L``).

    Parameters
    ----------
    W : array-like of shape (m, d)
        Feasible weight vectors.
    G : array-like of shape (m, d)
        The gradient of ``L`` there.

    Returns
    -------
    residual : ndarray of shape (m,)
        ``||residual_k|| / ||g_k||`` (scale-free; 0 at a KKT point).
    """
    W = np.atleast_2d(W)
    G = np.atleast_2d(G)
    lam = np.sum(G * W, axis=1, keepdims=True)
    R = np.where(W > 0, G - lam * W, np.minimum(G, 0.0))
    gn = np.linalg.norm(G, axis=1)
    return np.linalg.norm(R, axis=1) / np.where(gn > 0, gn, 1.0)


def _start(Z, mask):
    """Feasible start: the normalised positive part of the summed margins (or uniform)."""
    v = np.maximum(Z.sum(axis=0), 0.0) * mask
    if not np.any(v > 0):
        v = mask.astype(np.float64)
    return v / np.linalg.norm(v)


class _MemberLoss:
    """``L(E)`` (eq. 1 with eqs. 2 and 4) in two passes: its value, then its gradient on demand.

    The same function as :func:`efw_objective`, arranged for speed on wide data: the members'
    margins ``U = W Z^T`` are one matrix product (over each member's support only when the
    members are sparse; a rejected trial step of the line search needs the value alone), and
    the gradient is one matrix product ``C Z`` for all members, where ``C`` holds each
    member's logistic weights on its own subsample (0 elsewhere).  ``Z`` is shared by all
    members (``rows[k]`` indexes member ``k``'s samples) or one array per member.
    """

    def __init__(self, Z, rows, scale, gamma):
        self.scale, self.gamma = float(scale), float(gamma)
        self.m = len(rows)
        if isinstance(Z, np.ndarray):  # shared margins: one (n, d) array, members are row subsets
            self.Z = [np.ascontiguousarray(Z, dtype=np.float64)]
            mask = np.zeros((self.m, Z.shape[0]))
            for k, idx in enumerate(rows):
                mask[k, idx] = 1.0
            self.mask = [mask]
            self.groups = [np.arange(self.m)]
        else:  # one margin array per member
            self.Z = [np.ascontiguousarray(Zk, dtype=np.float64) for Zk in Z]
            self.mask = [np.ones((1, Zk.shape[0])) for Zk in Z]
            self.groups = [np.array([k]) for k in range(self.m)]
        self.Zt = [np.ascontiguousarray(Zk.T) for Zk in self.Z]

    def value(self, W):
        """``(L(W), state)``; ``state`` is what :meth:`grad` needs."""
        loss = 0.0
        Us = []
        for Zt, mask, ks in zip(self.Zt, self.mask, self.groups, strict=True):
            ons = [np.flatnonzero(W[k]) for k in ks]
            if sum(on.size for on in ons) < 0.2 * ks.size * Zt.shape[0]:
                # sparse members: margins over each member's support only (gathering rows of Z^T
                # costs more than the full product above about 20 % support)
                U = np.vstack([W[k, on] @ Zt[on] for k, on in zip(ks, ons, strict=True)])
            else:
                U = W[ks] @ Zt
            U *= self.scale
            loss += float(np.sum(np.logaddexp(0.0, -U), where=mask > 0))  # rows outside the member: none
            Us.append(U)
        return loss + _diversity_value(W, self.gamma), Us

    def grad(self, W, Us):
        """The gradient at ``W`` (eqs. 6-9, exact for ``L``), from :meth:`value`'s state."""
        G = np.empty_like(W)
        for Z, mask, ks, U in zip(self.Z, self.mask, self.groups, Us, strict=True):
            G[ks] = (-self.scale * expit(-U) * mask) @ Z
        return G + _diversity_grad(W, self.gamma)

    def __call__(self, W):
        f, Us = self.value(W)
        return f, self.grad(W, Us)

    def member(self, k, scale):
        """Member ``k``'s logistic term alone with its own ``scale`` (no diversity term), as
        the ``(1, d)`` problem of step 3; shares the arrays."""
        out = object.__new__(_MemberLoss)
        out.scale, out.gamma, out.m = float(scale), 0.0, 1
        for Z, Zt, mask, ks in zip(self.Z, self.Zt, self.mask, self.groups, strict=True):
            if k in ks:
                out.Z, out.Zt, out.mask = [Z], [Zt], [mask[np.flatnonzero(ks == k)]]
                out.groups = [np.array([0])]
                return out
        raise IndexError(k)


def projected_gradient(fun, W0, max_iter=1000, tol=1e-6, verbose=0, label="EFW"):
    """Minimise ``fun`` on ``{w_k >= 0, ||w_k|| = 1}`` by projected gradient descent.

    Steps ``W <- P(W - t G)`` (``P``: :func:`project_sphere_orthant`) with a backtracking
    step ``t`` (sufficient decrease ``L(W') <= L(W) - 1e-4 ||W' - W||^2 / t``), each
    trial step the Barzilai-Borwein one ``||s||^2 / (s.(G' - G))`` of the last move
    ``s`` (spectral projected gradient; doubled when that is not positive).  Stops when the largest
    :func:`stationarity_residual` is ``<= tol`` or ``L`` stops changing (relative
    ``1e-15``).

    A stall (``L`` unchanged to relative ``1e-15``, or a zero step, while the residual
    is above ``tol``) is not convergence: ``converged`` is then False and ``reason`` is
    ``"stalled"``, e.g. when the logistic loss saturates on large margins (its gradient
    underflows) and the descent cannot move.

    ``fun(W)`` returns ``(L, G)``; or pass an object with ``value(W) -> (L, state)`` and
    ``grad(W, state) -> G`` (as :class:`_MemberLoss`): the gradient is then computed only
    at accepted steps (the iterates are the same).

    Parameters
    ----------
    fun : callable or object
        ``W -> (L, G)``, or an object with ``value`` and ``grad`` (above).
    W0 : ndarray of shape (m, d)
        Start (projected onto the feasible set first).
    max_iter : int, default=1000
        Most iterations.
    tol : float, default=1e-6
        Stationarity residual to stop at.
    verbose : int, default=0
        Print progress.
    label : str, default="EFW"
        Name in the progress lines.

    Returns
    -------
    result : dict
        ``x`` (m, d), ``fun``, ``nit``, ``history`` (``L`` per iteration, the start first),
        ``converged``, ``residual``, ``reason`` (``"converged"``, ``"stalled"`` or
        ``"max_iter"``), ``nfev`` (evaluations of ``L``).
    """
    if hasattr(fun, "value"):
        value, grad = fun.value, fun.grad
    else:
        def value(W):
            return fun(W)

        def grad(W, G):
            return G
    W = project_sphere_orthant(W0)
    f, state = value(W)
    G = grad(W, state)
    nfev = 1
    history = [f]
    t = 1.0 / max(np.abs(G).max(), 1e-12)
    converged = False
    reason = "max_iter"
    nit = 0
    res = stationarity_residual(W, G).max()
    if res <= tol:
        converged = True
        reason = "converged"
    while not converged and nit < max_iter:
        nit += 1
        for _ in range(200):  # backtracking; bounded even when the loss is flat to round-off
            Wn = project_sphere_orthant(W - t * G)
            fn, state = value(Wn)
            nfev += 1
            step = np.sum((Wn - W) ** 2)
            if fn <= f - 1e-4 * step / t or t < 1e-20:
                break
            t *= 0.5
        Gn = grad(Wn, state)
        stalled = abs(f - fn) <= 1e-15 * max(1.0, abs(f))
        sy = np.sum((Wn - W) * (Gn - G))
        W, f, G = Wn, fn, Gn
        history.append(f)
        res = stationarity_residual(W, G).max()
        if verbose > 1 or (verbose and nit % 100 == 0):
            print(f"[{label}] iter {nit:5d}  L {f:.10g}  residual {res:.3e}  step {t:.3g}  nfev {nfev}")
        if res <= tol:
            converged, reason = True, "converged"
            break
        if stalled or step == 0:
            reason = "stalled"
            break
        # Barzilai-Borwein trial step (spectral projected gradient), else double
        t = step / sy if sy > 0 else 2.0 * t
        # margins at 1e-300 scale make sy subnormal and the BB step overflow: keep it finite
        t = min(t, 1e12 / max(np.abs(G).max(), 1e-300)) if np.isfinite(t) else 1.0 / max(np.abs(G).max(), 1e-12)
    if verbose:
        print(f"[{label}] {reason} after {nit} iterations  L {f:.10g}  residual {res:.3e}  nfev {nfev}")
    return {"x": W, "fun": f, "nit": nit, "history": np.asarray(history), "converged": converged,
            "residual": res, "reason": reason, "nfev": nfev}


# --- estimators ----------------------------------------------------------------------
class EFW(BaseWeighter):
    """EFW: ensemble feature weighting with diversity (Li, Gao & Chen 2012).

    1. Draw ``m = n_estimators`` subsamples of ``beta n`` samples
       (:func:`ensemble_subsamples`, ``beta = subsample``).
    2. On subsample ``k``, the margins ``z_i = |x_i - NM(x_i)| - |x_i - NH(x_i)|``,
       nearest miss / hit by the Manhattan distance (eq. 2), found as ``neighbors`` says.
    3. Start each ``w_k`` at the minimiser of its own logistic loss
       ``sum_{i in k} log(1 + exp(-w_k.z_i))`` (the paper's initialisation, after eq. 9).
    4. Minimise jointly (eq. 5)

       ``L(E) = sum_k sum_{i in k} log(1 + exp(-w_k.z_i / m))
       + gamma / (m (m - 1)) sum_{k<k'} ||w_k + w_k'||^2`` (eqs. 1, 2, 4)

       by projected gradient descent (gradient eqs. 6-9, see :func:`efw_objective`).
    5. ``w_e = (1/m) sum_k w_k`` is ``feature_importances_``.

    The paper writes the diversity term as the cosine similarity of normalised weight
    vectors (eq. 3), replaced by ``||w_k + w_k'||^2 = 2 + 2 w_k.w_k'`` (eq. 4), which is
    equivalent only when ``||w_k||_2 = 1``; without a bound on the norm the logistic
    loss of separable margins has no minimiser.  So every ``w_k`` is kept on
    ``{w >= 0, ||w||_2 = 1}`` (weights of a distance are nonnegative), in steps 3 and 4
    (projection: clip at 0, then normalise).  ``gamma = 0`` is EFWWD (the members are
    then independent base solutions of the ``1/m``-scaled loss).

    The paper's gradient (eq. 7) divides the loss term by ``beta n`` and doubles the
    diversity term, which is the gradient of ``L`` with ``gamma`` replaced by
    ``2 beta n gamma``; we minimise ``L`` of eqs. (2) and (4) as written (the spec's
    choice), where ``gamma = 0.001`` changes the members very little.  To reproduce the
    balance of eq. (7), use ``gamma = 2 * subsample * n_samples * 0.001``.

    Parameters
    ----------
    n_estimators : int, default=5
        ``m``, the number of base feature weightings.
    subsample : float in (0, 1], default=0.9
        ``beta``, the fraction of the samples in each subsample.
    gamma : float >= 0, default=0.001
        Weight of the diversity loss (the paper's value, "based on cross-validation");
        0 gives EFWWD.
    neighbors : {"soft", "full", "subsample"}, default="soft"
        Where NH / NM come from (the paper leaves it open).  ``"soft"``: kernel-soft
        neighbours on the whole training set (:func:`soft_base_margins`, as in LOGO, the
        local learner the paper builds on); ``"full"``: the single nearest hit and miss,
        found once on the whole training set (each sample's neighbours among "the
        training data excluding itself", l. 54) and reused by every subsample;
        ``"subsample"``: searched inside each subsample (the literal reading of the
        ensemble loop).  The default is ``"soft"`` because one nearest hit and miss in
        the unweighted metric are mostly chosen by the irrelevant features, so ``"full"``
        and ``"subsample"`` miss relevant features that ``"soft"`` finds, and ``"soft"``
        gives the paper's stability.
    sigma : float, default=1.0
        Kernel width of ``neighbors="soft"`` (on the mean absolute difference).
    max_iter : int, default=2000
        Iterations of projected gradient, per member in step 3 and jointly in step 4.
    tol : float, default=1e-6
        Stop when the relative first-order residual (:func:`stationarity_residual`) of
        every member is at most ``tol``.
    random_state : int, RandomState or None
        Draws the subsamples (same seed, same subsamples as :class:`ERelief`).
    verbose : int, default=0
        Print each descent's outcome (iterations, ``L``, residual); every 100th iteration
        with ``verbose=1``, every iteration with ``verbose > 1``.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``w_e``, the mean of the members (each of unit L2 norm).
    estimator_weights_ : ndarray of shape (n_estimators, n_features)
        The members ``w_k``.
    initial_weights_ : ndarray of shape (n_estimators, n_features)
        The members after step 3.
    subsamples_ : list of ndarray
        The sample indices of each subsample.
    n_iter_ : int
        Iterations of the joint minimisation (step 4).
    cost_history_ : ndarray
        ``L(E)`` at the start of step 4 and after each iteration (non-increasing).
    residual_ : float
        Largest relative first-order residual at the returned point.
    stop_reason_ : {"converged", "stalled", "max_iter"}
        ``"stalled"``: the descent stopped moving before the residual reached ``tol``
        (a ``ConvergenceWarning`` says so), typically a saturated logistic loss on
        unscaled data; ``"max_iter"`` warns too.
    metric_ : ``"manhattan"``

    Notes
    -----
    The loss is not scale-free: the margins ``w.z`` of unit-norm ``w`` grow with the
    features' scale, and on raw microarray values (margins in the hundreds) the logistic
    loss saturates, its gradient underflows (``~ e^-30``) and the descent stalls, after
    which the diversity term alone would drive the members apart.  Standardise the
    features first (the reproduction does); a stall is reported, never "converged".

    References
    ----------
    Y. Li, S. Gao and S. Chen, "Ensemble feature weighting based on local learning and
    diversity", AAAI 2012.

    Examples
    --------
    >>> from knnweights import EFW
    >>> from knnweights.datasets import load
    >>> X, y = load("sonar", return_X_y=True)
    >>> w = EFW(random_state=0).fit(X, y).feature_importances_
    >>> w.shape
    (60,)
    """

    _algorithm_version = 1

    _metric = "manhattan"
    _min_class_size = 2
    _parameter_constraints = {
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "subsample": [Interval(numbers.Real, 0, 1, closed="right")],
        "gamma": [Interval(numbers.Real, 0, None, closed="left")],
        "neighbors": [StrOptions({"full", "subsample", "soft"})],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_estimators=5, subsample=0.9, gamma=0.001, neighbors="soft", sigma=1.0, max_iter=2000,
                 tol=1e-6, random_state=None, verbose=0):
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.gamma = gamma
        self.neighbors = neighbors
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose

    def _fit(self, X, y):
        m, d = self.n_estimators, X.shape[1]
        self.subsamples_ = ensemble_subsamples(y, m, self.subsample, self.random_state)
        margins = getattr(self, "_given_margins", None)
        if margins is not None:  # the caller's margins (e.g. NH / NM found on a larger reference set)
            Z = margins
        elif self.neighbors == "full":  # NH / NM found once on the whole training set, reused
            Z = base_margins(X, y)
        elif self.neighbors == "soft":  # kernel-soft NH / NM (LOGO's), on the whole training set
            Z = soft_base_margins(X, y, self.sigma)
        else:  # NH / NM searched inside each subsample
            Z = None
            Zs = [base_margins(X[idx], y[idx]) for idx in self.subsamples_]
        if Z is not None:
            Zs = [Z[idx] for idx in self.subsamples_]
        varying = np.ptp(X, axis=0) > 0
        if not varying.any():
            self.estimator_weights_ = self.initial_weights_ = np.zeros((m, d))
            self.n_iter_, self.cost_history_, self.residual_ = 0, np.zeros(1), 0.0
            self.stop_reason_ = "converged"
            return np.zeros(d)
        with single_thread_blas():  # matrix-vector products of a few hundred rows: one thread is faster
            loss = _MemberLoss(Z if Z is not None else Zs, self.subsamples_, 1.0 / m, self.gamma)
            reasons = []
            W0 = np.empty((m, d))
            for k, Zk in enumerate(Zs):  # step 3: each member alone, unscaled loss
                res = projected_gradient(loss.member(k, 1.0), _start(Zk, varying)[None, :], self.max_iter,
                                         self.tol, self.verbose, f"EFW member {k}")
                W0[k] = res["x"][0]
                reasons.append((res["reason"], res["residual"]))
            self.initial_weights_ = W0
            res = projected_gradient(loss, W0, self.max_iter, self.tol, self.verbose, "EFW joint")
        reasons.append((res["reason"], res["residual"]))
        self.stop_reason_ = res["reason"]
        stalled = [r for why, r in reasons if why == "stalled"]
        if stalled:
            self.stop_reason_ = "stalled"
            scale = float(np.abs(np.concatenate(Zs)).sum(axis=1).max())
            warnings.warn(
                f"EFW: the descent stalled before the weights converged (relative first-order residual "
                f"{max(stalled):.3g} > tol={self.tol}); the largest L1 margin is {scale:.3g}, and on large "
                "margins the logistic loss saturates (its gradient underflows). Standardise the features "
                "(sklearn.preprocessing.StandardScaler) before fitting.",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif any(why == "max_iter" for why, _ in reasons):
            self.stop_reason_ = "max_iter"
            warnings.warn(f"EFW stopped at max_iter={self.max_iter} before the weights converged; increase "
                          "max_iter or tol.", ConvergenceWarning, stacklevel=3)
        W = res["x"] * varying[None, :]
        self.estimator_weights_ = W
        self.n_iter_ = res["nit"]
        self.cost_history_ = res["history"]
        self.residual_ = res["residual"]
        return W.mean(axis=0)

    def fit(self, X, y, margins=None):
        """Learn the ensemble weights.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels; the subsamples are drawn per class.
        margins : array-like of shape (n_samples, n_features), default=None
            The base margins ``z_i`` of the samples, if computed elsewhere (e.g. with
            :func:`base_margins` on a larger data set of which ``X`` is a subsample, the
            reading in which NH / NM come from the whole data); ``None``: from
            ``neighbors``.

        Returns
        -------
        self : EFW
            The fitted weighter.
        """
        if margins is not None:
            margins = np.asarray(margins, dtype=np.float64)
            if margins.shape != np.shape(X):
                raise ValueError(f"margins has shape {margins.shape}; it must match X's {np.shape(X)}.")
        self._given_margins = margins
        try:
            return super().fit(X, y)
        finally:
            del self._given_margins


class ERelief(BaseWeighter):
    """E-Relief: the mean of RELIEF weights over subsamples (Saeys, Abeel & de Peer 2008).

    The ensemble baseline of the EFW paper (Li, Gao & Chen 2012): :class:`Relief`
    (range-normalised differences, every sample an instance) on each of the
    ``n_estimators`` subsamples of :func:`ensemble_subsamples` (the same subsamples as
    :class:`EFW` for the same ``random_state``), combined by the mean of the weights
    (Saeys et al.'s linear aggregation).

    Parameters
    ----------
    n_estimators : int, default=5
        Number of subsamples, hence of Relief weightings averaged.
    subsample : float in (0, 1], default=0.9
        Fraction of the samples of each class in each subsample.
    random_state : int, RandomState or None
        Draws the subsamples (same seed, same subsamples as :class:`EFW`).

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        ``max(mean_k scores_k, 0)``.
    estimator_weights_ : ndarray of shape (n_estimators, n_features)
        The signed Relief weights of each subsample.
    subsamples_ : list of ndarray
    metric_ : ``"manhattan"``

    References
    ----------
    Y. Saeys, T. Abeel and Y. Van de Peer, "Robust feature selection using ensemble
    feature selection techniques", ECML PKDD 2008.
    Y. Li, S. Gao and S. Chen, "Ensemble feature weighting based on local learning and
    diversity", AAAI 2012.
    """

    _algorithm_version = 1

    _metric = "manhattan"
    _parameter_constraints = {
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "subsample": [Interval(numbers.Real, 0, 1, closed="right")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_estimators=5, subsample=0.9, random_state=None):
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.random_state = random_state

    def _fit(self, X, y):
        self.subsamples_ = ensemble_subsamples(y, self.n_estimators, self.subsample, self.random_state)
        W = np.empty((self.n_estimators, X.shape[1]))
        for k, idx in enumerate(self.subsamples_):
            W[k] = Relief().fit(X[idx], y[idx]).scores_
        self.estimator_weights_ = W
        return W.mean(axis=0)
