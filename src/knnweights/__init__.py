"""knnweights: feature weighting for nearest-neighbour classification.

Every method of the field in one scikit-learn API (``fit``, ``feature_importances_``,
``transform``), on one shared, compiled neighbour engine (:mod:`knnweights.neighbors`).
"""

from ._config import config_context, get_config, set_config
from .efw import EFW, ERelief
from .efw_baselines import SVMRFE
from .im4e import IM4E
from .lhrelief import LHRelief
from .lmba import Lmba
from .logo import Logo
from .mdm import MDM
from .nca import NCADiagonal
from .relief import SURF, IRelief, MulRel, MultiSURF, Relief, ReliefF
from .simba import GFlip, Simba
from .sqpfw import SQPFW

__version__ = "0.1.0"

#: name -> class of every weighter, so tools can loop over them
WEIGHTERS = {
    cls.__name__: cls
    for cls in (
        IM4E, LHRelief, SQPFW, MDM, EFW, ERelief,
        Relief, ReliefF, SURF, MultiSURF, IRelief, Simba, GFlip, MulRel, Logo, NCADiagonal, Lmba, SVMRFE,
    )
}

__all__ = ["WEIGHTERS", "get_config", "set_config", "config_context", "__version__", *WEIGHTERS]
