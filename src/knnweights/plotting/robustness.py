"""Plot error against the number of irrelevant features (LH-RELIEF, Figs. 1b and 2)."""

from ._common import _coinciding_labels, _finish, _new_axes, axes_doc

__all__ = ["plot_irrelevant_feature_curve"]


@axes_doc
def plot_irrelevant_feature_curve(results, ax=None, title=None, path=None, show_std=True, percent=True):
    """One line per method: CV error against the number of appended noise features.

    Parameters
    ----------
    results : dict or Bunch
        Method name -> result of
        :func:`knnweights.evaluation.robustness.irrelevant_feature_curve` (anything
        with ``counts``, ``mean_error`` and optionally ``std_error``), or a single such
        result.
    {axes_params}
    show_std : bool, default=True
        Error bars of one standard deviation over the repeats.
    percent : bool, default=True
        Show the error in percent.

    {axes_returns}
    """
    ax = _new_axes(ax, (6, 4))
    if "counts" in results:
        results = {"": results}
    scale = 100.0 if percent else 1.0
    names = list(results)
    labels, dashed = _coinciding_labels(names, [results[n]["counts"] for n in names],
                                        [results[n]["mean_error"] for n in names])
    for name, label, dash in zip(names, labels, dashed, strict=True):
        r = results[name]
        mean = scale * r["mean_error"]
        std = scale * r["std_error"] if show_std and "std_error" in r else None
        ax.errorbar(r["counts"], mean, yerr=std, marker="o", ms=4, capsize=3, label=label or None,
                    linestyle="--" if dash else "-")
    return _finish(ax, title, path, xlabel="number of irrelevant features added",
                   ylabel="classification error (%)" if percent else "classification error", grid="both")
