"""What the lazy classifiers share: validating and encoding the training set."""

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..utils import validate_params


def validate_training_set(estimator, X, y):
    """Validate ``(X, y)`` for a lazy classifier, set ``classes_``, return ``X, y, codes``.

    ``codes`` are the labels as integers ``0..n_classes-1`` in the order of ``classes_``.
    """
    validate_params(estimator)
    X, y = validate_data(estimator, X, y, dtype=np.float64)
    check_classification_targets(y)
    estimator.classes_, codes = np.unique(y, return_inverse=True)
    return X, y, codes.astype(np.int64)
