"""Cost of the Relief family's p-values and covariate adjustment on genotype bytes and on floats.

For ``ReliefF(pvalues=True)`` (and MultiSURF with ``--multisurf``) on a genotype matrix (``uint8``
0/1/2 drawn with minor-allele frequencies in [0.05, 0.5], two classes from two SNPs) of ``--n``
samples and ``--snps`` SNPs with ``--covariates`` numeric covariates: the median wall time of
``--repeat`` fits (after one warm-up fit) of the weights alone, with ``pvalues=True`` and with the
covariates; and the split of the covariate fit into its stages (``cProfile`` cumulative times of one
fit).  ``--floats`` runs the same on the float data of ``timing()`` in ``relief_covariates.py``
(2000 x 500 normal features).

Usage::

    python benchmarks/relief_covariates_bytes.py --n 2350 --snps 20000 --covariates 10
    python benchmarks/relief_covariates_bytes.py --floats
"""

import argparse
import cProfile
import pstats
import re

import numpy as np
from relief_covariates import median_time

from knnweights.weighters import MultiSURF, ReliefF

STAGES = {
    "weights (the fit's own neighbour pass)": "relief.py:.*\\(_fit\\)|surf.py:.*\\(_fit\\)",
    "pair search (the p-values' neighbour pass)": "_relief_regression.py:.*\\(_pair_moments\\)",
    "unadjusted moments (PairMoments._compute)": "_relief_pvalues.py:.*\\(_compute\\)",
    "covariate p-values (covariate_pvalues)": "_relief_covariates.py:.*\\(covariate_pvalues\\)",
    "  outcome redraws (_outcome_draws)": "_relief_covariates.py:.*\\(_outcome_draws\\)",
    "  the draws' pair differences (_pair_outcome)": "_relief_covariates.py:.*\\(_pair_outcome\\)",
    "  the later draws of the features still drawing (finish)": "_relief_covariates.py:.*\\(finish\\)",
    "  byte blocks read and encoded (float_blocks)": "genotypes.py:.*\\(float_blocks\\)",
}


def data(args, rng):
    if args.floats:
        n, d = 2000, 500
        X = rng.normal(size=(n, d))
        y = (X[:, 0] + X[:, 1] + rng.normal(size=n) > 0).astype(int)
    else:
        n, d = args.n, args.snps
        X = rng.binomial(2, rng.uniform(0.05, 0.5, d), size=(n, d)).astype(np.uint8)
        y = ((X[:, 0].astype(int) + X[:, 1] + rng.integers(0, 2, n)) >= 2).astype(int)
    C = rng.normal(size=(n, args.covariates))
    return X, y, C


def stages(fit):
    prof = cProfile.Profile()
    prof.enable()
    fit()
    prof.disable()
    st = pstats.Stats(prof)
    out = {}
    for label, pattern in STAGES.items():
        rx = re.compile(pattern)
        tot = 0.0
        for (file, line, name), (_, _, _, ct, callers) in st.stats.items():
            key = f"{file.rsplit('/', 1)[-1]}:{line}({name})"
            if rx.search(key) and not any(rx.search(f"{c[0].rsplit('/', 1)[-1]}:{c[1]}({c[2]})") for c in callers):
                tot += ct
        out[label] = tot
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2350)
    ap.add_argument("--snps", type=int, default=20000)
    ap.add_argument("--covariates", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--floats", action="store_true")
    ap.add_argument("--multisurf", action="store_true")
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    X, y, C = data(args, np.random.default_rng(args.seed))
    Est = MultiSURF if args.multisurf else ReliefF
    print(f"{Est.__name__}, X {X.shape} {X.dtype}, {C.shape[1]} covariates, median of {args.repeat} fits")
    rows = {
        "weights only (pvalues=False)": lambda: Est(random_state=0).fit(X, y),
        "pvalues=True": lambda: Est(pvalues=True, random_state=0).fit(X, y),
        f"pvalues=True, {C.shape[1]} covariates": lambda: Est(pvalues=True, random_state=0).fit(X, y, covariates=C),
    }
    print("| fit | seconds |\n| --- | --- |")
    for label, fit in rows.items():
        print(f"| {label} | {median_time(fit, args.repeat):.2f} |", flush=True)
    print("\nStages of one covariate fit (cProfile, cumulative seconds; profiling overhead included):\n")
    print("| stage | seconds |\n| --- | --- |")
    for label, sec in stages(rows[f"pvalues=True, {C.shape[1]} covariates"]).items():
        print(f"| {label} | {sec:.2f} |")


if __name__ == "__main__":
    main()
