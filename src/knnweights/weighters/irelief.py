"""I-RELIEF (Sun 2007): iterative Relief with kernel-soft neighbours and outlier probabilities."""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..engine import kernels, mixed_kernels
from ..engine.neighbors import entropy_from_log, on_gpu, row_log_softmax, soft_margins
from ..utils import Interval, StrOptions
from ._base import l2_norm, normalize_weights
from ._relief_base import DIFF_CONSTRAINTS, RAMP_CONSTRAINTS, TARGET_CONSTRAINTS, ReliefBase, fill_relief_docstring
from ._relief_margins import fold_pairs
from ._relief_regression import ReliefTargetMixin

__all__ = ["IRelief"]


def _auto_sigma(data, w, n_sample=500):
    """I-RELIEF's ``sigma="auto"``: the median, over (up to ``n_sample`` evenly spaced) samples, of
    the distance to the nearest other sample at a positive distance, under the initial weights.

    A kernel width on the scale of the nearest-neighbour distances: it follows the units
    (with ``normalize=False``) and the dimension of the data, so it needs no tuning to
    them; much smaller widths make the kernel neighbours nearly hard, so that they switch
    between iterations and the fit needs many more of them.
    """
    n = data.n
    rows = np.unique(np.linspace(0, n - 1, min(n, n_sample)).astype(np.int64))
    near = np.empty(rows.size)
    for s, e, D in data.distance_chunks(rows=rows, w=w):
        D = np.array(D, dtype=np.float64)
        D[np.arange(e - s), rows[s:e]] = np.inf
        D[D <= 0] = np.inf  # duplicates (frequent on discrete data) are not a scale
        near[s:e] = D.min(axis=1)
    near = near[np.isfinite(near)]
    sigma = float(np.median(near)) if near.size else 1.0
    return sigma if sigma > 0 else 1.0


@fill_relief_docstring
class IRelief(ReliefTargetMixin, ReliefBase):
    """I-RELIEF (Sun 2007): iterative Relief with kernel-soft neighbours and outliers.

    With the current weights ``w`` and the weighted Manhattan distance, hits and
    misses are soft: ``P(h | n) ∝ exp(-d_w(x_n, x_h) / sigma)`` over hits, likewise
    over misses; the probability that ``x_n`` is an outlier is
    ``o_n = sum_m exp(-d_nm/sigma) / sum_{j != n} exp(-d_nj/sigma)``.  Then (Sun 2007,
    eqs. 14-16)

        v = (1/n) sum_n (1 - o_n) z_n,    w = (v)+ / ||(v)+||_2,

    ``z_n`` the soft margin vector, repeated from ``w = 1/sqrt(d)`` (unit norm) until
    ``||w_t+1 - w_t||_2 < tol`` or ``max_iter`` (then a ``ConvergenceWarning`` that names
    the likely cause).  The distance is ``d_w(i, j) = sum_f w_f diff_f(i, j)`` and ``z_n``
    holds the ``diff`` of each feature: the linear one, or with ``diff="ramp"`` the ramp
    (Robnik-Sikonja & Kononenko 2003, Sec. 2.7) in both.

    A continuous target (not in Sun 2007; the same iteration with RReliefF's graded
    "different outcome" of Robnik-Sikonja & Kononenko 2003, Sec. 2.3): each pair counts as a
    miss with weight ``g_nj = |y_n - y_j| / (max y - min y)`` and as a hit with weight
    ``1 - g_nj``, so ``P(m | n) ∝ g_nm exp(-d_nm/sigma)``, ``P(h | n) ∝ (1 - g_nh)
    exp(-d_nh/sigma)`` over all other samples and ``o_n = sum_j g_nj exp(-d_nj/sigma) /
    sum_j exp(-d_nj/sigma)``, the kernel-expected outcome difference of ``x_n``'s
    neighbours.  With ``g`` in ``{0, 1}`` (two classes coded 0 / 1) this is the class
    iteration above, to rounding.

    One iteration is one pass over the distances and one over the margin terms; when the
    ``n x n`` matrices fit the working memory the distances are computed once per pair and
    the outlier-weighted coefficients are folded (``P + P^T``), so the margin pass also
    visits each pair once.

    Parameters
    ----------
    sigma : float or "auto", default="auto"
        Kernel width.  ``"auto"``: computed once from the data under the initial weights
        ``1/sqrt(d)``, the median over samples of the distance to the nearest other sample
        (at a positive distance; up to 500 evenly spaced samples); it follows the units and
        the dimension of the data, so the default needs no tuning.  The value used is
        ``sigma_``.  A number is a width in the data's units.
    max_iter : int, default=50
        Most iterations; reaching it warns (``ConvergenceWarning``).
    tol : float, default=1e-6
        The iteration stops once the step ``||w_t+1 - w_t||_2`` is below it.
    normalize : bool, default=True
        Range-normalise the differences (Relief's ``diff``, as every Relief class);
        ``normalize=False`` uses the data as given.
    {diff_params}
    {ramp_params}
    verbose : int, default=0
        Print one line per iteration (step, effective number of hits per sample).
    {target_type}

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,), unit L2 norm
    scores_ : ndarray of shape (n_features,)
        ``v`` of the last iteration (signed).
    sigma_ : float
        The kernel width used.
    n_iter_ : int
    cost_history_ : list of float
        ``||w_t+1 - w_t||_2`` per iteration (I-RELIEF has no explicit objective).
    discrete_features_ : ndarray of bool
    metric_ : ``"manhattan"``
    {target_attributes}

    References
    ----------
    M. Robnik-Sikonja and I. Kononenko, "Theoretical and empirical analysis of ReliefF and
    RReliefF", Machine Learning 53, 2003 (the graded outcome difference).

    Y. Sun, "Iterative RELIEF for feature weighting: algorithms, theories, and
    applications", IEEE TPAMI 29(6), 2007.
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "sigma": [Interval(numbers.Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "normalize": ["boolean"],
        **DIFF_CONSTRAINTS,
        **RAMP_CONSTRAINTS,
        "verbose": ["verbose"],
        "target_type": TARGET_CONSTRAINTS["target_type"],
    }
    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ('target_type', 'genotype_diff', 'diff', 'ramp')

    def __init__(self, sigma="auto", max_iter=50, tol=1e-6, normalize=True, missing="error",
                 discrete_features=None, discrete_limit=10, verbose=0, target_type="auto", genotype_diff=None,
                 diff="linear", ramp=(0.04, 0.1)):
        self.sigma = sigma
        self.max_iter = max_iter
        self.tol = tol
        self.normalize = normalize
        self.missing = missing
        self.discrete_features = discrete_features
        self.discrete_limit = discrete_limit
        self.verbose = verbose
        self.target_type = target_type
        self.genotype_diff = genotype_diff
        self.diff = diff
        self.ramp = ramp

    @staticmethod
    def _inlier_probability(log_hit_mass, log_miss_mass):
        # 1 - o_n, with o_n = miss mass / (hit + miss mass), in log space
        return -np.expm1(log_miss_mass - np.logaddexp(log_hit_mass, log_miss_mass))

    def _margin_sum(self, data, y, w, sigma, ent_h):
        """``sum_n (1 - o_n) z_n`` under ``w``; fills the hit entropies ``ent_h``."""
        n = data.n
        if on_gpu() and isinstance(data, mixed_kernels.PlainDiff):
            sm = soft_margins(data.Z, y, w, sigma, "manhattan", sample_weight=self._inlier_probability)
            ent_h[:] = sm.hit_entropy
            return sm.z
        lh, lm, ent_m = np.empty(n), np.empty(n), np.empty(n)
        z = np.zeros(data.d)
        for s, e, D in data.distance_chunks(w=w, n_arrays=6):
            P = np.empty(D.shape, dtype=np.float64)
            kernels.soft_coefficients(np.ascontiguousarray(D, dtype=np.float64), y[s:e], y, s, 1.0 / sigma, P,
                                       lh[s:e], lm[s:e], ent_h[s:e], ent_m[s:e])
            P *= self._inlier_probability(lh[s:e], lm[s:e])[:, None]
            if e - s == n:  # the whole matrix: each pair's margin term once
                P = fold_pairs(P)
            z += data.coef_sum(np.arange(s, e), P)
        return z

    def _margin_sum_continuous(self, data, y, w, sigma, ent_h):
        """``sum_n (1 - o_n) z_n`` for a continuous ``y`` (pairs graded by ``g = diff(y)``)."""
        span = float(np.ptp(y))
        z = np.zeros(data.d)
        for s, e, D in data.distance_chunks(w=w, n_arrays=10):  # D, G, A, the logits, the probabilities, temporaries
            rows = np.arange(s, e)
            G = np.abs(y[s:e, None] - y[None, :]) / span
            A = np.asarray(D, dtype=np.float64) * (-1.0 / sigma)
            A[rows - s, rows] = -np.inf  # not its own neighbour
            with np.errstate(divide="ignore"):
                Lm = A + np.log(G)
                Lh = A + np.log1p(-G)
            lm, log_pm = row_log_softmax(Lm)
            lh, log_ph = row_log_softmax(Lh)
            ent_h[s:e] = entropy_from_log(log_ph)
            Pm = np.exp(log_pm) - np.exp(log_ph)
            Pm *= self._inlier_probability(lh, lm)[:, None]
            z += data.coef_sum(rows, Pm)
        return z

    def _continuous_scores(self, X, y):
        return self._iterate(X, y, self._weights_data(X, np.zeros(X.shape[0], np.int64)), self._margin_sum_continuous)

    def _fit(self, X, y):
        return self._iterate(X, y, self._weights_data(X, y), self._margin_sum)

    def _iterate(self, X, y, data, margin_sum):
        """Sun's fixed-point iteration ``w = (v)+ / ||(v)+||_2`` with ``v = margin_sum(...) / n``."""
        if data is None:
            data = mixed_kernels.PlainDiff(self._normalized(X))
        d = X.shape[1]
        w = np.full(d, 1.0 / np.sqrt(d))
        sigma = _auto_sigma(data, w) if isinstance(self.sigma, str) else float(self.sigma)
        self.sigma_ = sigma
        self.cost_history_ = []
        ent_h = np.empty(X.shape[0])
        converged = False
        v = np.zeros(d)
        for it in range(1, self.max_iter + 1):
            v = margin_sum(data, y, w, sigma, ent_h) / X.shape[0]
            w_new = normalize_weights(v, "l2")
            if not w_new.any():
                self._warn_no_positive_margin(sigma, ent_h)
                break
            step = l2_norm(w_new - w)
            self.cost_history_.append(step)
            w = w_new
            if self.verbose:
                print(f"[IRelief] iteration {it:3d}: step {step:.3e}, sigma {sigma:.3g}, "
                      f"effective hits {np.mean(np.exp(ent_h)):.3g}")
            if step < self.tol:
                converged = True
                break
        if not converged and it == self.max_iter and w_new.any():
            self._warn_max_iter(sigma, ent_h)
        self.n_iter_ = it
        self.scores_ = v
        return w

    def _sigma_hint(self):
        return "sigma='auto' (the default, from the data's neighbour distances)" if not isinstance(
            self.sigma, str) else "a larger sigma"

    def _warn_max_iter(self, sigma, ent_h):
        eff = float(np.mean(np.exp(ent_h)))
        name = type(self).__name__
        if eff < 1.5:
            msg = (f"{name} stopped at max_iter={self.max_iter} before the weights converged. Likely cause: "
                   f"sigma={sigma:.3g} is small for these distances (about {eff:.2g} effective hits per sample: "
                   f"the kernel neighbours are nearly hard and switch between iterations). Use "
                   f"{self._sigma_hint()}, or normalize=True if the features have large ranges.")
        else:
            msg = (f"{name} stopped at max_iter={self.max_iter} before the weights converged "
                   f"(last step {self.cost_history_[-1]:.3g}, tol={self.tol}; sigma={sigma:.3g}, about {eff:.3g} "
                   "effective hits per sample); increase max_iter or tol.")
        warnings.warn(msg, ConvergenceWarning, stacklevel=3)

    def _warn_no_positive_margin(self, sigma, ent_h):
        eff = float(np.mean(np.exp(ent_h)))
        warnings.warn(
            f"{type(self).__name__}: no feature has a positive mean margin under the current weights, so the "
            f"weights are all zero (sigma={sigma:.3g}, about {eff:.3g} effective hits per sample). If sigma is "
            "large for these distances every neighbour counts alike; try sigma='auto' or a smaller sigma, "
            "or check that the features carry information about y.", UserWarning, stacklevel=3)
