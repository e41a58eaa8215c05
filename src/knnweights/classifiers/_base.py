"""What the lazy classifiers share: validating and encoding the training set, the methods' parameter docs."""

import numpy as np

from ..utils import fill_docstring, validate_params
from ..weighters._validation import encode_classes, validate_training_data

#: the parameter docs of the classifiers' methods: ``{fit_X}`` (the Parameters heading and the training
#: samples ``X`` of a ``fit``, whose ``y`` line follows it), ``{fit_returns}`` (its Returns section),
#: ``{query_params}`` (the Parameters section of a method that takes queries),
#: ``{weighted_query_params}`` (a weighted kNN's queries, given in the original feature space),
#: ``{proba_returns}`` (the Returns section of a kNN vote's ``predict_proba``) and ``{label_returns}``
#: (that of a classifier's ``predict``)
method_doc = fill_docstring(
    fit_X="""Parameters
----------
X : array-like of shape (n_samples, n_features)
    Training samples.""",
    fit_returns="""Returns
-------
self : estimator
    The fitted estimator.""",
    query_params="""Parameters
----------
X : array-like of shape (n_queries, n_features)
    Query samples.""",
    weighted_query_params="""Parameters
----------
X : array-like of shape (n_queries, n_features)
    Query samples, in the original (unweighted) feature space.""",
    proba_returns="""Returns
-------
proba : ndarray of shape (n_queries, n_classes)
    Fraction of each query's neighbours in each class of ``classes_``.""",
    label_returns="""Returns
-------
y_pred : ndarray of shape (n_queries,)
    Predicted class labels (entries of ``classes_``).""")


def validate_training_set(estimator, X, y, dtype=np.float64):
    """Validate ``(X, y)`` for a lazy classifier, set ``classes_``, return ``X, y, codes``.

    The weighters' validation sequence (:func:`~knnweights.weighters._validation.validate_training_data`,
    :func:`~knnweights.weighters._validation.encode_classes`), so a bad input gets the same
    error from a classifier as from a weighter; a classifier needs one sample of one class.

    Parameters
    ----------
    estimator : classifier
        The classifier being fitted.
    X : array-like of shape (n_samples, n_features)
        Training samples.
    y : array-like of shape (n_samples,)
        Class labels.
    dtype : type or list of type, default=numpy.float64
        Float dtypes ``X`` is kept in.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        The validated samples.
    y : ndarray of shape (n_samples,)
        The validated labels.
    codes : ndarray of int64, shape (n_samples,)
        The labels as integers ``0..n_classes-1`` in the order of ``classes_``.
    """
    validate_params(estimator)
    X, y = validate_training_data(estimator, X, y, dtype=dtype, ensure_min_samples=1)
    return X, y, encode_classes(estimator, y)
