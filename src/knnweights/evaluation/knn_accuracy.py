"""A quick look at what a weighter buys a kNN: the cross-validated accuracy of standardised kNN, weighted
or plain, over one shuffled stratified k-fold split (``knnweights demo``)."""

from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from ..classifiers import KNNClassifier, WeightedKNN

__all__ = ["knn_cv_accuracy"]


def knn_cv_accuracy(X, y, weighter=None, n_neighbors=3, n_splits=5, random_state=0):
    """Mean accuracy of a kNN on standardised features, weighted by ``weighter`` (or plain), over ``n_splits`` folds.

    The scaler and the weighter are fitted on the training folds only; the folds are
    stratified and shuffled by ``random_state``, so every weighter scored with the same seed
    sees the same folds.  An error in a fold is raised, not scored.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The samples.
    y : array-like of shape (n_samples,)
        Their class labels.
    weighter : estimator, optional
        A feature weighter (:class:`~knnweights.classifiers.WeightedKNN`); ``None``: plain kNN.
    n_neighbors : int, default=3
        Neighbours of the kNN vote.
    n_splits : int, default=5
        Folds.
    random_state : int, default=0
        Seed of the folds' shuffle.

    Returns
    -------
    float
        The mean fold accuracy, between 0 and 1.
    """
    cv = StratifiedKFold(n_splits, shuffle=True, random_state=random_state)
    knn = KNNClassifier(n_neighbors) if weighter is None else WeightedKNN(weighter, n_neighbors)
    return float(cross_val_score(make_pipeline(StandardScaler(), knn), X, y, cv=cv, error_score="raise").mean())
