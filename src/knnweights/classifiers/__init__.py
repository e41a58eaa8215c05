"""Classifiers the papers use: weighted kNN, I-M4E's expected-distance rule, HKNN, CKNN."""

from ._weighted_knn import WeightedKNN

__all__ = ["WeightedKNN"]
