"""The p-values of the Relief family's ``pvalues_``: the pair statistic, its permutation moments, the reference.

* :class:`PairMoments`: STIR's hit / miss contrast for class labels (Le, Urbanowicz, Moore &
  McKinney, "STatistical Inference Relief (STIR) feature selection", Bioinformatics 35(8),
  2019) and the NPDR-style regression of neighbour-pair differences for a continuous target
  (Le, Dawkins & McKinney, "Nearest-neighbor Projected-Distance Regression (NPDR) for
  detecting network interactions with adjustments for multiple tests and confounding",
  Bioinformatics 36(9), 2020), referred to their outcome-permutation (Mantel) distribution
  through its exact first three moments, or to the published pseudo t-test.
* :func:`mantel_moments`, :func:`difference_sums`: those moments; :func:`quadratic_sf`: the
  reference curve.
* :func:`bh_qvalues`: Benjamini-Hochberg (1995) adjusted p-values (q-values).
* :func:`adjust_pvalues`: adjusted p-values by Benjamini-Hochberg, Bonferroni, Holm or Benjamini-Yekutieli.

:mod:`knnweights.significance` exports them with the tests built on any weighter.
"""

import numpy as np
import scipy.sparse
from scipy import stats
from sklearn.utils import Bunch

from ..engine import mixed_kernels as _kernels_mixed
from ..engine import pair_kernels as _kernels_pairs
from ..engine.genotypes import ByteDiff
from ..utils import fill_docstring
from ._relief_margins import RampDiff

__all__ = ["PADJ_METHODS", "PairMoments", "adjust_pvalues", "bh_qvalues", "difference_sums", "mantel_moments",
           "quadratic_sf"]


def _checked_pvalues(pvalues):
    """``pvalues`` as a flat float array; an error unless each is finite and within [0, 1]."""
    p = np.asarray(pvalues, dtype=np.float64).ravel()
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p-values must be finite and within [0, 1]")
    return p


def bh_qvalues(pvalues):
    """Benjamini-Hochberg adjusted p-values: ``q_(i) = min_{j >= i} p_(j) m / j``, capped at 1.

    A feature with ``q <= alpha`` is a discovery of the step-up procedure at false
    discovery rate ``alpha`` (Benjamini & Hochberg, JRSS B 57, 1995).

    Parameters
    ----------
    pvalues : array-like
        P-values in ``[0, 1]``, one per test (flattened); the adjustment is for all of
        them together.

    Returns
    -------
    qvalues : ndarray of shape (n_tests,)
        Adjusted p-values in the order of ``pvalues``; ``q >= p``.

    Examples
    --------
    >>> bh_qvalues([0.01, 0.04, 0.03, 0.5]).round(3).tolist()
    [0.04, 0.053, 0.053, 0.5]
    """
    p = _checked_pvalues(pvalues)
    if p.size == 0:
        return p.copy()
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


#: the multiple-testing adjustments of :func:`adjust_pvalues`
PADJ_METHODS = ("bh", "bonferroni", "holm", "by")


def adjust_pvalues(pvalues, method="bh"):
    """Adjusted p-values for multiple testing (the definitions of statsmodels' ``multipletests``).

    ``"bh"``: Benjamini-Hochberg (:func:`bh_qvalues`, false discovery rate);
    ``"bonferroni"``: ``min(m p, 1)``; ``"holm"``: Holm's step-down,
    ``max_{j <= i} min((m - j + 1) p_(j), 1)`` over the sorted p-values (both the family-wise error
    rate); ``"by"``: Benjamini-Yekutieli, Benjamini-Hochberg of ``c_m p`` with
    ``c_m = sum_{i <= m} 1 / i`` (the false discovery rate under any dependence).

    Parameters
    ----------
    pvalues : array-like
        P-values in ``[0, 1]``, one per test (flattened); ``NaN`` or values outside ``[0, 1]`` raise.
    method : {"bh", "bonferroni", "holm", "by"}, default="bh"
        The adjustment.

    Returns
    -------
    adjusted : ndarray of shape (n_tests,)
        Adjusted p-values in the order of ``pvalues``, capped at 1; ``adjusted >= p``.

    Examples
    --------
    >>> adjust_pvalues([0.01, 0.04, 0.03, 0.5], "holm").round(3).tolist()
    [0.04, 0.09, 0.09, 0.5]
    """
    if method not in PADJ_METHODS:
        raise ValueError(f"method must be one of {PADJ_METHODS}, got {method!r}")
    if method == "bh":
        return bh_qvalues(pvalues)
    p = _checked_pvalues(pvalues)
    if p.size == 0:
        return p.copy()
    m = p.size
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    if method == "by":
        return np.minimum(bh_qvalues(np.minimum(p * np.sum(1.0 / np.arange(1, m + 1)), 1.0)), 1.0)
    order = np.argsort(p, kind="stable")
    q = np.maximum.accumulate(np.minimum(p[order] * (m - np.arange(m)), 1.0))
    out = np.empty(m)
    out[order] = q
    return out


def _falling(n, k):
    out = 1.0
    for i in range(k):
        out *= n - i
    return out


#: the sums over ordered pairs of a symmetric, zero-diagonal matrix ``X`` from which its permutation
#: moments are built (``r = X 1``, ``r2`` / ``r3`` the row sums of ``X^2`` / ``X^3`` elementwise)
_BASICS = ("T1", "T2", "T3", "R2", "Q", "S3", "P3", "Tr")


def _injective_sums(b, order):
    """``[(v, N, sum)]``: for each shape of ``order`` (2 or 3) ordered pairs with ``v`` distinct samples,
    the number ``N`` of ways the pairs' slots can coincide in that shape and the sum of the products
    over distinct samples, from the basic sums ``b`` (``T1 = sum X``, ``T2 = sum X^2``, ``T3 = sum X^3``,
    ``R2 = sum r^2``, ``Q = sum r2 r``, ``S3 = sum r^3``, ``P3 = r' X r``, ``Tr = trace X^3``).

    Each is the Moebius inversion, over the ways of identifying samples, of the unrestricted sums
    (which factor over connected pieces: an edge, a double or triple edge, a path, a star, a
    triangle); ``tests/test_significance.py`` checks the resulting moments against the
    enumeration of all permutations.
    """
    T1, T2, R2 = b["T1"], b["T2"], b["R2"]
    if order == 2:
        return [(2, 2, T2), (3, 4, R2 - T2), (4, 1, T1 * T1 - 4 * R2 + 2 * T2)]
    T3, Q, S3, P3, Tr = b["T3"], b["Q"], b["S3"], b["P3"], b["Tr"]
    return [
        (2, 4, T3),                                        # one pair three times
        (3, 24, Q - T3),                                   # a pair twice and one sharing a sample
        (3, 8, Tr),                                        # a triangle
        (4, 6, T1 * T2 - 4 * Q + 2 * T3),                  # a pair twice and a disjoint one
        (4, 8, S3 - 3 * Q + 2 * T3),                       # a star
        (4, 24, P3 - 2 * Q + T3 - Tr),                     # a path of three pairs
        (5, 12, R2 * T1 - T1 * T2 - 4 * P3 + 10 * Q - 2 * S3 - 4 * T3 + 2 * Tr),  # a path of two and a pair
        (6, 1, T1**3 - 12 * R2 * T1 + 6 * T1 * T2 + 24 * P3 - 48 * Q + 16 * S3 + 16 * T3 - 8 * Tr),  # three disjoint
    ]


def mantel_moments(c, dd, n):
    """Mean, variance and third central moment of ``S = sum_{i != j} C_ij D_{pi(i) pi(j)}`` over the
    uniform permutations ``pi`` of ``n`` samples, ``C`` and ``D`` symmetric with zero diagonal.

    ``c`` / ``dd``: the basic sums of ``C`` / ``D`` (:func:`_injective_sums`; arrays broadcast, e.g.
    one entry per feature).  ``E[S^m] = sum over shapes of N * sum_C * sum_D / n^(v)`` (the samples
    of a shape go to ``v`` distinct samples, each assignment with probability ``1 / n^(v)``,
    ``n^(v) = n (n - 1) ... (n - v + 1)``); the second-order sum is the Mantel (1967) variance,
    the third-order one the exact third moment (Siemiatycki 1978 computed it for Mantel's
    statistic; Mielke & Berry 2007, Ch. 2, use the three moments for MRPP).

    Parameters
    ----------
    c : dict of str to float or ndarray
        Basic sums of ``C`` (:func:`difference_sums` for a difference matrix).
    dd : dict of str to float or ndarray
        Basic sums of ``D``.
    n : int
        Number of samples.

    Returns
    -------
    mean : float or ndarray
        ``E[S]``.
    variance : float or ndarray
        ``Var[S]``.
    third : float or ndarray
        Third central moment of ``S``.
    """
    m1 = c["T1"] * dd["T1"] / _falling(n, 2)
    m2 = sum(N * sc * sd / _falling(n, v) for (v, N, sc), (_, _, sd) in
             zip(_injective_sums(c, 2), _injective_sums(dd, 2), strict=True))
    m3 = sum(N * sc * sd / _falling(n, v) for (v, N, sc), (_, _, sd) in
             zip(_injective_sums(c, 3), _injective_sums(dd, 3), strict=True))
    return m1, m2 - m1 * m1, m3 - 3 * m1 * m2 + 2 * m1**3


def difference_sums(V, discrete=False):
    """The basic sums (:func:`_injective_sums`) of each column's difference matrix, in ``O(n log n)``.

    ``D_ij = |v_i - v_j|`` for a continuous column (from the sorted values and their prefix
    sums of powers), ``[v_i != v_j]`` for a discrete one (from the level counts).  ``V``:
    ``(n,)`` (scalars out) or ``(n, d)`` (arrays of length ``d``); ``discrete``: a bool or a
    mask of the columns.

    Parameters
    ----------
    V : array-like of shape (n_samples,) or (n_samples, n_columns)
        Values of each column.
    discrete : bool or array-like of bool, default=False
        Which columns are discrete (difference 0/1) rather than continuous (``|v_i - v_j|``).

    Returns
    -------
    sums : dict of str to float or ndarray
        The basic sums ``T1, T2, T3, R2, Q, S3, P3, Tr`` of each column's difference matrix.
    """
    V = np.asarray(V)
    one = V.ndim == 1
    V = V.reshape(V.shape[0], -1)
    n, d = V.shape
    nf = float(n)
    disc = np.broadcast_to(np.asarray(discrete, dtype=bool), (d,))
    out = {key: np.zeros(d) for key in _BASICS}
    for f in np.flatnonzero(disc):
        m = np.unique(V[:, f], return_counts=True)[1].astype(np.float64)
        t = (m * (nf - m)).sum()
        r2 = (m * (nf - m) ** 2).sum()
        p1, p2, p3 = m.sum(), (m**2).sum(), (m**3).sum()
        for key, value in (("T1", t), ("T2", t), ("T3", t), ("R2", r2), ("Q", r2), ("S3", (m * (nf - m) ** 3).sum()),
                           ("P3", t * t - ((m * (nf - m)) ** 2).sum()), ("Tr", p1**3 - 3 * p1 * p2 + 2 * p3)):
            out[key][f] = value
    cont = np.flatnonzero(~disc)
    if cont.size:
        s = np.sort(np.asarray(V[:, cont], dtype=np.float64), axis=0)
        s = s - s[n // 2]  # differences only: centred for accuracy
        k = np.arange(n, dtype=np.float64)[:, None]

        def before(x):  # sums over the smaller sorted positions
            return np.cumsum(x, axis=0) - x

        def after(x):
            return x.sum(axis=0) - np.cumsum(x, axis=0)

        s2 = s * s
        b1, b2, b3 = before(s), before(s2), before(s2 * s)
        a1, a2, a3 = after(s), after(s2), after(s2 * s)
        b0, a0 = k, nf - 1 - k
        left1, left2 = s * b0 - b1, s2 * b0 - 2 * s * b1 + b2
        right1, right2 = a1 - s * a0, a2 - 2 * s * a1 + s2 * a0
        r1 = left1 + right1
        r2 = left2 + right2
        r3 = (s2 * s * b0 - 3 * s2 * b1 + 3 * s * b2 - b3) + (a3 - 3 * s * a2 + 3 * s2 * a1 - s2 * s * a0)
        rs = r1 * s
        out["T1"][cont], out["T2"][cont], out["T3"][cont] = r1.sum(0), r2.sum(0), r3.sum(0)
        out["R2"][cont], out["Q"][cont], out["S3"][cont] = (r1 * r1).sum(0), (r2 * r1).sum(0), (r1 * r1 * r1).sum(0)
        out["P3"][cont] = (r1 * ((s * before(r1) - before(rs)) + (after(rs) - s * after(r1)))).sum(0)
        # trace D^3 = 6 sum_{i < j < k} (s_j - s_i)(s_k - s_j)(s_k - s_i), by the middle sample j
        out["Tr"][cont] = 6.0 * (left2 * right1 + left1 * right2).sum(0)
    return {key: float(v[0]) for key, v in out.items()} if one else out


def _centred_power(sums, n, power):
    """``sum_i (r_i - rbar)^power`` of the row sums ``r`` behind the basic sums (``power`` 2 or 3)."""
    rbar = sums["T1"] / n
    if power == 2:
        return sums["R2"] - n * rbar**2
    return sums["S3"] - 3.0 * rbar * sums["R2"] + 2.0 * n * rbar**3


def _gamma_parts(var, third):
    """``(b, nu, normal)`` of a part ``b (G - nu)``, ``G`` chi-square with ``nu`` degrees of freedom, with the
    variance ``var`` and third moment ``third``: ``b = third / (4 var)``, ``nu = 8 var^3 / third^2``; ``normal``
    where the third moment is negligible."""
    normal = np.abs(third) <= 1e-9 * np.maximum(var, 1e-300) ** 1.5
    t3 = np.where(normal, 1.0, third)
    b = np.where(normal, 0.0, t3 / (4.0 * np.maximum(var, 1e-300)))
    nu = np.where(normal, 0.0, 8.0 * var**3 / t3**2)
    return b, nu, normal


def _cgf(t, parts):
    """The cumulant generating function of the sum of the parts and its first two derivatives."""
    k = k1 = k2 = 0.0
    for var, b, nu, normal in parts:
        x = np.where(normal, 1.0, 1.0 - 2.0 * b * t)
        k = k + np.where(normal, 0.5 * var * t * t, nu * (-0.5 * np.log(x) - b * t))
        k1 = k1 + np.where(normal, var * t, nu * b * (1.0 / x - 1.0))
        k2 = k2 + np.where(normal, var, 2.0 * nu * b * b / (x * x))
    return k, k1, k2


def quadratic_sf(z, skewness, linear=0.0, linear_third=0.0):
    """``P(Z >= z)`` for ``Z = L + Q``, independent, each a scaled and centred chi-square (or a normal): the
    reference with mean 0, variance 1 and the given skewness, whose part ``L`` has the variance ``linear``
    and the third moment ``linear_third``, and ``Q`` the rest.

    A Mantel (quadratic assignment) statistic is a linear part, its Hajek projection (a linear
    permutation statistic, whose variance and third moment are exact: :class:`PairMoments`), plus
    a quadratic part, asymptotically a weighted sum of centred chi-squares.  Each part is
    represented by the scaled chi-square with its variance and third moment (the three-moment
    chi-square approximation of a quadratic form: Pearson 1959, Imhof 1961), a normal where the
    third moment vanishes; ``Q`` takes what the skewness leaves beyond ``linear_third``, at most
    the skewness of one chi-square (``2 sqrt 2``: a weighted sum of centred chi-squares is never
    more skewed), and ``L`` the rest.  ``L`` alone with the whole skewness is the Pearson type III
    distribution, Mielke & Berry's (2007, Ch. 2) three-moment reference for MRPP.  Splitting
    the parts matters where the quadratic part holds most of the skewness (class labels): its
    own skewness is then larger, and so is the far tail, as the permutation distributions
    show.  The tail probability of the sum is the
    Lugannani & Rice (1980) saddlepoint approximation from the explicit cumulant generating
    function (the series ``1/2 - skewness / (6 sqrt(2 pi))`` at the mean); ``1`` below the
    support, the normal tail above it (a left-skewed part's end).

    Parameters
    ----------
    z : float or array-like
        The standardised statistic.
    skewness : float or array-like
        The skewness of the reference.
    linear : float or array-like, default=0.0
        The share of the variance in the linear part ``L``.
    linear_third : float or array-like, default=0.0
        The third moment of ``L`` (standardised).

    Returns
    -------
    p : ndarray
        ``P(Z >= z)``, broadcast over the inputs.

    Examples
    --------
    >>> float(quadratic_sf(1.6448536, 0.0).round(6))
    0.05
    >>> bool(abs(quadratic_sf(1.0, 0.4, 1.0, 0.4) - stats.pearson3.sf(1.0, 0.4)) < 1e-3)
    True
    """
    z, skew, lin, lin3 = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in
                                               (z, skewness, linear, linear_third)))
    lin = np.clip(lin, 0.0, 1.0)
    # a quadratic part sum lambda (chi2_1 - 1) is at most as skewed as one chi-square (2 sqrt 2): what the
    # linear part's third moment leaves beyond that bound (the parts are not independent) stays with it
    bound = 2.0 * np.sqrt(2.0) * (1.0 - lin) ** 1.5
    quad3 = np.clip(skew - lin3, -bound, bound)
    parts, lo, hi = [], np.full(z.shape, -60.0), np.full(z.shape, 60.0)
    for var, third in ((lin, skew - quad3), (1.0 - lin, quad3)):
        b, nu, normal = _gamma_parts(var, third)
        parts.append((var, b, nu, normal))
        with np.errstate(divide="ignore"):
            edge = np.where(normal | (b == 0), np.inf, 0.5 / np.where(b == 0, 1.0, b))
        hi = np.where(~normal & (b > 0), np.minimum(hi, edge * (1 - 1e-12)), hi)
        lo = np.where(~normal & (b < 0), np.maximum(lo, edge * (1 - 1e-12)), lo)
    # K'(t) = z: K' increases on (lo, hi); bisection, then one Lugannani-Rice step
    a, c = lo.copy(), hi.copy()
    _, k1a, _ = _cgf(a, parts)
    _, k1c, _ = _cgf(c, parts)
    for _ in range(100):
        m = 0.5 * (a + c)
        _, k1, _ = _cgf(m, parts)
        below = k1 < z
        a, c = np.where(below, m, a), np.where(below, c, m)
    t = 0.5 * (a + c)
    k, _, k2 = _cgf(t, parts)
    w = np.sign(t) * np.sqrt(np.maximum(2.0 * (t * z - k), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = stats.norm.sf(w) + stats.norm.pdf(w) * (1.0 / (t * np.sqrt(k2)) - 1.0 / w)
    p = np.where(np.abs(w) < 1e-4, 0.5 - skew / (6.0 * np.sqrt(2.0 * np.pi)), p)
    p = np.where(z <= k1a, 1.0, p)  # below the support (a right-skewed part's lower end)
    p = np.where(z >= k1c, stats.norm.sf(z), p)  # past a left-skewed part's upper end
    return np.clip(np.where(np.isfinite(p), p, stats.norm.sf(z)), 0.0, 1.0)


def _encoded_difference_sums(E, ecol, nf):
    """:func:`difference_sums` of the ``nf`` features of an encoded block (``E``'s columns, ``ecol`` their
    features): a feature of one column differs by ``|e_i - e_j|``, one of several (a discrete feature's
    levels) by whether its rows of ``E`` differ."""
    V = np.empty((E.shape[0], nf))
    disc = np.zeros(nf, dtype=bool)
    for f in range(nf):
        cols = np.flatnonzero(ecol == f)
        if cols.size == 1:
            V[:, f] = E[:, cols[0]]
        else:
            V[:, f] = np.unique(E[:, cols], axis=0, return_inverse=True)[1].ravel()
            disc[f] = True
    return difference_sums(V, disc)


def _pair_covariances(out, P, G1, G2):
    """``(S, saa, sgg, ok)`` over the ``P`` pairs from ``L0 = sum a``, ``A2 = sum a^2``, ``L1 = sum g a`` (per
    feature, in ``out``) and ``G1 = sum g``, ``G2 = sum g^2``: the covariance sum ``S = sum (a - abar)(g - gbar)``,
    the two sums of squares, and where both vary."""
    gbar, abar = G1 / P, out["L0"] / P
    sgg = G2 - P * gbar**2
    saa = out["A2"] - P * abar**2
    sag = out["L1"] - gbar * out["L0"]
    ok = (saa > 1e-12 * np.maximum(out["A2"], 1e-300)) & (sgg > 1e-12 * max(G2, 1e-300))
    return sag, saa, sgg, ok


#: ``{pair_rows}``: the Parameters opening of the methods that add pairs (their first samples)
_pairs_doc = fill_docstring(pair_rows="""Parameters
----------
rows : array-like of shape (n_rows,)
    The first sample of each row's pairs.""")


class PairMoments:
    """The pair statistic of the Relief family's ``pvalues_`` and its null distribution.

    Over the neighbour pairs ``(i, j)`` (a sample and one of its neighbours, :meth:`add_index`,
    :meth:`add_dense`), with ``a = diff(A, x_i, x_j)`` (Relief's ``diff``: range-normalised
    absolute difference, 0/1 on a discrete feature) and the outcome's difference ``g`` of the
    pair, the statistic of feature ``A`` is the covariance of ``a`` and ``g`` over the ``P``
    pairs, ``S = sum_p (g_p - gbar)(a_p - abar)`` (the slope of ``a`` on ``g`` times ``sum (g -
    gbar)^2``), tested one-sided (``S > 0``: the feature differs more across the outcome than
    within it):

    * class labels, ``g = [y_i != y_j]`` (1 for a miss pair, 0 for a hit pair): the slope is
      ``mean_M - mean_H``, STIR's statistic (Le, Urbanowicz, Moore & McKinney 2019, Sec. 2), the
      Relief weight of the pairs;
    * a continuous target, ``g = |y_i - y_j| / (max y - min y)``: NPDR's regression of the pair
      differences (Le, Dawkins & McKinney 2020, Sec. 2).

    Two references (``method``):

    * ``"pseudo-t"``, the published one, pairs taken as independent: the ordinary least-squares
      ``t = r sqrt((P - 2) / (1 - r^2))`` (``r`` the pair correlation) on ``P - 2`` degrees of
      freedom; for classes exactly STIR's pseudo t, the two-sample t of the miss and hit
      differences with the pooled variance ``S_p^2 = ((|M| - 1) S_M^2 + (|H| - 1) S_H^2) / (|M|
      + |H| - 2)``, ``t = (mean_M - mean_H) / (S_p sqrt(1/|M| + 1/|H|))``, ``|M| + |H| - 2``
      degrees of freedom.  The pairs share samples, so this variance is too small and the
      p-values are too small under the null.
    * ``"mantel"`` (the estimators' default): the outcome permuted over the samples, the pairs
      held fixed.  ``S = sum_{i != j} C_ij D_ij`` with ``D_ij`` the outcome difference of
      ``(i, j)`` and ``C_ij = (m_ij + m_ji) / 2 (a_ij - abar)`` (``m`` the pair indicators) is
      a Mantel (1967) statistic: its exact permutation mean (0), variance and third moment
      follow from sums of ``C`` and of ``D`` (:func:`mantel_moments`; for ``C`` the triangles
      ``trace C^3`` are the costly part), and so does the variance of its linear part.  The
      reference is :func:`quadratic_sf` with those moments: the permutation distribution of
      such a quadratic form is skewed (right-skewed for classes, and it stays so as ``n``
      grows), and a normal reference puts too many null p-values in the far tail.  Exact in
      these moments when the pairs are found without the outcome: the estimators give this
      test neighbourhoods that are (the ``k`` nearest, the SURF / MultiSURF radius; see
      ``PVALUES_DOC`` in :mod:`knnweights.weighters._relief_regression`).  With signal in
      other features the label permutation is not quite the null of a noise feature (the
      labels are then tied to the neighbourhoods): a pair that differs across the outcome in
      the relevant features must be close in the others, so a noise feature's statistic
      tends to be negative and its p-values err on the conservative side.  ReliefF's own
      hits and misses would err the other way: its nearest misses come from other pools
      than its nearest hits, are farther, and differ more in every feature.  Where the
      features that drive the outcome also shape the neighbourhoods (correlated, clustered
      predictors), neighbours share outcomes; permuting the outcome removes that, and the
      reference's variance of a noise feature's ``S`` is then too small (too many small
      p-values for classes).
    * ``"mantel"`` with ``null="feature"``: the feature's values permuted over the samples,
      the pairs and the outcome held fixed.  ``S = sum_p a_p (g_p - gbar) = sum_{i != j} C^g_ij
      D_ij`` with ``C^g_ij = (m_ij + m_ji) / 2 (g_ij - gbar)`` (fixed) and ``D`` the feature's
      difference over all sample pairs (permuted): the same Mantel statistic with the roles of
      the two matrices exchanged, so :func:`mantel_moments` gives its exact mean (0),
      variance and third moment from the sums of ``C^g`` (one matrix: its triangles once, not
      per feature) and of each ``D`` (:func:`difference_sums`: ``O(n log n)`` per feature from
      the sorted values, or the level counts), and :func:`quadratic_sf` the reference.  The
      null is "the feature is independent of the outcome and of the other features" (the
      outcome permutation's is "the outcome is independent of every feature"); it holds for
      a noise feature whatever the other features do, so this reference stays exact when
      they carry signal, up to the feature's own part in the distances (the pairs are
      found on it too, so they are closer in it than permuted values would be; conservative,
      by a part that shrinks as features are added).

    ``trace C^3 = sum_i sum_{j, k} C_ij C_jk C_ki`` is summed exactly over every two
    neighbours of every sample when that is at most ``triangle_work`` terms (pairs of
    neighbours times features: the ``k``-nearest neighbourhoods, small radius problems); else
    each sample's inner sum is estimated from ``max(256, triangle_work / (n d))`` random pairs
    of its neighbours (unbiased; a seeded generator, so the result is deterministic).  The
    feature null's one matrix ``C^g`` takes the budget of one block of features (``d =
    feature_block`` above): a pair of neighbours costs a look-up, whatever the block's width.  A
    feature (or an outcome) without variation gets ``p = 1``.  Memory: the pairs (8 bytes each as
    they are added, 5 per entry of the symmetric adjacency) and ``O(n x feature_block)`` per block of
    features.

    Parameters
    ----------
    data : PlainDiff, DiffData, ByteDiff or RampDiff
        The ``diff`` data of the fit (:mod:`knnweights.engine._kernels_mixed`), without
        missing values; a genotype matrix's :class:`~knnweights.engine.genotypes.ByteDiff` is
        read block by block from its bytes (:meth:`~knnweights.engine.genotypes.ByteDiff.float_blocks`);
        with the ramp ``diff``'s :class:`~knnweights.weighters._relief_margins.RampDiff`, ``a`` is
        each pair's ramp difference, as in the weights (``null="outcome"`` only).
    triangle_work : float, default=3e8
        The budget of the triangle sums, above.
    feature_block : int, default=128
        Features handled together.
    """

    #: the p-values' version (golden case "PairMoments"); the estimators' weights have their own
    _algorithm_version = 2

    def __init__(self, data, triangle_work=3e8, feature_block=128):
        self.data = data
        self.triangle_work = float(triangle_work)
        self.feature_block = int(feature_block)
        self._src, self._dst = [], []
        self._outcome = None
        self._cache = {}
        self._ramp_lo = self._ramp_width = None  # None: the linear diff
        if isinstance(data, ByteDiff):  # genotype bytes: each block's encoding, read in _blocks
            if data.has_missing:
                raise ValueError("PairMoments: the genotype bytes have unknown values; the pair moments need known "
                                 "ones.")
            self._E, self._ecol, self._plain = None, None, False
        elif isinstance(data, _kernels_mixed.PlainDiff):
            self._E = np.ascontiguousarray(data.Z, dtype=np.float64)
            self._ecol, self._plain = np.arange(data.d, dtype=np.int64), True
        elif isinstance(data, RampDiff):
            self._E, self._ecol, self._plain, self._ramp_lo, self._ramp_width = data.pair_columns()
        else:
            M = data.M
            self._E = np.ascontiguousarray(M.E, dtype=np.float64)
            self._ecol, self._plain = np.ascontiguousarray(M.ecol, dtype=np.int64), False

    def set_outcome(self, y, kind):
        """The outcome whose differences ``g`` the pairs are tested against: ``kind`` ``"classes"``
        (``g = [y_i != y_j]``) or ``"continuous"`` (``g = |y_i - y_j| / (max y - min y)``).

        Parameters
        ----------
        y : array-like of shape (n_samples,)
            The outcome of every sample (class labels or the continuous target).
        kind : {"classes", "continuous"}
            How two outcomes differ.
        """
        if kind not in ("classes", "continuous"):
            raise ValueError(f"kind must be 'classes' or 'continuous', got {kind!r}")
        continuous = kind == "continuous"
        if continuous:
            v = np.asarray(y, dtype=np.float64)
            span = float(np.ptp(v))
            v = v / span if span > 0 else v
        else:
            v = np.unique(np.asarray(y), return_inverse=True)[1].astype(np.float64).ravel()
        self._outcome = (np.ascontiguousarray(v), continuous, difference_sums(v, not continuous))
        self._cache.clear()

    @_pairs_doc
    def add_index(self, rows, idx):
        """Add the pairs ``(rows[r], idx[r, t])`` (``idx < 0``: none).

        {pair_rows}
        idx : array-like of shape (n_rows, k)
            The second samples (neighbour lists); negative entries are skipped.
        """
        idx = np.asarray(idx, dtype=np.int64)
        idx = idx.reshape(idx.shape[0], -1)
        keep = idx >= 0
        self._add(np.repeat(np.asarray(rows, dtype=np.int32), idx.shape[1])[keep.ravel()], idx[keep])

    @_pairs_doc
    def add_dense(self, rows, mask):
        """Add the pairs ``(rows[r], j)`` where ``mask[r, j]``.

        {pair_rows}
        mask : array-like of bool, shape (n_rows, n_samples)
            Which samples are paired with ``rows[r]`` (a neighbourhood).
        """
        r, j = np.nonzero(np.asarray(mask, dtype=bool))
        self._add(np.asarray(rows, dtype=np.int32)[r], j)

    def _add(self, src, dst):
        """Store the pairs ``(src[t], dst[t])`` (int32) and drop what was computed from the old ones."""
        self._src.append(src)
        self._dst.append(dst.astype(np.int32))
        self._cache.clear()

    def _graph(self):
        """The pairs as a symmetric adjacency (CSR, sorted rows) with flags: 1 for ``(i, j)``, 2 for ``(j, i)``."""
        if "graph" not in self._cache:
            n = self.data.n
            src = np.concatenate(self._src) if self._src else np.zeros(0, np.int32)
            dst = np.concatenate(self._dst) if self._dst else np.zeros(0, np.int32)
            if np.any(src == dst):
                raise ValueError("a pair of a sample with itself")
            A = scipy.sparse.csr_matrix((np.ones(src.size, np.int8), (src, dst)), shape=(n, n))
            del src, dst
            A.sum_duplicates()
            A.data[:] = 1  # a pair listed twice is one pair
            U = (A + 2 * A.T).tocsr()
            U.sort_indices()
            self._cache["graph"] = (U.indptr.astype(np.int64), U.indices.astype(np.int32), U.data.astype(np.uint8))
        return self._cache["graph"]

    def _blocks(self):
        """``(f0, f1, cols)``: blocks of features and the pair kernels' first five arguments for them, their
        columns of ``E`` (local feature numbers), ``plain`` and the ramp's per-column thresholds (``None``: linear)."""
        d = self.data.d
        if self._E is None:
            for f0, f1, E, ecol in self.data.float_blocks(self.feature_block):
                yield f0, f1, (E, ecol, False, None, None)
            return
        ramp = self._ramp_lo is not None
        for f0 in range(0, d, self.feature_block):
            f1 = min(d, f0 + self.feature_block)
            if self._plain:
                cols = np.arange(f0, f1)
                E, ecol = np.ascontiguousarray(self._E[:, f0:f1]), np.arange(f1 - f0, dtype=np.int64)
            else:
                cols = np.flatnonzero((self._ecol >= f0) & (self._ecol < f1))
                E, ecol = np.ascontiguousarray(self._E[:, cols]), np.ascontiguousarray(self._ecol[cols] - f0)
            lo, width = ((np.ascontiguousarray(self._ramp_lo[cols]), np.ascontiguousarray(self._ramp_width[cols]))
                         if ramp else (self._ramp_lo, self._ramp_width))
            yield f0, f1, (E, ecol, self._plain, lo, width)

    def statistics(self, method="mantel", null="outcome"):
        """Per-feature statistics and their reference, as a :class:`~sklearn.utils.Bunch`.

        ``"pseudo-t"``: ``statistic`` (t) and ``df``.  ``"mantel"``: ``statistic`` (``S``),
        ``mean``, ``var`` and ``third`` (its permutation mean, variance and third central
        moment), ``z = (S - mean) / sqrt(var)``, ``skewness`` and ``linear`` (the share of the
        variance in the linear part).  ``ok`` is False where a feature or the outcome does not
        vary.

        Parameters
        ----------
        method : {"mantel", "pseudo-t"}, default="mantel"
            The permutation reference, or STIR's pseudo t-test.
        null : {"outcome", "feature"}, default="outcome"
            What ``"mantel"`` permutes over the samples, the pairs held fixed: the outcome, or
            the feature's values (class docstring).

        Returns
        -------
        sklearn.utils.Bunch
            The per-feature arrays named above.
        """
        if method not in ("mantel", "pseudo-t"):
            raise ValueError(f"method must be 'mantel' or 'pseudo-t', got {method!r}")
        if null not in ("outcome", "feature"):
            raise ValueError(f"null must be 'outcome' or 'feature', got {null!r}")
        if method == "pseudo-t" and null == "feature":
            raise ValueError("null='feature' is a permutation reference; use method='mantel' with it")
        if self._outcome is None:
            raise ValueError("call set_outcome(y, kind) first")
        key = method if null == "outcome" else (method, null)
        if key not in self._cache:
            self._cache[key] = self._compute(method) if null == "outcome" else self._compute_feature_null()
        return self._cache[key]

    def _outcome_sums(self):
        """The basic sums of ``C^g_ij = (m_ij + m_ji) / 2 (g_ij - gbar)``, the pairs' centred outcome
        differences, and the pair totals ``(P, G1, G2)``, from the kernels of the feature matrices
        with the outcome as the one feature (classes as a discrete feature's levels: ``diff`` 0/1)."""
        n = self.data.n
        v, continuous, _ = self._outcome
        indptr, indices, flags = self._graph()
        M = _kernels_mixed.build_mixed(v[:, None], np.zeros(n, np.int64), 1, np.array([not continuous]),
                                       normalize=False)
        E, ecol, plain = np.ascontiguousarray(M.E, dtype=np.float64), M.ecol, False
        a1, a2, ga = (np.empty((n, 1)) for _ in range(3))
        counts = np.empty((n, 3))
        _kernels_pairs.pair_sums(E, ecol, plain, None, None, indptr, indices, flags, v, continuous, a1, a2, ga, counts)
        P, G1, G2 = (float(c) for c in counts.sum(axis=0))
        # the budget as for a block of features: a pair of neighbours costs one look-up whatever the block's width
        work = self.triangle_work / self.feature_block
        deg = np.diff(indptr).astype(np.float64)
        if float((deg * (deg - 1) / 2).sum()) <= work:
            exact, samples = np.iinfo(np.int64).max, 0
        else:
            samples = max(256, int(work / n))
            exact = samples
        gbar = np.array([G1 / P]) if P > 0 else np.zeros(1)
        r1, r2, r3, cr, tri = (np.empty((n, 1)) for _ in range(5))
        common = (E, ecol, plain, None, None, indptr, indices, flags, gbar)
        _kernels_pairs.c_powers(*common, r1, r2, r3)
        _kernels_pairs.c_matvec(*common, r1, cr)
        _kernels_pairs.c_triangles(*common, exact, samples, 0, tri)
        r1, r2, r3, cr, tri = r1[:, 0], r2[:, 0], r3[:, 0], cr[:, 0], tri[:, 0]
        sums = {"T1": r1.sum(), "T2": r2.sum(), "T3": r3.sum(), "R2": (r1 * r1).sum(), "Q": (r2 * r1).sum(),
                "S3": (r1 * r1 * r1).sum(), "P3": (r1 * cr).sum(), "Tr": tri.sum()}
        return {key: float(val) for key, val in sums.items()}, (P, G1, G2)

    def _compute_feature_null(self):
        """``"mantel"`` with the feature's values permuted: ``S = sum_{i != j} C^g_ij D_ij`` (:meth:`_outcome_sums`),
        ``D`` the feature's difference over all sample pairs (:func:`difference_sums`)."""
        n, d = self.data.n, self.data.d
        if self._ramp_lo is not None:
            raise NotImplementedError(
                "null='feature' (pvalue_null='feature') with the ramp diff is not implemented: the feature null needs "
                "the sums of each feature's difference over all sample pairs, which for the ramp include trace D^3, "
                "O(n^3) per feature; use null='outcome' (the default), or diff='linear'.")
        if n < 4:
            raise ValueError(f"too few samples ({n}) for a p-value")
        indptr, indices, flags = self._graph()
        v, continuous, _ = self._outcome
        out = {key: np.zeros(d) for key in ("L0", "L1", "A2")}
        fsums = {key: np.zeros(d) for key in _BASICS} if self._E is None else None
        for f0, f1, cols in self._blocks():
            nf = f1 - f0
            a1, a2, ga = (np.empty((n, nf)) for _ in range(3))
            counts = np.empty((n, 3))
            _kernels_pairs.pair_sums(*cols, indptr, indices, flags, v, continuous, a1, a2, ga, counts)
            out["L0"][f0:f1], out["A2"][f0:f1], out["L1"][f0:f1] = a1.sum(0), a2.sum(0), ga.sum(0)
            if fsums is not None:  # genotype bytes: each block's difference sums from its encoding
                for key, value in _encoded_difference_sums(cols[0], cols[1], nf).items():
                    fsums[key][f0:f1] = value
        gsums, (P, G1, G2) = self._outcome_sums()
        if P - 2.0 < 1:
            raise ValueError(f"too few neighbour pairs ({int(P)}) for a p-value")
        if fsums is not None:
            pass  # summed block by block above
        elif self._plain:
            fsums = difference_sums(self.data.Z)
        else:  # V: a continuous feature's range-normalised values (E's column), a discrete one's level codes
            fsums = difference_sums(self.data.M.V, self.data.M.disc.astype(bool))
        return self._mantel_bunch(fsums, gsums, out, P, G1, G2)

    def _compute(self, method):
        n, d = self.data.n, self.data.d
        v, continuous, dsums = self._outcome
        indptr, indices, flags = self._graph()
        P = G1 = G2 = None
        out = {key: np.zeros(d) for key in ("L0", "L1", "A2") + (_BASICS if method == "mantel" else ())}
        if method == "mantel":
            if n < 4:
                raise ValueError(f"too few samples ({n}) for a p-value")
            deg = np.diff(indptr).astype(np.float64)
            if float((deg * (deg - 1) / 2).sum()) * d <= self.triangle_work:
                exact, samples = np.iinfo(np.int64).max, 0
            else:
                samples = max(256, int(self.triangle_work / (n * d)))
                exact = samples
        for f0, f1, cols in self._blocks():
            nf = f1 - f0
            a1, a2, ga = (np.empty((n, nf)) for _ in range(3))
            counts = np.empty((n, 3))
            _kernels_pairs.pair_sums(*cols, indptr, indices, flags, v, continuous, a1, a2, ga, counts)
            P, G1, G2 = (float(c) for c in counts.sum(axis=0))
            if P - 2.0 < 1:
                raise ValueError(f"too few neighbour pairs ({int(P)}) for a p-value")
            out["L0"][f0:f1], out["A2"][f0:f1], out["L1"][f0:f1] = a1.sum(0), a2.sum(0), ga.sum(0)
            if method != "mantel":
                continue
            abar = np.ascontiguousarray(out["L0"][f0:f1] / P)
            r1, r2, r3, cr, tri = (np.empty((n, nf)) for _ in range(5))
            common = (*cols, indptr, indices, flags, abar)
            _kernels_pairs.c_powers(*common, r1, r2, r3)
            _kernels_pairs.c_matvec(*common, r1, cr)
            _kernels_pairs.c_triangles(*common, exact, samples, 0, tri)
            for key, value in (("T1", r1.sum(0)), ("T2", r2.sum(0)), ("T3", r3.sum(0)), ("R2", (r1 * r1).sum(0)),
                               ("Q", (r2 * r1).sum(0)), ("S3", (r1 * r1 * r1).sum(0)), ("P3", (r1 * cr).sum(0)),
                               ("Tr", tri.sum(0))):
                out[key][f0:f1] = value
        if method == "pseudo-t":
            sag, saa, sgg, ok = _pair_covariances(out, P, G1, G2)
            df = P - 2.0
            t = np.zeros(d)
            r = np.clip(sag[ok] / np.sqrt(saa[ok] * sgg), -1.0, 1.0)
            t[ok] = r * np.sqrt(df / np.maximum(1.0 - r**2, 1e-300))
            return Bunch(statistic=t, df=df, ok=ok)
        return self._mantel_bunch({key: out[key] for key in _BASICS}, dsums, out, P, G1, G2)

    def _mantel_bunch(self, csums, dsums, out, P, G1, G2):
        """The ``"mantel"`` Bunch of ``S = sum C_ij D_ij``, ``C`` permuted against ``D``, from their basic sums
        and the pair totals ``out`` (``L0 = sum a``, ``A2 = sum a^2``, ``L1 = sum g a``)."""
        n, d = self.data.n, self.data.d
        sag, _, _, ok = _pair_covariances(out, P, G1, G2)
        mean, var, third = mantel_moments(csums, dsums, float(n))
        ok &= np.isfinite(var) & (var > 0)
        z, skew = np.zeros(d), np.zeros(d)
        z[ok] = (sag[ok] - mean[ok]) / np.sqrt(var[ok])
        skew[ok] = third[ok] / var[ok] ** 1.5
        # the linear part of S (its Hajek projection, kappa sum_i c_i d_pi(i), a linear permutation statistic:
        # c and d the centred row sums of C and D, kappa = 2 n / ((n - 1)(n - 2))): its variance
        # kappa^2 sum c^2 sum d^2 / (n - 1) and third moment n kappa^3 sum c^3 sum d^3 / ((n - 1)(n - 2))
        kappa = 2.0 * n / ((n - 1.0) * (n - 2.0))
        vl = kappa**2 * _centred_power(csums, n, 2) * _centred_power(dsums, n, 2) / (n - 1.0)
        tl = n * kappa**3 * _centred_power(csums, n, 3) * _centred_power(dsums, n, 3) / ((n - 1.0) * (n - 2.0))
        linear, linear_third = np.zeros(d), np.zeros(d)
        linear[ok] = np.clip(vl[ok] / var[ok], 0.0, 1.0)
        linear_third[ok] = tl[ok] / var[ok] ** 1.5
        return Bunch(statistic=sag, mean=mean, var=var, third=third, z=z, skewness=skew, linear=linear,
                     linear_third=linear_third, ok=ok)

    def pvalues(self, method="mantel", null="outcome"):
        """One-sided p-values ``P(S >= observed)`` under the reference of ``method``; 1 where not ``ok``.

        Parameters
        ----------
        method : {"mantel", "pseudo-t"}, default="mantel"
            The permutation reference (linear plus quadratic parts, saddlepoint tail), or
            STIR's pseudo t-test.
        null : {"outcome", "feature"}, default="outcome"
            What ``"mantel"`` permutes: the outcome, or the feature's values (class docstring).

        Returns
        -------
        pvalues : ndarray of shape (n_features,)
            One p-value per feature.
        """
        st = self.statistics(method, null)
        if method == "pseudo-t":
            p = stats.t.sf(st.statistic, st.df)
        else:
            p = quadratic_sf(st.z, st.skewness, st.linear, st.linear_third)
        return np.where(st.ok, p, 1.0)
