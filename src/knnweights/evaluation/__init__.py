"""Evaluation harness: repeated CV / holdout grids, tuning, paired tests, rank tables, feature elimination.

* :func:`run_grid` (:mod:`.grid`) runs methods x datasets x repeats x folds under one
  protocol (:class:`RepeatedCV`, :class:`RepeatedHoldout`, :func:`derive_seed`:
  :mod:`.protocols`), in parallel through joblib (any backend, ``dask`` included),
  resumable through a :class:`ResultStore` (:mod:`.store`); :func:`summarize` and
  :func:`write_csv` (:mod:`.results`) tabulate its rows.
* :class:`Tuned` / :func:`tune`: hyper-parameters by internal CV or a validation split.
* :func:`weighted_knn`, :func:`weighter_pipeline`, :class:`RemoveLowestWeights`: a
  weighter before a classifier, fitted on training rows only.
* :func:`win_tie_loss`, :func:`paired_ttest`, :func:`corrected_ttest`,
  :func:`wilcoxon_test`, :func:`win_tie_loss_table`: the papers' tests and W/T/L rows;
  :func:`paired_outcome` is the one win / tie / loss rule they all apply.
* :func:`rank_table`: every feature with each method's weight, score, rank, p-values and
  the univariate baselines.
* :class:`HalvingElimination`: I-M4E's feature elimination.
* :class:`AutoWeightedKNN`: the weighter, the features kept and ``k`` chosen by inner CV;
  :func:`nested_evaluate`: an outer CV around that choice (the estimate with its interval,
  baselines, selection frequencies, the stability index, a consensus list).
"""

from .auto import AutoWeightedKNN, feature_count_grid, fit_with_covariates, selection_pipeline
from .elimination import HalvingElimination, halving_counts
from .grid import run_grid
from .nested import NestedResult, StabilityIndex, default_baselines, nested_evaluate, selection_stability
from .pipelines import RemoveLowestWeights, cached_fit, fit_cache, weighted_knn, weighter_pipeline
from .protocols import RepeatedCV, RepeatedHoldout, derive_seed
from .ranking import fit_rank_table, rank_table
from .results import summarize, write_csv
from .robustness import irrelevant_feature_curve
from .stability import rank_features, spearman_similarity, stability, stability_of, subsample_rankings
from .stats import (
    corrected_interval,
    corrected_ttest,
    count_outcomes,
    format_wtl,
    paired_outcome,
    paired_ttest,
    wilcoxon_test,
    win_tie_loss,
    win_tie_loss_table,
)
from .store import ResultStore
from .topfeatures import feature_order, top_feature_curve
from .tuning import Tuned, halving_grid, log_grid, set_random_states, share_grid, tune

__all__ = [
    "run_grid", "RepeatedCV", "RepeatedHoldout", "ResultStore", "derive_seed", "summarize",
    "write_csv",
    "Tuned", "tune", "halving_grid", "share_grid", "log_grid", "set_random_states",
    "rank_table", "fit_rank_table",
    "RemoveLowestWeights", "weighted_knn", "weighter_pipeline", "fit_cache", "cached_fit",
    "win_tie_loss", "paired_outcome", "count_outcomes", "paired_ttest", "corrected_ttest", "wilcoxon_test",
    "win_tie_loss_table", "format_wtl",
    "HalvingElimination", "halving_counts",
    "irrelevant_feature_curve", "stability", "stability_of", "subsample_rankings", "rank_features",
    "spearman_similarity", "top_feature_curve", "feature_order",
    "AutoWeightedKNN", "feature_count_grid", "fit_with_covariates", "selection_pipeline", "nested_evaluate",
    "NestedResult", "selection_stability", "StabilityIndex", "default_baselines", "corrected_interval",
]
