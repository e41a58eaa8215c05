"""Other baselines of the EFW / LH-RELIEF papers: SVM-RFE.

* :class:`SVMRFE`: Guyon, Weston, Barnhill & Vapnik (2002), recursive elimination with
  a linear SVM (fractional steps of the remaining features); a ranking, exposed as
  weights derived from it.
* VR-Lmba (Han & Yu 2010 sample weighting with Lmba, Li & Lu 2009), which the EFW paper
  names, is not in knnweights: the EFW paper does not say how the sample weights enter
  Lmba's objective, and neither Lmba's nor Han & Yu's formulas are in the papers at hand.
* SBMLR (Cawley, Talbot & Girolami 2007), the LH-RELIEF paper's baseline, is
  :class:`knnweights.weighters.sbmlr.SBMLR`.
"""

import numbers
import time

import numpy as np
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ..engine import get_config
from ..engine.linalg import single_thread_blas
from ..utils import Interval
from ._base import BaseWeighter

__all__ = ["SVMRFE", "rank_weights"]


def rank_weights(ranking):
    """Weights from an elimination ranking (1 = kept longest): ``(R - r_j + 1) / R``, ``R = max r``.

    The last survivor gets 1, the first eliminated ``1 / R``; features eliminated in
    the same step share a weight.  Ordering by these weights is the ranking.

    Parameters
    ----------
    ranking : array-like of int, shape (n_features,)
        The elimination ranking.

    Returns
    -------
    weights : ndarray of shape (n_features,)
        The weights in ``(0, 1]``.
    """
    r = np.asarray(ranking, dtype=np.float64)
    R = r.max()
    return (R - r + 1.0) / R


def _linear_svc_coef(svm, support_vectors):
    """``coef_`` of a linear ``SVC`` fitted on its precomputed Gram matrix: ``w = dual_coef_ @ support vectors``.

    Several classes: one row per one-vs-one machine, the pairs ``(0, 1), (0, 2), ..., (1, 2), ...``
    in LIBSVM's layout: the support vectors are grouped by class (``n_support_`` each, in class
    order), and the machine ``(a, b)`` takes the coefficients of the vectors of ``a`` from row
    ``b - 1`` of ``dual_coef_`` and those of the vectors of ``b`` from row ``a``.
    """
    dual = svm.dual_coef_
    if dual.shape[0] == 1:
        return dual @ support_vectors
    start = np.concatenate([[0], np.cumsum(svm.n_support_)])
    n_classes = len(svm.n_support_)
    rows = []
    for a in range(n_classes):
        sa = slice(start[a], start[a + 1])
        for b in range(a + 1, n_classes):
            sb = slice(start[b], start[b + 1])
            rows.append(dual[b - 1, sa] @ support_vectors[sa] + dual[a, sb] @ support_vectors[sb])
    return np.vstack(rows)


class SVMRFE(BaseWeighter):
    """SVM-RFE: recursive feature elimination with a linear SVM (Guyon et al. 2002).

    Train a linear SVM on the surviving features, remove the feature(s) with the
    smallest ranking criterion ``c_j = w_j^2`` (Guyon et al., Sec. 2.6, the criterion
    (OBD) for a linear SVM; multi-class: the sum of ``w_j^2`` over the one-vs-one
    machines, scikit-learn's rule), repeat until one feature is left; the order of
    elimination is the ranking.  Each round fits ``SVC(kernel="linear", C=C)`` (LIBSVM,
    hinge loss; on the Gram matrix of the surviving features, downdated as features
    leave, when ``n^2`` doubles fit the ``working_memory`` budget) on the surviving
    features and removes the smallest criteria (ties by feature order), the loop of
    :class:`sklearn.feature_selection.RFE` with ``n_features_to_select=1`` (the same
    ranking for an integer ``step``), with a fractional ``step`` taken of the
    *remaining* features.

    SVM-RFE ranks, it does not weight: ``feature_importances_`` is derived from the
    ranking by :func:`rank_weights` (the survivor 1, the first eliminated ``1/R``), so
    that sorting by it reproduces the ranking; constant features get 0.  These weights
    carry only the order (use them for top-``m`` selection, not as a distance metric).

    Parameters
    ----------
    C : float, default=1.0
        The SVM's soft-margin parameter.
    step : int or float in (0, 1), default=0.1
        Features removed per round: an int is a fixed count; a float is the share of
        the features still remaining, ``max(1, floor(step * remaining))`` (a tenth by
        default: about 100 SVM fits for 20000 features, and one at a time once fewer
        than ``1 / step`` remain).  ``step=1`` is the exact one-at-a-time procedure
        (``d - 1`` fits); Guyon et al. remove chunks (half the remaining genes,
        ``step=0.5``) for speed.  Features removed in the same round are tied.
    standardize : bool, default=True
        Scale every feature to zero mean and unit variance first, as Guyon et al. did
        with their gene-expression data (the criterion ``w_j^2`` depends on the scale).
    verbose : int, default=0
        ``> 0``: print per round the features remaining, the number removed, the SVM's
        ``||w||^2`` and the elapsed seconds.

    Attributes
    ----------
    elimination_ranking_ : ndarray of shape (n_features,), int
        1 = the last feature left; larger = eliminated earlier (the ``ranking_`` of
        :class:`sklearn.feature_selection.RFE`: features of one round tied).
    ranking_ : ndarray of shape (n_features,), int
        The total order every weighter has (``BaseWeighter``): the elimination order,
        ties within a round broken as described there.
    n_iter_ : int
        SVM fits (elimination rounds).
    feature_importances_ : ndarray of shape (n_features,)
    metric_ : ``"manhattan"``

    References
    ----------
    I. Guyon, J. Weston, S. Barnhill and V. Vapnik, "Gene selection for cancer
    classification using support vector machines", Machine Learning 46:389-422, 2002.
    """

    _algorithm_version = 1

    _metric = "manhattan"
    _min_class_size = 1
    _parameter_constraints = {
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "step": [Interval(numbers.Integral, 1, None, closed="left"), Interval(numbers.Real, 0, 1, closed="neither")],
        "standardize": ["boolean"],
        "verbose": ["verbose"],
    }

    def __init__(self, C=1.0, step=0.1, standardize=True, verbose=0):
        self.C = C
        self.step = step
        self.standardize = standardize
        self.verbose = verbose

    def _n_remove(self, remaining):
        if isinstance(self.step, numbers.Integral):
            k = int(self.step)
        else:
            k = int(self.step * remaining)
        return max(1, min(k, remaining - 1))

    def _fit(self, X, y):
        varying = np.ptp(X, axis=0) > 0
        Xs = StandardScaler().fit_transform(X) if self.standardize else X
        d = X.shape[1]
        support = np.ones(d, dtype=bool)
        ranking = np.ones(d, dtype=np.int64)
        t0 = time.perf_counter()
        if self.verbose:
            print(f"[{type(self).__name__}]")
            print(f"{'Round':>10} {'Features':>9} {'Removed':>8} {'||w||^2':>14} {'Time(s)':>10}")
        rounds = 0
        n = Xs.shape[0]
        # a linear SVM needs only the Gram matrix of the surviving features: kept and
        # updated as features leave (LIBSVM then never evaluates a kernel), within the
        # working-memory budget
        gram = n * n * 8 <= get_config()["working_memory"] * 2**20
        K = Xs @ Xs.T if gram else None
        # one BLAS thread for the whole loop, entered once (each entry rescans the loaded
        # libraries, which over many rounds costs more than the SVM fits); the Gram
        # downdates are n x k x n products, a small share of the work
        with single_thread_blas():
            while support.sum() > 1:
                features = np.flatnonzero(support)
                if gram:
                    svm = SVC(kernel="precomputed", C=self.C).fit(K, y)
                    coef = _linear_svc_coef(svm, Xs[svm.support_][:, features])
                else:
                    coef = SVC(kernel="linear", C=self.C).fit(np.ascontiguousarray(Xs[:, features]), y).coef_
                crit = (np.asarray(coef) ** 2).sum(axis=0)  # sum over the one-vs-one machines
                k = self._n_remove(features.size)
                removed = features[np.argsort(crit, kind="stable")[:k]]
                support[removed] = False
                ranking[~support] += 1
                rounds += 1
                if gram and support.sum() > 1:
                    if 2 * k < features.size:  # remove the leaving features' share
                        R = Xs[:, removed]
                        K -= R @ R.T
                    else:
                        S = Xs[:, support]
                        K = S @ S.T
                if self.verbose:
                    print(f"{rounds:>10d} {features.size:>9d} {k:>8d} {crit.sum():>14.6e} "
                          f"{time.perf_counter() - t0:>10.2f}")
        self.n_iter_ = rounds
        self.elimination_ranking_ = ranking
        return rank_weights(ranking) * varying
