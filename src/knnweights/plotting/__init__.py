"""Plots for evaluation results (matplotlib, extra ``plot``, is imported inside the functions).

Every function takes ``ax=None, title=None, path=None``, returns the matplotlib Axes
(``ax.figure`` is the Figure) and saves a PNG to ``path`` when given.
"""

from .evaluation import plot_accuracy_boxplots, plot_elimination_curves, plot_win_tie_loss
from .robustness import plot_irrelevant_feature_curve
from .sqpfw import plot_sqpfw_path
from .topfeatures import plot_top_feature_curves
from .user import plot_pairwise_differences, plot_top_feature_ranks, plot_weight_profiles

__all__ = [
    "plot_accuracy_boxplots",
    "plot_win_tie_loss",
    "plot_elimination_curves",
    "plot_irrelevant_feature_curve",
    "plot_top_feature_curves",
    "plot_sqpfw_path",
    "plot_weight_profiles",
    "plot_pairwise_differences",
    "plot_top_feature_ranks",
]
