"""``knnweights demo``: the weighters on a bundled dataset, weighted kNN against plain kNN."""

import os
import time
import warnings

from ..datasets import list_datasets, load
from ..evaluation.compare import collect_warnings
from ..evaluation.knn_accuracy import knn_cv_accuracy
from ..exceptions import UsageError
from ._console import elapsed_ticker, one_line, print_warnings
from ._options import WEIGHTERS, Command, build_weighter, parse_methods

#: methods whose fit can take a minute or more on ten thousand features and more (MDM's LP, SQP-FW's
#: active-set path, which grows with the features); ``demo --methods all`` skips them above WIDE features
SLOW_ON_WIDE = ("MDM", "SQPFW")
#: the demo's default tour: one or two methods of each family, quick to compile and to fit
DEMO_METHODS = ("ReliefF", "MultiSURF", "IRelief", "Simba", "IM4E", "Logo", "NCADiagonal", "SVMRFE")
#: features above which ``--methods all`` skips :data:`SLOW_ON_WIDE`
WIDE = 5000


def _add_arguments(p):
    """Add the arguments of ``demo``."""
    p.add_argument("--dataset", default="ionosphere", help="a bundled dataset (default: ionosphere)")
    p.add_argument("--methods", metavar="A,B,...", default=None,
                   help="weighters, comma-separated, or 'all' (every weighter fast at this size; default: "
                        f"{','.join(DEMO_METHODS)})")
    p.add_argument("-k", type=int, default=3, help="neighbours of the kNN (default: 3)")
    p.add_argument("--random-state", type=int, default=0)


def _run(args):
    """Fit the weighters on a bundled dataset, weighted kNN against plain kNN; the exit status."""
    if args.dataset not in list_datasets():
        hint = (f"; for your own file use: knnweights evaluate {args.dataset} --target COLUMN"
                if os.path.exists(args.dataset) or "." in args.dataset else "")
        raise UsageError(f"--dataset: unknown bundled dataset {args.dataset!r} (see: knnweights datasets){hint}")
    X, y = load(args.dataset, return_X_y=True, missing="median")
    n, d = X.shape
    tour = args.methods is None
    if tour:
        names, slow = list(DEMO_METHODS), []
    elif str(args.methods).strip().lower() == "all":
        names = sorted(WEIGHTERS)
        slow = [m for m in names if m in SLOW_ON_WIDE] if d > WIDE else []
        names = [m for m in names if m not in slow]
    else:
        names, slow = parse_methods(args.methods), []
    base = knn_cv_accuracy(X, y, n_neighbors=args.k, random_state=args.random_state)
    print(f"{args.dataset}: {n} x {d}, 5-fold CV accuracy of {args.k}-NN"
          + (f" (a tour of {len(names)} methods; --methods all runs every weighter)" if tour else ""))
    if slow:
        print(f"(skipping {', '.join(slow)}: slow at {d} features; add --methods {','.join(slow)} to run them)")
    print(f"{'plain kNN':14s} {100 * base:6.2f} %", flush=True)
    warn = []
    for i, name in enumerate(names, start=1):
        est = build_weighter(name, args.random_state)
        t = time.perf_counter()
        try:
            with warnings.catch_warnings(record=True) as record, elapsed_ticker(f"  [{i}/{len(names)}] {name}:"):
                warnings.simplefilter("always")
                acc = knn_cv_accuracy(X, y, est, n_neighbors=args.k, random_state=args.random_state)
        except NotImplementedError as exc:
            print(f"{name:14s} {'n/a':>6s}   ({one_line(exc)})", flush=True)
            continue
        except Exception as exc:  # noqa: BLE001 - one method failing must not hide the others
            print(f"{name:14s} {'error':>6s}   ({type(exc).__name__}: {' '.join(str(exc).split())})", flush=True)
            continue
        print(f"{name:14s} {100 * acc:6.2f} %  ({time.perf_counter() - t:.1f} s)", flush=True)
        warn.extend(f"{name} on {args.dataset}: {text}" + (f" ({count}x over the 5 folds)" if count > 1 else "")
                    for _, text, count in collect_warnings(record))
    print_warnings(warn)
    return 0


COMMAND = Command(
    "demo", help="fit the weighters on a bundled dataset, weighted vs plain kNN",
    description="5-fold CV of weighted kNN (each weighter) against plain kNN on a bundled dataset: a tour of "
                "one or two methods per family, or --methods all. On wide data (more than "
                f"{WIDE} features) the methods that can take minutes there ({', '.join(SLOW_ON_WIDE)}) are "
                "skipped by 'all' unless --methods names them.",
    run=_run, add_arguments=_add_arguments)
