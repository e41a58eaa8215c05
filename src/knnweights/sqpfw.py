"""SQP-FW (Takeuchi & Sugiyama) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["SQPFW"]


class SQPFW(BaseWeighter):
    """SQP-FW (Takeuchi & Sugiyama).

    Not implemented yet: fit raises NotImplementedError.
    """

    _metric = "sqeuclidean"

    def __init__(self, kappa=1, lambda_=1, theta=1.0, w_bar=None, working_set=None):
        self.kappa = kappa
        self.lambda_ = lambda_
        self.theta = theta
        self.w_bar = w_bar
        self.working_set = working_set

    def _fit(self, X, y):
        raise NotImplementedError("SQPFW is not implemented yet; its paper-faithful version is being written.")
