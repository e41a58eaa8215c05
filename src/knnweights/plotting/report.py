"""The report of ``knnweights evaluate``: Markdown beside PNG files, and one self-contained HTML file.

:func:`write_user_report` draws the plots (accuracy boxplots, W/T/L, pairwise
differences, top-feature curves, weight profiles, top-feature ranks), then writes
``report.md`` (which links the PNG files) and ``report.html`` (which embeds them as
base64 data, so the one file can be mailed or archived on its own).  Both are built
from the same list of blocks: headings, paragraphs, tables and images.
"""

import base64
import html
import os

import numpy as np

from ..evaluation.compare import PLAIN, win_tie_loss_counts
from ..evaluation.results import as_records, summarize
from .evaluation import plot_accuracy_boxplots, plot_win_tie_loss
from .topfeatures import plot_top_feature_curves
from .user import plot_pairwise_differences, plot_top_feature_ranks, plot_weight_profiles

__all__ = ["write_user_report", "render_markdown", "render_html"]


def _format_value(v, decimals=2):
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            return "-"
        return f"{v:.{decimals}f}"
    return str(v)


def _render_blocks(blocks, render):
    """Each block rendered by ``render[kind]`` called with the block's fields after its kind."""
    out = []
    for kind, *fields in blocks:
        if kind not in render:
            raise ValueError(f"unknown block {kind!r}.")
        out.append(render[kind](*fields))
    return out


def _markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(_format_value(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


_MARKDOWN = {
    "h": lambda level, text: "#" * level + " " + text,
    "p": lambda text: text,
    "pre": lambda text: "```\n" + text.rstrip("\n") + "\n```",
    "table": _markdown_table,
    "img": lambda path, caption: f"![{caption}]({os.path.basename(path)})",
}


def render_markdown(blocks):
    """Markdown text of a list of blocks.

    Parameters
    ----------
    blocks : list of tuple
        ``("h", level, text)``, ``("p", text)``, ``("table", header, rows)``,
        ``("img", path, caption)`` (linked by file name) and ``("pre", text)``.

    Returns
    -------
    text : str
        The Markdown document.
    """
    return "\n\n".join(_render_blocks(blocks, _MARKDOWN)) + "\n"


_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;max-width:1000px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}table{border-collapse:collapse;margin:1em 0;font-size:0.92em}
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}img{max-width:100%;margin:0.5em 0}
figure{margin:1em 0}figcaption{color:#555;font-size:0.9em}pre{background:#f6f6f6;padding:0.6em;
overflow-x:auto}code{background:#f3f3f3;padding:0 0.2em}"""


def _inline(text):
    """HTML of a paragraph: escaped, with ``code`` spans from backticks."""
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _html_table(header, rows):
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_format_value(c))}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _html_figure(path, caption):
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    cap = html.escape(caption)
    return f'<figure><img alt="{cap}" src="data:image/png;base64,{data}"><figcaption>{cap}</figcaption></figure>'


_HTML = {
    "h": lambda level, text: f"<h{level}>{html.escape(text)}</h{level}>",
    "p": lambda text: f"<p>{_inline(text)}</p>",
    "pre": lambda text: f"<pre>{html.escape(text)}</pre>",
    "table": _html_table,
    "img": _html_figure,
}


def render_html(blocks, title):
    """A self-contained HTML page of ``blocks`` (images embedded as base64 PNG).

    Parameters
    ----------
    blocks : list of tuple
        As for :func:`render_markdown`.
    title : str
        The page's title.

    Returns
    -------
    page : str
        The HTML document.
    """
    body = _render_blocks(blocks, _HTML)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{_CSS}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def _save_png(ax, path):
    ax.figure.savefig(path, dpi=110, bbox_inches="tight")
    return path


def write_user_report(out, *, dataset, shape, classes, messages, settings, results, pairs, methods, test,
                      alpha, min_diff, curves, weights, table, warnings, command=None):
    """Write the plots, ``report.md`` and ``report.html`` of a comparison into ``out``.

    Parameters
    ----------
    out : str
        Output folder (created).
    dataset : str
        The dataset's name, in the title.
    shape : (int, int)
        Rows and features used.
    classes : dict
        Class label -> count.
    messages : list of str
        What was done to the table when it was read.
    settings : dict
        Protocol settings shown in the report (name -> value).
    results : pandas.DataFrame or list of dict
        The cells (:func:`~knnweights.evaluation.compare.compare_methods`).
    pairs : list of dict
        :func:`~knnweights.evaluation.compare.pairwise_tests` rows.
    methods : list of str
        Methods in report order, plain kNN first.
    test : {"corrected", "plain"}
        The paired test of ``pairs``, named in the report.
    alpha : float
        Its significance level.
    min_diff : float
        The minimum difference (points) for a win, said when non-zero.
    curves : dict
        :func:`~knnweights.evaluation.compare.top_curves` output.
    weights : dict
        Method -> weights from the fit on all rows.
    table : pandas.DataFrame
        The rank table of the fit on all rows.
    warnings : list of str
        One line per method and warning.
    command : str, optional
        The command line that made the report.

    Returns
    -------
    dict
        ``markdown`` and ``html`` paths and ``plots`` (name -> PNG path).
    """
    os.makedirs(out, exist_ok=True)
    plots = {}
    test_name = ("Nadeau & Bengio's corrected resampled t-test" if test == "corrected"
                 else "Student's paired t-test (the papers' test; too liberal for repeated CV)")
    cells = as_records(results)
    rows = summarize(cells)
    present = [m for m in methods if any(s["method"] == m for s in rows)]
    weighted = [m for m in present if m != PLAIN]

    plots["accuracy"] = _save_png(plot_accuracy_boxplots(
        cells, dataset=dataset, methods=present, title=f"Accuracy per CV cell ({dataset})"),
        os.path.join(out, "accuracy_boxplots.png"))
    wtl_all = win_tie_loss_counts(pairs)
    if wtl_all:
        ax = plot_win_tie_loss(wtl_all, title="Wins / ties / losses against every other method")
        ax.set_xlabel("number of other methods (win / tie / loss)")
        ax.set_ylabel("method")
        plots["wtl"] = _save_png(ax, os.path.join(out, "win_tie_loss.png"))
        plots["pairwise"] = _save_png(plot_pairwise_differences(
            pairs, methods=present, title="Mean accuracy difference, row minus column (* significant)"),
            os.path.join(out, "pairwise_differences.png"))
    if curves:
        d = shape[1]
        plots["curves"] = _save_png(plot_top_feature_curves(
            curves, logx=d > 20, title="Plain kNN on each fold's top-ranked features"),
            os.path.join(out, "top_feature_curves.png"))
    if weights:
        plots["weights"] = _save_png(plot_weight_profiles(weights, logx=shape[1] > 20,
                                                      title="Weight profiles (fit on all rows)"),
                                 os.path.join(out, "weight_profiles.png"))
    if table is not None and weighted:
        plots["ranks"] = _save_png(plot_top_feature_ranks(table, weighted, n_top=min(20, len(table)),
                                                      title="Ranks of the top features (fit on all rows)"),
                               os.path.join(out, "top_feature_ranks.png"))

    blocks = [("h", 1, f"knnweights evaluate: {dataset}")]
    cls = ", ".join(f"{k}: {v}" for k, v in classes.items())
    blocks.append(("p", f"{shape[0]} samples x {shape[1]} features; classes {cls}."))
    if command:
        blocks.append(("pre", command))
    if messages:
        blocks.append(("h", 2, "Data"))
        blocks.extend(("p", m[0].upper() + m[1:] + ".") for m in messages)
    blocks.append(("h", 2, "Protocol"))
    blocks.append(("table", ["setting", "value"], [[k, v] for k, v in settings.items()]))
    blocks.append(("p", "Every method sees the same folds. In each cell, missing values are filled with the training "
                        "part's medians and features are scaled on the training part; the weighter is fitted on the "
                        "training part only and the test part is classified by kNN with the weighter's metric on the "
                        f"weighted features. `{PLAIN}` is plain kNN (Euclidean) on the scaled features."))

    blocks.append(("h", 2, "Accuracy"))
    ref = {s["method"]: s["mean"] for s in rows}.get(PLAIN)
    vs = {p["method"]: p for p in pairs if p["other"] == PLAIN}
    header = ["method", "mean accuracy (%)", "std", "cells"] + ([f"vs {PLAIN} (points)", "p", "outcome"]
                                                                 if ref is not None else [])
    trows = []
    for m in present:
        s = next(x for x in rows if x["method"] == m)
        line = [m, s["mean"], s["std"], s["n"]]
        if ref is not None:
            p = vs.get(m)
            line += ([f"{p['diff']:+.2f}", f"{p['p']:.3g}", p["outcome"]] if p else ["", "", ""])
        trows.append(line)
    blocks.append(("table", header, trows))
    blocks.append(("p", f"Test: {test_name}, two-tailed, alpha = {alpha}"
                        + (f", minimum difference {min_diff} points" if min_diff else "")
                        + ". A method wins when p < alpha and its mean is higher."))
    blocks.append(("img", plots["accuracy"], "Accuracy of each method in each CV cell"))
    if "wtl" in plots:
        blocks.append(("h", 2, "Methods against each other"))
        pwt = [[r["method"], r["wtl"]] for r in wtl_all]
        blocks.append(("table", ["method", "W/T/L against the others"], pwt))
        blocks.append(("img", plots["wtl"], "Wins, ties and losses of each method against every other method"))
        blocks.append(("img", plots["pairwise"], "Mean accuracy difference, row minus column"))
        blocks.append(("p", "All pairs are in `pairwise.csv` (difference, t, p, outcome)."))
    if "curves" in plots:
        blocks.append(("h", 2, "Top-feature curves"))
        blocks.append(("p", "Accuracy of plain kNN on the m best features of each training part's ranking (the "
                            "weighter fitted on that training part), averaged over the cells: how few features "
                            "carry the signal, by each method's ranking."))
        blocks.append(("img", plots["curves"], "Accuracy against the number of top-ranked features"))
        best = []
        for m, c in curves.items():
            k = int(np.argmax(c["mean"]))
            best.append([m, int(c["n_features"][k]), 100 * float(c["mean"][k]), 100 * float(c["std"][k])])
        blocks.append(("table", ["method", "best m", "accuracy (%)", "std"], best))
    if "weights" in plots:
        blocks.append(("h", 2, "Weights and top features (fit on all rows)"))
        blocks.append(("img", plots["weights"], "Sorted weights divided by the largest, per method"))
    if "ranks" in plots:
        blocks.append(("img", plots["ranks"], "Rank of each of the top features by each method"))
        n_show = min(20, len(table))
        head = table.head(n_show)
        cols = ["feature", *[f"{m}_rank" for m in weighted]] + (["mean_rank"] if "mean_rank" in table else [])
        blocks.append(("table", ["feature", *weighted] + (["mean rank"] if "mean_rank" in table else []),
                       head[cols].to_numpy().tolist()))
        blocks.append(("p", "The whole table (weight, signed score and rank per method) is in `ranks.csv`."))
    blocks.append(("h", 2, "Warnings"))
    if warnings:
        blocks.append(("pre", "\n".join(warnings)))
    else:
        blocks.append(("p", "None."))
    blocks.append(("h", 2, "Files"))
    blocks.append(("p", "`results.csv` (one row per method and cell), `summary.csv`, `pairwise.csv`, `ranks.csv`, "
                        "the PNG plots, and `store.jsonl` (finished cells; rerunning the same command resumes)."))

    md = os.path.join(out, "report.md")
    with open(md, "w", encoding="utf-8") as fh:
        fh.write(render_markdown(blocks))
    page = os.path.join(out, "report.html")
    with open(page, "w", encoding="utf-8") as fh:
        fh.write(render_html(blocks, f"knnweights evaluate: {dataset}"))
    return {"markdown": md, "html": page, "plots": plots}

