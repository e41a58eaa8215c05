"""Rankings and feature selection from any weighter.

* :func:`fitted_ranking` and :func:`fitted_weights`: the total ranking and the
  per-feature weights of a fitted weighter or model (``feature_importances_`` or a linear
  model's ``coef_``).
* :class:`SelectTopK`: keep the ``k`` best-ranked features of a weighter.
* :class:`TuRF`: Moore & White's (2007) tuned ReliefF: refit the weighter on the
  surviving features after each removal of the lowest-scoring share.

The selectors follow scikit-learn's selector contract
(:class:`sklearn.feature_selection.SelectorMixin`): ``get_support``, ``transform``
(the kept columns, unscaled), ``inverse_transform``, ``get_feature_names_out`` and
``set_output(transform="pandas")``.
"""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from .engine.genotypes import is_byte_input
from .utils import (
    HasMethods,
    Interval,
    StrOptions,
    check_finite_columns,
    check_numeric_columns,
    fill_docstring,
    validate_params,
)
from .weighters import ReliefF, feature_ranking

__all__ = ["SelectTopK", "TuRF", "fitted_ranking", "fitted_weights"]

#: the Parameters and Returns of every selector's ``fit``: ``{fit_params}`` in its docstring
_fit_doc = fill_docstring(fit_params="""Parameters
----------
X : array-like or DataFrame of shape (n_samples, n_features)
    Training samples; a DataFrame's column names become ``feature_names_in_``.
y : array-like of shape (n_samples,)
    Targets the weighter learns its weights from (in every fit).

Returns
-------
self : object
    The fitted selector.""")


def fitted_ranking(estimator):
    """Ranks ``1..d`` (1 = best, no ties) of a fitted weighter or model.

    A knnweights weighter's ``ranking_`` (weight, then signed score, then column
    order); otherwise the order of ``feature_importances_`` or of the squared
    ``coef_`` summed over classes (SVM-RFE's criterion), ties by column order.

    Parameters
    ----------
    estimator : fitted estimator
        A weighter, or any model with ``ranking_``, ``feature_importances_`` or ``coef_``.

    Returns
    -------
    ranking : ndarray of int64, shape (n_features,)
        The rank of each feature, 1 = best.
    """
    r = getattr(estimator, "ranking_", None)
    if r is not None:
        r = np.asarray(r)
        if np.array_equal(np.sort(r), np.arange(1, r.shape[0] + 1)):
            return r.astype(np.int64)
    w = fitted_weights(estimator)
    if w is None:
        if r is not None:  # an elimination ranking with ties (e.g. sklearn's RFE): earlier rounds last
            return feature_ranking(-np.asarray(r, dtype=np.float64))
        raise TypeError(f"{type(estimator).__name__} has none of ranking_, feature_importances_ or coef_.")
    return feature_ranking(w, getattr(estimator, "scores_", None))


def fitted_weights(estimator):
    """Non-negative per-feature weights of a fitted weighter or model.

    ``feature_importances_``, else the squared ``coef_`` summed over classes (SVM-RFE's
    ranking criterion, Guyon et al. 2002).

    Parameters
    ----------
    estimator : fitted estimator
        A weighter, or any model with ``feature_importances_`` or ``coef_``.

    Returns
    -------
    weights : ndarray of float64 of shape (n_features,) or None
        ``None`` when the estimator has neither attribute.
    """
    if hasattr(estimator, "feature_importances_"):
        return np.asarray(estimator.feature_importances_, dtype=np.float64)
    if hasattr(estimator, "coef_"):
        coef = np.atleast_2d(np.asarray(estimator.coef_, dtype=np.float64))
        return (coef**2).sum(axis=0)
    return None


class _WeighterSelector(SelectorMixin, BaseEstimator):
    """Shared input handling: named column errors, NaN allowed when the weighter allows it."""

    def _check_X(self, X):
        w = self.weighter if self.weighter is not None else self._default_weighter()
        if is_byte_input(X) and getattr(w, "_byte_input", False):  # genotypes: the weighter takes the bytes
            if X.shape[0] < 2:
                raise ValueError(f"Found array with {X.shape[0]} sample(s) while a minimum of 2 is required.")
            self.n_features_in_ = X.shape[1]
            self.__dict__.pop("feature_names_in_", None)
            return X
        allow_nan = get_tags(w).input_tags.allow_nan
        check_numeric_columns(X)
        check_finite_columns(X, allow_nan=allow_nan)
        return validate_data(self, X, dtype=[np.float64, np.float32],
                             ensure_all_finite="allow-nan" if allow_nan else True, ensure_min_samples=2)

    def _validated_X(self, X, y):
        """The parameters checked, then ``X`` as the weighter takes it; without ``y`` the weighter's own message."""
        validate_params(self)
        if y is None:  # the weighter's message, before any of ours
            self._weighter().fit(X, y)
        return self._check_X(X)

    def _default_weighter(self):
        return ReliefF()

    def _weighter(self):
        return clone(self.weighter if self.weighter is not None else self._default_weighter())

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        w = self.weighter if self.weighter is not None else self._default_weighter()
        tags.input_tags.allow_nan = get_tags(w).input_tags.allow_nan
        return tags


class SelectTopK(_WeighterSelector):
    """Keep the ``k`` best-ranked features of a weighter.

    Fits ``weighter`` and keeps the features of rank ``1..k`` of its ``ranking_``
    (by weight, then signed score, so features whose weights are clipped to 0 are
    still ordered; see :func:`knnweights.weighters._base.feature_ranking`).
    ``transform`` returns the kept columns unscaled; to weight them too, put the
    weighter after the selector in a pipeline.

    Parameters
    ----------
    weighter : estimator
        A knnweights weighter, or any estimator with ``feature_importances_`` or
        ``coef_``.
    k : int or "all", default=10
        Features kept.  More than the data has keeps all of them (with a warning).

    Attributes
    ----------
    weighter_ : fitted clone of ``weighter``
    ranking_ : ndarray of int, shape (n_features_in_,)
        The weighter's ranking (1 = best).
    support_ : ndarray of bool, shape (n_features_in_,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` was a DataFrame.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import ReliefF, SelectTopK
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 20)); y = (X[:, 3] + X[:, 7] > 0).astype(int)
    >>> sel = SelectTopK(ReliefF(n_neighbors=5), k=2).fit(X, y)
    >>> sel.get_support(indices=True).tolist()
    [3, 7]
    >>> sel.transform(X).shape
    (80, 2)
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "weighter": [HasMethods(["fit"])],
        "k": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"all"})],
    }

    def __init__(self, weighter, k=10):
        self.weighter = weighter
        self.k = k

    @_fit_doc
    def fit(self, X, y):
        """Fit the weighter on ``(X, y)`` and keep its ``k`` best features.

        {fit_params}
        """
        Xv = self._validated_X(X, y)
        self.weighter_ = self._weighter().fit(Xv, y)
        self.ranking_ = fitted_ranking(self.weighter_)
        d = self.ranking_.shape[0]
        k = d if self.k == "all" else int(self.k)
        if k > d:
            warnings.warn(f"k={k} is larger than the number of features ({d}); all features are kept.",
                          UserWarning, stacklevel=2)
            k = d
        self.support_ = self.ranking_ <= k
        return self


def _n_to_select(n_features_to_select, pct, d):
    if n_features_to_select is None:
        return max(1, min(d, int(round(pct * d))) if isinstance(pct, float) else int(pct))
    if isinstance(n_features_to_select, numbers.Integral):
        return int(min(n_features_to_select, d))
    return max(1, int(round(n_features_to_select * d)))


class TuRF(_WeighterSelector):
    """Tuned ReliefF (Moore & White 2007): remove the lowest-scoring features, refit, repeat.

    Moore & White's TuRF ("Tuning ReliefF for genome-wide genetic analysis"): with
    ``a`` iterations, run ReliefF, remove the ``n / a`` worst of the ``n`` original
    features, and run it again on the rest, so that the neighbours of the later
    rounds are found in a space with less noise (ReliefF's neighbours degrade when
    most features are irrelevant; interacting features such as an XOR pair are then
    missed by a single pass).  Here any weighter takes ReliefF's place, and the loop
    stops when ``n_features_to_select`` remain; the survivors are ranked by a last
    fit on them.

    Parameters
    ----------
    weighter : estimator, default=None
        The scorer refitted each round (default ``ReliefF()``, as in the paper).
    pct : float in (0, 1) or int, default=0.5
        Features removed per round: a float is the share of the *original* features
        (``round(pct * n)``, at least one; the paper's ``1 / a``), an int a count.
    n_features_to_select : int, float in (0, 1) or None, default=None
        Features kept; a float is a share of the features.  ``None``: one round's
        worth (``round(pct * n)``), i.e. the paper's ``a = 1 / pct`` fits.
    verbose : int, default=0
        Print each round.

    Attributes
    ----------
    ranking_ : ndarray of int, shape (n_features_in_,)
        1 = best: the survivors by the last fit's ranking, then the features removed
        in the last round (by that round's ranking), then those of the round before,
        and so on.
    elimination_round_ : ndarray of int, shape (n_features_in_,)
        Round in which each feature was removed (1 = first); 0 for the survivors.
    scores_ : ndarray of shape (n_features_in_,)
        Each feature's signed score (``scores_``, else its weight) in the last fit
        it took part in.
    support_ : ndarray of bool, shape (n_features_in_,)
    n_rounds_ : int
        Removal rounds run (fits = ``n_rounds_ + 1``).
    estimator_ : the weighter fitted on the surviving features.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` was a DataFrame.

    References
    ----------
    J. H. Moore and B. C. White, "Tuning ReliefF for genome-wide genetic analysis",
    EvoBIO 2007, LNCS 4447, pp. 166-175.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import ReliefF, TuRF
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(100, 30)); y = (X[:, 0] - X[:, 1] > 0).astype(int)
    >>> t = TuRF(ReliefF(n_neighbors=5), pct=0.2, n_features_to_select=2).fit(X, y)
    >>> t.get_support(indices=True).tolist(), t.n_rounds_
    ([0, 1], 5)
    """

    _algorithm_version = 1

    _parameter_constraints = {
        "weighter": [HasMethods(["fit"]), None],
        "pct": [Interval(numbers.Real, 0, 1, closed="neither"), Interval(numbers.Integral, 1, None, closed="left")],
        "n_features_to_select": [Interval(numbers.Integral, 1, None, closed="left"),
                                 Interval(numbers.Real, 0, 1, closed="neither"), None],
        "verbose": ["verbose"],
    }

    def __init__(self, weighter=None, pct=0.5, n_features_to_select=None, verbose=0):
        self.weighter = weighter
        self.pct = pct
        self.n_features_to_select = n_features_to_select
        self.verbose = verbose

    @_fit_doc
    def fit(self, X, y):
        """Run the rounds of removal and refitting on ``(X, y)``.

        {fit_params}
        """
        X = self._validated_X(X, y)
        d = X.shape[1]
        keep = _n_to_select(self.n_features_to_select, self.pct, d)
        per_round = max(1, int(round(self.pct * d))) if isinstance(self.pct, float) else int(self.pct)
        remaining = np.arange(d)
        removed = []  # per round: the removed indices, best first
        scores = np.zeros(d)
        rnd = np.zeros(d, dtype=np.int64)
        while True:
            est = self._weighter().fit(X[:, remaining], y)
            r = fitted_ranking(est)
            s = getattr(est, "scores_", None)
            scores[remaining] = fitted_weights(est) if s is None else np.asarray(s, dtype=np.float64)
            order = remaining[np.argsort(r, kind="stable")]  # best first
            if remaining.shape[0] <= keep:
                break
            n_remove = min(per_round, remaining.shape[0] - keep)
            gone = order[-n_remove:]
            removed.append(gone)
            rnd[gone] = len(removed)
            if self.verbose:
                print(f"[TuRF] round {len(removed)}: {remaining.shape[0]} features, removed {n_remove}")
            remaining = np.sort(order[:-n_remove])
        ranking = np.empty(d, dtype=np.int64)
        sequence = np.concatenate([order] + removed[::-1]) if removed else order
        ranking[sequence] = np.arange(1, d + 1)
        self.ranking_ = ranking
        self.elimination_round_ = rnd
        self.scores_ = scores
        self.n_rounds_ = len(removed)
        self.estimator_ = est
        self.support_ = np.zeros(d, dtype=bool)
        self.support_[remaining] = True
        return self
