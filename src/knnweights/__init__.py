"""knnweights: feature weighting for nearest-neighbour classification.

Every method of the field in one scikit-learn API (``fit``, ``feature_importances_``,
``transform``), on one shared, compiled neighbour engine (the :mod:`knnweights.engine` package).
"""

from ._version import __version__
from .classifiers import WeightedKNNRegressor
from .engine import config_context, get_config, set_config
from .evaluation.auto import AutoWeightedKNN
from .evaluation.ranking import rank_table
from .selection import SelectTopK, TuRF
from .significance import bh_qvalues, permutation_pvalues
from .weighters import (
    EFW,
    IM4E,
    MDM,
    REGRESSION_WEIGHTERS,
    SBMLR,
    SQPFW,
    SURF,
    SVMRFE,
    WEIGHTERS,
    ERelief,
    GFlip,
    IRelief,
    LHRelief,
    Logo,
    MLKRDiagonal,
    MulRel,
    MultiSURF,
    NCADiagonal,
    Relief,
    ReliefF,
    Simba,
    ZeroWeightsWarning,
)

__all__ = ["WEIGHTERS", "get_config", "set_config", "config_context", "__version__", "SelectTopK", "TuRF",
           "rank_table", "ZeroWeightsWarning", "bh_qvalues", "permutation_pvalues", "MLKRDiagonal",
           "WeightedKNNRegressor", "REGRESSION_WEIGHTERS", "AutoWeightedKNN",
           "IM4E", "LHRelief", "SQPFW", "MDM", "EFW", "ERelief", "Relief", "ReliefF", "SURF", "MultiSURF", "IRelief",
           "Simba", "GFlip", "MulRel", "Logo", "NCADiagonal", "SVMRFE", "SBMLR"]
