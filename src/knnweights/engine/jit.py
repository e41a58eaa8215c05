"""The decorator of every compiled kernel, and the serial / parallel choice of the threaded ones.

:func:`njit` is numba's ``njit`` with one specialisation per argument type.  Inside compiled code
numba types an integer or boolean constant argument as a literal (``Literal[int](0)``) and compiles
the callee once more for it, so a helper called with ``0`` in one place and a variable in another
is compiled twice; and it types a ``prange`` loop's index as ``uint64`` where ``range`` gives
``int64``, so a helper called with the index from a threaded kernel and from its serial twin is
compiled twice too.  Kernels here never branch on a literal argument's value at typing time, and
no index reaches ``2**63``, so :func:`njit` resolves calls from compiled code on the plain types,
``uint64`` scalars as ``int64``: each helper is compiled once per layout and dtype, which shortens
the first call of a method on a fresh install.  The generated code
computes the same values (no ``fastmath``, so constant folding cannot change a floating-point
result).

:func:`size_dispatch` pairs a ``parallel=True`` kernel with a serial compilation of the same source
and picks one per call from the call's work.  Compiling a kernel for threads (numba's parfor
passes and the outlined task function) costs several times its serial compilation, and on small
inputs the threads save less than they cost to wake, so a small call runs the serial compilation
and the threaded one is compiled only when a call is large enough to use it.  Every threaded
kernel of the library writes each output element from one task in a fixed order (no reduction
across tasks), so both compilations give the same bits.

Allocation.  numba compiles ``np.empty`` once for every combination of shape and dtype argument
types it meets (``n`` or ``(n,)``, ``np.float64`` or an omitted dtype or ``X.dtype``), and
``np.zeros`` / ``np.full`` / ``np.ones`` each add their own compilations on top.  Kernels therefore
allocate with ``np.empty(n, np.float64)`` / ``np.empty((r, c), np.int64)`` (an int or a pair, the
dtype a NumPy scalar class) and fill through :func:`full_1d` / :func:`full_2d`, which are inlined
loops over such an ``np.empty``: a first fit compiles one allocation variant per dtype and rank
instead of one per spelling.
"""

import types as pytypes

import numba
import numpy as np
from numba.core import types

__all__ = ["njit", "size_dispatch", "array_work", "SizedKernel", "SERIAL_WORK", "full_1d", "full_2d"]

#: calls of a :class:`SizedKernel` counted below this many element operations run its serial
#: compilation (as do all calls when numba runs one thread)
SERIAL_WORK = 4_000_000


def _plain_type(t):
    t = types.unliteral(t)
    return types.int64 if t == types.uint64 else t


def _plain(args, kws):
    return tuple(_plain_type(a) for a in args), {k: _plain_type(v) for k, v in kws.items()}


def njit(func=None, **options):
    """``numba.njit(**options)`` whose calls from other compiled functions use non-literal types.

    Parameters
    ----------
    func : callable, optional
        The Python function to compile (the decorator used without parentheses).
    **options
        Passed to :func:`numba.njit` (``cache``, ``nogil``, ``parallel``, ``inline``...).

    Returns
    -------
    numba.core.registry.CPUDispatcher or callable
        The dispatcher, or a decorator that makes one.
    """

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


def _renamed(f, suffix):
    """A copy of function ``f`` under another qualified name (numba names its cache files by it)."""
    g = pytypes.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f"{f.__qualname__}{suffix}"
    g.__module__ = f.__module__
    g.__doc__ = f.__doc__
    return g


class SizedKernel:
    """A threaded kernel and its serial compilation, chosen per call by the call's work.

    Parameters
    ----------
    kernel : numba.core.registry.CPUDispatcher
        A ``parallel=True`` dispatcher; compiled only when a call takes it.
    work : callable
        ``work(*args)``: the call's element operations, compared with :data:`SERIAL_WORK`.
    cache : bool, default=True
        Cache the serial compilation on disk (as the library's kernels do).

    Attributes
    ----------
    compiled : numba.core.registry.CPUDispatcher
        The threaded dispatcher (``kernel``).
    serial : numba.core.registry.CPUDispatcher
        The same source compiled without threads (``prange`` runs as ``range``).
    """

    def __init__(self, kernel, work, cache=True):
        self.compiled = kernel
        self.work = work
        f = getattr(kernel, "py_func", kernel)  # a plain function under NUMBA_DISABLE_JIT=1
        self.serial = njit(cache=cache, nogil=True)(_renamed(f, "_serial")) if f is not kernel else kernel
        self.__name__ = f.__name__
        self.__qualname__ = f.__qualname__
        self.__doc__ = f.__doc__
        self.__module__ = f.__module__

    def __call__(self, *args):
        if self.work(*args) >= SERIAL_WORK and numba.get_num_threads() > 1:
            return self.compiled(*args)
        return self.serial(*args)

    def __repr__(self):
        return f"<SizedKernel {self.__module__}.{self.__qualname__}>"


def size_dispatch(kernel, work, cache=True):
    """Wrap a ``parallel=True`` kernel as a :class:`SizedKernel` (see the module docstring).

    Parameters
    ----------
    kernel : numba.core.registry.CPUDispatcher
        The threaded kernel.
    work : callable
        ``work(*args)``: element operations of a call with these arguments.
    cache : bool, default=True
        Cache the serial compilation on disk.

    Returns
    -------
    SizedKernel
        Callable like ``kernel``.
    """
    return SizedKernel(kernel, work, cache)


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
