"""The library's warnings and errors, in one place (the bottom layer: it imports nothing of the package)."""

from sklearn.exceptions import ConvergenceWarning

__all__ = ["ZeroWeightsWarning", "NoPositiveWeightsWarning", "InvalidParameterError", "DataError", "SchedulerError",
           "UsageError"]


class ZeroWeightsWarning(UserWarning):
    """A fit ended with every feature weight 0.

    ``transform`` then gives all-zero data and a kNN on it predicts one class for every
    sample.  The usual causes: every feature of ``X`` is constant, or no feature separates
    the classes at the method's neighbourhood (noise features, or too few samples per class).
    """


class NoPositiveWeightsWarning(ConvergenceWarning):
    """I-M4E's eq. (9) is undefined: ``v`` has no positive entry (no feature has a positive margin sum)."""


class InvalidParameterError(ValueError, TypeError):
    """A constructor parameter has a type or value its estimator does not accept.

    Raised at ``fit``.  It is both a ``ValueError`` and a ``TypeError``, as scikit-learn's
    error of the same name, so that code catching either sees it.
    """


class DataError(ValueError):
    """A user's data file cannot be used; the message is one line naming the file and column."""


class SchedulerError(RuntimeError):
    """The dask scheduler cannot be reached or has no worker, or dask.distributed is not installed (one line)."""


class BytePathTooWide(ValueError):
    """A byte (genotype) matrix holds values that need more bit planes than the byte path takes.

    Internal: the Relief family catches it and scores a float copy instead.
    """


class UsageError(ValueError):
    """A bad command-line option value; printed as one line, exit status 2."""
