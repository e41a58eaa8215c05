"""SQP-FW benchmark: fit time and active-set steps; Colon 1NN error (reduced Table 2 protocol).

Usage: python benchmarks/bench_sqpfw.py synthetic [sizes...]
       python benchmarks/bench_sqpfw.py colon N_SPLITS THETA [THETA ...]
"""

import sys
import time

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.neighbors import KNeighborsClassifier
from sklearn.preprocessing import StandardScaler

from knnweights import SQPFW
from knnweights.datasets import load


def synthetic(sizes):
    for n in sizes:
        rng = np.random.RandomState(0)
        X = rng.randn(n, 20)
        y = (X[:, 0] + X[:, 1] + 0.3 * rng.randn(n) > 0).astype(int)
        t = time.perf_counter()
        est = SQPFW(theta=1.0, max_iter=20000).fit(X, y)
        print(f"n={n} d=20 theta=1: fit {time.perf_counter() - t:.1f} s, steps {est.n_iter_}, "
              f"nonzero {int((est.feature_importances_ > 0).sum())}, working_set "
              f"{'100' if n > 1000 else 'all'}", flush=True)


def colon(n_splits, thetas):
    X, y = load("colon_alon", return_X_y=True)
    X = np.asarray(X, dtype=float)
    for s in range(n_splits):
        Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=1 / 3, stratify=y, random_state=s)
        sc = StandardScaler().fit(Xtr)
        Xtr, Xte = sc.transform(Xtr), sc.transform(Xte)
        plain = 1 - KNeighborsClassifier(1).fit(Xtr, ytr).score(Xte, yte)
        out = [f"split {s}: plain 1NN {100 * plain:.1f}%"]
        for th in thetas:
            t = time.perf_counter()
            est = SQPFW(theta=th, max_iter=5000).fit(Xtr, ytr)
            err = 1 - KNeighborsClassifier(1).fit(est.transform(Xtr), ytr).score(est.transform(Xte), yte)
            out.append(f"theta={th}: {100 * err:.1f}% ({int((est.feature_importances_ > 0).sum())} genes, "
                       f"{est.n_iter_} steps, {time.perf_counter() - t:.0f} s)")
        print("; ".join(out), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "synthetic":
        synthetic([int(a) for a in sys.argv[2:]] or [200, 1000, 5000])
    else:
        colon(int(sys.argv[2]), [float(a) for a in sys.argv[3:]])
