"""``knnweights reproduce PAPER``: the papers' experiments beside the papers' numbers
(:func:`knnweights.reproduce.reproduce`), or ``--check-report`` of a report made before."""

import os
import sys

from ..evaluation.distributed import use_scheduler
from ..reproduce import PAPERS, check_report, reproduce
from ..reproduce import __doc__ as _REPRODUCE_DOC
from ._options import Command, add_scheduler_argument


def _add_arguments(p):
    """Add the arguments of ``reproduce``."""
    p.add_argument("paper", nargs="?", default="all", choices=[*PAPERS, "all"], help="default: all")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="reduced protocol (default): minutes")
    g.add_argument("--full", action="store_true", help="the papers' protocols: hours")
    g.add_argument("--tiny", action="store_true", help="smoke test: seconds")
    p.add_argument("--out", default="knnweights-results", help="output folder (default: knnweights-results)")
    p.add_argument("--n-jobs", type=int, default=-1,
                   help="parallel cells (joblib; default -1: every core); the numbers do not depend on it")
    p.add_argument("--backend", choices=["dask"], default=None, help="run the cells on a local dask cluster")
    add_scheduler_argument(p)
    p.add_argument("--datasets", nargs="+", default=None,
                   help="restrict to these datasets: bundled names (knnweights datasets) or the tables' labels")
    p.add_argument("--tables", nargs="+", default=None,
                   help="restrict to these tables (e.g. im4e_table5); a figure prefix (lhrelief_fig1) computes "
                        "only the figures whose names start with it")
    p.add_argument("--methods", nargs="+", default=None,
                   help="restrict the tables to these method columns, by the labels they print (e.g. IB1 SIM); "
                        "figures are not run")
    p.add_argument("--random-state", type=int, default=0)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--report-only", action="store_true",
                   help="compute nothing: write the report from the cells in OUT/store (a stopped run says per table "
                        "'partial: k / N cells')")
    p.add_argument("--check-report", metavar="REPORT_MD", default=None,
                   help="say whether REPORT_MD (a report.md) was made by the code installed now; exit 1 if not")
    p.add_argument("--revalidate", type=int, default=0, metavar="N",
                   help="keep stored cells made by other algorithm versions when N of them per method and dataset (per "
                        "estimator for figure cells), recomputed, give the same results (a refactor that keeps the "
                        "numbers); default 0: recompute them all")


def _run(args):
    """Run ``reproduce`` as the arguments say, or check a report; the exit status (0, 1 for a report made by
    other algorithm versions, 2 for bad input)."""
    if args.check_report:
        if not os.path.isfile(args.check_report):
            print(f"knnweights reproduce: error: no report at {args.check_report!r}", file=sys.stderr)
            return 2
        res = check_report(args.check_report)
        print(res["message"])
        return 0 if res["match"] else 1
    mode = "full" if args.full else ("tiny" if args.tiny else "quick")
    scheduler = getattr(args, "scheduler", None)
    if scheduler and args.backend:
        print("knnweights reproduce: error: --scheduler and --backend dask both choose where the cells run; "
              "give one of them.", file=sys.stderr)
        return 2
    try:
        # --scheduler ADDRESS (or $DASK_SCHEDULER_ADDRESS, unless --backend is given): the cells run on that
        # cluster's workers; the numbers do not depend on where (every cell's seed comes from its names)
        with use_scheduler(None if args.backend else scheduler) as client:
            if client is not None:
                print(f"knnweights reproduce: running the cells on the dask scheduler at {client.scheduler.address}",
                      file=sys.stderr, flush=True)
            reproduce(args.paper, mode=mode, out=args.out, n_jobs=args.n_jobs, backend=args.backend,
                      datasets=args.datasets, progress=None if not args.no_progress else False,
                      tables=args.tables, random_state=args.random_state,
                      compute=not getattr(args, "report_only", False), revalidate=getattr(args, "revalidate", 0),
                      methods=getattr(args, "methods", None))
    except ValueError as exc:  # a bad --datasets / --tables value: say which, exit 2 like argparse
        print(f"knnweights reproduce: error: {exc}", file=sys.stderr)
        return 2
    return 0


COMMAND = Command("reproduce", help="rerun a paper's experiments and compare with its numbers",
                  description=_REPRODUCE_DOC.split("\n\n")[1] if _REPRODUCE_DOC else None,
                  run=_run, add_arguments=_add_arguments)
