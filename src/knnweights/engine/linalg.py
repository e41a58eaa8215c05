"""The BLAS thread policy: small dense algebra on one thread, large products on the threads in force.

Small solves (least squares, factorisations of a few hundred columns) are dominated by
thread start-up and synchronisation when BLAS uses several threads.  Every method's small
solves run inside :func:`single_thread_blas`; a product large enough to pay for threads runs
under :func:`blas_threads_for_work`, which picks one thread or several by its size.
"""

import contextlib
import sys
import threading

from threadpoolctl import ThreadpoolController

_state = threading.local()
_controller = {"n_modules": -1, "ctl": None}


def threadpool_controller():
    """One :class:`threadpoolctl.ThreadpoolController`, rebuilt only when new modules were imported.

    Building a controller scans every loaded shared library, which a method entering
    :func:`single_thread_blas` once per inner solve cannot afford each time.  A native
    library is loaded by an import, so the scan is repeated when ``sys.modules`` has grown
    since the last one.

    Returns
    -------
    threadpoolctl.ThreadpoolController
        The controller of the libraries loaded now.
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
        with threadpool_controller().limit(limits=1, user_api="blas"):
            yield
    finally:
        _state.depth = 0


def blas_thread_count():
    """The number of BLAS threads in force now (at least 1).

    Returns
    -------
    n_threads : int
        The largest thread count among the loaded BLAS libraries, or 1.
    """
    info = threadpool_controller().select(user_api="blas").info()
    return max([1] + [int(lib["num_threads"]) for lib in info])


@contextlib.contextmanager
def blas_threads_for_work(work, threshold, threads=None):
    """BLAS on one thread when ``work`` (multiply-adds) is below ``threshold``, else on ``threads``.

    ``threads=None`` keeps the count in force for large work.  Use it for products whose
    threaded BLAS kernels split the output, not the sums (``dgemm``, ``dsyrk``): their result
    is then the same on any thread count.

    Parameters
    ----------
    work : float
        Size of the product inside the block, in multiply-adds.
    threshold : float
        Work below which threading costs more than it saves, so BLAS runs on one thread.
    threads : int, default=None
        BLAS threads for work at or above ``threshold`` (at least 1); ``None`` keeps the
        count in force.

    Yields
    ------
    None
        Control to the body of the ``with`` block, under the chosen thread limit.
    """
    if work < threshold:
        with single_thread_blas():
            yield
    elif threads is None:
        yield
    else:
        with threadpool_controller().limit(limits=max(int(threads), 1), user_api="blas"):
            yield
