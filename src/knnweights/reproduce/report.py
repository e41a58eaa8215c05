"""Markdown report and CSV files of a ``knnweights reproduce`` run, and their provenance.

Every report records which algorithms made it: per table (or figure) and method, the
algorithm versions of the classes its cells come from (:mod:`._versions`), beside the
package version and, in a git checkout, the commit.  :func:`check_report`
(``knnweights reproduce --check-report report.md``) says whether the installed package
declares the same versions, i.e. would make the same report within the golden tests'
tolerance.
"""

import csv
import json
import os
import subprocess

from .._version import __version__
from ..utils import fill_docstring
from ._versions import stale_names
from .tables import BEST_TIE_P, MISS_KINDS

__all__ = ["write_table_csv", "table_markdown", "write_report", "fidelity", "verdict", "provenance", "check_report",
           "check_code"]

#: the parameters of a table's verdict and Markdown: ``{table}`` in their docstrings
_table_doc = fill_docstring(table="""result : TableResult
    The table.
mode : {"tiny", "quick", "full"}, optional
    The run's mode.""")


def _package_root():
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _git(*args):
    try:
        r = subprocess.run(["git", *args], cwd=_package_root(), capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def provenance():
    """``{"version", "git_commit", "git_dirty"}`` of the package running now."""
    commit = _git("rev-parse", "HEAD")
    dirty = None
    if commit:
        st = _git("status", "--porcelain", "--", ".")
        dirty = bool(st) if st is not None else None
    return {"version": __version__, "git_commit": commit, "git_dirty": dirty}


def check_report(path):
    """Do the algorithm versions a report records match those of the installed package?

    Reads the ``code`` section of the ``report.json`` beside ``path`` (a ``report.md``):
    per table or figure and method, the :func:`~._versions.version_key` of its cells.

    Parameters
    ----------
    path : str or path-like
        A ``report.md`` (its ``report.json`` is read) or the ``report.json`` itself.

    Returns
    -------
    dict
        ``match`` (bool, ``None`` when the report records no versions), ``recorded_commit``,
        ``stale`` (``[(part, method, recorded key, names whose version changed)]``), ``message``.
    """
    path = os.fspath(path)
    side = os.path.join(os.path.dirname(path), "report.json") if path.endswith(".md") else path
    meta = {}
    if os.path.exists(side) and side.endswith(".json"):
        with open(side, encoding="utf-8") as fh:
            meta = json.load(fh)
    commit = (meta.get("provenance") or {}).get("git_commit")
    if not meta.get("code"):
        return {"match": None, "recorded_commit": commit, "stale": [],
                "message": f"{path} records no algorithm versions (made before reports recorded them): regenerate it"}
    bad = check_code(meta)
    n = sum(len(v) for v in meta["code"].values())
    if bad:
        shown = ", ".join(f"{p} / {m} ({', '.join(names)})" for p, m, _, names in bad[:6]) + (
            " ..." if len(bad) > 6 else "")
        msg = (f"{path}: {len(bad)} of {n} methods' cells were made by other algorithm versions than the installed "
               f"package's ({shown}): rerun the command (their cells are recomputed)")
    else:
        msg = f"{path}: the cells of all {n} methods were made by the algorithm versions installed now"
    return {"match": not bad, "recorded_commit": commit, "message": msg, "stale": bad}


def _code_section(results, cfg):
    """``{table or figure: {method: {"version": key}}}``: the algorithm versions each part's cells were made by."""
    out = {}
    for res in results:
        if getattr(res, "code", None):
            out[res.spec.name] = dict(res.code)
    for name, rec in sorted((getattr(cfg, "code_used", None) or {}).items()):
        out.setdefault("figures and custom tables", {})[name] = rec
    return out


def check_code(meta):
    """Per table and method: the recorded versions that differ from the installed ones.

    A record without a version key (a report made before versions) counts as stale.

    Parameters
    ----------
    meta : dict
        A report's ``report.json``.

    Returns
    -------
    list of tuple
        ``[(part, method, recorded key, [names whose version changed])]``.
    """
    bad = []
    for part, methods in (meta.get("code") or {}).items():
        for m, rec in methods.items():
            key = rec.get("version") if isinstance(rec, dict) else None
            names = stale_names(key)
            if names:
                bad.append((part, m, key, names))
    return bad


def _fmt(v, nd=2):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def write_table_csv(result, folder):
    """Write ``<folder>/<table>.csv`` (our numbers beside the paper's), ``<table>_wtl.csv`` and ``<table>_best.csv``.

    Parameters
    ----------
    result : TableResult
        The table.
    folder : str
        The output folder.

    Returns
    -------
    list of str
        The files written (the W/T/L and best-of-row files only when the table has them).
    """
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{result.spec.name}.csv")
    cols = list(dict.fromkeys(k for r in result.rows for k in r))
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=cols)
        w.writeheader()
        w.writerows(result.rows)
    paths = [path]
    if result.wtl:
        p2 = os.path.join(folder, f"{result.spec.name}_wtl.csv")
        with open(p2, "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["method", "ours_wtl", "paper_wtl", "directions_agree", "directions_compared", "per_dataset"])
            for r in result.wtl:
                w.writerow([r["method"], r["ours"], r["paper"], r["agree"], r["compared"],
                            json.dumps(r["per_dataset"])])
        paths.append(p2)
    if getattr(result, "best", None):
        p3 = os.path.join(folder, f"{result.spec.name}_best.csv")
        with open(p3, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=["dataset", "paper_best", "ours_best", "p_value", "agree", "competitors"])
            w.writeheader()
            w.writerows(result.best)
        paths.append(p3)
    return paths


@_table_doc
def verdict(result, mode=None):
    """``(word, text)``: is the table's claim reproduced, with the measured numbers.

    ``reproduced``: >= 80 % of the compared cells within tolerance and, where the paper
    gives W/T/L outcomes, >= 70 % of the per-dataset directions agreeing (where it gives
    none but marks each row's best method: >= 70 % of those rows whose marked best is ours
    or tied with it, see :func:`~.tables._best_of_row`); ``partly``: >= 50 % of the cells
    (or of the directions, or of the rows); ``not reproduced`` otherwise;
    ``no paper numbers`` for our own experiments (nothing to compare); ``mode="tiny"``:
    ``smoke test, not judged`` (the numbers are still given).

    Parameters
    ----------
    {table}

    Returns
    -------
    (str, str)
    """
    fr = fidelity([result])
    within, n, agree, dirs = fr["cells_within"], fr["cells_compared"], fr["wtl_agree"], fr["wtl_compared"]
    bagree, bn = fr["best_agree"], fr["best_compared"]
    if getattr(result, "partial", False):
        done = (f"{result.cells_total} / {result.cells_expected} cells done; not judged until every cell is; "
                "rows marked partial show the mean so far")
        if n or dirs or bn:
            done += f"; the finished rows: {within}/{n} cells within tolerance"
            if dirs:
                done += f", W/T/L directions {agree}/{dirs}"
            if bn:
                done += f", the paper's best is ours or tied with it in {bagree}/{bn} rows"
        return "partial", done
    if not result.spec.csv:
        return "no paper numbers", "our own experiment: the paper gives no numbers to compare with"
    if n == 0 and dirs == 0:
        return "not compared", "no cell with a paper number could be computed (see the status column)"
    parts = []
    if n:
        diffs = [abs(r["diff"]) for r in result.rows if r.get("diff") is not None and _counted(r)]
        med = sorted(diffs)[len(diffs) // 2] if diffs else None
        parts.append(f"{within}/{n} cells within tolerance ({100 * within / n:.0f} %)"
                     + (f", median |ours - paper| {med:.2f}" if med is not None else ""))
    if dirs:
        parts.append(f"W/T/L directions agreeing {agree}/{dirs} ({100 * agree / dirs:.0f} %)")
    if bn:
        parts.append(f"the paper's best method is ours or statistically tied with it in {bagree}/{bn} rows "
                     f"({100 * bagree / bn:.0f} %)")
    cf = within / n if n else None
    # the claim-level check: the W/T/L directions where the paper gives them, else its best of each row
    df = agree / dirs if dirs else (bagree / bn if bn else None)
    if (cf is None or cf >= 0.8) and (df is None or df >= 0.7):
        word = "reproduced"
    elif (cf is not None and cf >= 0.5) or (df is not None and df >= 0.5):
        word = "partly reproduced"
    else:
        word = "not reproduced"
    if mode == "tiny":
        word = "smoke test, not judged"
    return word, "; ".join(parts)


@_table_doc
def table_markdown(result, mode=None):
    """The table in Markdown: its verdict, then one line per dataset x method, ours beside the paper's.

    Parameters
    ----------
    {table}

    Returns
    -------
    str
    """
    spec = result.spec
    unit = "error %" if spec.metric == "error" else ("value" if spec.metric not in ("accuracy",) else "accuracy %")
    word, text = verdict(result, mode)
    lines = [f"### {spec.title}", "", f"**Verdict: {word}** ({text}).", "", spec.caption, ""]
    if getattr(result, "cells_expected", None) is not None:
        code = getattr(result, "code", {}) or {}
        lines += [f"Cells: **{result.cells_total} / {result.cells_expected}**"
                  + (" (partial)" if result.partial else " (complete)")
                  + "; every cell used was computed by the algorithm versions installed now (per method: "
                  + ", ".join(f"{m} `{c['version']}`" for m, c in code.items()) + ")."
                  + (f" {result.cells_stale} more stored cell(s) were made by other algorithm versions and are not "
                     "used (a resumed run recomputes them, or keeps them with `--revalidate N` when N recomputed per "
                     "method and dataset agree)." if getattr(result, "cells_stale", 0) else ""), ""]
    if not spec.csv:
        lines += ["This table has **no paper numbers**: the paper columns stay empty and nothing is counted in "
                  "the fidelity summary.", ""]
    lines += [f"| dataset | method | paper ({unit}) | ours mean | ours std | n | diff | within tolerance | "
              "why it misses | status / stand-in |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    nd = 4 if spec.metric == "stability" else 2
    for r in result.rows:
        within = {True: "yes", False: "no", None: ""}[r["within"]]
        if within and not _counted(r):
            within += " (another reading: not counted)"
        note = r["status"] if r["status"] != "ok" else (r.get("stand_in") or "")
        if r.get("dataset_note"):
            note = f"{note} [{r['dataset_note']}]" if note else f"[{r['dataset_note']}]"
        extra = [k for k in r if k.startswith("ours_median_") and r[k] is not None]
        for k in extra:
            note += f" median {k[len('ours_median_'):]} = {_fmt(r[k], 0)}"
            if spec.extra_paper and r.get(f"paper_{spec.extra_paper}") is not None:
                note += f" (paper: {_fmt(r[f'paper_{spec.extra_paper}'], 0)})"
        why = r.get("miss_reason") or ("unexplained" if r["within"] is False else "")
        lines.append(f"| {r['dataset']} | {r['method']} | {r.get('paper_as_printed') or _fmt(r['paper'])} | "
                     f"{_fmt(r['ours_mean'], nd)} | {_fmt(r['ours_std'], nd)} | {r['n_cells'] or ''} | "
                     f"{_fmt(r['diff'], nd)} | {within} | {why} | {note} |")
    if result.wtl:
        rule = ("p < 0.01 and >= 0.5 points, counted from the competitor's side vs " + spec.reference
                if spec.wtl_rule == "im4e" else "paired t-test vs " + spec.reference + ", p < 0.05")
        if spec.wtl_rule == "stated":
            rule += f"; the paper's outcome on every dataset: {spec.stated_outcome}, as its text states"
        lines += ["", f"W/T/L ({rule}):", "",
                  "| method | ours W/T/L | paper W/T/L | per-dataset directions agreeing |",
                  "| --- | --- | --- | --- |"]
        for r in result.wtl:
            comp = f"{r['agree']}/{r['compared']}" if r["compared"] else "n/a (no paper numbers)"
            lines.append(f"| {r['method']} | {r['ours']} | {r['paper'] or 'n/a'} | {comp} |")
        if spec.wtl_rule == "lhrelief":
            lines += ["", "p-values of our paired t-tests (competitor vs LH-RELIEF):", ""]
            for r in result.wtl:
                ps = ", ".join(f"{p['dataset']}: {p['p_value']:.3g} ({p['ours']}; paper {p['paper'] or 'n/a'})"
                               for p in r["per_dataset"])
                lines.append(f"- {r['method']}: {ps}")
    best = getattr(result, "best", None)
    if best:
        lines += ["", "Best of each row (the paper's marked best method against ours; *tied*: our paired t-test of "
                  f"the two over the same splits gives p >= {BEST_TIE_P}, the paper's boldface rule):", "",
                  "| dataset | paper's best | our best | p-value | agrees |", "| --- | --- | --- | --- | --- |"]
        for b in best:
            how = "same" if b["paper_best"] == b["ours_best"] else ("tied" if b["agree"] else "no")
            lines.append(f"| {b['dataset']} | {b['paper_best']} | {b['ours_best']} | {b['p_value']:.3g} | {how} |")
    lines.append("")
    return "\n".join(lines)


def _counted(row):
    """Whether a row counts in the fidelity: not another reading of a paper cell that a judged
    row already answers (``MethodSpec.paper_label``; :func:`~.tables.run_table` marks it)."""
    return row.get("counted", True)


def fidelity(results):
    """How far the tables agree with the papers, counted over ``results``.

    Parameters
    ----------
    results : list of TableResult
        The tables.

    Returns
    -------
    dict
        ``cells_within``, ``cells_compared`` (cells within tolerance, cells compared),
        ``wtl_agree``, ``wtl_compared`` (W/T/L directions agreeing, compared), ``best_agree``,
        ``best_compared`` (rows whose paper-marked best is ours or tied with it, rows compared).
    """
    within = compared = agree = dirs = bagree = bn = 0
    for res in results:
        for r in res.rows:
            if r["within"] is not None and _counted(r):
                compared += 1
                within += int(r["within"])
        for w in res.wtl:
            agree += w["agree"]
            dirs += w["compared"]
        for b in getattr(res, "best", ()):
            bagree += int(b["agree"])
            bn += 1
    return {"cells_within": within, "cells_compared": compared, "wtl_agree": agree, "wtl_compared": dirs,
            "best_agree": bagree, "best_compared": bn}


def _miss_counts(results):
    counts = {}
    for res in results:
        for r in res.rows:
            if r["within"] is False and _counted(r):
                kinds = r.get("miss_kinds")
                if kinds:
                    kinds = kinds.split(", ")
                else:  # a custom table gives the text only: its kinds by their wording
                    text = r.get("miss_reason") or ""
                    kinds = [k for k in MISS_KINDS[:-1] if k in text] or ["unexplained"]
                for kind in kinds:
                    counts[kind] = counts.get(kind, 0) + 1
    return counts


def _figure_verdict(f, mode=None):
    if mode == "tiny":
        return "smoke test, not judged"
    v = f.get("verdict")
    if v:
        return v
    ours = str(f.get("ours", ""))
    if ours.startswith(("not implemented", "failed")):
        return "not reproduced (the figure could not be made)"
    return "not judged (the figure module states no verdict; compare the claim with the figure)"


def write_report(out, papers, results, figures, notes, wall, cfg, cells_total, cells_run, command=None):
    """Write ``out/report.md`` and its ``report.json`` sidecar (provenance, fidelity, verdicts).

    Parameters
    ----------
    out : str
        The output folder.
    papers : list of str
        The papers run.
    results : list of TableResult
        The tables.
    figures : list of dict
        The figures (``title``, ``png``, ``claim``, ``verdict``, ``ours``, ``cells``).
    notes : list of str
        The papers' notes.
    wall : float
        Wall time of the run, in seconds.
    cfg : Config
        The run.
    cells_total : int
        The cells used.
    cells_run : int
        The cells computed in this run.
    command : str, optional
        The command line said in the report (default: made from ``papers`` and ``cfg``).

    Returns
    -------
    str
        The path of ``report.md``.
    """
    fid = fidelity(results)
    prov = provenance()
    command = command or (f"knnweights reproduce {' '.join(papers) if len(papers) == 1 else 'all'} --{cfg.mode} "
                          f"--out {out}")
    lines = ["# knnweights reproduce: our numbers beside the papers'", ""]
    if cfg.mode == "tiny":
        lines += ["> **Smoke test (`--tiny`), not a reproduction.** Tiny subsamples, one or two folds and a few "
                  "iterations check that every table and figure runs; the numbers below say nothing about the "
                  "papers' claims. Run `--quick` (minutes) or `--full` (the papers' protocols) for that.", ""]
    elif cfg.mode == "quick":
        lines += ["> `--quick`: the papers' methods and datasets with fewer repeats, coarser grids and subsampled "
                  "rows / features (said in each caption); `--full` runs the papers' protocols.", ""]
    parts = [r for r in results if getattr(r, "partial", False)]
    fparts = [f for f in figures if isinstance(f.get("cells"), dict) and not f["cells"].get("complete", True)]
    if parts or fparts:
        done = sum(r.cells_total for r in results if r.cells_expected is not None)
        need = sum(r.cells_expected for r in results if r.cells_expected is not None)
        done += sum(f["cells"]["cells_done"] for f in figures if isinstance(f.get("cells"), dict))
        need += sum(f["cells"]["cells_total"] for f in figures if isinstance(f.get("cells"), dict))
        stale = sum(getattr(r, "cells_stale", 0) for r in results)
        lines += [f"> **Partial run: {done} / {need} cells done.** The run stopped before the end (it resumes from "
                  "`store/`). Tables and figures marked *partial* show the cells finished so far and are neither "
                  "judged nor counted in the fidelity below; only finished rows are."
                  + (f" The store holds {stale} further table cell(s) made by other algorithm versions than "
                     "this report's (not used: see each table)." if stale else ""), ""]
    commit = prov["git_commit"]
    lines += [f"Command: `{command}`; papers: {', '.join(papers)}; mode `{cfg.mode}`; wall time {wall:.0f} s; "
              f"cells {cells_total} ({cells_run} computed in this run, {cells_total - cells_run} read from the store).",
              "",
              f"Made by knnweights {prov['version']}"
              + (f", git commit `{commit[:12]}`" + (" with uncommitted changes" if prov["git_dirty"] else "")
                 if commit else "")
              + "; every method's algorithm versions are in `report.json` (`code`). `knnweights reproduce "
              "--check-report report.md` says whether the package installed now declares the same versions.",
              "",
              "Each table lists every method and dataset of the paper's table. Rows we cannot compute say why "
              "(`not bundled`, `not available`, `not implemented`). Where a scikit-learn (or knnweights) "
              "estimator stands in for the paper's WEKA / MATLAB one, the last column says which. A cell outside "
              "the tolerance gets its reason in the column *why it misses*: the dataset differs from the paper's "
              "(including this mode's subsampling), a stand-in classifier, a paper ambiguity (with the reading "
              "used), or *unexplained*.", "",
              "## Verdicts and fidelity", "",
              f"- cells within 2 of our standard errors + 2 points of the paper's number (stability: + 0.02): "
              f"**{fid['cells_within']} / {fid['cells_compared']}**",
              "- W/T/L directions (per dataset) agreeing with the paper's: "
              f"**{fid['wtl_agree']} / {fid['wtl_compared']}**"]
    if fid["best_compared"]:
        lines.append("- rows whose paper-marked best method is ours or statistically tied with it (paired t-test, "
                     f"p >= {BEST_TIE_P}): **{fid['best_agree']} / {fid['best_compared']}**")
    miss = _miss_counts(results)
    if miss:
        lines.append("- cells outside the tolerance by reason (a cell may have several): "
                     + ", ".join(f"{k} {v}" for k, v in sorted(miss.items(), key=lambda kv: -kv[1])))
    lines.append("")
    summary = []
    for res in results:
        files = ", ".join(f"[{os.path.basename(p)}]({os.path.basename(p)})" for p in getattr(res, "files", []))
        fr = fidelity([res])
        word, text = verdict(res, cfg.mode)
        exp = getattr(res, "cells_expected", None)
        summary.append({"table": res.spec.name, "title": res.spec.title, "verdict": word, "measured": text,
                        **fr, "cells": res.cells_total, "cells_expected": exp,
                        "partial": bool(getattr(res, "partial", False)),
                        "cells_stale": int(getattr(res, "cells_stale", 0)), "seconds": round(res.seconds, 1)})
        count = f"{res.cells_total} / {exp} cells" if exp is not None else f"{res.cells_total} cells"
        lines.append(f"- {res.spec.title}: **{word}** ({text}); {count}; {res.seconds:.0f} s ({files})")
    for f in figures:
        lines.append(f"- {f['title']}: **{_figure_verdict(f, cfg.mode)}**")
    lines.append("")
    lines.append("## Tables")
    lines.append("")
    for res in results:
        lines.append(table_markdown(res, cfg.mode))
    if figures:
        lines += ["## Figures", ""]
        for f in figures:
            lines += [f"### {f['title']}", ""]
            if f.get("png"):
                lines += [f"![{f['title']}]({os.path.basename(f['png'])})", ""]
            if f.get("cells_text"):
                lines += [f"Cells: **{f['cells_text']}**", ""]
            lines += [f"**Paper's claim:** {f['claim']}", "", f"**Verdict:** {_figure_verdict(f, cfg.mode)}", "",
                      f"**Ours:** {f.get('ours', '')}", ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    path = os.path.join(out, "report.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    for f in figures:
        if isinstance(f.get("cells"), dict):
            c = f["cells"]
            lines_fig = f"{c['cells_done']} / {c['cells_total']} cells" + ("" if c["complete"] else " (partial)")
            f.setdefault("cells_text", lines_fig)
    meta = {"command": command, "papers": list(papers), "mode": cfg.mode, "random_state": cfg.random_state,
            "provenance": prov, "fidelity": fid, "miss_reasons": miss, "tables": summary,
            "figures": [{"title": f["title"], "verdict": _figure_verdict(f, cfg.mode),
                         **({"cells_done": f["cells"]["cells_done"], "cells_total": f["cells"]["cells_total"]}
                            if isinstance(f.get("cells"), dict) else {})} for f in figures],
            "cells_total": cells_total, "cells_run": cells_run, "wall_seconds": round(wall, 1),
            "code": _code_section(results, cfg)}
    with open(os.path.join(out, "report.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return path
