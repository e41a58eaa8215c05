"""Covariate-adjusted Relief p-values (``fit(X, y, covariates=C)``): calibration and cost.

Calibration: ``--reps`` data sets of ``n`` samples with a numeric covariate ``c`` and a
three-level categorical covariate ``s`` that drive the outcome (``1.2 c + 0.8 [s = 1]`` plus
unit noise; classes: above the median), ``--n-conf`` confounded features (``c`` plus unit
noise: related to the outcome only through ``c``), ``--n-null`` pure noise features and, in the
"signal" scenario, one feature with an effect beyond the covariates (``+1.0 x``).  For each
outcome kind, ``ReliefF(pvalues=True)`` without covariates and with ``covariates=[c, s]``: the
fraction of null features (pooled over the data sets) at or below 0.05 and 0.01, the KS test of
their uniformity (for the adjusted, sequential p-values, which are discrete and exact at the values
they take, the gap is measured at those values: :func:`ks_pvalue`), the fraction of confounded
features at or below 0.05 (a null feature given the covariates), and the signal feature's
fraction at or below 0.05 (power).

Cost: ``ReliefF(pvalues=True)`` at ``(2000, 500)`` (two classes) without and with 10 numeric
covariates, median wall time of ``--repeat`` fits after one warm-up fit.

Usage::

    python benchmarks/relief_covariates.py --out benchmarks/relief_covariates.md
"""

import argparse
import platform
import statistics
import time

import numpy as np
from scipy import stats

from knnweights.weighters import MultiSURF, ReliefF


def cpu_name():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def ks_pvalue(p):
    """KS p-value against the uniform, the gap between the empirical distribution and the diagonal taken at
    the attained values (all of them for continuous p-values, so the usual KS; a conservative reference for
    the discrete sequential p-values, exact at the values they take)."""
    v, counts = np.unique(p, return_counts=True)
    ecdf = np.cumsum(counts) / p.size
    gap = np.max(np.maximum(np.abs(ecdf - v), np.abs(ecdf - counts / p.size - v) * (counts == 1)))
    return float(stats.kstwo.sf(gap, p.size))


def make_data(n, n_conf, n_null, kind, signal, rng):
    """``(X, y, C, roles)``: roles 'conf', 'null', 'signal' per column of X."""
    c = rng.normal(size=n)
    s = rng.integers(0, 3, size=n)
    x_sig = rng.normal(size=n)
    lin = 1.2 * c + 0.8 * (s == 1) + (1.0 * x_sig if signal else 0.0) + rng.normal(size=n)
    y = (lin > np.median(lin)).astype(int) if kind == "classes" else lin
    cols = [c[:, None] + rng.normal(size=(n, n_conf)), rng.normal(size=(n, n_null))]
    roles = ["conf"] * n_conf + ["null"] * n_null
    if signal:
        cols.append(x_sig[:, None])
        roles.append("signal")
    C = np.column_stack([c, s.astype(float)]).astype(object)
    C[:, 1] = np.array(["a", "b", "c"])[s]  # categorical: strings
    return np.hstack(cols), y, C, np.array(roles)


def calibration(est_cls, n, n_conf, n_null, reps, seed):
    rows = []
    for kind in ("classes", "continuous"):
        for scenario in ("null", "signal"):
            pooled = {False: {"null": [], "conf": [], "signal": []}, True: {"null": [], "conf": [], "signal": []}}
            for r in range(reps):
                rng = np.random.default_rng([seed, r, kind == "classes", scenario == "signal"])
                X, y, C, roles = make_data(n, n_conf, n_null, kind, scenario == "signal", rng)
                for adjusted in (False, True):
                    est = est_cls(pvalues=True, random_state=r, target_type=kind)
                    est.fit(X, y, covariates=C if adjusted else None)
                    for role in ("null", "conf", "signal"):
                        pooled[adjusted][role].extend(est.pvalues_[roles == role])
            for adjusted in (False, True):
                p = {k: np.asarray(v) for k, v in pooled[adjusted].items()}
                rows.append({
                    "method": est_cls.__name__, "outcome": kind, "scenario": scenario,
                    "covariates": "c, s" if adjusted else "none", "n_null": p["null"].size,
                    "null<=0.05": (p["null"] <= 0.05).mean(), "null<=0.01": (p["null"] <= 0.01).mean(),
                    "KS p": ks_pvalue(p["null"]),
                    "conf<=0.05": (p["conf"] <= 0.05).mean(),
                    "signal<=0.05": (p["signal"] <= 0.05).mean() if p["signal"].size else float("nan")})
    return rows


def median_time(fn, repeat):
    """Median wall time of ``repeat`` calls of ``fn`` after one warm-up call (compilation)."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def table(rows, head):
    """Markdown lines of the dicts ``rows`` over the columns ``head`` (floats to 3 significant digits)."""
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[h]:.3g}" if isinstance(r[h], float) else str(r[h]) for h in head) + " |")
    return lines


def timing(repeat, seed):
    rng = np.random.default_rng(seed)
    n, d, c = 2000, 500, 10
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + X[:, 1] + rng.normal(size=n) > 0).astype(int)
    C = rng.normal(size=(n, c))
    out = {}
    for label, cov in (("without covariates", None), (f"with {c} covariates", C)):
        est = ReliefF(pvalues=True, random_state=0)
        out[label] = median_time(lambda est=est, cov=cov: est.fit(X, y, covariates=cov), repeat)
    base = ReliefF(random_state=0)
    out["weights only (pvalues=False)"] = median_time(lambda: base.fit(X, y), repeat)
    return out


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
    head = ["method", "outcome", "scenario", "covariates", "n_null", "null<=0.05", "null<=0.01", "KS p", "conf<=0.05",
            "signal<=0.05"]
    lines = table(rows, head)
    text = ["# Covariate-adjusted Relief p-values: calibration and cost", "",
            "Generated by `benchmarks/relief_covariates.py` (its docstring describes the data).  'none': "
            "`fit(X, y)`, the outcome-permutation (Mantel) p-values; 'c, s': `fit(X, y, covariates=[c, s])`, "
            "NPDR's pair regression against outcomes redrawn given the covariates (Besag-Clifford sequential "
            "p-values, at most B = 999 redraws).  A null feature is noise; a confounded one follows the "
            "covariate `c` only, so it is null given the covariates and should be at or below 0.05 in 5 % of "
            "cases when adjusted.  KS p: uniformity of the null features' p-values (for the discrete sequential "
            "p-values the gap is taken at the values they take, where they are exact).", "",
            f"Machine: {cpu_name()}, {len(__import__('os').sched_getaffinity(0))} cores available.", "",
            f"Calibration: n = {args.n}, {args.n_conf} confounded + {args.n_null} null features"
            f" (+1 signal feature in the 'signal' scenario), {args.reps} data sets per row (MultiSURF:"
            f" {max(1, args.reps // 2)}); B = 999 redrawn outcomes.", ""] + lines
    if not args.no_timing:
        tm = timing(args.repeat, args.seed)
        text += ["", f"Cost: ReliefF, (2000, 500), two classes, median of {args.repeat} fits:", "",
                 "| fit | seconds |", "| --- | --- |"] + [f"| {k} | {v:.2f} |" for k, v in tm.items()]
    print("\n".join(text))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
