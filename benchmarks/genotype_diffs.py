"""Which genotype reading finds which penetrance model: the evidence for ``genotype_diff``'s default.

Run:  python benchmarks/genotype_diffs.py [--reps 8] [--sizes 400x1000,1600x1000,400x5000,1600x5000]
      [--h2 0.1,0.2] [--out benchmarks/genotype_diffs.md]

GAMETES-style simulation (Urbanowicz et al. 2012), written here from the definition: two
planted SNPs (features 0 and 1) among null SNPs, every SNP in Hardy-Weinberg proportions at a
minor allele frequency drawn from U(0.2, 0.5); a penetrance table ``P(case | g1, g2)`` with
prevalence ``K = 0.5`` and the broad-sense heritability ``h2 = Var_G(P) / (K (1 - K))`` set
by ``--h2`` (the models with marginal effects, then the two interaction models: an additive table
cannot reach 0.2 at these MAFs, and the interactions are not found at 0.1 by these sizes);
balanced case / control samples drawn from the table.  Models:

- ``additive``: ``P = K + b (x1 + x2)``, ``x`` the centred allele count;
- ``dominant``: ``P = K + b (x1 + x2)``, ``x`` the centred carrier indicator ``[g >= 1]``;
- ``recessive``: the same with ``[g = 2]``;
- ``het-xor``: ``P = K + b x``, ``x`` the centred ``[g1 = 1] xor [g2 = 1]`` (the issue's model);
- ``epistasis``: pure epistasis, no marginal effect at either SNP, as GAMETES' tables:
  ``P = K + b u(g1) v(g2)`` with random contrasts ``u``, ``v`` centred under each SNP's genotype
  frequencies (so every row and column mean of the table is ``K``).

For each model, size and replicate, ReliefF (k = 10) and MultiSURF are fitted on the genotype
bytes with each reading (additive, mismatch, allele-sharing), and the ranks of the two planted
SNPs recorded (1 = best; the worse of the two is the run's "both found" rank).  Reported per
model and reading: the median rank of the planted SNPs, and the share of runs in which both
are in the top 10 and in the top 1 %.  Single-threaded numba when the machine is shared.
"""

import argparse
import os
import platform
import time
import warnings

import numba
import numpy as np

from knnweights import MultiSURF, ReliefF

MODELS = ("additive", "dominant", "recessive", "het-xor", "epistasis")
INTERACTIONS = ("het-xor", "epistasis")
READINGS = ("additive", "mismatch", "allele-sharing")
METHODS = {"ReliefF": lambda g: ReliefF(n_neighbors=10, genotype_diff=g),
           "MultiSURF": lambda g: MultiSURF(genotype_diff=g)}


def _hwe(maf):
    return np.array([(1 - maf) ** 2, 2 * maf * (1 - maf), maf**2])


def _centred(x, f):
    return x - f @ x


def penetrance(model, maf1, maf2, h2, rng, K=0.5):
    """The 3 x 3 table ``P(case | g1, g2)`` of ``model`` at heritability ``h2`` (see the module docstring)."""
    f1, f2 = _hwe(maf1), _hwe(maf2)
    g = np.arange(3.0)
    if model == "het-xor":
        x = ((g[:, None] == 1) ^ (g[None, :] == 1)).astype(float)
        shape = x - f1 @ x @ f2
    elif model == "epistasis":
        shape = np.outer(_centred(rng.normal(size=3), f1), _centred(rng.normal(size=3), f2))
    else:
        code = {"additive": g, "dominant": (g >= 1).astype(float), "recessive": (g == 2).astype(float)}[model]
        shape = _centred(code, f1)[:, None] + _centred(code, f2)[None, :]
    var = f1 @ shape**2 @ f2  # the mean of shape is 0 under f1 x f2
    P = K + np.sqrt(h2 * K * (1 - K) / var) * shape
    if P.min() < 0 or P.max() > 1:
        raise ValueError(f"{model}: h2={h2} needs a penetrance outside [0, 1] at MAF {maf1:.2f}, {maf2:.2f}")
    return P


def simulate(model, n, d, h2, seed):
    """Balanced case / control genotypes (uint8, ``n`` x ``d + 2``; planted SNPs 0 and 1) and labels."""
    rng = np.random.default_rng(seed)
    maf = rng.uniform(0.2, 0.5, d + 2)
    for _ in range(1000):  # the planted SNPs' MAFs redrawn until the table is a probability (GAMETES does so too)
        try:
            P = penetrance(model, maf[0], maf[1], h2, rng)
            break
        except ValueError:
            maf[:2] = rng.uniform(0.2, 0.5, 2)
    else:
        raise ValueError(f"{model}: no MAFs in [0.2, 0.5] give a penetrance table at h2={h2}")
    pool = 8 * n
    G = rng.binomial(2, maf[:2], size=(pool, 2))
    case = rng.random(pool) < P[G[:, 0], G[:, 1]]
    pick = np.concatenate([np.flatnonzero(case)[: n // 2], np.flatnonzero(~case)[: n // 2]])
    X = np.empty((n, d + 2), np.uint8)
    X[:, :2] = G[pick]
    X[:, 2:] = rng.binomial(2, maf[2:], size=(n, d))
    y = np.repeat([1, 0], n // 2)
    return X, y


def _ranks(scores):
    order = np.argsort(-scores, kind="stable")
    r = np.empty(scores.size, np.int64)
    r[order] = np.arange(1, scores.size + 1)
    return r[:2]


def run(sizes, reps, h2):
    """One row per fit: size, model, replicate, method, reading, the planted SNPs' ranks, seconds."""
    rows = []
    X, y = simulate("additive", 100, 50, 0.1, 0)
    for make in METHODS.values():  # compile before the timed fits
        for reading in READINGS:
            make(reading).fit(X, y)
    for n, d in sizes:
        for model in MODELS:
            for rep in range(reps):
                seed = 1000 * rep + 17 * d + n + MODELS.index(model)
                X, y = simulate(model, n, d, h2[model in INTERACTIONS], seed)
                for method, make in METHODS.items():
                    for reading in READINGS:
                        t = time.perf_counter()
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            s = make(reading).fit(X, y).scores_
                        rows.append(dict(n=n, d=d, model=model, rep=rep, method=method, reading=reading,
                                         r1=int(_ranks(s)[0]), r2=int(_ranks(s)[1]), p=X.shape[1],
                                         seconds=time.perf_counter() - t))
    return rows


def _summary(rows, keys):
    out = {}
    for r in rows:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    table = {}
    for key, rs in out.items():
        ranks = np.array([[r["r1"], r["r2"]] for r in rs])
        worst = ranks.max(axis=1)
        top1 = np.array([max(10, int(np.ceil(0.01 * r["p"]))) for r in rs])  # top 1 %, at least the top 10
        table[key] = (float(np.median(ranks)), float(np.mean(worst <= 10)), float(np.mean(worst <= top1)), len(rs))
    return table


def report(rows, sizes, reps, h2, seconds):
    lines = ["# Genotype readings on GAMETES-style penetrance models", "",
             "`python benchmarks/genotype_diffs.py` (module docstring: the models and the simulation).",
             f"{platform.processor() or platform.machine()}, numba threads {numba.get_num_threads()}, "
             f"{os.cpu_count()} CPUs; sizes (n x null SNPs) {', '.join(f'{n}x{d}' for n, d in sizes)}, "
             f"{reps} replicates each, h2 = {h2[0]} (marginal models) / {h2[1]} (het-xor, epistasis), "
             f"MAF U(0.2, 0.5); ReliefF k = 10; {seconds:.0f} s in all.", "",
             "Per model and reading: the median rank of the two planted SNPs over all sizes and replicates, "
             "and the share of runs with both in the top 10 / the top 1 % (at least the top 10) of the SNPs.", ""]
    for method in METHODS:
        lines += [f"## {method}", "", "| model | " + " | ".join(READINGS) + " |",
                  "| --- | " + " | ".join("---" for _ in READINGS) + " |"]
        t = _summary([r for r in rows if r["method"] == method], ("model", "reading"))
        for model in MODELS:
            cells = [f"{t[(model, g)][0]:g} ({t[(model, g)][1]:.0%} / {t[(model, g)][2]:.0%})" for g in READINGS]
            lines.append(f"| {model} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## By size (MultiSURF and ReliefF together)", "",
              "| n x null SNPs | model | " + " | ".join(READINGS) + " |",
              "| --- | --- | " + " | ".join("---" for _ in READINGS) + " |"]
    t = _summary(rows, ("n", "d", "model", "reading"))
    for n, d in sizes:
        for model in MODELS:
            cells = [f"{t[(n, d, model, g)][0]:g} ({t[(n, d, model, g)][1]:.0%})" for g in READINGS]
            lines.append(f"| {n}x{d} | {model} | " + " | ".join(cells) + " |")
    n, d = max(sizes, key=lambda s: s[0] * s[0] * s[1])
    lines += ["", f"Seconds per fit at {n}x{d} (median over models and replicates; one neighbour pass each):", "",
              "| method | " + " | ".join(READINGS) + " |", "| --- | " + " | ".join("---" for _ in READINGS) + " |"]
    for method in METHODS:
        sec = [np.median([r["seconds"] for r in rows
                          if (r["n"], r["d"], r["method"], r["reading"]) == (n, d, method, g)]) for g in READINGS]
        lines.append(f"| {method} | " + " | ".join(f"{v:.2f}" for v in sec) + " |")
    same = sum(1 for a, b in zip(rows[0::3], rows[2::3], strict=True) if (a["r1"], a["r2"]) == (b["r1"], b["r2"]))
    lines += ["", f"Allele sharing gave the additive reading's ranks in {same} of {len(rows) // 3} fits: with "
              "MAF >= 0.2 and n >= 400 every SNP shows all three genotypes, where |a - b| / 2 is |a - b| / range.",
              ""]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--sizes", default="400x1000,1600x1000,400x5000,1600x5000")
    ap.add_argument("--h2", default="0.1,0.2", help="heritability of the marginal models, of the interactions")
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    sizes = [tuple(int(v) for v in s.split("x")) for s in a.sizes.split(",")]
    h2 = tuple(float(v) for v in a.h2.split(","))
    t = time.perf_counter()
    rows = run(sizes, a.reps, h2)
    text = report(rows, sizes, a.reps, h2, time.perf_counter() - t)
    print(text)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
