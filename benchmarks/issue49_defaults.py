"""Issue 49: defaults on data the reproduction did not choose (measurements for issue49_defaults.md).

    python benchmarks/issue49_defaults.py mulrel
    python benchmarks/issue49_defaults.py efw
    python benchmarks/issue49_defaults.py sbmlr
    python benchmarks/issue49_defaults.py lhrelief-fig1 [--folds 3] [--counts 0,100,300,1000] [--jobs 1]
    python benchmarks/issue49_defaults.py timing   (SVM-RFE 2000 x 500 and MDM 80 x 3000, each in a fresh process)
"""

import argparse
import subprocess
import sys
import time
import warnings

import numpy as np


def _rank(w, j):
    return int(np.where(np.argsort(-w, kind="stable") == j)[0][0]) + 1


def mulrel(args):
    from knnweights import IRelief, LHRelief, MulRel, ReliefF

    print("| seed | MulRel (100 rounds) x3 / x17 | MulRel (101 rounds) | stop_reason_ | ReliefF | IRelief | LHRelief |")
    print("|---|---|---|---|---|---|---|")
    for seed in range(args.seeds):
        rng = np.random.RandomState(seed)
        X = rng.randn(300, 60)
        y = np.sign(X[:, 3] - X[:, 17] + 0.5 * rng.randn(300)).astype(int)
        cells = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = MulRel().fit(X, y)
            for est in (MulRel(n_rounds=101), ReliefF(), IRelief(), LHRelief()):
                w = est.fit(X, y).feature_importances_
                cells.append(f"{_rank(w, 3)} / {_rank(w, 17)}")
        w = m.feature_importances_
        print(f"| {seed} | {_rank(w, 3)} / {_rank(w, 17)} | {cells[0]} | {m.stop_reason_} | " + " | ".join(cells[1:]) + " |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("what")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--counts", default="0,100,300,1000")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    {"mulrel": mulrel}[a.what](a)
