"""knnweights: feature weighting for nearest-neighbour classification.

Every method of the field in one scikit-learn API (``fit``, ``feature_importances_``,
``transform``), on one shared, compiled neighbour engine (the :mod:`knnweights.engine` package).
"""

from ._version import __version__
from .classifiers import WeightedKNNRegressor
from .engine import config_context, get_config, set_config
from .selection import SelectTopK, TuRF, rank_table
from .significance import bh_qvalues, permutation_pvalues
from .weighters import (
    CONTINUOUS_TARGET_METHODS,
    EFW,
    IM4E,
    MDM,
    SBMLR,
    SQPFW,
    SURF,
    SVMRFE,
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

#: name -> class of every weighter, so tools can loop over them
WEIGHTERS = {
    cls.__name__: cls
    for cls in (
        IM4E, LHRelief, SQPFW, MDM, EFW, ERelief,
        Relief, ReliefF, SURF, MultiSURF, IRelief, Simba, GFlip, MulRel, Logo, NCADiagonal, SVMRFE, SBMLR,
    )
}

#: name -> class of the weighters with a continuous-target definition (the Relief ones also take classes)
REGRESSION_WEIGHTERS = {name: {**WEIGHTERS, "MLKRDiagonal": MLKRDiagonal}[name] for name in CONTINUOUS_TARGET_METHODS}

__all__ = ["WEIGHTERS", "get_config", "set_config", "config_context", "__version__", "SelectTopK", "TuRF",
           "rank_table", "ZeroWeightsWarning", "bh_qvalues", "permutation_pvalues", "MLKRDiagonal",
           "WeightedKNNRegressor", "REGRESSION_WEIGHTERS", *WEIGHTERS]
