"""Shared plotting helpers: a pyplot-free Figure, and the common finish (title, legend, PNG)."""


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    from matplotlib.figure import Figure

    return Figure(figsize=figsize).subplots()


def _finish(ax, title, path, legend=True, outside=False):
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
