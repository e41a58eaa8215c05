"""MDM (Hocke & Martinetz) (not yet implemented: being written)."""

from .base import BaseWeighter

__all__ = ["MDM"]


class MDM(BaseWeighter):
    """MDM (Hocke & Martinetz).

    Not implemented yet: fit raises NotImplementedError.
    """

    _metric = "sqeuclidean"

    def __init__(self, soft=True, C=1.0):
        self.soft = soft
        self.C = C

    def _fit(self, X, y):
        raise NotImplementedError("MDM is not implemented yet; its paper-faithful version is being written.")
