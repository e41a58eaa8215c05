"""Plots of a comparison on a user's data: weight profiles, pairwise differences, top-feature ranks.

Each function takes ``ax=None, title=None, path=None`` like the other plots of
:mod:`knnweights.plotting`, draws on a new pyplot-free Figure without ``ax``, returns
the Axes and saves a PNG when ``path`` is given.
"""

import numpy as np

from ._common import _finish, _new_axes, axes_doc

__all__ = ["plot_weight_profiles", "plot_pairwise_differences", "plot_top_feature_ranks"]


@axes_doc
def plot_weight_profiles(weights, ax=None, title=None, path=None, logx=True):
    """Each method's weights, sorted from the largest down and divided by the largest.

    Shows how many features carry weight: a steep profile is a short list of features,
    a flat one spreads the weight over many.

    Parameters
    ----------
    weights : dict
        Method name -> weights of shape (n_features,) (non-negative).
    {axes_params}
    logx : bool, default=True
        Logarithmic rank axis (for thousands of features).

    {axes_returns}
    """
    if not weights:
        raise ValueError("no weights to plot.")
    ax = _new_axes(ax, (6.0, 4.0))
    for name, w in weights.items():
        w = np.sort(np.asarray(w, dtype=np.float64).ravel())[::-1]
        top = w[0] if w.size and w[0] > 0 else 1.0
        ax.plot(np.arange(1, w.size + 1), w / top, lw=1.5, label=name)
    return _finish(ax, title, path, logx=logx, xlabel="feature rank", ylabel="weight / largest weight", grid="both")


@axes_doc
def plot_pairwise_differences(pairs, methods=None, ax=None, title=None, path=None):
    """Matrix of mean accuracy differences (row minus column), significant outcomes marked.

    Parameters
    ----------
    pairs : list of dict
        :func:`knnweights.evaluation.compare.pairwise_tests` rows of one dataset
        (``method``, ``other``, ``diff``, ``p``, ``outcome``).
    methods : list of str, optional
        Row / column order (default: order of appearance).
    {axes_params}

    Returns
    -------
    ax : matplotlib Axes
        Cells show the difference in points; a significant one (a win or a loss of the
        row method) is marked ``*``.
    """
    pairs = list(pairs)
    if not pairs:
        raise ValueError("no pairs to plot.")
    if methods is None:
        methods = list(dict.fromkeys([p["method"] for p in pairs] + [p["other"] for p in pairs]))
    pos = {m: i for i, m in enumerate(methods)}
    n = len(methods)
    D = np.full((n, n), np.nan)
    mark = np.full((n, n), "", dtype=object)
    for p in pairs:
        if p["method"] in pos and p["other"] in pos:
            i, j = pos[p["method"]], pos[p["other"]]
            D[i, j] = p["diff"]
            mark[i, j] = "*" if p["outcome"] in ("win", "loss") else ""
    ax = _new_axes(ax, (1.6 + 0.7 * n, 1.2 + 0.6 * n))
    lim = float(np.nanmax(np.abs(D))) if np.isfinite(D).any() else 1.0
    lim = lim if lim > 0 else 1.0
    im = ax.imshow(D, cmap="RdBu", vmin=-lim, vmax=lim)
    for i in range(n):
        for j in range(n):
            if np.isfinite(D[i, j]):
                color = "white" if abs(D[i, j]) > 0.6 * lim else "black"
                ax.text(j, i, f"{D[i, j]:+.1f}{mark[i, j]}", ha="center", va="center", fontsize="small", color=color)
    ax.set_xticks(range(n))
    ax.set_xticklabels(methods, rotation=30, ha="right")
    ax.set_yticks(range(n))
    ax.set_yticklabels(methods)
    ax.set_xlabel("compared with")
    ax.set_ylabel("method")
    ax.figure.colorbar(im, ax=ax, label="mean accuracy difference (points)")
    return _finish(ax, title, path, legend=False)


@axes_doc
def plot_top_feature_ranks(table, methods, n_top=20, ax=None, title=None, path=None):
    """The rank each method gives to the ``n_top`` first features of a rank table.

    Parameters
    ----------
    table : pandas.DataFrame
        A rank table with ``feature`` and ``<method>_rank`` columns, in the order to show
        (``knnweights rank``'s output: by mean rank).
    methods : list of str
        Methods to show; each needs a ``<method>_rank`` column.
    n_top : int, default=20
        Number of features shown, from the top of ``table``.
    {axes_params}

    Returns
    -------
    ax : matplotlib Axes
        One row per feature (best on top), one marker per method at its rank (log axis).
    """
    top = table.head(n_top)
    if top.empty:
        raise ValueError("empty rank table.")
    ax = _new_axes(ax, (6.0, 1.2 + 0.28 * len(top)))
    yy = np.arange(len(top))
    markers = "osD^v<>ph*"
    for i, m in enumerate(methods):
        ax.plot(top[f"{m}_rank"].to_numpy(), yy, linestyle="none", marker=markers[i % len(markers)], ms=5,
                alpha=0.8, label=m)
    ax.set_yticks(yy)
    ax.set_yticklabels([str(f) for f in top["feature"]], fontsize="small")
    ax.invert_yaxis()
    return _finish(ax, title, path, outside=True, logx=True, xlabel="rank given by the method (1 = best)", grid="x")
