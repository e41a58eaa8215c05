"""Feature weighters, one module per method family; each holds only its own update and
builds on :mod:`knnweights.engine` (distances, neighbours, margins) and
:class:`knnweights.weighters._base.BaseWeighter` (validation, the transform contract)."""

from .efw import EFW, ERelief
from .efw_baselines import SVMRFE
from .im4e import IM4E
from .lhrelief import LHRelief
from .logo import Logo
from .mdm import MDM
from .mlkr import MLKRDiagonal
from .nca import NCADiagonal
from .relief import SURF, IRelief, MulRel, MultiSURF, Relief, ReliefF
from .sbmlr import SBMLR
from .simba import GFlip, Simba
from .sqpfw import SQPFW

__all__ = [
    "EFW", "ERelief", "SVMRFE", "IM4E", "LHRelief", "Logo", "MDM", "MLKRDiagonal", "NCADiagonal",
    "SURF", "IRelief", "MulRel", "MultiSURF", "Relief", "ReliefF", "GFlip", "Simba", "SQPFW", "SBMLR",
]
