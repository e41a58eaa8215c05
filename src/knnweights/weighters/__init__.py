"""Feature weighters, one module per method family; each holds only its own update and
builds on :mod:`knnweights.engine` (distances, neighbours, margins), :mod:`knnweights._solvers`
and :class:`BaseWeighter` (validation, the transform contract).  What several modules of the
Relief family share lives in private modules: ``_relief_margins`` (neighbours, radius,
sampled instances), ``_relief_base`` (the estimator base), ``_relief_regression`` (continuous
targets and p-values), ``_relief_survival`` (censored outcomes: the null Cox model's martingale
residuals), ``_relief_pvalues`` (the pair statistics), ``_relief_bytes`` (genotype
bytes); ``_validation`` holds the training-data checks the classifiers share.

Besides the weighters, the contract's pieces other packages use: :class:`BaseWeighter`,
:class:`ZeroWeightsWarning`, :func:`feature_ranking` (the total order of ``ranking_``),
:func:`check_class_neighbors` (a neighbour count against the class sizes) and
:func:`is_continuous_target` (whether a Relief-family fit takes ``y`` as a continuous target) and
:data:`CONTINUOUS_TARGET_METHODS` (the names of the weighters that accept one);
:func:`is_survival_target` and :func:`make_survival_target` (a censored outcome, a structured array with
fields ``event`` and ``time``) and :data:`SURVIVAL_METHODS` (the weighters that score one); :data:`WEIGHTERS` and
:data:`REGRESSION_WEIGHTERS`, name -> class, so tools can loop over them.
"""

from ._base import BaseWeighter, ZeroWeightsWarning, check_class_neighbors, feature_ranking
from ._relief_survival import is_survival_target, make_survival_target
from ._validation import CONTINUOUS_TARGET_METHODS, is_continuous_target
from .efw import EFW, ERelief
from .efw_baselines import SVMRFE
from .im4e import IM4E
from .irelief import IRelief
from .lhrelief import LHRelief
from .logo import Logo
from .mdm import MDM
from .mlkr import MLKRDiagonal
from .mulrel import MulRel
from .nca import NCADiagonal
from .relief import Relief, ReliefF
from .sbmlr import SBMLR
from .simba import GFlip, Simba
from .sqpfw import SQPFW
from .surf import SURF, MultiSURF

__all__ = [
    "EFW", "ERelief", "SVMRFE", "IM4E", "LHRelief", "Logo", "MDM", "MLKRDiagonal", "NCADiagonal",
    "SURF", "IRelief", "MulRel", "MultiSURF", "Relief", "ReliefF", "GFlip", "Simba", "SQPFW", "SBMLR",
    "BaseWeighter", "CONTINUOUS_TARGET_METHODS", "ZeroWeightsWarning", "check_class_neighbors", "feature_ranking",
    "is_continuous_target", "WEIGHTERS", "REGRESSION_WEIGHTERS", "SURVIVAL_METHODS", "is_survival_target",
    "make_survival_target",
]

#: the weighters that score a survival outcome (the Relief family, on the null Cox model's martingale residuals)
SURVIVAL_METHODS = ("Relief", "ReliefF", "SURF", "MultiSURF", "IRelief")

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

