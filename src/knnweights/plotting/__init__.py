"""Plots for evaluation results (matplotlib is imported inside the functions)."""
