"""The preparation every evaluation cell and rank table shares: scaling by name, median imputation."""

import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import MinMaxScaler, StandardScaler

__all__ = ["make_scaler", "impute_and_scale"]


def make_scaler(scale):
    """The unfitted scaler named ``scale``.

    Parameters
    ----------
    scale : {"standard", "minmax", "none"} or None
        ``"standard"``: :class:`~sklearn.preprocessing.StandardScaler`; ``"minmax"``:
        :class:`~sklearn.preprocessing.MinMaxScaler`; ``"none"`` or ``None``: no scaling.

    Returns
    -------
    scaler : transformer or None
        ``None`` for no scaling.
    """
    if scale == "standard":
        return StandardScaler()
    if scale == "minmax":
        return MinMaxScaler()
    if scale in (None, "none"):
        return None
    raise ValueError(f"scale must be 'standard', 'minmax' or 'none'; got {scale!r}.")


def impute_and_scale(X_train, X_test, scale):
    """Median imputation (only when values are missing) and scaling, both fitted on the training part only.

    Parameters
    ----------
    X_train : array-like of shape (n_train, n_features)
        The training part; NaN marks a missing value.
    X_test : array-like of shape (n_test, n_features)
        The test part, transformed with what the training part gave.
    scale : {"standard", "minmax", "none"} or None
        The scaler (:func:`make_scaler`).

    Returns
    -------
    X_train, X_test : ndarray of float64
        The prepared parts.
    """
    X_train = np.asarray(X_train, dtype=np.float64)
    X_test = np.asarray(X_test, dtype=np.float64)
    if np.isnan(X_train).any() or np.isnan(X_test).any():
        imp = SimpleImputer(strategy="median", keep_empty_features=True).fit(X_train)
        X_train, X_test = imp.transform(X_train), imp.transform(X_test)
    sc = make_scaler(scale)
    if sc is not None:
        sc.fit(X_train)
        X_train, X_test = sc.transform(X_train), sc.transform(X_test)
    return X_train, X_test
