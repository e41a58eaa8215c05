"""The progress bar of ``knnweights reproduce``: :class:`knnweights.utils.Progress`."""

from ..utils import Progress, format_seconds

__all__ = ["Progress", "format_seconds"]
