"""Global configuration: memory budget for distance blocks and the compute device."""

import contextlib
import numbers
import threading

_DEFAULTS = {"working_memory": 512, "device": "cpu", "n_jobs": None, "scheduler": None}
_local = threading.local()


def _cfg():
    if not hasattr(_local, "cfg"):
        _local.cfg = dict(_DEFAULTS)
    return _local.cfg


def get_config():
    """Return a copy of the current configuration.

    Keys: ``working_memory`` (MiB budget for one block of pairwise distances and the
    soft-neighbour probabilities built from it) and ``device`` (``"cpu"``, or
    ``"cuda"`` when the ``gpu`` extra is installed); for the byte (genotype) path of the
    Relief family (:mod:`knnweights.engine.genotypes`), ``n_jobs`` (threads of its compiled
    kernels; ``None``: numba's default, all cores) and ``scheduler`` (the address of a
    running ``dask.distributed`` scheduler: the feature blocks run on its workers).
    """
    return dict(_cfg())


def set_config(working_memory=None, device=None, n_jobs=None, scheduler=None):
    """Set the global configuration (see :func:`get_config`); ``None`` leaves a key unchanged
    (``scheduler=""`` / ``n_jobs=0`` reset those to the default)."""
    cfg = _cfg()
    if n_jobs is not None:
        if not isinstance(n_jobs, numbers.Integral) or isinstance(n_jobs, bool):
            raise ValueError(f"n_jobs must be an int (-1: all cores, 0: the default), got {n_jobs!r}")
        cfg["n_jobs"] = None if n_jobs == 0 else int(n_jobs)
    if scheduler is not None:
        cfg["scheduler"] = str(scheduler) or None
    if working_memory is not None:
        if not (isinstance(working_memory, (int, float)) and working_memory > 0):
            raise ValueError(f"working_memory must be a positive number of MiB, got {working_memory!r}")
        cfg["working_memory"] = working_memory
    if device is not None:
        if device not in ("cpu", "cuda"):
            raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
        cfg["device"] = device


@contextlib.contextmanager
def config_context(**kwargs):
    """Temporarily change the configuration: ``with config_context(working_memory=64): ...``."""
    old = get_config()
    set_config(**kwargs)
    try:
        yield
    finally:
        _cfg().update(old)
