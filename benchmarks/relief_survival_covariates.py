"""Covariate-adjusted Relief p-values for a censored survival outcome: calibration and cost.

Calibration: ``--reps`` data sets of ``n`` samples with a numeric covariate ``c`` and a binary
covariate ``s`` that drive the hazard (``exp(1.5 c + 0.5 s)``, Weibull(1.5) event times) and, for
``s``, the censoring (exponential, mean 1 when ``s = 1`` and 2 otherwise: 35-50 % censored),
``--n-conf`` confounded features (``c`` plus noise of sd 0.5: related to the outcome only through
``c``), ``--n-null`` noise features and, in the "signal" scenario, one feature with an effect
beyond the covariates (``+1.0 x`` in the log hazard).  For ``ReliefF`` and ``MultiSURF`` with
``pvalues=True``, without covariates (the outcome permutation of the martingale residuals) and with
``covariates=[c, s]`` (NPDR's pair regression against outcomes redrawn from a Cox model on the
covariates, :func:`knnweights.weighters._relief_survival.redraw_survival`): the columns of
``relief_covariates.md``.

Cost: ``ReliefF(pvalues=True)`` at ``(2000, 500)`` on a survival outcome without and with 10
numeric covariates, median of ``--repeat`` fits after a warm-up fit.

Usage::

    python benchmarks/relief_survival_covariates.py --out benchmarks/relief_survival_covariates.md
"""

import argparse
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relief_covariates import cpu_name, ks_pvalue, median_time, table  # noqa: E402

from knnweights.weighters import MultiSURF, ReliefF, make_survival_target  # noqa: E402


def make_data(n, n_conf, n_null, signal, rng):
    """``(X, y, covariates, roles)``: roles 'conf', 'null', 'signal' per column of X."""
    c, s, x_sig = rng.normal(size=n), rng.integers(0, 2, n), rng.normal(size=n)
    T = rng.weibull(1.5, n) / np.exp(1.5 * c + 0.5 * s + (1.0 * x_sig if signal else 0.0))
    C = rng.exponential(np.where(s == 1, 1.0, 2.0))
    cols = [c[:, None] + 0.5 * rng.normal(size=(n, n_conf)), rng.normal(size=(n, n_null))]
    roles = ["conf"] * n_conf + ["null"] * n_null
    if signal:
        cols.append(x_sig[:, None])
        roles.append("signal")
    cov = pd.DataFrame({"c": c, "s": np.array(["no", "yes"])[s]})
    return np.hstack(cols), make_survival_target(T <= C, np.minimum(T, C)), cov, np.array(roles)


def calibration(est_cls, n, n_conf, n_null, reps, seed):
    rows = []
    for scenario in ("null", "signal"):
        pooled = {adj: {"null": [], "conf": [], "signal": []} for adj in (False, True)}
        censored = []
        for r in range(reps):
            X, y, cov, roles = make_data(n, n_conf, n_null, scenario == "signal",
                                         np.random.default_rng([seed, r, scenario == "signal"]))
            censored.append(1 - y["event"].mean())
            for adjusted in (False, True):
                p = est_cls(pvalues=True, random_state=r).fit(X, y, covariates=cov if adjusted else None).pvalues_
                for role in pooled[adjusted]:
                    pooled[adjusted][role].extend(p[roles == role])
        for adjusted in (False, True):
            p = {k: np.asarray(v) for k, v in pooled[adjusted].items()}
            rows.append({
                "method": est_cls.__name__, "scenario": scenario,
                "censored": f"{min(censored):.2f}-{max(censored):.2f}",
                "covariates": "c, s" if adjusted else "none", "n_null": p["null"].size,
                "null<=0.05": (p["null"] <= 0.05).mean(), "null<=0.01": (p["null"] <= 0.01).mean(),
                "KS p": ks_pvalue(p["null"]), "conf<=0.05": (p["conf"] <= 0.05).mean(),
                "signal<=0.05": (p["signal"] <= 0.05).mean() if p["signal"].size else float("nan")})
    return rows


def timing(repeat, seed):
    rng = np.random.default_rng(seed)
    n, d, c = 2000, 500, 10
    X, C = rng.normal(size=(n, d)), rng.normal(size=(n, c))
    T = rng.exponential(1.0 / np.exp(X[:, 0] + X[:, 1] + 0.5 * C[:, 0]))
    y = make_survival_target(T <= 1.0, np.minimum(T, 1.0))
    out = {}
    for label, cov in (("without covariates", None), (f"with {c} covariates", C)):
        est = ReliefF(pvalues=True, random_state=0)
        out[label] = median_time(lambda est=est, cov=cov: est.fit(X, y, covariates=cov), repeat)
    base = ReliefF(random_state=0)
    out["weights only (pvalues=False)"] = median_time(lambda: base.fit(X, y), repeat)
    return out, 1 - y["event"].mean()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--n-conf", type=int, default=20)
    ap.add_argument("--n-null", type=int, default=100)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rows = calibration(ReliefF, args.n, args.n_conf, args.n_null, args.reps, args.seed)
    rows += calibration(MultiSURF, args.n, args.n_conf, args.n_null, max(1, args.reps // 2), args.seed + 1)
    head = ["method", "scenario", "censored", "covariates", "n_null", "null<=0.05", "null<=0.01", "KS p",
            "conf<=0.05", "signal<=0.05"]
    text = ["# Covariate-adjusted Relief p-values for a survival outcome: calibration and cost", "",
            "Generated by `benchmarks/relief_survival_covariates.py` (its docstring describes the data).  'none': "
            "`fit(X, y)`, the outcome permutation of the martingale residuals; 'c, s': `fit(X, y, covariates=[c, "
            "s])`, NPDR's pair regression against survival outcomes redrawn from a Cox model on the covariates "
            "(the conditional bootstrap's censoring; Besag-Clifford sequential p-values, at most B = 999 "
            "redraws).  A confounded feature follows `c` only: null given the covariates.  KS p as in "
            "`relief_covariates.md`.", "",
            f"Machine: {cpu_name()}, {len(os.sched_getaffinity(0))} cores available.", "",
            f"Calibration: n = {args.n}, {args.n_conf} confounded + {args.n_null} null features (+1 signal feature "
            f"in the 'signal' scenario), {args.reps} data sets per row (MultiSURF: {max(1, args.reps // 2)}).", ""]
    text += table(rows, head)
    if not args.no_timing:
        tm, cens = timing(args.repeat, args.seed)
        text += ["", f"Cost: ReliefF, (2000, 500), a survival outcome ({cens:.0%} censored), median of "
                 f"{args.repeat} fits after a warm-up:", "", "| fit | seconds |", "| --- | --- |"]
        text += [f"| {k} | {v:.2f} |" for k, v in tm.items()]
    print("\n".join(text))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
