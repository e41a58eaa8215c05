"""The decorator of every compiled kernel: numba's ``njit``, one specialisation per argument type.

Inside compiled code numba types an integer or boolean constant argument as a literal
(``Literal[int](0)``) and compiles the callee once more for it, so a helper called with ``0``
in one place and a variable in another is compiled twice.  Kernels here never branch on a
literal argument's value at typing time, so :func:`njit` resolves calls from compiled code on
the plain types: each helper is compiled once per layout and dtype, which shortens the first
call of a method on a fresh install.  The generated code computes the same values (no
``fastmath``, so constant folding cannot change a floating-point result).
"""

import numba
from numba.core import types

__all__ = ["njit"]


def _plain(args, kws):
    return tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()}


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
        resolve = dispatcher.get_call_template

        def get_call_template(args, kws):
            return resolve(*_plain(args, kws))

        dispatcher.get_call_template = get_call_template
        return dispatcher

    return wrap if func is None else wrap(func)
