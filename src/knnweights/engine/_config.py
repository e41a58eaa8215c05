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

    Returns
    -------
    config : dict
        The four keys above and their values in this thread; changing it changes nothing
        (use :func:`set_config` or :func:`config_context`).
    """
    return dict(_cfg())


def set_config(working_memory=None, device=None, n_jobs=None, scheduler=None):
    """Set the global configuration (see :func:`get_config`).

    The setting holds for the calling thread; ``None`` leaves a key unchanged.

    Parameters
    ----------
    working_memory : float, default=None
        MiB budget for one block of pairwise distances (and the soft-neighbour probabilities
        built from it); larger blocks need fewer passes, smaller ones less memory. Positive.
    device : {"cpu", "cuda"}, default=None
        Where the distance kernels run; ``"cuda"`` needs the ``gpu`` extra and a GPU.
    n_jobs : int, default=None
        Threads of the compiled kernels of the byte (genotype) path; ``-1`` all cores,
        ``0`` resets to numba's default.
    scheduler : str, default=None
        Address of a running ``dask.distributed`` scheduler on whose workers the genotype
        path's feature blocks run; ``""`` resets to local execution.
    """
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
    """Temporarily change the configuration: ``with config_context(working_memory=64): ...``.

    The previous configuration is restored on leaving the block, even on an exception.

    Parameters
    ----------
    **kwargs : dict
        The keys of :func:`set_config` (``working_memory``, ``device``, ``n_jobs``,
        ``scheduler``) and their values inside the block.

    Yields
    ------
    None
        Control to the body of the ``with`` block.
    """
    old = get_config()
    set_config(**kwargs)
    try:
        yield
    finally:
        _cfg().update(old)
