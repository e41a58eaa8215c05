"""Stability of feature rankings under subsampling (Li, Gao & Chen 2012, eqs. 18, 19).

``c`` subsamples of a fraction ``mu`` of the data; a weighter is refitted on each; the
features are ranked by weight (rank 1 = largest); the stability is the mean Spearman
rank correlation over the pairs of rankings (Saeys, Abeel & de Peer 2008; Kalousis,
Prados & Hilario 2007).
"""

import numpy as np
from joblib import Parallel, delayed
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from sklearn.utils.validation import check_array

from ..utils import fill_docstring

__all__ = ["rank_features", "spearman_similarity", "stability", "subsample_rankings", "stability_of"]

#: the parameters of a weighter refitted on subsamples: ``{subsampling}`` in the docstrings of
#: :func:`subsample_rankings` and :func:`stability_of`
_subsampling_doc = fill_docstring(subsampling="""weighter : estimator with ``feature_importances_``
    Unfitted weighter; a clone is fitted on each subsample.
X : array-like of shape (n_samples, n_features)
    Training samples (a pandas DataFrame keeps its column names for the weighter).
y : array-like of shape (n_samples,)
    Targets; the class labels stratify the subsamples.
n_subsamples : int, default=5
    Number of subsamples ``c``, hence of rankings compared.
fraction : float, default=0.9
    Share ``mu`` of the samples in each subsample; the smaller, the more the
    subsamples differ and the harder it is to be stable.
random_state : int, RandomState or None, default=None
    Seeds the subsamples (the weighter keeps its own ``random_state``).
n_jobs : int, default=None
    Parallel refits (joblib; any backend).
stratify : bool, default=True
    Keep the class proportions in each subsample; set it to ``False`` for a
    continuous target.""")


def rank_features(weights):
    """Ranks of the features by weight: 1 = the largest weight, ties get their average rank.

    Parameters
    ----------
    weights : array-like of shape (d,) or (c, d)
        Feature weights; a 2-D array holds one weight vector per row.

    Returns
    -------
    ranks : ndarray of float
        Same shape as ``weights`` (ranked row by row for 2-D input).
    """
    W = np.asarray(weights, dtype=np.float64)
    return rankdata(-W, method="average", axis=-1)


def spearman_similarity(r1, r2):
    """Spearman's rank correlation of two rankings (eq. 19).

    Computed as the Pearson correlation of the ranks, which is eq. (19)
    ``1 - 6 sum_t (r_t - r'_t)^2 / (d (d^2 - 1))`` when there are no ties and stays a
    correlation (equal to :func:`scipy.stats.spearmanr`) when tied weights share their
    average rank.  A ranking with all features tied carries no order: its similarity is
    1 to another all-tied ranking and 0 to any other.

    Parameters
    ----------
    r1 : array-like of shape (d,)
        Ranks of the ``d`` features (e.g. from :func:`rank_features`).
    r2 : array-like of shape (d,)
        Ranks of the same features in the same order.

    Returns
    -------
    similarity : float
        In ``[-1, 1]``; 1 for identical rankings, -1 for reversed ones.
    """
    a = np.asarray(r1, dtype=np.float64)
    b = np.asarray(r2, dtype=np.float64)
    a = a - a.mean()
    b = b - b.mean()
    na, nb = np.sqrt(a @ a), np.sqrt(b @ b)
    if na == 0 or nb == 0:
        return 1.0 if na == nb else 0.0
    return float(np.clip((a @ b) / (na * nb), -1.0, 1.0))


def stability(rankings=None, *, weights=None, weighter=None, X=None, y=None, n_subsamples=5, fraction=0.9,
              stratify=True, random_state=None, n_jobs=None):
    """Stability ``R_sta`` of feature rankings: the mean pairwise Spearman correlation (eq. 18).

    Give exactly one of ``rankings`` (``(c, d)``, rank 1 = best), ``weights``
    (``(c, d)``, ranked by :func:`rank_features`) or ``weighter`` with ``X, y`` (refitted
    on ``n_subsamples`` subsamples of ``fraction`` of the data, see
    :func:`subsample_rankings`).

    Eq. (18) as printed divides the sum over the ``c (c - 1) / 2`` pairs ``j < j'`` by
    ``c (c - 1)``, which would cap ``R_sta`` at 0.5; the paper's values near 1 (Fig. 1
    and its text) show that the mean over the pairs is meant, and that is what this
    returns: ``R_sta = 2 / (c (c - 1)) sum_{j<j'} Sim(r_j, r_j')``, with ``Sim`` the
    Spearman correlation (eq. 19, :func:`spearman_similarity`).

    Parameters
    ----------
    rankings : array-like of shape (c, d), optional
        One ranking of the ``d`` features per row (rank 1 = best).
    weights : array-like of shape (c, d), optional
        One weight vector per row, ranked here by :func:`rank_features`.
    weighter : estimator with ``feature_importances_``, optional
        Unfitted weighter refitted on each subsample of ``X, y``.
    X : array-like of shape (n_samples, n_features), optional
        Training samples for ``weighter``.
    y : array-like of shape (n_samples,), optional
        Targets for ``weighter``.
    n_subsamples : int, default=5
        ``c``: the number of subsamples (only with ``weighter``).
    fraction : float, default=0.9
        ``mu``: the share of the samples in each subsample (only with ``weighter``).
    stratify : bool, default=True
        Keep the class proportions in each subsample (only with ``weighter``).
    random_state : int, RandomState or None
        Seeds the subsamples (only with ``weighter``).
    n_jobs : int or None
        Parallel refits (joblib; any backend).

    Returns
    -------
    stability : float
        In ``[-1, 1]``; 1 when all rankings are equal.

    References
    ----------
    Y. Li, S. Gao and S. Chen, "Ensemble feature weighting based on local learning and
    diversity", AAAI 2012, eqs. (18), (19).
    """
    given = [a is not None for a in (rankings, weights, weighter)]
    if sum(given) != 1:
        raise ValueError("stability needs exactly one of rankings, weights or weighter (with X and y).")
    if weighter is not None:
        if X is None or y is None:
            raise ValueError("stability with a weighter needs X and y.")
        R = subsample_rankings(weighter, X, y, n_subsamples=n_subsamples, fraction=fraction, stratify=stratify,
                               random_state=random_state, n_jobs=n_jobs)
    elif weights is not None:
        R = rank_features(check_array(weights, ensure_min_samples=2))
    else:
        R = check_array(rankings, ensure_min_samples=2)
    c = R.shape[0]
    sims = [spearman_similarity(R[j], R[jj]) for j in range(c) for jj in range(j + 1, c)]
    return float(np.mean(sims))


def _fitted_weights(weighter, X, y):
    return np.asarray(clone(weighter).fit(X, y).feature_importances_, dtype=np.float64)


@_subsampling_doc
def subsample_rankings(weighter, X, y, n_subsamples=5, fraction=0.9, random_state=None, n_jobs=None, stratify=True):
    """Refit ``weighter`` (a clone) on ``n_subsamples`` random subsamples and rank features.

    Subsamples of ``fraction`` of the samples, drawn without replacement (stratified by
    class by default: :class:`sklearn.model_selection.StratifiedShuffleSplit`).

    Parameters
    ----------
    {subsampling}

    Returns
    -------
    rankings : ndarray of shape (n_subsamples, n_features)
        One ranking per subsample (1 = largest weight; ties share their average rank).
    """
    X = np.asarray(X) if not hasattr(X, "iloc") else X
    y = np.asarray(y)
    splitter = (StratifiedShuffleSplit if stratify else ShuffleSplit)(
        n_splits=n_subsamples, train_size=fraction, test_size=None, random_state=random_state)
    idx = [tr for tr, _ in splitter.split(np.zeros((y.shape[0], 1)), y)]
    take = (lambda i: X.iloc[i]) if hasattr(X, "iloc") else (lambda i: X[i])
    W = Parallel(n_jobs=n_jobs)(delayed(_fitted_weights)(weighter, take(i), y[i]) for i in idx)
    return rank_features(np.vstack(W))


@_subsampling_doc
def stability_of(weighter, X, y, n_subsamples=5, fraction=0.9, random_state=None, n_jobs=None, stratify=True):
    """The stability (eq. 18) of ``weighter`` on ``X, y``: :func:`stability` with a weighter.

    Parameters
    ----------
    {subsampling}

    Returns
    -------
    stability : float
        Mean pairwise Spearman correlation of the subsample rankings, in ``[-1, 1]``.
    """
    return stability(weighter=weighter, X=X, y=y, n_subsamples=n_subsamples, fraction=fraction, stratify=stratify,
                     random_state=random_state, n_jobs=n_jobs)
