"""Relief on censored survival outcomes (RReliefF / MultiSURF on the null Cox model's martingale residuals).

Detection: ``--reps`` data sets of ``n`` samples and ``d`` standard normal features with hazard
``exp(1.5 x0 x1 + 0.8 x2)`` (an interaction and a main effect), exponential event times and
independent exponential censoring (about 50 % censored); the ranks of ``x0, x1, x2`` under
``ReliefF`` and ``MultiSURF`` on the survival outcome, and under the univariate Cox score test
(which cannot see the interaction).

Calibration: ``--null-reps`` data sets of ``n`` samples and ``--null-d`` features independent of
a Weibull(1.5) outcome with exponential censoring (30-60 % censored); ``pvalues=True``
(the outcome-permutation (Mantel) null of the pair statistic); the fraction of the pooled
p-values at or below 0.05 and 0.01 and the KS test of their uniformity.

Usage::

    python benchmarks/relief_survival.py --out benchmarks/relief_survival.md
"""

import argparse
import platform

import numpy as np
from scipy import stats

from knnweights.weighters import MultiSURF, ReliefF, make_survival_target
from knnweights.weighters._relief_survival import cox_score_test

METHODS = {"ReliefF": lambda **kw: ReliefF(n_neighbors=10, **kw), "MultiSURF": lambda **kw: MultiSURF(**kw)}


def planted(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    T = rng.exponential(1.0 / np.exp(1.5 * X[:, 0] * X[:, 1] + 0.8 * X[:, 2]))
    C = rng.exponential(1.0, size=n)
    return X, make_survival_target(T <= C, np.minimum(T, C))


def null(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    T, C = rng.weibull(1.5, n), rng.exponential(1.2, n)
    return X, make_survival_target(T <= C, np.minimum(T, C))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--d", type=int, default=50)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--null-n", type=int, default=200)
    ap.add_argument("--null-d", type=int, default=500)
    ap.add_argument("--null-reps", type=int, default=10)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    lines = ["# Relief on survival outcomes (martingale residuals of the null Cox model)", "",
             f"Machine: {platform.machine()}, Python {platform.python_version()}. Command: "
             f"`python benchmarks/relief_survival.py --n {a.n} --d {a.d} --reps {a.reps} --null-n {a.null_n} "
             f"--null-d {a.null_d} --null-reps {a.null_reps}`", "",
             f"## Planted features (hazard exp(1.5 x0 x1 + 0.8 x2), n = {a.n}, d = {a.d}, {a.reps} data sets)", "",
             "| data set | censored | " + " | ".join(f"{m} ranks x0, x1, x2" for m in METHODS)
             + " | Cox score ranks x0, x1, x2 |", "|---|---|" + "---|" * (len(METHODS) + 1)]
    for r in range(a.reps):
        X, y = planted(a.n, a.d, r)
        cells = []
        for make in METHODS.values():
            rank = make().fit(X, y).ranking_
            cells.append(", ".join(str(int(rank[j])) for j in range(3)))
        z, p = cox_score_test(X, y["time"], y["event"])
        order = np.lexsort((-np.abs(z), p))
        crank = np.empty(a.d, int)
        crank[order] = np.arange(1, a.d + 1)
        cells.append(", ".join(str(int(crank[j])) for j in range(3)))
        lines.append(f"| {r} | {1 - y['event'].mean():.0%} | " + " | ".join(cells) + " |")
    lines += ["", f"## Null calibration (n = {a.null_n}, {a.null_d} null features x {a.null_reps} outcomes)", "",
              "| method | censored (range) | p-values | frac <= 0.05 | frac <= 0.01 | KS p |",
              "|---|---|---|---|---|---|"]
    for name, make in METHODS.items():
        ps, cens = [], []
        for r in range(a.null_reps):
            X, y = null(a.null_n, a.null_d, 1000 + r)
            cens.append(1 - y["event"].mean())
            ps.append(make(pvalues=True).fit(X, y).pvalues_)
        p = np.concatenate(ps)
        lines.append(f"| {name} | {min(cens):.0%}-{max(cens):.0%} | {p.size} | {np.mean(p <= 0.05):.4f} | "
                     f"{np.mean(p <= 0.01):.4f} | {stats.kstest(p, 'uniform').pvalue:.3g} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
