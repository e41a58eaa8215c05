"""The Relief family's ``fit`` on a byte (genotype) matrix, scored in feature blocks without a float copy.

:func:`fit_relief_bytes` validates the labels as every weighter does and runs the estimator's
own ``_fit`` on a :class:`~knnweights.engine.genotypes.GenotypeMatrix`, whose ``diff`` tables
the engine computes block by block (:mod:`knnweights.engine.genotypes`).
"""

import numpy as np

from ..engine._kernels_bytes import MISSING
from ..engine.genotypes import GenotypeMatrix
from ..exceptions import BytePathTooWide
from ..io import BedSource
from ..utils import validate_params
from ._base import BaseWeighter
from ._validation import is_continuous_target, require_y, validate_continuous_fit_data

__all__ = ["fit_relief_bytes"]


def fit_relief_bytes(est, X, y):
    """``est.fit(X, y)`` for a Relief-family estimator on a byte matrix (called by its ``fit``).

    Validates ``y`` as every weighter does, runs ``est._fit`` (or, for a continuous target, the
    estimator's regression form ``_continuous_scores``) on a
    :class:`~knnweights.engine.genotypes.GenotypeMatrix`, and sets the fitted attributes of
    :meth:`BaseWeighter.fit` (the ranking without the margin-gain tie-break, which needs the
    float data).  Values above 15 (not genotypes): the float path (a float copy), with unknown
    values as ``NaN``.

    Parameters
    ----------
    est : ReliefBase
        The Relief-family estimator being fitted.
    X : ndarray of uint8 or int8, masked array or BedSource, shape (n_samples, n_features)
        The genotype matrix.
    y : array-like of shape (n_samples,)
        Class labels, or a continuous target for the classes with a regression form
        (``ReliefTargetMixin``).

    Returns
    -------
    est : ReliefBase
        The fitted estimator.
    """
    validate_params(est)
    if not getattr(est, "_byte_input", False):
        raise NotImplementedError(f"{type(est).__name__} does not take a byte (genotype) matrix; pass floats.")
    target_type = getattr(est, "target_type", "classes")
    continuous = y is not None and is_continuous_target(y, target_type)
    if continuous and not hasattr(est, "_continuous_scores"):
        raise NotImplementedError(
            f"{type(est).__name__} on genotype bytes scores class labels; for a continuous target give X as floats, "
            "or use knnweights.permutation_pvalues.")
    pvalues = bool(getattr(est, "pvalues", False))
    require_y(est, y)
    if isinstance(X, np.ndarray) and X.shape[0] < 2:
        raise ValueError(f"Found array with {X.shape[0]} sample(s) (shape={X.shape}) while a minimum of 2 is required.")
    if continuous:  # y by the float path's rules (a placeholder X: the bytes are checked below)
        yv = validate_continuous_fit_data(est, np.zeros((X.shape[0], 1)), y)[1]
    G = GenotypeMatrix(X)
    try:
        st = G.stats()
        if st["bad"].any():
            G.close()
            return _float_fit(est, _float_copy(X), y, continuous)
        if st["n_missing"].any() and getattr(est, "missing", "error") != "diff":
            j = int(np.flatnonzero(st["n_missing"])[0])
            raise ValueError(
                f"Input X contains unknown values (the missing code) in column {j} ({int(st['n_missing'][j])} "
                f"value(s); {int((st['n_missing'] > 0).sum())} column(s) affected in all). Pass missing='diff' "
                "to score them with Relief's unknown-value diff.")
        if pvalues and st["n_missing"].any():  # before the weights: the float path refuses the same
            raise NotImplementedError(
                f"{type(est).__name__}(pvalues=True): {int((st['n_missing'] > 0).sum())} SNP(s) have unknown calls; "
                "drop or impute them (plink --geno 0) or use knnweights.permutation_pvalues (the pair test is not "
                "defined with missing values: the pair moments of the expected diff are not those of a diff).")
        est.n_features_in_ = G.shape[1]
        est.__dict__.pop("feature_names_in_", None)
        if continuous:  # the regression form (RReliefF, the radius rule) on the byte diff (ReliefTargetMixin)
            codes, fit_fn = None, (lambda G, _: est._continuous_scores(G, yv))
        else:  # the class fit, with the p-values of the Relief classes that compute them (ReliefTargetMixin)
            codes, fit_fn = est._encode_target(y, G.shape[0]), (est._fit_classes if pvalues else est._fit)
        try:
            return est._fit_weights(G, codes, fit_fn, stacklevel=4, constant=G.constant())
        except BytePathTooWide:
            G.close()
            return _float_fit(est, _float_copy(X), y, continuous)
    finally:
        G.close()


def _float_fit(est, Xf, y, continuous=False):
    """The float path's fit of ``Xf`` (the regression form for a continuous ``y``; with ``pvalues_`` where the
    estimator computes them)."""
    if continuous:
        Xf, yv = validate_continuous_fit_data(est, Xf, y)
        return est._fit_weights(Xf, None, lambda X, _: est._continuous_scores(X, yv), stacklevel=5)
    if not getattr(est, "pvalues", False):
        return BaseWeighter.fit(est, Xf, y)
    Xf, codes = est._validate_fit_data(Xf, y)
    return est._fit_weights(Xf, codes, est._fit_classes, stacklevel=5)


def _float_copy(X):
    """``X`` as float64 with its unknown values (negative ``int8``, ``uint8`` 255, masked) as ``NaN``."""
    if isinstance(X, BedSource):
        X = X.read(0, X.shape[1])
    Xf = np.ma.getdata(X).astype(np.float64)
    miss = np.zeros(Xf.shape, bool)
    if X.dtype == np.int8:
        miss |= np.ma.getdata(X) < 0
    elif X.dtype == np.uint8:
        miss |= np.ma.getdata(X) == MISSING
    if isinstance(X, np.ma.MaskedArray):
        miss |= np.ma.getmaskarray(X)
    Xf[miss] = np.nan
    return Xf
