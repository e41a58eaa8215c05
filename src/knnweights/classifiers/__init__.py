"""Classifiers the papers use: weighted kNN, I-M4E's expected-distance rule, HKNN, CKNN; plain kNN."""

from ._expected_distance import ExpectedDistanceClassifier
from ._hyperplane import CKNN, HKNN
from ._weighted_knn import (
    KNNClassifier,
    KNNRegressor,
    WeightedKNN,
    WeightedKNNRegressor,
    class_votes,
    majority_class,
    predict_weighted_knn,
    predict_weighted_knn_ks,
)

__all__ = ["ExpectedDistanceClassifier", "HKNN", "CKNN", "KNNClassifier", "KNNRegressor", "WeightedKNN",
           "WeightedKNNRegressor", "class_votes", "majority_class", "predict_weighted_knn", "predict_weighted_knn_ks"]
