"""LH-RELIEF (Cai & Ng) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["LHRelief"]


class LHRelief(BaseWeighter):
    """LH-RELIEF (Cai & Ng).

    Not implemented yet: fit raises NotImplementedError.
    """

    _metric = "manhattan"

    def __init__(self, n_neighbors=5, max_iter=50, tol=1e-5):
        self.n_neighbors = n_neighbors
        self.max_iter = max_iter
        self.tol = tol

    def _fit(self, X, y):
        raise NotImplementedError("LHRelief is not implemented yet; its paper-faithful version is being written.")
