"""Shared plotting helpers: a pyplot-free Figure, the common finish (title, legend, PNG), and legend labels
that say when a line hides another."""

import numpy as np

from ..utils import fill_docstring

#: the parameters and the Returns section that every plot documents alike: ``{axes_params}`` and
#: ``{axes_returns}`` in a docstring
axes_doc = fill_docstring(
    axes_params="""ax : matplotlib Axes, optional
    Axes to draw on (e.g. one panel of a larger figure); default: the Axes of a
    new Figure, made without pyplot.
title : str, optional
    Title of the Axes.
path : str or path-like, optional
    Save the figure there as PNG.""",
    axes_returns="""Returns
-------
ax : matplotlib Axes
    The Axes drawn on (``ax.figure`` is its Figure).""")


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    from matplotlib.figure import Figure  # optional: matplotlib

    return Figure(figsize=figsize).subplots()


def _finish(ax, title, path, legend=True, outside=False, logx=False, xlabel=None, ylabel=None, grid=None):
    """The common finish of a plot: log x axis, axis labels, grid (``"both"``, ``"x"``, ``"y"``), title,
    legend (inside or right of the Axes), PNG at ``path``; returns ``ax``."""
    if logx:
        ax.set_xscale("log")
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if grid is not None:
        ax.grid(True, axis=grid, alpha=0.3)
    if title:
        ax.set_title(title)
    if legend and ax.get_legend_handles_labels()[0]:
        if outside:
            ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
        else:
            ax.legend(fontsize="small")
    if path is not None:
        ax.figure.savefig(path, dpi=120, bbox_inches="tight")
    return ax


def _coinciding_labels(names, xs, ys):
    """Legend labels that say when a line lies on an earlier one (it would be hidden otherwise).

    Returns ``(labels, dashed)``: ``"B (same as A)"`` for a line whose points equal (to
    1e-9) those of the earlier line ``A``, and a flag to draw it dashed so both show.
    """
    labels, dashed = [], []
    for i, name in enumerate(names):
        same = None
        xi, yi = np.asarray(xs[i], float), np.asarray(ys[i], float)
        for j in range(i):
            xj, yj = np.asarray(xs[j], float), np.asarray(ys[j], float)
            if xi.shape == xj.shape and np.allclose(xi, xj) and np.allclose(yi, yj, rtol=1e-9, atol=1e-9,
                                                                              equal_nan=True):
                same = names[j]
                break
        dashed.append(same is not None)
        labels.append(f"{name} (same as {same})" if same is not None and name else name)
    return labels, dashed
