"""Covariate-adjusted p-values of class labels: the redraws against the reference's moments.

``fit(X, y, covariates=C)`` with ``covariate_reference="redraw"`` (the default: outcomes redrawn from
the classes' logistic regression on the covariates, Besag-Clifford sequential Monte Carlo p-values,
at most 999 redraws) and ``"moments"`` (the same reference's exact mean, variance and third moment,
saddlepoint tail).

Calibration: the data of ``relief_covariates.py`` (two classes; 20 confounded, 100 null features,
one signal feature in the "signal" scenario), ``--reps`` data sets for ReliefF and half as many for
MultiSURF, both references on each.

Tail: ``--tail-reps`` data sets of 500 samples with two classes driven by the covariates only
(``1.2 c + 0.8 [s = 1]`` plus noise) and ``--tail-d`` noise features (and 20 that follow ``c``):
the fraction of the moment p-values at or below 1e-2, 1e-3 and 1e-4 (the redraws cannot go below
1e-3).

Cost: median wall time (after a warm-up fit) of ``ReliefF(pvalues=True)`` without covariates and with
10 with each reference, at (2000, 500) floats and on 2,350 x ``--snps`` genotype bytes (the data of
``relief_covariates_bytes.py``), and MultiSURF's two references on 2,350 x 200 SNPs.

Usage::

    python benchmarks/relief_covariate_moments.py --out benchmarks/relief_covariate_moments.md
"""

import argparse
import os
import sys
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from relief_covariates import cpu_name, ks_pvalue, make_data, median_time, table  # noqa: E402
from relief_covariates_bytes import data as cost_data  # noqa: E402

from knnweights.weighters import MultiSURF, ReliefF  # noqa: E402

REFERENCES = ("redraw", "moments")


def calibration(Est, reps, seed):
    rows = []
    for scenario in ("null", "signal"):
        pooled = {ref: {"null": [], "conf": [], "signal": []} for ref in REFERENCES}
        for r in range(reps):
            X, y, C, roles = make_data(300, 20, 100, "classes", scenario == "signal",
                                       np.random.default_rng([seed, r, scenario == "signal"]))
            for ref in REFERENCES:
                p = Est(pvalues=True, random_state=r, covariate_reference=ref).fit(X, y, covariates=C).pvalues_
                for role in pooled[ref]:
                    pooled[ref][role].extend(p[roles == role])
        for ref in REFERENCES:
            p = {k: np.asarray(v) for k, v in pooled[ref].items()}
            rows.append({"method": Est.__name__, "scenario": scenario, "reference": ref, "n_null": p["null"].size,
                         "null<=0.05": (p["null"] <= 0.05).mean(), "null<=0.01": (p["null"] <= 0.01).mean(),
                         "KS p": ks_pvalue(p["null"]), "conf<=0.05": (p["conf"] <= 0.05).mean(),
                         "signal<=0.05": (p["signal"] <= 0.05).mean() if p["signal"].size else float("nan"),
                         "signal median p": float(np.median(p["signal"])) if p["signal"].size else float("nan")})
    return rows


def tail(reps, d, seed):
    pooled = []
    for r in range(reps):
        X, y, C, roles = make_data(500, 20, d, "classes", False, np.random.default_rng([seed, r]))
        p = ReliefF(pvalues=True, covariate_reference="moments").fit(X, y, covariates=C).pvalues_
        pooled.append(p[roles != "signal"])
    p = np.concatenate(pooled)
    return {"p-values": p.size, **{f"<= {a:g}": f"{(p <= a).mean():.2g} ({int((p <= a).sum())})"
                                   for a in (1e-2, 1e-3, 1e-4)}}


def _times(Est, X, y, C, repeat):
    fits = {"pvalues=True, no covariates": lambda: Est(pvalues=True, random_state=0).fit(X, y)}
    for ref in REFERENCES:
        fits[f"10 covariates, {ref}"] = (lambda ref=ref: Est(pvalues=True, random_state=0, covariate_reference=ref)
                                         .fit(X, y, covariates=C))
    return {key: median_time(fn, repeat) for key, fn in fits.items()}


def cost(snps, repeat, seed):
    rows = []
    cases = [("ReliefF", "(2000, 500) floats", SimpleNamespace(floats=True, covariates=10), repeat),
             ("ReliefF", f"2,350 x {snps:,} SNPs", SimpleNamespace(floats=False, n=2350, snps=snps, covariates=10), 1),
             ("MultiSURF", "2,350 x 200 SNPs", SimpleNamespace(floats=False, n=2350, snps=200, covariates=10), 1)]
    for name, label, args, rep in cases:
        X, y, C = cost_data(args, np.random.default_rng(seed))
        rows.append({"fit": f"{name}, {label}", **_times({"ReliefF": ReliefF, "MultiSURF": MultiSURF}[name], X, y, C,
                                                         rep)})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--tail-reps", type=int, default=10)
    ap.add_argument("--tail-d", type=int, default=2000)
    ap.add_argument("--snps", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--no-cost", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    text = ["# Covariate-adjusted p-values of class labels: redraws and moments", "",
            "Generated by `benchmarks/relief_covariate_moments.py` (its docstring describes the data).", "",
            f"Machine: {cpu_name()}, {len(os.sched_getaffinity(0))} cores available.", "",
            f"Calibration: n = 300, {args.reps} data sets per ReliefF row, {max(1, args.reps // 2)} per MultiSURF row.",
            ""]
    rows = calibration(ReliefF, args.reps, args.seed) + calibration(MultiSURF, max(1, args.reps // 2), args.seed + 1)
    text += table(rows, ["method", "scenario", "reference", "n_null", "null<=0.05", "null<=0.01", "KS p",
                         "conf<=0.05", "signal<=0.05", "signal median p"])
    tl = tail(args.tail_reps, args.tail_d, args.seed + 2)
    text += ["", f"Tail of the moment p-values (ReliefF, n = 500, {args.tail_reps} data sets of {args.tail_d} noise "
             "and 20 confounded features; fraction (count) at or below each level):", ""]
    text += table([tl], list(tl))
    if not args.no_cost:
        cr = cost(args.snps, args.repeat, args.seed)
        text += ["", "Cost (seconds; median of the repeats after a warm-up fit, one repeat on the genotypes):", ""]
        text += table(cr, list(cr[0]))
    print("\n".join(text))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
