"""The compiled kernels that the method files (:mod:`knnweights.weighters`) call directly.

Each kernel lives in the module of its family; this module only gathers the ones a method's own
pass needs, under one name (``from knnweights.engine import kernels``).  Importing it compiles
nothing: numba compiles (or loads from its cache) a kernel at its first call.

- :mod:`._kernels`: pairwise distances (``L1``, ``L2SQ``, ``TIE_ULPS``, ``pairwise_phi``...);
- :mod:`._kernels_select`: the ``k`` nearest hits / misses of each row;
- :mod:`._kernels_soft`: soft (kernel) neighbour coefficients;
- :mod:`._kernels_radius`: SURF / MultiSURF radius neighbourhoods, ``fold_pairs``;
- :mod:`._kernels_simba`: Simba's pass and G-flip's margins;
- :mod:`._kernels_nca`: NCA's gradient coefficients.
"""

from ._kernels import L1, L2SQ, TIE_ULPS, coef_phi_rows, index_phi_dot, index_phi_rows, pairwise_phi, pairwise_phi_sym
from ._kernels_nca import nca_coefficients, nca_shifted_logits
from ._kernels_radius import fold_pairs, radius_coefficients, radius_counts
from ._kernels_select import select_hits_misses, select_neighbors
from ._kernels_simba import (
    gflip_flip,
    gflip_margins,
    gflip_scan_candidates,
    gflip_sort_rows,
    gflip_sorted_margins,
    simba_pass,
)
from ._kernels_soft import soft_coefficients

__all__ = ["L1", "L2SQ", "TIE_ULPS", "pairwise_phi", "pairwise_phi_sym", "coef_phi_rows", "index_phi_rows",
           "index_phi_dot", "select_neighbors", "select_hits_misses", "soft_coefficients", "radius_counts",
           "radius_coefficients", "fold_pairs", "simba_pass", "gflip_margins", "gflip_sorted_margins",
           "gflip_scan_candidates", "gflip_flip", "gflip_sort_rows", "nca_shifted_logits", "nca_coefficients"]
