"""K-local hyperplane (HKNN) and K-local convex (CKNN) distance nearest-neighbour classifiers."""

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from .._solvers.simplex_qp import simplex_least_squares
from ..engine.neighbors import nearest_by_class
from ..utils import Interval, StrOptions, fill_docstring
from ..weighters import check_class_neighbors
from ..weighters._validation import validate_query_data
from ._base import method_doc, validate_training_set

__all__ = ["HKNN", "CKNN"]

#: floats in one (queries, K, d) neighbour block
_BLOCK_ELEMS = 2_000_000


#: what HKNN and CKNN document alike: ``{n_neighbors}`` and ``{small_classes}`` (the parameters) and
#: ``{attributes}`` (the Attributes and References sections)
_local_doc = fill_docstring(
    n_neighbors="""n_neighbors : int, default=5
    ``K`` (per class).""",
    small_classes="""small_classes : {"clamp", "error"}, default="clamp"
    ``n_neighbors`` above a class's size: ``"clamp"`` builds that class's local
    model from all its samples, with a ``UserWarning`` at ``fit`` (as
    :class:`~knnweights.ReliefF`); ``"error"`` raises a ``ValueError``.""",
    attributes="""Attributes
----------
classes_ : ndarray of shape (n_classes,)
n_features_in_ : int

References
----------
P. Vincent and Y. Bengio, "K-local hyperplane and convex distance nearest neighbor
algorithms", NIPS 14, 2001, pp. 985-992.""")


class _LocalDistanceClassifier(ClassifierMixin, BaseEstimator):
    """Shared engine: per class, a distance from the query to its K class neighbours."""

    #: parameters whose defaults give the results of the estimator without them: at their defaults they
    #: stay out of stored cells' fingerprints (see knnweights.evaluation.runner.fingerprint_view)
    _added_parameters = ("small_classes",)

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "small_classes": [StrOptions({"clamp", "error"})],
    }

    @method_doc
    def fit(self, X, y):
        """Store the training set (lazy learner).

        {fit_X}
        y : array-like of shape (n_samples,)
            Class labels.

        {fit_returns}
        """
        X, _, self._fit_codes = validate_training_set(self, X, y)
        check_class_neighbors(self.n_neighbors, self._fit_codes, self.classes_, need_hits=True, own_excluded=False,
                              clamp="small_classes='error'" if self.small_classes == "clamp" else None, stacklevel=3)
        self._fit_X = X
        self._class_counts = np.bincount(self._fit_codes, minlength=len(self.classes_))
        return self

    @method_doc
    def class_distances(self, X):
        """Distance from each query to the local hyperplane / hull of every class.

        {query_params}

        Returns
        -------
        ndarray of shape (n_queries, n_classes)
            Column ``c`` is the distance to the local model built from the
            ``min(n_neighbors, n_c)`` nearest training samples of class ``c``.
        """
        check_is_fitted(self, "_fit_X")
        X = validate_query_data(self, X, dtype=np.float64)
        n_classes = len(self.classes_)
        k_max = int(min(self.n_neighbors, self._class_counts.max()))
        idx, _ = nearest_by_class(
            X, None, None, k_max, "sqeuclidean", n_classes=n_classes, XB=self._fit_X, yB=self._fit_codes
        )
        out = np.empty((X.shape[0], n_classes))
        step = max(1, _BLOCK_ELEMS // max(1, k_max * X.shape[1]))
        for c in range(n_classes):
            k_c = int(min(self.n_neighbors, self._class_counts[c]))
            for s in range(0, X.shape[0], step):
                e = min(X.shape[0], s + step)
                N = self._fit_X[idx[s:e, c, :k_c]]
                out[s:e, c] = self._local_distance(X[s:e], N)
        return out

    @method_doc
    def predict(self, X):
        """Predict the class whose local model is nearest (ties: the first class).

        {query_params}

        {label_returns}
        """
        D = self.class_distances(X)
        return self.classes_[np.argmin(D, axis=1)]


@_local_doc
class HKNN(_LocalDistanceClassifier):
    """K-local hyperplane distance nearest neighbour (Vincent & Bengio 2001).

    For a query ``x`` and each class ``c``: take the ``K`` nearest training samples
    of class ``c`` (Euclidean), ``N_1..N_K``, their mean ``N̄`` and ``V = [N_k - N̄]``.
    The local hyperplane is ``{N̄ + V a}``; with the ridge penalty ``lambda`` on the
    coefficients,

        a* = argmin_a ||x - N̄ - V a||^2 + lambda ||a||^2 = (V'V + lambda I)^-1 V'(x - N̄),

    and the class distance is ``||x - N̄ - V a*||``.  The query gets the class with
    the smallest distance.  ``alpha = 0`` gives the exact distance to the affine hull
    (a pseudo-inverse solve).  All queries are solved at once as a stack of ``K x K``
    systems.

    Used by LH-RELIEF (Cai & Ng, Sec. 3.1) on the data rescaled by the feature
    weights: ``Pipeline([("w", LHRelief()), ("clf", HKNN())])``.

    Parameters
    ----------
    {n_neighbors}
    alpha : float, default=1.0
        ``lambda``, the ridge penalty on the hyperplane coefficients.
    {small_classes}

    {attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights.classifiers import HKNN
    >>> X = np.array([[0., 0.], [1., 0.], [2., 0.], [0., 3.], [1., 3.], [2., 3.]])
    >>> HKNN(n_neighbors=3, alpha=0.0).fit(X, [0, 0, 0, 1, 1, 1]).predict([[5., 1.]])
    array([0])
    """

    _algorithm_version = 1

    _parameter_constraints = {"alpha": [Interval(numbers.Real, 0, None, closed="left")]}

    def __init__(self, n_neighbors=5, alpha=1.0, small_classes="clamp"):
        self.n_neighbors = n_neighbors
        self.alpha = alpha
        self.small_classes = small_classes

    def _local_distance(self, x, N):
        center = N.mean(axis=1)
        V = N - center[:, None, :]
        r = x - center
        G = np.matmul(V, np.swapaxes(V, 1, 2))
        rhs = np.einsum("mkd,md->mk", V, r)
        try:
            with np.errstate(over="raise", invalid="raise"):
                if self.alpha > 0:
                    G = G + self.alpha * np.eye(G.shape[1])
                    coef = np.linalg.solve(G, rhs[..., None])[..., 0]
                else:
                    coef = np.einsum("mij,mj->mi", np.linalg.pinv(G, rcond=1e-10, hermitian=True), rhs)
                resid = r - np.einsum("mk,mkd->md", coef, V)
                dist = np.sqrt(np.einsum("md,md->m", resid, resid))
        except (np.linalg.LinAlgError, FloatingPointError):
            dist = None
        if dist is None or not np.all(np.isfinite(dist)):
            # features of very different scales (one at 1e100 among ordinary ones) make ``G + alpha I``
            # singular in float64 (alpha is lost beside the huge entries) or overflow: the scaled solve
            return _hyperplane_distance_scaled(V, r, self.alpha)
        return dist


def _hyperplane_distance_scaled(V, r, alpha):
    """``||r - V' a*||`` with ``a* = (V V' + alpha I)^+ V r``, safe for any scale of the features.

    Each query's ``V`` and ``r`` are divided by ``s = max |V|`` (``alpha`` by ``s^2``), so that
    ``G = V V'`` cannot overflow, and the solve goes through the eigendecomposition of ``G``:
    directions whose eigenvalue is at rounding level relative to the largest (``K eps``;
    ``1e-10`` when ``alpha = 0``, as the pseudo-inverse's cut) are left out -- in float64 they
    carry no information, and inverting them would amplify rounding errors without bound.
    Mathematically the same distance as the direct solve wherever that is well conditioned.
    """
    s = np.max(np.abs(V), axis=(1, 2))
    s = np.where((s > 0) & np.isfinite(s), s, 1.0)
    V = V / s[:, None, None]
    r = r / s[:, None]
    a = alpha / s**2
    G = np.matmul(V, np.swapaxes(V, 1, 2))
    rhs = np.einsum("mkd,md->mk", V, r)
    e, U = np.linalg.eigh(G)
    cut = (1e-10 if alpha == 0 else G.shape[1] * np.finfo(np.float64).eps) * e[:, -1:]
    keep = e > cut
    f = np.where(keep, 1.0 / np.where(keep, e + a[:, None], 1.0), 0.0)
    coef = np.einsum("mij,mj->mi", U, f * np.einsum("mji,mj->mi", U, rhs))
    resid = r - np.einsum("mk,mkd->md", coef, V)
    with np.errstate(over="ignore"):
        return s * np.sqrt(np.einsum("md,md->m", resid, resid))


@_local_doc
class CKNN(_LocalDistanceClassifier):
    """K-local convex distance nearest neighbour (Vincent & Bengio 2001).

    As :class:`HKNN`, but the class distance is the Euclidean distance from the query
    to the *convex hull* of its ``K`` nearest neighbours of that class,

        min_a ||x - N a||   s.t.  sum(a) = 1,  a >= 0,

    solved for all queries at once by the exact batched simplex QP solver
    (:func:`knnweights._solvers.simplex_qp.solve_simplex_qp`, shared with LH-RELIEF).

    Parameters
    ----------
    {n_neighbors}
    {small_classes}

    {attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights.classifiers import CKNN
    >>> X = np.array([[0., 0.], [1., 0.], [2., 0.], [0., 3.], [1., 3.], [2., 3.]])
    >>> CKNN(n_neighbors=3).fit(X, [0, 0, 0, 1, 1, 1]).predict([[1., 1.], [1., 2.]])
    array([0, 1])
    """

    _algorithm_version = 1

    def __init__(self, n_neighbors=5, small_classes="clamp"):
        self.n_neighbors = n_neighbors
        self.small_classes = small_classes

    def _local_distance(self, x, N):
        res = simplex_least_squares(x, N)
        diff = x - res.projection
        return np.sqrt(np.einsum("md,md->m", diff, diff))
