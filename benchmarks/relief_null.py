"""Relief p-values under the outcome and the feature permutation nulls (``pvalue_null``): calibration, power, cost.

Monte Carlo check of the cause (``monte_carlo``): ``--mc-reps`` data sets of the "confounded"
scenario below (n = 300, 20 features ``c + noise``, 100 noise features, ``y`` from ``c``), the
pairs each sample's 20 nearest (Manhattan on range-normalised data: ReliefF's p-value pairs for
two classes, ``k = 10``), found on all features or on the 20 non-noise ones only.  For each noise
feature, ``S = sum_p a_p (g_p - gbar)`` against 999 permutations of the outcome and 999 of the
feature's values, the graph held fixed: the Monte Carlo p-values' fractions at or below 0.05
and 0.01, KS p, and the permutation standard deviation of ``S`` (mean over features).

Calibration (``calibration``): ``ReliefF(pvalues=True)`` and ``MultiSURF(pvalues=True)`` with
``pvalue_null="outcome"`` and ``"feature"``, class labels (above the median) and the continuous
outcome, n = 300, scenarios

* ``global``: 120 noise features, the outcome independent of them;
* ``signal``: 20 independent features with an effect (``1.5 / sqrt(20)`` each, unit noise) and
  100 noise features;
* ``confounded``: :func:`relief_covariates.make_data` without its signal feature (20 features
  ``c + noise``, the outcome ``1.2 c + 0.8 [s = 1] + noise``), 100 noise features; no covariate
  adjustment, so the 20 count as signal.  Also with 480 noise features (ReliefF, ``d = 500``):
  the noise feature's own part in the distances, which makes the feature null conservative,
  is smaller there.

Null columns pool the noise features over the data sets; ``power``: the signal features'
fraction at or below 0.05.

Cost: ``ReliefF(pvalues=True)`` and ``MultiSURF(pvalues=True)`` at (2000, 500), two classes,
each null, and the weights alone: median wall time of ``--repeat`` fits after one warm-up.

Usage::

    python benchmarks/relief_null.py --out benchmarks/relief_null.md
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relief_covariates import cpu_name, ks_pvalue, make_data, median_time, table  # noqa: E402

from knnweights.weighters import MultiSURF, ReliefF  # noqa: E402

NULLS = ("outcome", "feature")


def scenario_data(scenario, n, kind, rng, n_sig=20, n_null=100):
    """``(X, y, is_signal)`` of one scenario (module docstring)."""
    if scenario == "confounded":
        X, y, _, roles = make_data(n, n_sig, n_null, kind, False, rng)
        return X, y, roles == "conf"
    if scenario == "global":
        X = rng.normal(size=(n, n_sig + n_null))
        lin = rng.normal(size=n)
        is_signal = np.zeros(X.shape[1], bool)
    else:
        X = rng.normal(size=(n, n_sig + n_null))
        lin = 1.5 / np.sqrt(n_sig) * X[:, :n_sig].sum(axis=1) + rng.normal(size=n)
        is_signal = np.arange(X.shape[1]) < n_sig
    y = (lin > np.median(lin)).astype(int) if kind == "classes" else lin
    return X, y, is_signal


def monte_carlo(reps, seed, n=300, k=20, B=999):
    rows = []
    for graph in ("all features", "non-noise features"):
        for kind in ("classes", "continuous"):
            pooled = {null: [] for null in NULLS}
            sd = {null: [] for null in NULLS}
            for r in range(reps):
                rng = np.random.default_rng([seed, r, kind == "classes"])
                X, y, is_signal = scenario_data("confounded", n, kind, rng)
                Z = (X - X.min(axis=0)) / np.ptp(X, axis=0)
                G = Z if graph == "all features" else Z[:, is_signal]
                D = np.abs(G[:, None, :] - G[None, :, :]).sum(axis=2)
                np.fill_diagonal(D, np.inf)
                src = np.repeat(np.arange(n), k)
                dst = np.argsort(D, axis=1, kind="stable")[:, :k].ravel()

                def gdiff(v, src=src, dst=dst, kind=kind):
                    return (v[src] != v[dst]) * 1.0 if kind == "classes" else np.abs(v[src] - v[dst]) / np.ptp(v)

                g = gdiff(y)
                Zn = Z[:, ~is_signal]
                S = (g - g.mean()) @ np.abs(Zn[src] - Zn[dst])
                null_S = {null: np.empty((B, Zn.shape[1])) for null in NULLS}
                for b in range(B):
                    gp = gdiff(y[rng.permutation(n)])
                    null_S["outcome"][b] = (gp - gp.mean()) @ np.abs(Zn[src] - Zn[dst])
                    Zp = Zn[rng.permutation(n)]
                    null_S["feature"][b] = (g - g.mean()) @ np.abs(Zp[src] - Zp[dst])
                for null in NULLS:
                    pooled[null].append((1 + (null_S[null] >= S - 1e-12).sum(axis=0)) / (B + 1))
                    sd[null].append(null_S[null].std(axis=0).mean())
            for null in NULLS:
                p = np.concatenate(pooled[null])
                rows.append({"graph on": graph, "outcome": kind, "permuted": null, "n_null": p.size,
                             "null<=0.05": (p <= 0.05).mean(), "null<=0.01": (p <= 0.01).mean(), "KS p": ks_pvalue(p),
                             "sd of S": float(np.mean(sd[null]))})
    return rows


def calibration(est_cls, n, reps, seed, scenarios=("global", "signal", "confounded"), n_null=100):
    rows = []
    for scenario in scenarios:
        for kind in ("classes", "continuous"):
            pooled = {null: {"null": [], "signal": []} for null in NULLS}
            for r in range(reps):
                rng = np.random.default_rng([seed, r, kind == "classes", len(scenario)])
                X, y, is_signal = scenario_data(scenario, n, kind, rng, n_null=n_null)
                for null in NULLS:
                    p = est_cls(pvalues=True, pvalue_null=null, target_type=kind).fit(X, y).pvalues_
                    pooled[null]["null"].append(p[~is_signal])
                    pooled[null]["signal"].append(p[is_signal])
            for null in NULLS:
                p = np.concatenate(pooled[null]["null"])
                s = np.concatenate(pooled[null]["signal"])
                rows.append({"method": est_cls.__name__, "scenario": scenario, "d": X.shape[1], "outcome": kind,
                             "pvalue_null": null,
                             "n_null": p.size, "null<=0.05": (p <= 0.05).mean(), "null<=0.01": (p <= 0.01).mean(),
                             "KS p": ks_pvalue(p), "power": (s <= 0.05).mean() if s.size else float("nan")})
    return rows


def timing(repeat, seed):
    rng = np.random.default_rng(seed)
    n, d = 2000, 500
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) > 0).astype(int)
    out = {}
    for est_cls in (ReliefF, MultiSURF):
        for label, kw in (("pvalue_null='outcome'", {"pvalues": True}),
                          ("pvalue_null='feature'", {"pvalues": True, "pvalue_null": "feature"}),
                          ("weights only", {})):
            est = est_cls(**kw)
            out[(est_cls.__name__, label)] = median_time(lambda est=est: est.fit(X, y), repeat)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--mc-reps", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--no-mc", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    text = ["# Relief p-values: the outcome and the feature permutation nulls", "",
            "Generated by `benchmarks/relief_null.py` (its docstring describes the data).  KS p: uniformity of the "
            "null features' p-values (pooled over the data sets).", "",
            f"Machine: {cpu_name()}, {len(os.sched_getaffinity(0))} cores available.", ""]
    if not args.no_mc:
        text += ["## Monte Carlo: which permutation is the null of a noise feature", "",
                 f"Confounded scenario, n = 300, {args.mc_reps} data sets, 999 permutations of each kind, the pairs "
                 "fixed (each sample's 20 nearest).", ""]
        text += table(monte_carlo(args.mc_reps, args.seed), ["graph on", "outcome", "permuted", "n_null", "null<=0.05",
                                                             "null<=0.01", "KS p", "sd of S"]) + [""]
    rows = calibration(ReliefF, args.n, args.reps, args.seed)
    rows += calibration(MultiSURF, args.n, max(1, args.reps // 2), args.seed + 1)
    rows += calibration(ReliefF, args.n, max(1, args.reps // 2), args.seed + 2, ("confounded",), n_null=480)
    text += ["## Calibration and power of the estimators' p-values", "",
             f"n = {args.n}, {args.reps} data sets per row (MultiSURF and d = 500: {max(1, args.reps // 2)}).", ""]
    text += table(rows, ["method", "scenario", "d", "outcome", "pvalue_null", "n_null", "null<=0.05", "null<=0.01",
                         "KS p", "power"])
    if not args.no_timing:
        tm = timing(args.repeat, args.seed)
        text += ["", f"## Cost: (2000, 500), two classes, median of {args.repeat} fits (seconds)", "",
                 "| method | fit | seconds |", "| --- | --- | --- |"]
        text += [f"| {m} | {label} | {v:.2f} |" for (m, label), v in tm.items()]
    print("\n".join(text))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
