"""EFW, EFWWD and E-Relief (Li, Gao & Chen) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["EFW", "ERelief"]


class EFW(BaseWeighter):
    """EFW: ensemble feature weighting with diversity. Not implemented yet."""

    def __init__(self, n_estimators=5, subsample=0.9, gamma=0.001, random_state=None):
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.gamma = gamma
        self.random_state = random_state

    def _fit(self, X, y):
        raise NotImplementedError("EFW is not implemented yet; its paper-faithful version is being written.")


class ERelief(BaseWeighter):
    """E-Relief: mean Relief weights over subsamples. Not implemented yet."""

    def __init__(self, n_estimators=5, subsample=0.9, random_state=None):
        self.n_estimators = n_estimators
        self.subsample = subsample
        self.random_state = random_state

    def _fit(self, X, y):
        raise NotImplementedError("ERelief is not implemented yet; its paper-faithful version is being written.")
