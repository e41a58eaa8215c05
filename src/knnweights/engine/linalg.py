"""Small dense linear algebra under one BLAS thread.

Small solves (least squares, factorisations of a few hundred columns) are dominated by
thread start-up and synchronisation when BLAS uses several threads: on a 2-core machine a
2000 x 40 ``lstsq`` takes 1.3 ms on one thread and 282 ms on two. Every method's small
solves run inside :func:`single_thread_blas`; the large matrix products of the engine keep
the default threading.
"""

import contextlib
import sys
import threading

from threadpoolctl import ThreadpoolController

_state = threading.local()
_controller = {"n_modules": -1, "ctl": None}


def _threadpool_controller():
    """One :class:`threadpoolctl.ThreadpoolController`, rebuilt only when new modules were imported.

    Building a controller scans every loaded shared library (~9 ms here); a method that
    enters :func:`single_thread_blas` once per inner solve paid that scan each time.  A
    native library is loaded by an import, so the scan is repeated when ``sys.modules``
    has grown since the last one.
    """
    n_modules = len(sys.modules)
    if _controller["ctl"] is None or _controller["n_modules"] != n_modules:
        _controller["ctl"] = ThreadpoolController()
        _controller["n_modules"] = n_modules
    return _controller["ctl"]


@contextlib.contextmanager
def single_thread_blas():
    """Context manager limiting BLAS (and OpenMP) to one thread; re-entrant and cheap when nested.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights.engine import single_thread_blas
    >>> with single_thread_blas():
    ...     x = np.linalg.lstsq(np.eye(3), np.ones(3), rcond=None)[0]
    >>> x.tolist()
    [1.0, 1.0, 1.0]
    """
    depth = getattr(_state, "depth", 0)
    if depth:
        _state.depth = depth + 1
        try:
            yield
        finally:
            _state.depth = depth
        return
    _state.depth = 1
    try:
        with _threadpool_controller().limit(limits=1, user_api="blas"):
            yield
    finally:
        _state.depth = 0
