"""I-M4E: iterative margin maximisation under max-min entropy (Bei & Hong).

The cost of eq. (3), for weights ``w >= 0`` with ``||w||_1 = 1``,

    C(w) = w . sum_n ( sum_h alpha_nh |x_n - x_h| - sum_m beta_nm |x_n - x_m| )    (L: margin quantity)
         + sigma * sum_n ( E_miss(n) - E_hit(n) )                                    (sigma Q: margin quality)
         + lambda * ||w||_2^2                                                        (regulariser)

with the soft hit / miss probabilities of eqs. (5), (6) (softmax of ``-d_w / sigma`` over
the hits, resp. misses, of ``x_n``) and their Shannon entropies ``E_hit``, ``E_miss``.
The first sum is ``-w . v_raw`` with ``v_raw = sum_n z_n`` the sum of the soft margin
vectors :func:`knnweights.engine.neighbors.soft_margins` returns, so everything here is built on
that shared kernel (log space: ``sigma`` down to 1e-4 and below is exact).

Because (5), (6) are the stationary points of ``C`` in ``alpha`` (a minimum) and ``beta``
(a maximum; Sec. 3.1, eqs. 7-8), ``C`` evaluated there has the closed form

    C(w) = sigma * sum_n [ logsumexp_m(-d_nm / sigma) - logsumexp_h(-d_nh / sigma) ] + lambda ||w||^2,

a sum of soft-min hit distances minus soft-min miss distances; its gradient is
``-v_raw + 2 lambda w`` (envelope theorem), which is why eq. (9) sets ``w`` from
``v = v_raw / (2 lambda)``.  The tests check both forms against each other.
"""

import numbers
import time
import warnings
from collections import namedtuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..engine._docs import data_doc
from ..engine.neighbors import distance_chunks, soft_margins, soft_neighbor_log_probabilities
from ..exceptions import NoPositiveWeightsWarning
from ..utils import Interval, fill_docstring
from ._base import BaseWeighter, warn_max_iter

__all__ = [
    "IM4E",
    "IM4EStep",
    "NoPositiveWeightsWarning",
    "im4e_step",
    "im4e_cost",
]


IM4EStep = namedtuple("IM4EStep", ["cost", "update", "v", "quantity", "quality", "regularization"])
IM4EStep.__doc__ = """One evaluation of I-M4E at weights ``w`` (:func:`im4e_step`).

Parameters
----------
cost : float
    ``C(w)`` of eq. (3) = ``quantity + quality + regularization``.
update : ndarray of shape (d,) or None
    ``T(w) = v+ / ||v+||_1`` of eq. (9) (``None`` when ``v`` has no positive entry).
v : ndarray of shape (d,)
    The unconstrained minimiser ``sum_n z_n / (2 lambda)`` (Sec. 3.2).
quantity : float
    ``sum_n L_w(z_n) = -w . sum_n z_n`` (first term of eq. 3).
quality : float
    ``sigma * sum_n (E_miss - E_hit)`` (second term).
regularization : float
    ``lambda * ||w||^2`` (third term).
"""


#: the Parameters section of :class:`IM4E`'s ``step``, ``cost`` and ``update`` (``{step_params}``)
_step_doc = fill_docstring(step_params="""Parameters
----------
X : array-like of shape (n_samples, n_features)
    Training samples (any data, e.g. the training set of the fit).
y : array-like of shape (n_samples,)
    Their labels, among the classes seen in ``fit``.
w : ndarray of shape (n_features,), default=None
    Weights to evaluate at; ``None``: the fitted ``feature_importances_``.""")


def _check_sigma(sigma):
    if not (isinstance(sigma, numbers.Real) and sigma > 0 and np.isfinite(sigma)):
        raise ValueError(f"sigma must be a positive finite number, got {sigma!r}")


def im4e_step(X, y, w, sigma, lambda_=None):
    """Cost ``C(w)`` (eq. 3) and update ``T(w)`` (eq. 9) of I-M4E at the weights ``w``.

    The soft hits and misses are those of ``w`` (eqs. 5, 6), so this is the cost the
    algorithm tracks and ``T`` the map it iterates; a converged ``w`` is a fixed point
    ``T(w) = w``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Samples.
    y : ndarray of shape (n,)
        Integer class codes ``0..C-1`` (hits: same code; misses: any other).
    w : ndarray of shape (d,)
        Non-negative weights (the paper keeps ``||w||_1 = 1``).
    sigma : float
        Kernel width of eqs. (5), (6), also the weight of the quality term.
    lambda_ : float or None
        Weight of the ``l2`` regulariser; ``None`` means ``n`` (the paper's choice).

    Returns
    -------
    step : IM4EStep
        The cost, its parts and the update.
    """
    _check_sigma(sigma)
    X = np.asarray(X, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    lam = float(X.shape[0] if lambda_ is None else lambda_)
    sm = soft_margins(X, y, w, sigma, "manhattan")
    z = np.asarray(sm.z, dtype=np.float64)
    quantity = -float(w @ z)
    quality = float(sigma * (sm.miss_entropy.sum() - sm.hit_entropy.sum()))
    reg = lam * float(w @ w)
    v = z / (2.0 * lam)
    vp = np.maximum(v, 0.0)
    s = vp.sum()
    update = vp / s if s > 0 and np.isfinite(s) else None
    return IM4EStep(quantity + quality + reg, update, v, quantity, quality, reg)


@data_doc
def im4e_cost(X, y, w, sigma, lambda_=None, working_memory=None):
    """``C(w)`` of eq. (3) by its closed form (soft-min hit minus soft-min miss distances).

    ``C = sigma * sum_n [lse_m(n) - lse_h(n)] + lambda ||w||^2`` with
    ``lse = logsumexp(-d_w / sigma)`` over the misses / hits of ``x_n``: the value of
    eq. (3) at the probabilities of eqs. (5), (6).  Cheaper than :func:`im4e_step`
    (no margin vectors), hence the line search's objective.

    {X_y}
    w : ndarray of shape (d,)
        Non-negative weights.
    sigma : float
        Kernel width.
    lambda_ : float or None, default=None
        Weight of the ``l2`` regulariser; ``None`` means ``n``.
    working_memory : float or None, default=None
        MiB of the distance blocks; ``None``: the configured budget.

    Returns
    -------
    cost : float
        ``C(w)``.
    """
    _check_sigma(sigma)
    y = np.asarray(y)
    total = 0.0
    for s, e, D in distance_chunks(X, None, w, "manhattan", working_memory, n_arrays=8):
        _, _, lse_h, lse_m = soft_neighbor_log_probabilities(D, y[s:e], y, sigma, row_offset=s)
        total += float(np.sum(lse_m - lse_h))
    lam = float(np.asarray(X).shape[0] if lambda_ is None else lambda_)
    w = np.asarray(w, dtype=np.float64)
    return sigma * total + lam * float(w @ w)


def _golden_section(f, f0, f1, n_eval=12):
    """Minimise ``f`` on [0, 1] given ``f(0)``, ``f(1)``; return the best ``(t, f(t))`` seen."""
    g = (np.sqrt(5.0) - 1.0) / 2.0
    best = min(((0.0, f0), (1.0, f1)), key=lambda p: p[1])
    a, b = 0.0, 1.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(n_eval):
        for p in ((c, fc), (d, fd)):
            if p[1] < best[1]:
                best = p
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = f(d)
    for p in ((c, fc), (d, fd)):
        if p[1] < best[1]:
            best = p
    return best


class IM4E(BaseWeighter):
    """I-M4E: iterative margin maximisation under max-min entropy (Bei & Hong).

    Learns non-negative feature weights ``w`` (``||w||_1 = 1``) of the weighted
    Manhattan distance by decreasing the cost ``C`` of eq. (3): the negative expected
    margin (margin quantity, Sec. 2.1) plus ``sigma`` times miss entropy minus hit
    entropy (margin quality, the max-min entropy principle, Sec. 2.2) plus
    ``lambda ||w||^2``.  Algorithm 1 alternates

    1. soft hits / misses under the current ``w`` (eqs. 5, 6, computed in log space);
    2. ``v = (1 / 2 lambda) sum_n (sum_m beta_nm |x_n - x_m| - sum_h alpha_nh |x_n - x_h|)``
       and ``w = v+ / ||v+||_1`` (eq. 9),

    from a random ``w > 0`` summing to one, until the relative change of ``C`` is below
    ``tol`` or ``max_iter`` updates (then a ``ConvergenceWarning``).  ``lambda`` only
    scales ``v`` and cancels in eq. (9); it enters ``C``.  The paper is binary; with more
    classes the hits of ``x_n`` are its own class and the misses all other classes.

    Eq. (9) is a heuristic projection, not a descent step, and the iteration is not
    guaranteed to decrease ``C``.  At small ``sigma`` the probabilities become nearly
    hard and the map ``T`` can jump between a few weight vectors forever.  A cycle is detected
    when an iterate revisits an earlier one (``||w_t - w_s||_1 <= 1e-9``, ``s < t - 1``)
    or when the cost sequence repeats with a period of 2 to 16 iterations without
    settling, or when it keeps swinging irregularly without finding a new lowest value
    for 32 iterations; the fit then stops with a ``ConvergenceWarning`` and returns the
    iterate of lowest ``C`` among those eq. (9) produced (``t >= 1``; the random start is
    not a candidate) (``stop_reason_ = "cycle"``).  With ``line_search=True`` each
    step instead minimises ``C`` along the segment from ``w`` to the eq. (9) point
    (golden section; Sec. 3.2's "search along the line"); the segment stays on the
    simplex and ``C`` never increases, at about 15 cost evaluations per iteration.

    If ``v`` has no positive entry eq. (9) is undefined: the fit stops with a
    :class:`NoPositiveWeightsWarning` (a ``ConvergenceWarning``) and keeps the last
    valid weights.

    Parameters
    ----------
    sigma : float, default=1.0
        Kernel width of the soft neighbours, and the weight of the quality term.
        The paper tunes it over ``1, 1/2, 1/4, ...`` below ``1e-4`` by internal CV.
        Distances are sums of ``|x_j|`` differences weighted by ``w`` summing to one, so
        ``sigma`` is on the scale of a typical per-feature difference.
    lambda_ : float or None, default=None
        Weight of the ``l2`` regulariser in ``C``; ``None`` means the number of training
        samples (the paper's setting).
    max_iter : int, default=1000
        Maximum number of updates (eq. 9 steps).  Most fits stop after 5-50 updates,
        but the relative cost change can fall slowly: one of the five training folds of
        standardised BUPA needs about 350, which the former default of 100 cut short with
        a ``ConvergenceWarning``.  The reproduction passes its own value (the papers'
        tables were computed with 100 in ``--full``).
    tol : float, default=1e-6
        Stop when ``|C_t - C_{t-1}| <= tol * |C_{t-1}|``.
    line_search : bool, default=False
        Minimise ``C`` on the segment between the current ``w`` and the eq. (9) point.
    random_state : int, RandomState instance or None, default=None
        Seeds the random starting weights.
    verbose : int, default=0
        Print the iteration, the cost ``C`` and the elapsed time after every update.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        The learned ``w`` (sums to one; constant features get 0).
    cost_history_ : list of float
        ``C`` (eq. 3, all three terms) of the start and of every iterate.
    n_iter_ : int
        Number of updates performed.
    stop_reason_ : str
        ``"tol"``, ``"max_iter"``, ``"cycle"``, ``"no_positive"`` or ``"line_search"``
        (no decrease along the segment).
    fixed_point_residual_ : float
        ``||T(w) - w||_1`` at the returned ``w`` (``inf`` where ``T`` is undefined: no
        positive entry in ``v``).
    lambda_used_ : float
    metric_ : ``"manhattan"``

    References
    ----------
    Y. Bei and P. Hong, "Maximizing margin quality and quantity", IEEE MLSP 2013
    (eqs. 3, 5, 6, 9; Algorithm 1).

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import IM4E
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 6)); y = (X[:, 0] > 0).astype(int)
    >>> w = IM4E(sigma=0.5, random_state=0).fit(X, y).feature_importances_
    >>> int(np.argmax(w))
    0
    """

    _algorithm_version = 1

    _metric = "manhattan"
    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, None, closed="neither")],
        "lambda_": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "line_search": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    _CYCLE_ATOL = 1e-9
    _MAX_PERIOD = 16

    def __init__(self, sigma=1.0, lambda_=None, max_iter=1000, tol=1e-6, line_search=False, random_state=None,
                 verbose=0):
        self.sigma = sigma
        self.lambda_ = lambda_
        self.max_iter = max_iter
        self.tol = tol
        self.line_search = line_search
        self.random_state = random_state
        self.verbose = verbose

    # -- the two maps the tests check --------------------------------------------------
    def _codes_for(self, X, y):
        X = validate_data(self, X, reset=False, dtype=np.float64)
        codes = np.searchsorted(self.classes_, np.asarray(y))
        if np.any(codes >= len(self.classes_)) or np.any(self.classes_[np.minimum(codes, len(self.classes_) - 1)]
                                                           != np.asarray(y)):
            raise ValueError("y holds labels not seen in fit")
        return X, codes

    @_step_doc
    def step(self, X, y, w=None):
        """:func:`im4e_step` with this estimator's ``sigma`` and ``lambda``.

        {step_params}

        Returns
        -------
        IM4EStep
            ``cost`` is ``C(w)`` of eq. (3), ``update`` is ``T(w)`` of eq. (9).
        """
        check_is_fitted(self, "feature_importances_")
        X, codes = self._codes_for(X, y)
        w = self.feature_importances_ if w is None else np.asarray(w, dtype=np.float64)
        return im4e_step(X, codes, w, self.sigma, self.lambda_used_)

    @_step_doc
    def cost(self, X, y, w=None):
        """``C(w)`` of eq. (3) (``w=None``: the fitted weights).

        At a fixed point of the iteration a smaller cost means a better weighting; the
        fitted weights are where the iteration stopped.

        {step_params}

        Returns
        -------
        cost : float
            ``quantity + quality + regularization`` of :class:`IM4EStep`.
        """
        return self.step(X, y, w).cost

    @_step_doc
    def update(self, X, y, w=None):
        """``T(w)`` of eq. (9) (``w=None``: the fitted weights); ``None`` if undefined.

        A fixed point satisfies ``T(w) = w``, which tells whether the fit converged.

        {step_params}

        Returns
        -------
        update : ndarray of shape (n_features,) or None
            The next iterate ``v+ / ||v+||_1``; ``None`` when ``v`` has no positive entry.
        """
        return self.step(X, y, w).update

    # -- fit ---------------------------------------------------------------------------
    def _start(self, X):
        d = X.shape[1]
        rng = check_random_state(self.random_state)
        w = rng.uniform(0.0, 1.0, size=d) + np.finfo(float).eps
        # constant features do not change any distance; zero them so they never carry weight
        w[np.ptp(X, axis=0) == 0] = 0.0
        s = w.sum()
        return w / s if s > 0 else w

    def _cycling(self, ws, costs):
        w_t = ws[-1]
        if len(ws) >= 3 and np.abs(w_t - ws[-2]).sum() > self._CYCLE_ATOL:
            past = np.asarray(ws[:-2])
            if np.min(np.abs(past - w_t).sum(axis=1)) <= self._CYCLE_ATOL:
                return True
        # a (possibly slowly drifting) oscillation of period p: the last three windows of p
        # costs repeat one another far more closely than they vary, and the swing is not dying out
        c = np.asarray(costs[1:])  # the random start is not an iterate of eq. (9)
        floor = max(self.tol, 1e-12) * max(abs(c[-1]), np.finfo(float).tiny)
        for p in range(2, self._MAX_PERIOD + 1):
            if c.size < 3 * p:
                break
            w0, w1, w2 = c[-3 * p:-2 * p], c[-2 * p:-p], c[-p:]
            amp0, amp1, amp2 = np.ptp(w0), np.ptp(w1), np.ptp(w2)
            if amp2 <= floor or amp1 <= floor:
                continue
            if (np.max(np.abs(w2 - w1)) <= 0.02 * amp2 and np.max(np.abs(w1 - w0)) <= 0.02 * amp1
                    and amp2 >= 0.5 * amp0):
                return True
        # an irregular orbit: C keeps swinging up and down, the swing does not shrink and the
        # last 2 * _MAX_PERIOD iterates found no new lowest cost
        m = 2 * self._MAX_PERIOD
        if c.size > 2 * m:
            dc = np.diff(c[-(m + 1):])
            flips = np.mean(np.sign(dc[1:]) != np.sign(dc[:-1]))
            amp_now, amp_before = np.ptp(c[-m // 2:]), np.ptp(c[-m:-m // 2])
            if (flips >= 0.4 and amp_now > floor and amp_now >= 0.5 * amp_before
                    and c[-m:].min() >= c[:-m].min()):
                return True
        return False

    def _fit(self, X, y):
        n = X.shape[0]
        lam = float(n if self.lambda_ is None else self.lambda_)
        self.lambda_used_ = lam
        sigma = float(self.sigma)
        w = self._start(X)
        st = im4e_step(X, y, w, sigma, lam)
        costs = [st.cost]
        window = [w]
        best_w, best_c = None, np.inf
        reason = "max_iter"
        it = 0
        t0 = time.perf_counter()
        if self.verbose:
            print(f"[IM4E] sigma={sigma:g}, n={n}, d={X.shape[1]}")
            print(f"{'Iteration':>10} {'Cost C':>20} {'Time(s)':>10}")
            print(f"{0:>10d} {st.cost:>20.10e} {time.perf_counter() - t0:>10.2f}")
        for it in range(1, self.max_iter + 1):
            if st.update is None:
                reason = "no_positive"
                warnings.warn(
                    f"IM4E: eq. (9) is undefined at iteration {it} (v has no positive entry: no feature has a "
                    "positive summed margin); stopping with the last valid weights. Try a larger sigma.",
                    NoPositiveWeightsWarning, stacklevel=3)
                it -= 1
                break
            w_new = st.update
            if self.line_search:
                c_full = im4e_cost(X, y, w_new, sigma, lam)
                direction = w_new - w
                def along(t, w=w, direction=direction):
                    return im4e_cost(X, y, w + t * direction, sigma, lam)

                t, _ = _golden_section(along, costs[-1], c_full)
                if t == 0.0:
                    reason = "line_search"
                    it -= 1
                    break
                w_new = w + t * direction
                w_new = np.maximum(w_new, 0.0)
                w_new /= w_new.sum()
            w = w_new
            st = im4e_step(X, y, w, sigma, lam)
            costs.append(st.cost)
            if self.verbose:
                print(f"{it:>10d} {st.cost:>20.10e} {time.perf_counter() - t0:>10.2f}")
            window.append(w)
            if len(window) > 2 * self._MAX_PERIOD + 2:
                window.pop(0)
            if st.cost < best_c:
                best_w, best_c = w, st.cost
            if abs(costs[-1] - costs[-2]) <= self.tol * abs(costs[-2]):
                reason = "tol"
                break
            if not self.line_search and self._cycling(window, costs):
                reason = "cycle"
                warnings.warn(
                    f"IM4E: the eq. (9) iteration is cycling (sigma={sigma:g}, iteration {it}): returning the "
                    f"iterate of lowest cost C={best_c:.6g}. Use line_search=True or a larger sigma.",
                    ConvergenceWarning, stacklevel=3)
                w = best_w
                st = im4e_step(X, y, w, sigma, lam)
                break
        else:
            warn_max_iter(self, self.max_iter)
        self.n_iter_ = it
        self.cost_history_ = costs
        self.stop_reason_ = reason
        # T is undefined where v has no positive entry: then w is no fixed point (inf, not NaN)
        self.fixed_point_residual_ = float(np.abs(st.update - w).sum()) if st.update is not None else np.inf
        return w
