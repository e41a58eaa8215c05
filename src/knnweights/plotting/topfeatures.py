"""Plot accuracy against the number of top-ranked features (the EFW paper's Fig. 2)."""

from ._common import _coinciding_labels, _finish, _new_axes, axes_doc

__all__ = ["plot_top_feature_curves"]


@axes_doc
def plot_top_feature_curves(curves, ax=None, title=None, path=None, show_std=True, logx=False):
    """One line per method: mean CV accuracy against the number of top features.

    Parameters
    ----------
    curves : dict
        Method name -> result of :func:`knnweights.evaluation.topfeatures.top_feature_curve`
        (anything with ``n_features``, ``mean`` and optionally ``std``).
    {axes_params}
    show_std : bool, default=True
        Shade mean +- one standard deviation over the folds.
    logx : bool, default=False
        Logarithmic x axis (for grids such as 1, 2, 5, ..., 2000 on gene data).

    {axes_returns}
    """
    ax = _new_axes(ax, (6, 4))
    names = list(curves)
    labels, dashed = _coinciding_labels(names, [curves[n]["n_features"] for n in names],
                                        [curves[n]["mean"] for n in names])
    for name, label, dash in zip(names, labels, dashed, strict=True):
        c = curves[name]
        x = c["n_features"]
        mean = 100 * c["mean"]
        (line,) = ax.plot(x, mean, marker="o", ms=3, label=label, linestyle="--" if dash else "-")
        if show_std and "std" in c:
            std = 100 * c["std"]
            ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.12)
    return _finish(ax, title, path, logx=logx, xlabel="number of top-ranked features",
                   ylabel="accuracy (%), cross-validated", grid="both")
