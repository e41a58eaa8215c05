"""The weighter contract shared by every method: validation, weights, transform."""

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["BaseWeighter", "check_finite_columns", "warn_max_iter", "normalize_weights"]


def _label(c):
    """A class label as the user wrote it (numpy scalars shown as plain values)."""
    return repr(c.item() if hasattr(c, "item") else c)


def check_finite_columns(X, what="X"):
    """Raise a ``ValueError`` naming the first column that holds NaN or infinity."""
    X = np.asarray(X)
    if X.dtype.kind not in "fc":
        return
    bad = ~np.isfinite(X)
    if bad.any():
        cols = np.flatnonzero(bad.any(axis=0)) if X.ndim == 2 else np.array([0])
        j = int(cols[0])
        kind = "NaN" if np.isnan(X[..., j] if X.ndim == 2 else X).any() else "infinity (inf)"
        raise ValueError(
            f"Input {what} contains {kind} in column {j} ({bad[:, j].sum() if X.ndim == 2 else bad.sum()} "
            f"value(s); {len(cols)} column(s) affected in all). Impute or drop the missing values, e.g. with "
            "sklearn.impute.SimpleImputer, before fitting: weights are not defined on NaN or inf."
        )


def _check_scale(X):
    """Refuse data whose squared differences would overflow, or all underflow to zero."""
    amax = float(np.max(np.abs(X))) if X.size else 0.0
    log_limit = 300.0 if X.dtype == np.float64 else 36.0
    if amax > 0 and 2 * np.log10(2.0 * amax) + np.log10(X.shape[0] * X.shape[1]) >= log_limit:
        j = int(np.argmax(np.max(np.abs(X), axis=0)))
        raise ValueError(
            f"Input X has values up to {amax:.3g} (column {j}): sums of squared differences would overflow "
            f"{X.dtype}. Rescale the features first, e.g. with sklearn.preprocessing.StandardScaler or "
            "MaxAbsScaler."
        )
    if 0 < amax < 1e-145:
        raise ValueError(
            f"Input X has no value larger than {amax:.3g} in magnitude: squared differences underflow to 0 in "
            f"{X.dtype}, so every distance would be 0. Rescale the features first, e.g. with "
            "sklearn.preprocessing.StandardScaler or MaxAbsScaler."
        )


def warn_max_iter(estimator, max_iter, what="the weights"):
    """Emit the ConvergenceWarning every iterative method gives when it stops at max_iter."""
    warnings.warn(
        f"{type(estimator).__name__} stopped at max_iter={max_iter} before {what} converged; "
        "increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=4,
    )


def normalize_weights(v, norm="l2"):
    """``max(v, 0)`` normalised to unit ``norm``; all-zero stays all-zero (never NaN)."""
    w = np.maximum(np.asarray(v, dtype=np.float64), 0.0)
    s = np.linalg.norm(w, 1 if norm == "l1" else (np.inf if norm == "max" else 2))
    return w / s if s > 0 and np.isfinite(s) else w


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
    """

    _metric = "manhattan"
    #: minimum samples per class the method needs (2 = a hit for every sample)
    _min_class_size = 2
    _parameter_constraints: dict = {}

    # -- input ---------------------------------------------------------------------
    def _validate_fit_data(self, X, y):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: feature weighting "
                "is supervised (pass the class labels)."
            )
        if hasattr(X, "iloc") or isinstance(X, np.ndarray) or isinstance(X, list):
            Xa = np.asarray(X)
            if Xa.dtype.kind in "fc" and Xa.ndim == 2:
                check_finite_columns(Xa)
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], ensure_min_samples=2,
                             accept_sparse=False, y_numeric=False)
        check_classification_targets(y)
        _check_scale(X)
        self._label_encoder = LabelEncoder().fit(y)
        self.classes_ = self._label_encoder.classes_
        codes = self._label_encoder.transform(y).astype(np.int64)
        if len(self.classes_) < 2:
            raise ValueError(
                f"{type(self).__name__} needs at least 2 classes; y has 1 class ({_label(self.classes_[0])}). "
                "Feature weighting by margins needs samples of other classes (misses)."
            )
        counts = np.bincount(codes)
        small = np.flatnonzero(counts < self._min_class_size)
        if small.size:
            c = small[0]
            raise ValueError(
                f"{type(self).__name__} needs at least {self._min_class_size} samples per class (every sample "
                f"needs a hit of its own class), but class {_label(self.classes_[c])} has {counts[c]} sample"
                f"{'s' if counts[c] != 1 else ''}. Remove or merge that class, or collect more samples."
            )
        return X, codes

    def _check_n_neighbors(self, k, codes, need_hits=True, name="n_neighbors"):
        """Raise when ``k`` exceeds the hits (class size - 1) or misses available."""
        counts = np.bincount(codes)
        n = codes.shape[0]
        if need_hits and k > counts.min() - 1:
            c = int(np.argmin(counts))
            raise ValueError(
                f"{name}={k} is larger than the number of hits of class {_label(self.classes_[c])} "
                f"({counts[c] - 1}: {counts[c]} samples minus the sample itself). Use {name} <= "
                f"{counts.min() - 1}."
            )
        if k > n - counts.max():
            raise ValueError(f"{name}={k} is larger than the number of misses available ({n - counts.max()}).")

    # -- fit -------------------------------------------------------------------------
    def fit(self, X, y):
        """Learn the feature weights.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Class labels of any type.

        Returns
        -------
        self
        """
        self._validate_params()
        X, codes = self._validate_fit_data(X, y)
        w = np.asarray(self._fit(X, codes), dtype=np.float64)
        if w.shape != (X.shape[1],):
            raise RuntimeError(f"internal error: weights of shape {w.shape} for {X.shape[1]} features")
        if not np.all(np.isfinite(w)):
            raise FloatingPointError(
                f"{type(self).__name__} produced non-finite weights; this is a bug, please report it with the data."
            )
        w = np.maximum(w, 0.0)
        # a constant feature adds nothing to any distance: its weight is 0 by definition
        w[np.ptp(X, axis=0) == 0] = 0.0
        self.feature_importances_ = w
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

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_features), ``X * w`` (manhattan) or
        ``X * sqrt(w)`` (sqeuclidean), in the input's float dtype.
        """
        check_is_fitted(self, "feature_importances_")
        if isinstance(X, np.ndarray) and X.dtype.kind in "fc" and X.ndim == 2:
            check_finite_columns(X)
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        w = self.feature_importances_
        scale = w if self.metric_ == "manhattan" else np.sqrt(w)
        return X * scale.astype(X.dtype)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.allow_nan = False
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


def _positive_int():
    return [Interval(numbers.Integral, 1, None, closed="left")]


def _positive_real():
    return [Interval(numbers.Real, 0, None, closed="neither")]
