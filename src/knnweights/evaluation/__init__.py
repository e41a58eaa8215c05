"""Evaluation harness: repeated CV grids, paired tests, feature elimination."""
