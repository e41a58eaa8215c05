"""I-M4E (Bei & Hong) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["IM4E"]


class IM4E(BaseWeighter):
    """I-M4E (Bei & Hong).

    Not implemented yet: fit raises NotImplementedError.
    """

    _metric = "manhattan"

    def __init__(self, sigma=1.0, lambda_=None, max_iter=100, tol=1e-6, random_state=None):
        self.sigma = sigma
        self.lambda_ = lambda_
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def _fit(self, X, y):
        raise NotImplementedError("IM4E is not implemented yet; its paper-faithful version is being written.")
