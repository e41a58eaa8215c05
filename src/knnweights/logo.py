"""LOGO (Sun, Todorovic & Goodison 2010) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["Logo"]


class Logo(BaseWeighter):
    """LOGO (Sun, Todorovic & Goodison 2010).

    Not implemented yet: fit raises NotImplementedError.
    """

    _metric = "manhattan"

    def __init__(self, sigma=1.0, lambda_=1.0):
        self.sigma = sigma
        self.lambda_ = lambda_

    def _fit(self, X, y):
        raise NotImplementedError("Logo is not implemented yet; its paper-faithful version is being written.")
