"""Lmba (Li & Lu 2009): loss-margin based feature weighting (not implementable faithfully here).

Lmba is "Feature selection based on loss-margin of nearest neighbor classification"
(Y. Li and B.-L. Lu, Pattern Recognition 42:1914-1921, 2009).  What the material at
hand says about it:

- the EFW paper (Li, Gao & Chen) cites it as a feature *weighting* algorithm and
  combines it with Han & Yu's (2010) margin-based sample weighting as "VR-Lmba", with no
  formula;
- the MDM paper (Hocke & Martinetz) describes it in words: derived from LMNN, for
  every sample the neighbourhood spanned by its ``k`` same-class neighbours is to be
  cleared "plus some margin" of differently labelled samples by adapting the weights;
- the paper's abstract: a feature selection criterion based on low-loss
  nearest-neighbour classification, an algorithm that optimises the margin of
  nearest-neighbour classification by minimising its loss function, with an analysis
  based on energy-based models.

None of these fixes the method: the loss function (hinge as in LMNN, or another of
the energy-based losses), whether a pull term on the target neighbours enters and with
what trade-off constant, the size of the margin, the distance (weighted L1 or squared
Euclidean), the constraint or normalisation of ``w`` (``w >= 0``, ``||w|| = 1``), how
the target neighbours are chosen and whether they are re-estimated, and the optimiser
with its step size and stopping rule.  The paper itself is not available offline.  A
diagonal-LMNN guess would be a stand-in, which this library does not ship: ``fit``
raises ``NotImplementedError`` with this reason.
"""

import numbers

from sklearn.utils._param_validation import Interval

from ._base import BaseWeighter

__all__ = ["Lmba", "LMBA_NOT_IMPLEMENTED_REASON"]

LMBA_NOT_IMPLEMENTED_REASON = (
    "Lmba (Li & Lu 2009, 'Feature selection based on loss-margin of nearest neighbor classification', "
    "Pattern Recognition 42:1914-1921) cannot be implemented faithfully from the material available: the "
    "papers that cite it (EFW, MDM) give only a verbal description (LMNN-like: clear each sample's k-neighbourhood "
    "of differently labelled samples plus a margin, by adapting feature weights) and the paper's text is not "
    "available. Missing: the loss function, the pull/push trade-off and margin constants, the distance (L1 or "
    "squared Euclidean), the constraint/normalisation of w, the choice and re-estimation of target neighbours, "
    "and the optimiser (step size, stopping rule). Use NCADiagonal, Logo or SQPFW instead, or add Lmba from the "
    "paper's equations."
)


class Lmba(BaseWeighter):
    """Lmba: loss-margin based feature weighting (Li & Lu 2009) -- not implemented.

    ``fit`` validates its input and then raises ``NotImplementedError``: the method's
    loss, constraints and optimiser are not recoverable from the papers at hand (see
    the module docstring and ``LMBA_NOT_IMPLEMENTED_REASON``).  The class exists so that
    the name of the API contract is importable and tools can report the reason.

    Parameters
    ----------
    n_neighbors : int, default=1
        Number of same-class target neighbours ``k`` (the one parameter every
        description agrees on).

    References
    ----------
    Y. Li and B.-L. Lu, "Feature selection based on loss-margin of nearest neighbor
    classification", Pattern Recognition 42:1914-1921, 2009.
    """

    _metric = "manhattan"
    _parameter_constraints = {"n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")]}

    def __init__(self, n_neighbors=1):
        self.n_neighbors = n_neighbors

    def _fit(self, X, y):
        raise NotImplementedError(LMBA_NOT_IMPLEMENTED_REASON)
