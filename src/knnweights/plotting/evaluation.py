"""Plots of evaluation results: accuracy boxplots, W/T/L bars, elimination curves.

matplotlib is imported inside the functions (extra ``plot``).  Without ``ax`` each
function draws on a new :class:`matplotlib.figure.Figure` (no pyplot state, so nothing
accumulates in long runs); every function returns the Axes (``ax.figure`` is the
Figure) and saves a PNG when ``path`` is given.
"""

import numpy as np

from ..evaluation.results import as_records
from ._common import _coinciding_labels, _finish, _new_axes, axes_doc

__all__ = ["plot_accuracy_boxplots", "plot_win_tie_loss", "plot_elimination_curves"]


@axes_doc
def plot_accuracy_boxplots(results, dataset=None, methods=None, value="accuracy", ax=None, title=None, path=None):
    """Boxplots of the per-cell accuracies of each method (one group of boxes per dataset).

    Parameters
    ----------
    results : list of dict or DataFrame
        Rows of :func:`knnweights.evaluation.run_grid`.
    dataset : str, optional
        Only this dataset (one box per method); default all, grouped by dataset.
    methods : list of str, optional
        Methods and their order (default: order of appearance).
    value : str, default="accuracy"
        Column plotted (e.g. ``"score"``).
    {axes_params}

    {axes_returns}
    """
    rows = as_records(results)
    if dataset is not None:
        rows = [r for r in rows if r["dataset"] == dataset]
    if not rows:
        raise ValueError("no rows to plot" + (f" for dataset {dataset!r}" if dataset is not None else "") + ".")
    methods = list(methods) if methods is not None else list(dict.fromkeys(r["method"] for r in rows))
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    vals = {}
    for r in rows:
        vals.setdefault((r["dataset"], r["method"]), []).append(float(r[value]))
    nm = len(methods)
    ax = _new_axes(ax, (max(4.0, 1.0 + 0.5 * nm * len(datasets)), 4.0))
    import matplotlib as mpl  # optional: matplotlib

    colors = mpl.colormaps["tab10"] if nm <= 10 else mpl.colormaps["tab20"]
    width = 0.8 / nm
    for j, m in enumerate(methods):
        data, pos = [], []
        for i, d in enumerate(datasets):
            if (d, m) in vals:
                data.append(vals[(d, m)])
                pos.append(i + (j - (nm - 1) / 2) * width if len(datasets) > 1 else j)
        if not data:
            continue
        bp = ax.boxplot(data, positions=pos, widths=width * 0.85 if len(datasets) > 1 else 0.6,
                        patch_artist=True, manage_ticks=False, medianprops={"color": "black", "gid": "median"})
        for box in bp["boxes"]:
            box.set_facecolor(colors(j % colors.N))
            box.set_alpha(0.7)
        if len(datasets) > 1:
            ax.plot([], [], "s", color=colors(j % colors.N), alpha=0.7, label=m)
    if len(datasets) > 1:
        ax.set_xticks(range(len(datasets)))
        ax.set_xticklabels(datasets, rotation=30, ha="right")
        ax.set_xlabel("dataset")
    else:
        ax.set_xticks(range(nm))
        ax.set_xticklabels(methods, rotation=30, ha="right")
        ax.set_xlabel(f"method ({datasets[0]})")
    return _finish(ax, title, path, ylabel=f"{value} (%) per fold" if value == "accuracy" else value, grid="y")


@axes_doc
def plot_win_tie_loss(table, reference=None, ax=None, title=None, path=None):
    """Stacked bars of wins, ties and losses of each method against the reference.

    Parameters
    ----------
    table : list of dict
        :func:`knnweights.evaluation.win_tie_loss_table` output (``method``, ``wins``,
        ``ties``, ``losses``), counted from the competing method's side as in I-M4E's
        tables.
    reference : str, optional
        Name of the reference method, for the axis label.
    {axes_params}

    {axes_returns}
    """
    rows = list(table)
    if not rows:
        raise ValueError("empty W/T/L table.")
    names = [r["method"] for r in rows]
    w = np.array([r["wins"] for r in rows], dtype=float)
    t = np.array([r["ties"] for r in rows], dtype=float)
    l_ = np.array([r["losses"] for r in rows], dtype=float)
    ax = _new_axes(ax, (6.0, 1.4 + 0.45 * len(rows)))
    y = np.arange(len(rows))
    ax.barh(y, w, color="#2ca02c", label="win")
    ax.barh(y, t, left=w, color="#bbbbbb", label="tie")
    ax.barh(y, l_, left=w + t, color="#d62728", label="loss")
    for yi, (wi, ti, li) in enumerate(zip(w, t, l_, strict=True)):
        ax.text(wi + ti + li + 0.05, yi, f"{int(wi)}/{int(ti)}/{int(li)}", va="center", fontsize="small")
    ax.set_yticks(y)
    ax.set_yticklabels(names)
    ax.invert_yaxis()
    total = (w + t + l_).max()
    ax.set_xlim(0, total * 1.2 + 0.5)
    from matplotlib.ticker import MaxNLocator  # optional: matplotlib

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return _finish(ax, title, path, outside=True, xlabel="number of datasets (win / tie / loss)",
                   ylabel="method" + (f" vs {reference}" if reference else ""))


@axes_doc
def plot_elimination_curves(curves, ax=None, title=None, path=None, logx=True):
    """Accuracy against the number of features kept, one line per method.

    Parameters
    ----------
    curves : dict
        Name -> a fitted :class:`~knnweights.evaluation.HalvingElimination` (its
        ``counts_`` and internal-CV ``cv_scores_``, chosen count marked), or a mapping
        with ``n_features`` and ``accuracy`` (percent; or ``mean`` as a fraction, as
        ``top_feature_curve`` gives) and optionally ``std``.
    {axes_params}
    logx : bool, default=True
        Logarithmic x axis (halving visits 2000, 1000, ..., 31).

    {axes_returns}
    """
    if not curves:
        raise ValueError("no curves to plot.")
    ax = _new_axes(ax, (6.0, 4.0))
    xs = set()
    lines = []
    for name, c in curves.items():
        chosen = None
        std = None
        if hasattr(c, "counts_") and hasattr(c, "cv_scores_"):
            x, acc = np.asarray(c.counts_, float), 100.0 * np.asarray(c.cv_scores_, float)
            chosen = getattr(c, "n_features_selected_", None)
        else:
            x = np.asarray(c["n_features"], dtype=float)
            if "accuracy" in c:
                acc = np.asarray(c["accuracy"], dtype=float)
                std = np.asarray(c["std"], dtype=float) if "std" in c else None
            else:
                acc = 100.0 * np.asarray(c["mean"], dtype=float)
                std = 100.0 * np.asarray(c["std"], dtype=float) if "std" in c else None
        order = np.argsort(x)
        xs.update(x.tolist())
        lines.append((name, x, acc, std, chosen, order))
    labels, dashed = _coinciding_labels([n for n, *_ in lines], [x[o] for _, x, _, _, _, o in lines],
                                        [a[o] for _, _, a, _, _, o in lines])
    for (_name, x, acc, std, chosen, order), label, dash in zip(lines, labels, dashed, strict=True):
        (line,) = ax.plot(x[order], acc[order], marker="o", ms=3, label=label, linestyle="--" if dash else "-")
        if std is not None:
            ax.fill_between(x[order], (acc - std)[order], (acc + std)[order], color=line.get_color(), alpha=0.12)
        if chosen is not None:
            k = int(np.flatnonzero(x == chosen)[0])
            ax.plot([x[k]], [acc[k]], marker="*", ms=12, color=line.get_color(), linestyle="none")
    if logx:
        from matplotlib.ticker import NullFormatter, ScalarFormatter  # optional: matplotlib

        ax.set_xscale("log")
        if len(xs) <= 12:  # label the counts visited (2000, 1000, ..., 31), not powers of ten
            ax.set_xticks(sorted(xs))
            ax.xaxis.set_minor_formatter(NullFormatter())
        ax.xaxis.set_major_formatter(ScalarFormatter())
    return _finish(ax, title, path, xlabel="number of features kept", ylabel="accuracy (%)", grid="both")
