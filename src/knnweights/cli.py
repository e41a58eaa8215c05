"""The ``knnweights`` command line: ``datasets``, ``demo`` (and ``reproduce``)."""

import argparse
import sys
import time

import numpy as np


def _cmd_datasets(args):
    from .datasets import dataset_info, list_datasets

    rows = [dataset_info(n) for n in list_datasets()]
    print(f"{'name':34s} {'n':>6s} {'d':>6s} {'classes':>7s}  source / papers")
    for r in rows:
        print(f"{r['name']:34s} {r['n']:6d} {r['d']:6d} {r['classes']:7d}  {r['source']}")
        print(f"{'':58s}{r['papers']}")
    print(f"{len(rows)} datasets bundled (no network needed).")
    return 0


def _cmd_demo(args):
    """Fit every implemented weighter on a bundled dataset; weighted kNN vs plain kNN."""
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from . import WEIGHTERS
    from .classifiers import WeightedKNN
    from .datasets import load

    X, y = load(args.dataset, return_X_y=True, missing="median")
    cv = StratifiedKFold(5, shuffle=True, random_state=args.random_state)
    base = cross_val_score(make_pipeline(StandardScaler(), KNeighborsClassifier(args.k)), X, y, cv=cv).mean()
    print(f"{args.dataset}: {X.shape[0]} x {X.shape[1]}, 5-fold CV accuracy of {args.k}-NN")
    print(f"{'plain kNN':14s} {100 * base:6.2f} %")
    for name, cls in sorted(WEIGHTERS.items()):
        est = cls()
        if "random_state" in est.get_params():
            est.set_params(random_state=args.random_state)
        t = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                acc = cross_val_score(make_pipeline(StandardScaler(), WeightedKNN(est, args.k)), X, y, cv=cv,
                                      error_score="raise").mean()
        except NotImplementedError as exc:
            print(f"{name:14s} {'n/a':>6s}   ({exc})")
            continue
        except Exception as exc:  # one method failing must not hide the others
            print(f"{name:14s} {'error':>6s}   ({type(exc).__name__}: {exc})")
            continue
        print(f"{name:14s} {100 * acc:6.2f} %  ({time.perf_counter() - t:.1f} s)")
    return 0


def build_parser():
    p = argparse.ArgumentParser(prog="knnweights", description="Feature weighting for nearest-neighbour classification.")
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("datasets", help="list the bundled datasets with sizes and sources")
    d.set_defaults(func=_cmd_datasets)
    demo = sub.add_parser("demo", help="fit every weighter on a bundled dataset, weighted vs plain kNN")
    demo.add_argument("--dataset", default="ionosphere")
    demo.add_argument("-k", type=int, default=3)
    demo.add_argument("--random-state", type=int, default=0)
    demo.set_defaults(func=_cmd_demo)
    try:
        from .reproduce import add_parser as _add_reproduce
    except ImportError:
        pass
    else:
        _add_reproduce(sub)
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    np.seterr(all="ignore")
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
