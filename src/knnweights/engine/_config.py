"""Global configuration: memory budget for distance blocks and the compute device."""

import contextlib
import threading

_DEFAULTS = {"working_memory": 512, "device": "cpu"}
_local = threading.local()


def _cfg():
    if not hasattr(_local, "cfg"):
        _local.cfg = dict(_DEFAULTS)
    return _local.cfg


def get_config():
    """Return a copy of the current configuration.

    Keys: ``working_memory`` (MiB budget for one block of pairwise distances and the
    soft-neighbour probabilities built from it) and ``device`` (``"cpu"``, or
    ``"cuda"`` when the ``gpu`` extra is installed).
    """
    return dict(_cfg())


def set_config(working_memory=None, device=None):
    """Set the global configuration (see :func:`get_config`)."""
    cfg = _cfg()
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
