"""Plot of the SQP-FW regularisation path (weights against theta, as in the paper's illustration)."""

import numpy as np

from ._common import _new_axes

__all__ = ["plot_sqpfw_path"]


def plot_sqpfw_path(path, ax=None, feature_names=None, log_theta=False, breakpoints=True):
    """Draw every feature weight against theta along an :class:`~knnweights.sqpfw.SQPFWPath`.

    Parameters
    ----------
    path : SQPFWPath
        From :meth:`knnweights.SQPFW.path`.
    ax : matplotlib Axes, optional
        Axes to draw on; default: the Axes of a new Figure, made without pyplot.
    feature_names : list of str, default=None
        Legend label of each feature; default ``"feature 0"``, ``"feature 1"``, ...
    log_theta : bool, default=False
        Logarithmic theta axis (breakpoint ``theta = 0`` is then dropped).
    breakpoints : bool, default=True
        Mark the breakpoints (active-set changes) with light vertical lines.

    Returns
    -------
    ax : matplotlib Axes
        The Axes drawn on (``ax.figure`` is its Figure).
    """
    ax = _new_axes(ax, (6, 4))
    T, W = np.asarray(path.thetas_), np.asarray(path.weights_)
    keep = T > 0 if log_theta else np.ones(T.size, bool)
    names = feature_names if feature_names is not None else [f"feature {j}" for j in range(W.shape[1])]
    for j in range(W.shape[1]):
        ax.plot(T[keep], W[keep, j], lw=1.5, label=names[j])
    if breakpoints:
        for t in np.unique(T[keep]):
            ax.axvline(t, color="0.85", lw=0.5, zorder=0)
    if log_theta:
        ax.set_xscale("log")
    ax.set_xlabel(r"regularisation parameter $\theta$")
    ax.set_ylabel("feature weight $w_j$")
    ax.set_title("SQP-FW regularisation path")
    if W.shape[1] <= 12:
        ax.legend(fontsize=7, loc="best")
    return ax
