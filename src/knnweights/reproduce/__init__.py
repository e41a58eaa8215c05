"""``knnweights reproduce PAPER``: the papers' experiments with one command, beside the papers' numbers.

``PAPER`` is one of ``im4e``, ``lh-relief``, ``sqp-fw``, ``mdm``, ``efw`` or ``all``.  Every
table and figure the bundled data allows is recomputed (``--full``: the paper's protocol;
``--quick``: fewer repeats and coarser grids on the same methods and datasets) and written
to ``--out`` as CSV, PNG and a Markdown ``report.md`` with a fidelity summary.  Runs are
resumable: finished cells are kept in ``OUT/store/*.jsonl``
(:class:`knnweights.evaluation.ResultStore`) and skipped when the command is run again.

Python API: :func:`reproduce`.
"""

import contextlib
import importlib
import os
import sys
import time
import warnings

from sklearn.exceptions import ConvergenceWarning

from ..datasets import ALIASES, list_datasets
from ..engine._dask import local_cluster
from ..weighters import WEIGHTERS
from .report import check_report, fidelity, write_report, write_table_csv
from .tables import Config, run_table

__all__ = ["PAPERS", "reproduce", "resolve_datasets", "resolve_methods", "check_report"]

#: the papers by their command-line name -> their module
PAPERS = {"im4e": "im4e", "lh-relief": "lhrelief", "sqp-fw": "sqpfw", "mdm": "mdm", "efw": "efw"}


def _module(paper):
    return importlib.import_module(f".{PAPERS[paper]}", __name__)


def _specs(papers):
    for p in papers:
        for spec in _module(p).tables():
            for ds in spec.datasets:
                yield p, ds


def resolve_datasets(names, papers=None):
    """The names ``--datasets`` selects, or a ValueError naming the valid ones.

    A name may be a bundled dataset (``knnweights datasets``: ``colon_alon``), a paper's
    dataset key (``colon_alon1999``) or the label a paper's table prints (``Colon``,
    ``IONO``); case does not matter.  Returns every label, key and bundled name of the
    table rows selected (so each paper module recognises its own), in a sorted tuple.

    Parameters
    ----------
    names : sequence of str
        The names given.
    papers : sequence of str, optional
        The papers whose table labels an error message lists (default: all).

    Returns
    -------
    tuple of str
    """
    papers = list(PAPERS) if papers is None else list(papers)
    bundled = set(list_datasets())
    rows = list(_specs(list(PAPERS)))
    extra_keys = {}  # paper keys used by modules outside their TableSpecs (e.g. EFW's stability rows)
    for p in PAPERS:
        extra_keys.update(getattr(_module(p), "_KEYS", {}))

    def canon(n):
        n = ALIASES.get(n, extra_keys.get(n, n))
        return n if n in bundled else None

    lower = {}
    for _, ds in rows:
        for n in ds.names():
            lower.setdefault(n.lower(), n)
    for n in [*bundled, *ALIASES, *extra_keys]:
        lower.setdefault(n.lower(), n)
    selected, unknown = set(), []
    for raw in names:
        name = lower.get(str(raw).lower())
        if name is None:
            unknown.append(raw)
            continue
        exact = [ds for _, ds in rows if name in (ds.label, ds.key)]
        target = {ds.bundled for ds in exact} - {None} or {canon(name)} - {None}
        hits = exact + [ds for _, ds in rows if ds.bundled is not None and ds.bundled in target]
        selected.add(name)
        selected.update(target)
        for ds in hits:
            selected.update(ds.names())
        selected.update(k for k in [*ALIASES, *extra_keys] if canon(k) in target)
    if unknown:
        labels = sorted({ds.label for p, ds in rows if p in papers})
        raise ValueError(f"unknown dataset(s) {', '.join(map(repr, unknown))} for --datasets; use a bundled name "
                         f"({', '.join(sorted(bundled))}) or a table label ({', '.join(labels)}).")
    return tuple(sorted(selected))


def resolve_methods(names, papers=None, tables=None):
    """The method labels ``--methods`` selects (as the tables print them), or a ValueError naming the valid ones.

    Case does not matter, a comma separates names as in ``rank --methods A,B``; only the tables
    of ``papers`` (and of ``tables`` when given) count.

    Parameters
    ----------
    names : sequence of str
        The labels given.
    papers : sequence of str, optional
        The papers whose tables count (default: all).
    tables : sequence of str, optional
        The table names that count (default: every table of ``papers``).

    Returns
    -------
    tuple of str
        The labels as the tables print them, in the order given.
    """
    papers = list(PAPERS) if papers is None else list(papers)
    labels = {}
    for p in papers:
        for spec in _module(p).tables():
            if tables is None or spec.name in tables:
                for m in spec.methods:
                    labels.setdefault(m.label.lower(), m.label)
    names = [part.strip() for n in names for part in str(n).split(",") if part.strip()]  # "IB1,SIM" as rank's
    unknown = [n for n in names if str(n).lower() not in labels]
    if unknown:
        raise ValueError(f"unknown method(s) {', '.join(map(repr, unknown))} for --methods; the tables' method "
                         f"labels: {', '.join(sorted(set(labels.values())))}.")
    return tuple(dict.fromkeys(labels[str(n).lower()] for n in names))


@contextlib.contextmanager
def _backend(name, n_jobs):
    """Run the cells with joblib's current backend, or (``"dask"``) on a new local dask cluster.

    The cluster has ``n_jobs`` worker processes (every core for ``None`` or a negative value).
    """
    if name in (None, "loky", "default"):
        yield
        return
    if name != "dask":
        raise ValueError(f"unknown backend {name!r}; use 'dask' or leave it out.")
    with local_cluster((os.cpu_count() or 1) if n_jobs is None or n_jobs < 0 else max(1, n_jobs)):
        yield


def reproduce(paper="all", mode="quick", out="knnweights-results", n_jobs=-1, backend=None, datasets=None,
              progress=None, tables=None, verbose=True, random_state=0, compute=True, revalidate=0, methods=None):
    """Run a paper's experiments and write ``out/report.md``.

    Parameters
    ----------
    paper : {"im4e", "lh-relief", "sqp-fw", "mdm", "efw", "all"}
        The paper whose experiments run (``all``: every one).
    mode : {"quick", "full", "tiny"}
        ``full``: the paper's protocol; ``quick``: reduced (minutes); ``tiny``: a smoke test (seconds).
    out : str
        Output folder (tables as CSV, PNG plots, ``report.md``, the resumable ``store/``).
    n_jobs : int, default=-1
        Parallel cells (joblib); -1: every core.  The numbers do not depend on it (every
        cell has its own seed).
    backend : {None, "dask"}
        ``"dask"`` runs the cells on a local ``dask.distributed`` cluster.
    datasets : list of str, optional
        Restrict the tables to these datasets: bundled names (``colon_alon``), paper keys
        or the labels the tables print (``Colon``); an unknown name raises ValueError
        naming the valid ones (see :func:`resolve_datasets`).
    progress : bool, optional
        A progress bar per table on stderr (time left; one line per tenth when stderr is
        not a terminal); default: when ``verbose``.
    tables : list of str, optional
        Restrict to these table names (e.g. ``["im4e_table5"]``).  Names that start with a
        paper's figure prefix (``lhrelief_fig``, ``lhrelief_fig1``, ``efw_fig2``...) select the
        figures whose store names start with them: only those are computed, the paper's other
        figures are read from the store.  ``[]`` runs every figure and no table.
    methods : list of str, optional
        Restrict the tables to these method columns, by the labels the tables print
        (``IB1``, ``SIM``, ``SQP-FW``; case does not matter); the other columns say "not
        run (method not selected)".  The figures and the papers' own tables (EFW
        stability) have no method columns and are not run.  Meant for resuming a long
        ``--full`` run cheapest columns first; an unknown label raises ValueError naming
        the valid ones.
    verbose : bool, default=True
        Status lines on stderr.
    random_state : int, default=0
        The root seed of every cell.
    compute : bool, default=True
        ``False`` (``--report-only``): compute nothing, write the report from the cells in
        ``out/store/`` (a stopped run's report says per table "partial: k / N cells").
    revalidate : int, default=0
        ``--revalidate N``: stored cells made by other algorithm versions are kept when N of them per
        (method, dataset), recomputed now, give the same results (see
        :func:`knnweights.evaluation.run_grid`); otherwise they are all recomputed.  Figure
        cells likewise, N per estimator (the largest noise count first).

    Returns
    -------
    dict
        ``results`` (TableResult per table), ``figures``, ``report`` (path), ``wall``
        (seconds), ``fidelity``, ``cells_total``, ``cells_run``.
    """
    papers = list(PAPERS) if paper == "all" else [paper]
    for p in papers:
        if p not in PAPERS:
            raise ValueError(f"unknown paper {p!r}; choose from {', '.join(PAPERS)} or all.")
    if mode not in ("tiny", "quick", "full"):
        raise ValueError(f"mode must be 'tiny', 'quick' or 'full', got {mode!r}.")
    if isinstance(datasets, str):
        datasets = [datasets]
    selected = resolve_datasets(datasets, papers) if datasets else None
    if tables:
        known = {spec.name for p in papers for spec in _module(p).tables()}
        bad = [t for t in tables if t not in known and not any(t.startswith(PAPERS[p] + "_") for p in papers)]
        if bad:
            raise ValueError(f"unknown table(s) {', '.join(map(repr, bad))} for {', '.join(papers)}; the tables: "
                             f"{', '.join(sorted(known))} (and the papers' custom tables, e.g. efw_stability_m5, "
                             f"and figures by prefix, e.g. lhrelief_fig1).")
    if isinstance(methods, str):
        methods = [methods]
    chosen = resolve_methods(methods, papers, tables) if methods else None
    command = " ".join(["knnweights reproduce", paper, f"--{mode}", "--out", str(out)]
                       + (["--datasets", *map(str, datasets)] if datasets else [])
                       + (["--tables", *tables] if tables else [])
                       + (["--methods", *chosen] if chosen else []))
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if verbose else None
    cfg = Config(mode=mode, out=out, n_jobs=n_jobs, progress=progress,
                 datasets=selected, random_state=random_state, log=log, compute=compute, revalidate=revalidate,
                 methods=chosen)
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    with warnings.catch_warnings():
        # iterative weighters warn when they stop at max_iter (reduced on purpose in --quick / --tiny)
        warnings.simplefilter("ignore", ConvergenceWarning)
        old = os.environ.get("PYTHONWARNINGS")
        # the same in the joblib worker processes (they read it when they start)
        # (by message: a -W category must be a builtin; ConvergenceWarning is a UserWarning)
        quiet = [f"ignore:{name} stopped at max_iter" for name in WEIGHTERS]
        quiet += [f"ignore:{name}:UserWarning" for name in WEIGHTERS]
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [old, *quiet]))
        try:
            # --methods: the method columns of the tables only (figures and custom tables have none)
            return _reproduce(papers, cfg, backend, n_jobs, tables, t0, out, command, extras=chosen is None)
        finally:
            if old is None:
                os.environ.pop("PYTHONWARNINGS", None)
            else:
                os.environ["PYTHONWARNINGS"] = old


def _figure_names(paper, tables):
    """The names in ``tables`` that select figures of ``paper`` (they start with ``<paper>_fig``)."""
    return [t for t in tables or () if t.startswith(PAPERS[paper] + "_fig")]


def _reproduce(papers, cfg, backend, n_jobs, tables, t0, out, command=None, extras=True):
    results, figures, notes = [], [], []
    todo = [spec.name for p in papers for spec in _module(p).tables() if tables is None or spec.name in tables]
    with _backend(backend, n_jobs):
        for p in papers:
            mod = _module(p)
            for spec in mod.tables():
                if tables is not None and spec.name not in tables:
                    continue
                cfg.table_no = (todo.index(spec.name) + 1, len(todo))
                cfg.say(f"[{p}] {spec.title}")
                res = run_table(spec, cfg)
                res.files = write_table_csv(res, out)
                results.append(res)
                cfg.say(f"[{p}] {spec.name}: {res.cells_total} cells ({res.cells_run} run) in {res.seconds:.0f} s")
            figs_only = _figure_names(p, tables)
            if extras and hasattr(mod, "custom_tables") and (tables is None or any(
                    t.startswith(PAPERS[p]) and t not in figs_only for t in tables)):
                for res in mod.custom_tables(cfg):
                    if tables is not None and res.spec.name not in tables:
                        continue
                    res.files = write_table_csv(res, out)
                    results.append(res)
                    cfg.say(f"[{p}] {res.spec.name}: {res.cells_total} values in {res.seconds:.0f} s")
            if extras and (not tables or figs_only):
                t1 = time.monotonic()
                cfg.figures = tuple(figs_only) or None
                try:
                    figs = mod.figures(cfg, out)
                except NotImplementedError as exc:
                    figs = [{"title": f"{p} figures", "claim": "", "ours": f"not implemented: {exc}"}]
                except Exception as exc:  # noqa: BLE001 - reported, the other papers still run
                    figs = [{"title": f"{p} figures", "claim": "", "ours": f"failed: {type(exc).__name__}: {exc}"}]
                finally:
                    cfg.figures = None
                figures.extend(figs)
                cfg.say(f"[{p}] figures: {len(figs)} in {time.monotonic() - t1:.0f} s")
            notes.extend(getattr(mod, "NOTES", []))
    wall = time.monotonic() - t0
    cells_total = sum(r.cells_total for r in results)
    cells_run = sum(r.cells_run for r in results)
    report = write_report(out, papers, results, figures, notes, wall, cfg, cells_total, cells_run,
                          command=command)
    fid = fidelity(results)
    if fid["cells_compared"] or fid["wtl_compared"]:
        fid_text = (f"fidelity: {fid['cells_within']}/{fid['cells_compared']} cells within 2 SE + 2 points, "
                    f"W/T/L directions {fid['wtl_agree']}/{fid['wtl_compared']}")
        if fid["best_compared"]:
            fid_text += f", the paper's best ours or tied in {fid['best_agree']}/{fid['best_compared']} rows"
    else:
        fid_text = "fidelity: no paper numbers to compare with in these tables"
    cfg.say(f"done in {wall:.0f} s: {cells_total} cells ({cells_run} computed, {cells_total - cells_run} from the "
            f"store); {fid_text}; report: {report}")
    return {"results": results, "figures": figures, "report": report, "wall": wall, "fidelity": fid,
            "cells_total": cells_total, "cells_run": cells_run}

