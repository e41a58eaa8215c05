"""NCA with a diagonal metric (Goldberger et al. 2004) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["NCADiagonal"]


class NCADiagonal(BaseWeighter):
    """NCA with a diagonal metric (Goldberger et al. 2004).

    Not implemented yet: fit raises NotImplementedError.
    """

    _metric = "sqeuclidean"

    def __init__(self, max_iter=100, tol=1e-5, random_state=None):
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit(self, X, y):
        raise NotImplementedError("NCADiagonal is not implemented yet; its paper-faithful version is being written.")
