"""The weighter contract shared by every method: validation, weights, transform."""

import contextvars
import math
import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from ..engine.neighbors import hard_margin_vectors, nearest_hits_misses
from ..exceptions import ZeroWeightsWarning
from ..utils import format_label, validate_params
from ._relief_covariates import refuse_covariates
from ._validation import encode_classes, validate_query_data, validate_training_data

__all__ = ["BaseWeighter", "ZeroWeightsWarning", "check_class_neighbors", "feature_ranking", "margin_gain",
           "warn_max_iter", "warn_max_work", "normalize_weights", "l2_norm"]


#: how many BaseWeighter.fit calls are running in this context: a weighter fitted inside another's fit
#: (ERelief's Relief members) leaves the ZeroWeightsWarning to the outer fit, so a user sees one
_FIT_DEPTH = contextvars.ContextVar("knnweights_fit_depth", default=0)


def _zero_weights_message(name, X, codes):
    """Why a fit may have ended with all-zero weights, in one sentence (for :class:`ZeroWeightsWarning`)."""
    varying = np.ptp(X, axis=0) > 0
    if not varying.any():
        cause = "every feature of X is constant, so no weight changes any distance"
    elif codes is None:
        cause = (f"no feature relates to the continuous target at this method's neighbourhood "
                 f"({int(varying.sum())} of {X.shape[1]} features vary)")
    else:
        smallest = int(np.bincount(codes).min())
        cause = (f"no feature separates the classes at this method's neighbourhood ({int(varying.sum())} of "
                 f"{X.shape[1]} features vary; the smallest class has {smallest} samples)")
    return (f"{name} returned all-zero weights: {cause}. transform() gives all-zero data and a kNN on it "
            "predicts one class for every sample; check the features and labels, or try another method.")


def feature_ranking(weights, scores=None, constant=None, margin_gain=None):
    """Ranks ``1..d`` (1 = best) of features: a total order without ties at zero weight.

    The order is: larger weight first; among equal weights, non-constant before
    constant features (``constant``, a mask: a constant feature carries nothing);
    then larger signed score first (``scores``, e.g. the Relief weights before
    clipping at 0); then larger ``margin_gain`` (see :func:`margin_gain`); then the
    lower column index first.

    Parameters
    ----------
    weights : array-like of shape (n_features,)
        The feature weights (the first key).
    scores : array-like of shape (n_features,), optional
        Signed scores; non-finite entries count as the lowest.
    constant : array-like of bool, shape (n_features,), optional
        Which features are constant (ranked after the others of equal weight).
    margin_gain : array-like of shape (n_features,), optional
        A last data-driven key before the column order.

    Returns
    -------
    ranking : ndarray of int64, shape (n_features,)
        The rank of each feature, 1 for the best.

    Examples
    --------
    >>> feature_ranking([0.5, 0.0, 0.0, 0.9], scores=[0.5, -0.2, -0.1, 0.9]).tolist()
    [2, 4, 3, 1]
    """
    w = np.asarray(weights, dtype=np.float64).ravel()
    d = w.shape[0]
    s = np.zeros(d) if scores is None else np.asarray(scores, dtype=np.float64).ravel()
    s = np.where(np.isfinite(s), s, -np.inf)
    c = np.zeros(d, dtype=bool) if constant is None else np.asarray(constant, dtype=bool).ravel()
    g = np.zeros(d) if margin_gain is None else np.asarray(margin_gain, dtype=np.float64).ravel()
    g = np.where(np.isfinite(g), g, -np.inf)
    order = np.lexsort((np.arange(d), -g, -s, c, -np.where(np.isfinite(w), w, -np.inf)))
    ranking = np.empty(d, dtype=np.int64)
    ranking[order] = np.arange(1, d + 1)
    return ranking


def _score_ties(weights, scores, constant):
    """Non-constant features whose (weight, score) pair is shared with another feature."""
    key = np.column_stack([weights, scores])
    _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    return (counts[inverse.ravel()] > 1) & ~np.asarray(constant, dtype=bool)


def margin_gain(X, codes, w, metric, columns):
    """Mean range-normalised hypothesis margin of each of ``columns`` at the learned metric.

    For every sample, its nearest hit and nearest miss under the ``w``-weighted
    distance (unweighted when ``w`` is all zero); for feature ``j``,
    ``mean_n (phi(x_nj - miss_nj) - phi(x_nj - hit_nj)) / phi(range_j)`` with
    ``phi = |.|`` (manhattan) or ``(.)^2`` (sqeuclidean): the rate at which the sum
    of hypothesis margins (Gilad-Bachrach et al. 2004) would grow if feature ``j``
    gained weight.  It orders the features that a method without signed scores
    leaves tied at weight 0 (Relief's score, evaluated in the learned metric).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Training samples.
    codes : ndarray of int, shape (n_samples,)
        Class codes.
    w : ndarray of shape (n_features,)
        The learned weights of the distance.
    metric : {"manhattan", "sqeuclidean"}
        The weighter's distance.
    columns : array-like of int
        The features to score.

    Returns
    -------
    gain : ndarray of shape (len(columns),)
        Each column's mean range-normalised hypothesis margin.
    """
    columns = np.asarray(columns)
    ww = np.asarray(w, dtype=np.float64)
    nb = nearest_hits_misses(X, codes, w=ww if np.any(ww > 0) else None, n_neighbors=1, metric=metric)
    Z = np.ascontiguousarray(X[:, columns])
    rng = np.ptp(Z, axis=0)
    rng = np.where(rng > 0, rng, 1.0)
    m = hard_margin_vectors(Z, nb.hit_idx, nb.miss_idx, metric=metric) / X.shape[0]
    return m / (rng if metric == "manhattan" else rng**2)


def warn_max_iter(estimator, max_iter, what="the weights"):
    """Emit the ConvergenceWarning every iterative method gives when it stops at max_iter.

    Parameters
    ----------
    estimator : estimator
        The estimator that stopped (named in the message).
    max_iter : int
        Its iteration limit.
    what : str, default="the weights"
        What did not converge.
    """
    warnings.warn(
        f"{type(estimator).__name__} stopped at max_iter={max_iter} before {what} converged; "
        "increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=4,
    )


def warn_max_work(estimator, max_work, progress, result, optimum):
    """Emit the ConvergenceWarning of a fit stopped at its deterministic work budget ``max_work`` (GFLOP).

    Parameters
    ----------
    estimator : estimator
        The estimator that stopped (named in the message).
    max_work : float
        Its work budget in GFLOP.
    progress : str
        What the fit did before the stop.
    result : str
        What the returned weights are.
    optimum : str
        What they are not (and what ``max_work=None`` runs to).
    """
    warnings.warn(
        f"{type(estimator).__name__} stopped at its work budget max_work={max_work:g} GFLOP ({progress}); the "
        f"weights are {result}, not {optimum}. Set max_work=None (no budget) or a larger max_work to reach it.",
        ConvergenceWarning,
        stacklevel=4,
    )


def l2_norm(v):
    """The Euclidean norm of a vector, correctly rounded (``math.fsum`` of the squares).

    ``np.linalg.norm`` of a vector is the BLAS's dot product, whose order of summation (and
    so its last bits) follows the CPU's kernel; a weight vector normalised by it differs by
    an ulp between an AVX2 and an AVX-512 machine, and on data with many equal distances the
    neighbours of the next step can follow that ulp.  The exact sum is the same everywhere.

    Parameters
    ----------
    v : array-like of shape (n,)
        The vector.

    Returns
    -------
    float
        ``sqrt(sum v**2)``.
    """
    v = np.asarray(v, dtype=np.float64).ravel()
    return math.sqrt(math.fsum(v * v))


def normalize_weights(v, norm="l2"):
    """``max(v, 0)`` normalised to unit ``norm``; all-zero stays all-zero (never NaN).

    Parameters
    ----------
    v : array-like of shape (n_features,)
        Signed scores.
    norm : {"l2", "l1", "max"}, default="l2"
        The norm made 1.

    Returns
    -------
    w : ndarray of shape (n_features,)
        The clipped, normalised weights.
    """
    w = np.maximum(np.asarray(v, dtype=np.float64), 0.0)
    s = math.fsum(w) if norm == "l1" else (float(w.max(initial=0.0)) if norm == "max" else l2_norm(w))
    return w / s if s > 0 and np.isfinite(s) else w


def check_class_neighbors(k, codes, classes, need_hits=True, name="n_neighbors", clamp=None, own_excluded=True,
                          stacklevel=4):
    """Check a per-class neighbour count ``k`` against the samples each class has.

    Raises a ``ValueError`` when ``k`` exceeds the hits of the smallest class (its size
    minus the sample itself; the size itself with ``own_excluded=False``, e.g. a
    classifier's neighbours of a query outside the training set) or the misses
    available.  With ``clamp`` (the name of the option that turns the clamp off, e.g.
    ``"small_classes='error'"``) a ``UserWarning`` instead: the caller then uses, per
    class, all the neighbours that class has.

    Parameters
    ----------
    k : int
        The neighbour count per class.
    codes : ndarray of int, shape (n_samples,)
        Class codes.
    classes : array-like of shape (n_classes,)
        The class labels (named in the message).
    need_hits : bool, default=True
        Check the hits too (not only the misses).
    name : str, default="n_neighbors"
        The parameter's name in the message.
    clamp : str or None, default=None
        The option that turns the clamp off; ``None``: raise instead of clamping.
    own_excluded : bool, default=True
        A sample is not its own neighbour (hits: class size - 1).
    stacklevel : int, default=4
        Where the warning points.
    """
    counts = np.bincount(codes, minlength=len(classes))
    avail = counts - 1 if own_excluded else counts
    n = codes.shape[0]
    if need_hits and k > avail.min():
        c = int(np.argmin(avail))
        what = (f"the number of hits of class {format_label(classes[c])} ({avail[c]}: {counts[c]} samples minus the "
                "sample itself)" if own_excluded else
                f"the number of samples of class {format_label(classes[c])} ({counts[c]})")
        msg = f"{name}={k} is larger than {what}."
        if clamp:
            small = [format_label(classes[i]) for i in np.flatnonzero(avail < k)]
            warnings.warn(f"{msg} Clamped per class: class(es) {', '.join(small)} use all their "
                          f"{'hits (and misses)' if own_excluded else 'samples'}; set {clamp} to raise instead.",
                          UserWarning, stacklevel=stacklevel)
            return
        raise ValueError(f"{msg} Use {name} <= {avail.min()}.")
    if k > n - counts.max():
        msg = f"{name}={k} is larger than the number of misses available ({n - counts.max()})."
        if clamp:
            warnings.warn(f"{msg} Clamped per class; set {clamp} to raise instead.", UserWarning,
                          stacklevel=stacklevel)
            return
        raise ValueError(msg)


class BaseWeighter(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """Base class of every feature weighter.

    Subclasses set the class attribute ``_metric`` (``"manhattan"`` or
    ``"sqeuclidean"``), declare ``_parameter_constraints`` and implement
    ``_fit(X, y_codes)`` returning the weight vector (and may set other fitted
    attributes).  ``fit`` validates the input (finite values with the column named,
    at least two classes, the per-class sizes the method needs), encodes the labels,
    calls ``_fit`` and stores ``feature_importances_`` (finite, ``>= 0``).

    ``transform`` rescales by ``w`` (L1 methods) or ``sqrt(w)`` (L2sq methods), so that
    ``KNeighborsClassifier(metric=self.metric_)`` on the output is the weighted kNN.
    A fit that ends with every weight 0 says so with one :class:`ZeroWeightsWarning`
    naming the likely cause (every feature constant, or no feature separating the classes).

    Every fitted weighter also has ``scores_`` and ``ranking_``:

    * ``scores_`` (n_features,): signed scores before clipping at 0.  A method that
      has its own (the Relief family: the raw Relief weights) sets them in ``_fit``;
      otherwise they are the vector ``_fit`` returned, before ``max(., 0)``.
    * ``ranking_`` (n_features,) int: 1 = best, a total order (see
      :func:`feature_ranking`): by weight, then constant features last, then by
      signed score (so the features whose weight is clipped to 0 are still
      ordered), then, for features still tied (a method without signed scores),
      by :func:`margin_gain` (the margin each would add at the learned metric:
      one extra nearest hit / miss pass, run only when such ties exist), then by
      column order.
    """

    #: the version of the algorithm's results: bump it in the commit that changes what
    #: ``fit`` computes (beyond a stated tolerance); stored reproduction cells are keyed by it
    _algorithm_version = 1

    _metric = "manhattan"
    #: minimum samples per class the method needs (2 = a hit for every sample)
    _min_class_size = 2
    _parameter_constraints: dict = {}

    # -- input ---------------------------------------------------------------------
    def _validate_fit_data(self, X, y):
        """``(X, class codes)``: the shared validation (:func:`validate_training_data`; ``NaN`` passes
        for an estimator whose ``_allow_nan`` is true, e.g. the Relief family with ``missing="diff"``),
        then the labels encoded (:meth:`_encode_target`)."""
        X, y = validate_training_data(self, X, y, allow_nan=bool(getattr(self, "_allow_nan", False)))
        return X, self._encode_target(y)

    def _encode_target(self, y, n_samples=None):
        """Class codes ``0..K-1`` of ``y`` (sets ``classes_``), with the named errors of every weighter:
        a continuous target, one class, a class smaller than ``_min_class_size``
        (:func:`encode_classes`)."""
        return encode_classes(self, y, min_classes=2, min_class_size=self._min_class_size, n_samples=n_samples)

    def _check_n_neighbors(self, k, codes, need_hits=True, name="n_neighbors", clamp=None):
        """Raise when ``k`` exceeds the hits (class size - 1) or misses available.

        With ``clamp`` (the name of the option that turns the clamp off, e.g.
        ``"small_classes='error'"``) a ``UserWarning`` instead: the method then uses,
        per class, all the hits / misses that class has.  See :func:`check_class_neighbors`.
        """
        check_class_neighbors(k, codes, self.classes_, need_hits=need_hits, name=name, clamp=clamp,
                              stacklevel=5)

    # -- fit -------------------------------------------------------------------------
    def fit(self, X, y, covariates=None):
        """Learn the feature weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training samples.
        y : array-like of shape (n_samples,)
            Class labels of any type.
        covariates : None
            Only the Relief family's p-values are adjusted for covariates; anything else raises.

        Returns
        -------
        self : BaseWeighter
            The fitted weighter.
        """
        if covariates is not None:
            raise refuse_covariates(self)
        validate_params(self)
        X, codes = self._validate_fit_data(X, y)
        # point a warning at the user's call, also through a subclass's fit that wraps this one (EFW)
        return self._fit_weights(X, codes, self._fit, stacklevel=3 if type(self).fit is BaseWeighter.fit else 4)

    def _fit_weights(self, X, codes, fit_fn, stacklevel=3, constant=None):
        """Run ``fit_fn(X, codes)`` and store ``feature_importances_``, ``scores_``, ``ranking_``, ``metric_``.

        ``codes`` is ``None`` for a continuous target (no classes: no margin-gain tie
        breaking).  ``stacklevel`` points the :class:`ZeroWeightsWarning` at the user's call.
        ``X`` may also be a genotype matrix (:class:`~knnweights.engine.genotypes.GenotypeMatrix`)
        that gives its ``constant`` columns; the margin-gain tie-break then needs float data and
        is left out.
        """
        self.__dict__.pop("scores_", None)  # a method sets its own signed scores in _fit, or gets the default
        depth = _FIT_DEPTH.set(_FIT_DEPTH.get() + 1)
        try:
            w = np.asarray(fit_fn(X, codes), dtype=np.float64)
        finally:
            _FIT_DEPTH.reset(depth)
        if w.shape != (X.shape[1],):
            raise RuntimeError(f"internal error: weights of shape {w.shape} for {X.shape[1]} features")
        if not np.all(np.isfinite(w)):
            raise FloatingPointError(
                f"{type(self).__name__} produced non-finite weights; this is a bug, please report it with the data."
            )
        if not hasattr(self, "scores_"):
            self.scores_ = w.copy()  # the method's vector before clipping at 0
        w = np.maximum(w, 0.0)
        # a constant feature adds nothing to any distance: its weight is 0 by definition
        dense = isinstance(X, np.ndarray)
        constant = np.ptp(X, axis=0) == 0 if constant is None else np.asarray(constant, dtype=bool)
        w[constant] = 0.0
        self.feature_importances_ = w
        if not np.any(w > 0) and _FIT_DEPTH.get() == 0:
            msg = (_zero_weights_message(type(self).__name__, X, codes) if dense else
                   f"{type(self).__name__} returned all-zero weights on this genotype matrix: no feature separates "
                   + ("the classes" if codes is not None else "near and far outcomes")
                   + " at this method's neighbourhood.")
            warnings.warn(msg, ZeroWeightsWarning, stacklevel=stacklevel)
        gain = None
        tied = _score_ties(w, self.scores_, constant)
        if codes is not None and dense and tied.sum() > 1 and np.all(np.isfinite(X[:, tied])):
            # a method without signed scores leaves its clipped features tied: order them by the margin
            # each would add at the learned metric (one neighbour pass, only in that case)
            gain = np.zeros(w.shape[0])
            gain[tied] = margin_gain(X, codes, w, self._metric, np.flatnonzero(tied))
        self.ranking_ = feature_ranking(w, self.scores_, constant, gain)
        self.metric_ = self._metric
        return self

    def _fit(self, X, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def __sklearn_is_fitted__(self):
        # parameters such as ``lambda_`` end in "_" too: fittedness is the weights
        return hasattr(self, "feature_importances_")

    # -- output ----------------------------------------------------------------------
    @property
    def weights_(self):
        """Alias of ``feature_importances_``."""
        check_is_fitted(self, "feature_importances_")
        return self.feature_importances_

    def transform(self, X):
        """Rescale ``X`` so a plain kNN with ``metric_`` equals the weighted kNN.

        Where the estimator takes missing values (``_allow_nan``: the Relief family with
        ``missing="diff"``) a ``NaN`` stays ``NaN`` (``0 * NaN`` included).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Samples with the training features.

        Returns
        -------
        X_weighted : ndarray of shape (n_samples, n_features)
            ``X * w`` (manhattan) or ``X * sqrt(w)`` (sqeuclidean), in the input's float dtype.
        """
        check_is_fitted(self, "feature_importances_")
        X = validate_query_data(self, X, allow_nan=bool(getattr(self, "_allow_nan", False)))
        w = self.feature_importances_
        scale = w if self.metric_ == "manhattan" else np.sqrt(w)
        return X * scale.astype(X.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

