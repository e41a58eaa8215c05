"""The shared neighbour engine: every O(n^2 d) computation of the library lives here.

- :mod:`knnweights.engine.neighbors`: weighted distances in memory-bounded row blocks,
  hit/miss selection, soft (kernel) neighbour probabilities in log space, margin vectors;
- :mod:`knnweights.engine.kernels`: the compiled (numba) kernels behind them that the method
  files also call directly for their own passes (Simba, G-flip, Relief, SURF), each from the
  module of its family (``_kernels``: pairwise distances, ``_kernels_select``, ``_kernels_soft``,
  ``_kernels_radius``, ``_kernels_simba``, ``_kernels_nca``);
- ``mixed_kernels`` (the module ``knnweights.engine._kernels_mixed``): the Relief family's
  ``diff`` on mixed data (discrete, continuous and missing values) and its compiled kernels;
- ``pair_kernels`` (the module ``knnweights.engine._kernels_pairs``): the compiled sums over
  neighbour pairs behind the p-values of :mod:`knnweights.significance`;
- :mod:`knnweights.engine.genotypes`: Relief's ``diff`` on byte (genotype) matrices, in feature
  blocks;
- :mod:`knnweights.engine.incremental`: nearest hits and misses under weights that move a little
  between calls;
- ``knnweights.engine._torch_backend``: the same blocks on a GPU (``set_config(device=...)``);
- ``knnweights.engine._dask``: the library's one way to reach ``dask.distributed`` (a scheduler's
  address, a client, joblib on it, feature ranges as tasks);
- :mod:`knnweights.engine.linalg`: small dense solves under one BLAS thread;
- ``set_config`` / ``get_config`` / ``config_context``: the engine's settings (device,
  working memory, threads).

Method files (:mod:`knnweights.weighters`) hold only their own update and call these.
"""

from . import _kernels_mixed as mixed_kernels
from . import _kernels_pairs as pair_kernels
from . import kernels
from ._config import config_context, get_config, set_config
from .linalg import blas_thread_count, blas_threads_for_work, single_thread_blas

__all__ = ["config_context", "get_config", "set_config", "single_thread_blas", "blas_thread_count",
           "blas_threads_for_work", "kernels", "mixed_kernels",
           "pair_kernels"]
