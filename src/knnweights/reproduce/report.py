"""Markdown report and CSV files of a ``knnweights reproduce`` run."""

import csv
import json
import os

__all__ = ["write_table_csv", "table_markdown", "write_report", "fidelity"]


def _fmt(v, nd=2):
    if v is None or v == "":
        return ""
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def write_table_csv(result, folder):
    """``<folder>/<table>.csv`` (our numbers beside the paper's) and ``<table>_wtl.csv``."""
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
    return paths


def table_markdown(result):
    """The table in Markdown: one line per dataset x method, ours beside the paper's."""
    spec = result.spec
    unit = "error %" if spec.metric == "error" else ("value" if spec.metric not in ("accuracy",) else "accuracy %")
    lines = [f"### {spec.title}", "", spec.caption, "",
             f"| dataset | method | paper ({unit}) | ours mean | ours std | n | diff | within tolerance | status / stand-in |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    nd = 4 if spec.metric == "stability" else 2
    for r in result.rows:
        within = {True: "yes", False: "no", None: ""}[r["within"]]
        note = r["status"] if r["status"] != "ok" else (r.get("stand_in") or "")
        if r.get("dataset_note"):
            note = f"{note} [{r['dataset_note']}]" if note else f"[{r['dataset_note']}]"
        extra = [k for k in r if k.startswith("ours_median_")]
        for k in extra:
            note += f" median {k[len('ours_median_'):]} = {_fmt(r[k], 0)}"
        lines.append(f"| {r['dataset']} | {r['method']} | {r.get('paper_as_printed') or _fmt(r['paper'])} | "
                     f"{_fmt(r['ours_mean'], nd)} | {_fmt(r['ours_std'], nd)} | {r['n_cells'] or ''} | {_fmt(r['diff'], nd)} | "
                     f"{within} | {note} |")
    if result.wtl:
        rule = ("p < 0.01 and >= 0.5 points, counted from the competitor's side vs " + spec.reference
                if spec.wtl_rule == "im4e" else "paired t-test vs " + spec.reference + ", p < 0.05")
        lines += ["", f"W/T/L ({rule}):", "",
                  "| method | ours W/T/L | paper W/T/L | per-dataset directions agreeing |", "| --- | --- | --- | --- |"]
        for r in result.wtl:
            lines.append(f"| {r['method']} | {r['ours']} | {r['paper'] or 'n/a'} | {r['agree']}/{r['compared']} |")
        if spec.wtl_rule == "lhrelief":
            lines += ["", "p-values of our paired t-tests (competitor vs LH-RELIEF):", ""]
            for r in result.wtl:
                ps = ", ".join(f"{p['dataset']}: {p['p_value']:.3g} ({p['ours']}; paper {p['paper'] or 'n/a'})"
                               for p in r["per_dataset"])
                lines.append(f"- {r['method']}: {ps}")
    lines.append("")
    return "\n".join(lines)


def fidelity(results):
    """Cells within tolerance, cells compared, W/T/L directions agreeing, directions compared."""
    within = compared = agree = dirs = 0
    for res in results:
        for r in res.rows:
            if r["within"] is not None:
                compared += 1
                within += int(r["within"])
        for w in res.wtl:
            agree += w["agree"]
            dirs += w["compared"]
    return {"cells_within": within, "cells_compared": compared, "wtl_agree": agree, "wtl_compared": dirs}


def write_report(out, papers, results, figures, notes, wall, cfg, cells_total, cells_run):
    """Write ``out/report.md``; returns its path."""
    fid = fidelity(results)
    lines = ["# knnweights reproduce: our numbers beside the papers'", "",
             f"Command: `knnweights reproduce {' '.join(papers) if len(papers) == 1 else 'all'} --{cfg.mode} "
             f"--out {out}`; papers: {', '.join(papers)}; mode `{cfg.mode}`; wall time {wall:.0f} s; "
             f"cells {cells_total} ({cells_run} computed in this run, {cells_total - cells_run} read from the store).",
             "",
             "Each table lists every method and dataset of the paper's table. Rows we cannot compute say why "
             "(`not bundled`, `not available`, `not implemented`). Where a scikit-learn (or knnweights) "
             "estimator stands in for the paper's WEKA / MATLAB one, the last column says which. "
             "`--quick` runs fewer repeats and coarser grids on the same methods and datasets (captions say where "
             "rows or features were subsampled); its numbers are noisier than the paper's protocol.", "",
             "## Fidelity summary", "",
             f"- cells within 2 of our standard errors + 2 points of the paper's number (stability: + 0.02): "
             f"**{fid['cells_within']} / {fid['cells_compared']}**",
             f"- W/T/L directions (per dataset) agreeing with the paper's: **{fid['wtl_agree']} / {fid['wtl_compared']}**",
             ""]
    for res in results:
        files = ", ".join(f"[{os.path.basename(p)}]({os.path.basename(p)})" for p in res.files)
        fr = fidelity([res])
        lines.append(f"- {res.spec.title}: {fr['cells_within']}/{fr['cells_compared']} cells within; W/T/L "
                     f"{fr['wtl_agree']}/{fr['wtl_compared']}; {res.cells_total} cells; {res.seconds:.0f} s ({files})")
    lines.append("")
    lines.append("## Tables")
    lines.append("")
    for res in results:
        lines.append(table_markdown(res))
    if figures:
        lines += ["## Figures", ""]
        for f in figures:
            lines += [f"### {f['title']}", ""]
            if f.get("png"):
                lines += [f"![{f['title']}]({os.path.basename(f['png'])})", ""]
            lines += [f"**Paper's claim:** {f['claim']}", "", f"**Ours:** {f.get('ours', '')}", ""]
    if notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    path = os.path.join(out, "report.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines))
    return path
