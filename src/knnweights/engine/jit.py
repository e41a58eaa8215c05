"""The decorator of every compiled kernel, and the threads of the large calls.

:func:`njit` is numba's ``njit`` with one specialisation per argument type.  Inside compiled code
numba types an integer or boolean constant argument as a literal (``Literal[int](0)``) and compiles
the callee once more for it, so a helper called with ``0`` in one place and a variable in another
is compiled twice; and it types a ``prange`` loop's index as ``uint64`` where ``range`` gives
``int64``, so a helper called with the index from a ``prange`` loop and from a ``range`` loop is
compiled twice too.  Kernels here never branch on a literal argument's value at typing time, and
no index reaches ``2**63``, so :func:`njit` resolves calls from compiled code on the plain types,
``uint64`` scalars as ``int64``: each helper is compiled once per layout and dtype, which shortens
the first call of a method on a fresh install.  The generated code
computes the same values (no ``fastmath``, so constant folding cannot change a floating-point
result).

:func:`size_dispatch` runs a kernel's task loop on threads when a call is large.  A kernel written
for it takes two last arguments ``part, parts`` and runs the tasks ``task_range(n, part, parts)``
of its loop, one contiguous share of ``range(n)``.  A small call runs ``kernel(*args, 0, 1)``, every
task on the calling thread; a large one splits the tasks into a few parts per thread and runs them
on a pool of threads (the kernels release the GIL).  numba compiles the kernel once, serially: a
``parallel=True`` twin (numba's parfor passes and the outlined task function) cost about as much
compilation again on every first fit that was large enough to use it.  Every task of a kernel
writes its own output elements, in a fixed order, and no value is reduced across tasks except
integer counts (summed by ``combine``), so the parts give the bits of the one-part call.

Most kernels compile through numba's plain pipeline.  A few (``task_pipeline=True``) compile
through its parallel pipeline with every transformation switched off (:data:`TASK_PIPELINE`),
which makes no parfor of them (they have no ``prange``) but whose lowering gives the loops that
insert into the neighbour lists through array arguments (:func:`select_hits_misses`) much faster
code than the plain pipeline's, for the same arithmetic in the same order.  Its passes cost
compilation on every kernel given to it, so only the kernels it speeds up take it (the per-kernel
comparison is in ``benchmarks/first_fits.md``).  That pipeline would make a parfor (a threaded
loop, whose reductions change the order of a sum) of an array reduction (``a.sum()``,
``a.min()``) or a slice assignment (``a[:] = 0``), so those kernels write them as loops
(``tests/test_jit.py`` checks every compiled kernel).

Allocation.  numba compiles ``np.empty`` once for every combination of shape and dtype argument
types it meets (``n`` or ``(n,)``, ``np.float64`` or an omitted dtype or ``X.dtype``), and
``np.zeros`` / ``np.full`` / ``np.ones`` each add their own compilations on top.  Kernels therefore
allocate with ``np.empty(n, np.float64)`` / ``np.empty((r, c), np.int64)`` (an int or a pair, the
dtype a NumPy scalar class) and fill through :func:`full_1d` / :func:`full_2d`, which are inlined
loops over such an ``np.empty``: a first fit compiles one allocation variant per dtype and rank
instead of one per spelling.
"""

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba.core import config, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import register_pass
from numba.core.typed_passes import ParforPass

__all__ = ["njit", "size_dispatch", "array_work", "SizedKernel", "SERIAL_WORK", "PARTS_PER_THREAD", "TASK_PIPELINE",
           "task_range",
           "full_1d", "full_2d"]

#: calls of a :class:`SizedKernel` counted below this many element operations run on the calling
#: thread (as do all calls when numba runs one thread)
SERIAL_WORK = 4_000_000

#: a large call's parts per thread: rows of unequal cost (pruned searches, sorted scans) even out
PARTS_PER_THREAD = 4

#: numba's ``parallel`` options of the kernels of :func:`size_dispatch`: its parallel pipeline with
#: no transformation (the kernels hold no ``prange`` and no array expression is rewritten, so no
#: parfor is made and the arithmetic is the source's, in its order)
TASK_PIPELINE = {"prange": True, "comprehension": False, "reduction": False, "inplace_binop": False,
                 "setitem": False, "numpy": False, "stencil": False, "fusion": False}



@register_pass(mutates_CFG=True, analysis_only=False)
class _TaskParforPass(ParforPass):
    """numba's parfor pass without its warning that no parfor was made: for a kernel of
    :data:`TASK_PIPELINE` that is the intent.  A filter in :mod:`warnings` would not do: callers
    that record warnings (``simplefilter("always")``) would see it on every compilation, so what
    they report would depend on the state of the cache."""

    _name = "knnweights_task_parfor_pass"

    def run_pass(self, state):
        quiet = config.DISABLE_PERFORMANCE_WARNINGS  # read while compiling, under numba's compiler lock
        config.DISABLE_PERFORMANCE_WARNINGS = True
        try:
            return super().run_pass(state)
        finally:
            config.DISABLE_PERFORMANCE_WARNINGS = quiet


class _TaskCompiler(CompilerBase):
    """numba's nopython pipeline with :class:`_TaskParforPass` in place of its parfor pass."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.passes = [(_TaskParforPass if cls is ParforPass else cls, desc) for cls, desc in pm.passes]
        pm.finalize()
        return [pm]


def _plain_type(t):
    t = types.unliteral(t)
    return types.int64 if t == types.uint64 else t


def _plain(args, kws):
    return tuple(_plain_type(a) for a in args), {k: _plain_type(v) for k, v in kws.items()}


def njit(func=None, task_pipeline=False, **options):
    """``numba.njit(**options)`` whose calls from other compiled functions use non-literal types.

    Parameters
    ----------
    func : callable, optional
        The Python function to compile (the decorator used without parentheses).
    task_pipeline : bool, default=False
        Compile through numba's parallel pipeline with every transformation off
        (:data:`TASK_PIPELINE`; see the module docstring): for the kernels whose code it
        makes faster.
    **options
        Passed to :func:`numba.njit` (``cache``, ``nogil``, ``parallel``, ``inline``...).

    Returns
    -------
    numba.core.registry.CPUDispatcher or callable
        The dispatcher, or a decorator that makes one.
    """

    if task_pipeline:
        options["parallel"] = TASK_PIPELINE
        options["pipeline_class"] = _TaskCompiler

    def wrap(f):
        dispatcher = numba.njit(**options)(f)
        if not hasattr(dispatcher, "get_call_template"):  # NUMBA_DISABLE_JIT=1: the plain function
            return dispatcher
        resolve = dispatcher.get_call_template

        def get_call_template(args, kws):
            return resolve(*_plain(args, kws))

        dispatcher.get_call_template = get_call_template
        return dispatcher

    return wrap if func is None else wrap(func)


_pools = {}
_pools_lock = threading.Lock()


def _forget_pools():
    """In a forked child: the parent's pool threads do not exist there, so make new pools."""
    global _pools_lock
    _pools.clear()
    _pools_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def _pool(threads):
    """The thread pool of ``threads`` workers (one per thread count, made on first use)."""
    with _pools_lock:
        if threads not in _pools:
            _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix="knnweights")
        return _pools[threads]


@njit(inline="always", cache=True, nogil=True)
def task_range(n, part, parts):  # pragma: no cover - compiled
    """Part ``part`` of ``parts`` of ``range(n)``: the tasks a :class:`SizedKernel` call runs.

    Parameters
    ----------
    n : int
        The kernel's tasks.
    part, parts : int
        Which share, of how many (``0, 1``: all of them).

    Returns
    -------
    range
        ``range(n * part // parts, n * (part + 1) // parts)``.
    """
    return range(n * part // parts, n * (part + 1) // parts)


class SizedKernel:
    """A compiled kernel whose large calls run its tasks in parts on a pool of threads.

    Parameters
    ----------
    kernel : numba.core.registry.CPUDispatcher
        ``kernel(*args, part, parts)``: runs its tasks ``task_range(n, part, parts)`` and returns
        its output arguments (or a count when ``combine`` is given).
    work : callable
        ``work(*args)``: the call's element operations, compared with :data:`SERIAL_WORK`.
    combine : callable, optional
        Combines the parts' returns (e.g. ``sum`` of counts); by default the first part's return,
        the output arguments every part returns.

    Attributes
    ----------
    kernel : numba.core.registry.CPUDispatcher
        The compiled kernel.
    """

    def __init__(self, kernel, work, combine=None):
        self.kernel = kernel
        self.work = work
        self.combine = combine
        f = getattr(kernel, "py_func", kernel)  # a plain function under NUMBA_DISABLE_JIT=1
        self.__name__ = f.__name__
        self.__qualname__ = f.__qualname__
        self.__doc__ = f.__doc__
        self.__module__ = f.__module__

    def serial(self, *args):
        """Every task on the calling thread."""
        return self.kernel(*args, 0, 1)

    def threaded(self, *args, threads=None):
        """The tasks in :data:`PARTS_PER_THREAD` parts per thread on ``threads`` (numba's count by
        default) threads of the pool, whatever the call's size."""
        threads = threads or numba.get_num_threads()
        parts = PARTS_PER_THREAD * threads
        results = list(_pool(threads).map(lambda part: self.kernel(*args, part, parts), range(parts)))
        return self.combine(results) if self.combine is not None else results[0]

    def __call__(self, *args):
        threads = numba.get_num_threads()
        if threads > 1 and self.work(*args) >= SERIAL_WORK:
            return self.threaded(*args, threads=threads)
        return self.serial(*args)

    def __repr__(self):
        return f"<SizedKernel {self.__module__}.{self.__qualname__}>"


def size_dispatch(kernel, work, combine=None):
    """Wrap a kernel as a :class:`SizedKernel` (see the module docstring).

    Parameters
    ----------
    kernel : numba.core.registry.CPUDispatcher
        The kernel, compiled serially, with the last arguments ``part, parts``.
    work : callable
        ``work(*args)``: element operations of a call with these arguments.
    combine : callable, optional
        Combines the parts' returns (default: the first part's).

    Returns
    -------
    SizedKernel
        Callable as ``kernel`` without ``part, parts``.
    """
    return SizedKernel(kernel, work, combine)


def array_work(*args):
    """The elements of a call's array arguments: the work estimate of a kernel that touches each a
    bounded number of times.

    Parameters
    ----------
    *args
        A kernel call's arguments; those that are not arrays count nothing.

    Returns
    -------
    int
        The summed sizes of the array arguments.
    """
    return sum(a.size for a in args if isinstance(a, np.ndarray))


@njit(inline="always", cache=True, nogil=True)
def full_1d(n, value, dtype):  # pragma: no cover - compiled
    """``np.full(n, value, dtype)`` for compiled code, through ``np.empty(n, dtype)`` (see the
    module docstring).

    Parameters
    ----------
    n : int
        Length.
    value : scalar
        Fill value (cast to ``dtype``).
    dtype : type
        A NumPy scalar class (``np.float64``, ``np.int64``, ``np.bool_``).

    Returns
    -------
    ndarray of shape (n,)
    """
    a = np.empty(n, dtype)
    for i in range(n):
        a[i] = value
    return a


@njit(inline="always", cache=True, nogil=True)
def full_2d(r, c, value, dtype):  # pragma: no cover - compiled
    """``np.full((r, c), value, dtype)`` for compiled code, through ``np.empty((r, c), dtype)``.

    Parameters
    ----------
    r, c : int
        Shape.
    value : scalar
        Fill value (cast to ``dtype``).
    dtype : type
        A NumPy scalar class.

    Returns
    -------
    ndarray of shape (r, c)
    """
    a = np.empty((r, c), dtype)
    for i in range(r):
        for j in range(c):
            a[i, j] = value
    return a
