"""Lmba (Li & Lu 2009) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["Lmba"]


class Lmba(BaseWeighter):
    """Lmba (Li & Lu 2009).

    Not implemented yet: fit raises NotImplementedError.
    """

    _metric = "manhattan"

    def __init__(self, n_neighbors=1):
        self.n_neighbors = n_neighbors

    def _fit(self, X, y):
        raise NotImplementedError("Lmba is not implemented yet; its paper-faithful version is being written.")
