"""The parameter docs that the numeric functions of the engine, the solvers and the weighters share."""

from ..utils import fill_docstring

__all__ = ["data_doc"]

_HEAD = "Parameters\n----------\n"
_SAMPLES = "X : ndarray of shape (n, d)\n    The samples.\n"
_CLASS_CODES = " : ndarray of int, shape (n,)\n    Integer class codes."
_DIFF = "data : DiffData, PlainDiff or ByteDiff\n    The ``diff`` data of the samples.\n"

#: the opening of a Parameters section: ``{X_codes}`` / ``{X_y}`` (samples and their integer class codes,
#: named ``codes`` / ``y``), ``{diff_codes}`` / ``{diff_target}`` (a Relief score's ``diff`` data, with
#: the class codes / a continuous target); ``{block_params}``: the memory parameters of a generator of
#: distance blocks
data_doc = fill_docstring(
    X_codes=_HEAD + _SAMPLES + "codes" + _CLASS_CODES,
    X_y=_HEAD + _SAMPLES + "y" + _CLASS_CODES,
    diff_codes=_HEAD + _DIFF + "codes : ndarray of int, shape (n_samples,)\n    Class codes.",
    diff_target=_HEAD + _DIFF + "y : ndarray of shape (n_samples,)\n    The continuous target.",
    block_params="""working_memory : float, default=None
    MiB budget for one block (times ``n_arrays``); ``None`` takes the global configuration.
n_arrays : int, default=1
    The number of block-sized arrays the caller builds from each block.""")
