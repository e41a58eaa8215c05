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
import os
import sys
import time
import warnings

from sklearn.exceptions import ConvergenceWarning

from .tables import Config, run_table

__all__ = ["PAPERS", "reproduce", "add_parser"]

PAPERS = {"im4e": "im4e", "lh-relief": "lhrelief", "sqp-fw": "sqpfw", "mdm": "mdm", "efw": "efw"}


def _module(paper):
    import importlib

    return importlib.import_module(f".{PAPERS[paper]}", __name__)


@contextlib.contextmanager
def _backend(name, n_jobs):
    if name in (None, "loky", "default"):
        yield
        return
    if name != "dask":
        raise ValueError(f"unknown backend {name!r}; use 'dask' or leave it out.")
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise SystemExit("--backend dask needs dask.distributed: pip install 'dask[distributed]'") from exc
    import joblib

    cluster = LocalCluster(n_workers=n_jobs or 1, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    try:
        with joblib.parallel_backend("dask"):
            yield
    finally:
        client.close()
        cluster.close()


def reproduce(paper="all", mode="quick", out="knnweights-results", n_jobs=None, backend=None, datasets=None,
              progress=None, tables=None, verbose=True, random_state=0):
    """Run a paper's experiments and write ``out/report.md``.

    Parameters
    ----------
    paper : {"im4e", "lh-relief", "sqp-fw", "mdm", "efw", "all"}
    mode : {"quick", "full", "tiny"}
        ``full``: the paper's protocol; ``quick``: reduced (minutes); ``tiny``: a smoke test (seconds).
    out : str
        Output folder (tables as CSV, PNG plots, ``report.md``, the resumable ``store/``).
    n_jobs : int, optional
        Parallel cells (joblib).
    backend : {None, "dask"}
        ``"dask"`` runs the cells on a local ``dask.distributed`` cluster.
    datasets : list of str, optional
        Restrict the tables to these dataset keys or labels.
    tables : list of str, optional
        Restrict to these table names (e.g. ``["im4e_table5"]``); ``[]`` runs figures only.
    random_state : int

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
    log = (lambda m: print(m, file=sys.stderr, flush=True)) if verbose else None
    cfg = Config(mode=mode, out=out, n_jobs=n_jobs, progress=progress,
                 datasets=tuple(datasets) if datasets else None, random_state=random_state, log=log)
    os.makedirs(out, exist_ok=True)
    t0 = time.monotonic()
    with warnings.catch_warnings():
        # iterative weighters warn when they stop at max_iter (reduced on purpose in --quick / --tiny)
        warnings.simplefilter("ignore", ConvergenceWarning)
        old = os.environ.get("PYTHONWARNINGS")
        # the same in the joblib worker processes (they read it when they start)
        from .. import WEIGHTERS

        quiet = [f"ignore:{name} stopped at max_iter" for name in WEIGHTERS]
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [old, *quiet]))
        try:
            return _reproduce(papers, cfg, backend, n_jobs, tables, t0, out)
        finally:
            if old is None:
                os.environ.pop("PYTHONWARNINGS", None)
            else:
                os.environ["PYTHONWARNINGS"] = old


def _reproduce(papers, cfg, backend, n_jobs, tables, t0, out):
    from .report import fidelity, write_report, write_table_csv

    results, figures, notes = [], [], []
    with _backend(backend, n_jobs):
        for p in papers:
            mod = _module(p)
            for spec in mod.tables():
                if tables is not None and spec.name not in tables:
                    continue
                cfg.say(f"[{p}] {spec.title}")
                res = run_table(spec, cfg)
                res.files = write_table_csv(res, out)
                results.append(res)
                cfg.say(f"[{p}] {spec.name}: {res.cells_total} cells ({res.cells_run} run) in {res.seconds:.0f} s")
            if hasattr(mod, "custom_tables") and (tables is None or any(t.startswith(p.replace("-", ""))
                                                                         for t in tables)):
                for res in mod.custom_tables(cfg):
                    if tables is not None and res.spec.name not in tables:
                        continue
                    res.files = write_table_csv(res, out)
                    results.append(res)
                    cfg.say(f"[{p}] {res.spec.name}: {res.cells_total} values in {res.seconds:.0f} s")
            if tables is None:
                t1 = time.monotonic()
                try:
                    figs = mod.figures(cfg, out)
                except NotImplementedError as exc:
                    figs = [{"title": f"{p} figures", "claim": "", "ours": f"not implemented: {exc}"}]
                except Exception as exc:  # noqa: BLE001 - reported, the other papers still run
                    figs = [{"title": f"{p} figures", "claim": "", "ours": f"failed: {type(exc).__name__}: {exc}"}]
                figures.extend(figs)
                cfg.say(f"[{p}] figures: {len(figs)} in {time.monotonic() - t1:.0f} s")
            notes.extend(getattr(mod, "NOTES", []))
    wall = time.monotonic() - t0
    cells_total = sum(r.cells_total for r in results)
    cells_run = sum(r.cells_run for r in results)
    report = write_report(out, papers, results, figures, notes, wall, cfg, cells_total, cells_run)
    fid = fidelity(results)
    cfg.say(f"done in {wall:.0f} s: {cells_total} cells ({cells_run} computed, {cells_total - cells_run} from the "
            f"store); fidelity: {fid['cells_within']}/{fid['cells_compared']} cells within 2 SE + 2 points, "
            f"W/T/L directions {fid['wtl_agree']}/{fid['wtl_compared']}; report: {report}")
    return {"results": results, "figures": figures, "report": report, "wall": wall, "fidelity": fid,
            "cells_total": cells_total, "cells_run": cells_run}


def _cmd(args):
    mode = "full" if args.full else ("tiny" if args.tiny else "quick")
    reproduce(args.paper, mode=mode, out=args.out, n_jobs=args.n_jobs, backend=args.backend,
              datasets=args.datasets, progress=None if not args.no_progress else False,
              tables=args.tables, random_state=args.random_state)
    return 0


def add_parser(subparsers):
    """Register ``reproduce`` on the ``knnweights`` command line."""
    p = subparsers.add_parser("reproduce", help="rerun a paper's experiments and compare with its numbers",
                              description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("paper", choices=[*PAPERS, "all"])
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="reduced protocol (default): minutes")
    g.add_argument("--full", action="store_true", help="the papers' protocols: hours")
    g.add_argument("--tiny", action="store_true", help="smoke test: seconds")
    p.add_argument("--out", default="knnweights-results", help="output folder (default: knnweights-results)")
    p.add_argument("--n-jobs", type=int, default=None, help="parallel jobs (joblib)")
    p.add_argument("--backend", choices=["dask"], default=None, help="run the cells on a local dask cluster")
    p.add_argument("--datasets", nargs="+", default=None, help="restrict to these dataset keys or labels")
    p.add_argument("--tables", nargs="+", default=None, help="restrict to these tables (e.g. im4e_table5)")
    p.add_argument("--random-state", type=int, default=0)
    p.add_argument("--no-progress", action="store_true", help="no progress line")
    p.set_defaults(func=_cmd)
    return p
