"""Kernel and ReliefF micro-benchmarks (the full table: ``benchmarks/bench_suite.py``).

Run:  python benchmarks/bench_kernels.py [--sizes 1000x1000 2000x2000 100x10000] [--no-skrebate]
       [--out kernels.md]

Prints, for each (n, d): the element rate (n*n*d / s) of the L1 and L2sq pairwise
kernels, the same rate of a tight compiled loop over cache-resident data (the
machine's practical limit for this arithmetic), the chunked-NumPy reference, and
ReliefF / Relief / IRelief fit times with skrebate's ReliefF measured in the same run
(ratio = peer / ours, weights compared by correlation).  Medians of ``--repeat`` runs.
"""

import argparse
import os
import sys
import time

import numpy as np
from numba import njit, prange

from knnweights import ReliefF
from knnweights.engine._kernels import pairwise_phi


@njit(parallel=True, fastmath=True, cache=True)
def _machine_limit(A, B, reps):  # pragma: no cover - compiled
    """The same |a - b| accumulate on blocks that stay in L1 cache: the arithmetic ceiling."""
    nt = A.shape[0]
    acc = np.zeros(nt)
    for t in prange(nt):
        s = 0.0
        for _ in range(reps):
            for j in range(B.shape[0]):
                for k in range(A.shape[1]):
                    s += abs(A[t, k] - B[j, k])
        acc[t] = s
    return acc


def machine_limit_rate(repeat=7):
    """Elements/s of the cache-resident accumulate: the best of ``repeat`` runs (a ceiling)."""
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(64, 256)), rng.normal(size=(8, 256))
    reps = 2000
    _machine_limit(A, B, 1)
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        _machine_limit(A, B, reps)
        ts.append(time.perf_counter() - t)
    return A.shape[0] * B.shape[0] * A.shape[1] * reps / np.min(ts)


def numpy_pairwise_l1(X, block=64):
    """Chunked NumPy reference: broadcast a block of rows against all rows."""
    n = X.shape[0]
    out = np.empty((n, n))
    for s in range(0, n, block):
        out[s:s + block] = np.abs(X[s:s + block, None, :] - X[None, :, :]).sum(-1)
    return out


def timed(fn, repeat):
    ts, res = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        res = fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts)), res


def run(sizes, repeat=3, skrebate=True, skrebate_max_elements=2.5e9):
    rows = []
    limit = machine_limit_rate()
    print(f"machine limit (compiled |a-b| accumulate, cache-resident, all cores): {limit:.3g} elements/s")
    for n, d in sizes:
        rng = np.random.default_rng(n + d)
        X = rng.normal(size=(n, d))
        y = (X[:, :5].sum(1) > 0).astype(int)
        el = n * n * d
        out = np.empty((n, n))
        pairwise_phi(X[:8], X[:8], 0, out[:8, :8])
        r = {"n": n, "d": d, "limit": limit}
        for phi, name in ((0, "l1"), (1, "l2sq")):
            t, _ = timed(lambda X=X, phi=phi, out=out: pairwise_phi(X, X, phi, out), repeat)
            r[f"{name}_s"], r[f"{name}_rate"] = t, el / t
        X32 = X.astype(np.float32)
        out32 = np.empty((n, n), np.float32)
        t, _ = timed(lambda X32=X32, out32=out32: pairwise_phi(X32, X32, 0, out32), repeat)
        r["l1_f32_rate"] = el / t
        if el <= 2.5e9:
            t, _ = timed(lambda X=X: numpy_pairwise_l1(X), 1)
            r["numpy_l1_s"] = t
        t, ours = timed(lambda X=X, y=y: ReliefF(n_neighbors=10).fit(X, y).scores_, repeat)
        r["relieff_s"] = t
        if skrebate and el <= skrebate_max_elements:
            try:
                from skrebate import ReliefF as SkReliefF
            except ImportError:
                pass
            else:
                sk = SkReliefF(n_neighbors=10, n_jobs=1)
                t, theirs = timed(lambda X=X, y=y, sk=sk: sk.fit(X, y).feature_importances_, 1)
                r["skrebate_relieff_s"] = t
                r["corr"] = float(np.corrcoef(ours, theirs)[0, 1])
        rows.append(r)
        print(_row(r))
    return rows


def _row(r):
    f = lambda k, fmt: (fmt % r[k]) if k in r else "-"  # noqa: E731
    numpy_ratio = f"{r['numpy_l1_s'] / r['l1_s']:.0f}x" if "numpy_l1_s" in r else "-"
    sk_ratio = f"{r['skrebate_relieff_s'] / r['relieff_s']:.0f}x" if "skrebate_relieff_s" in r else "-"
    return (f"| {r['n']} x {r['d']} | {f('l1_rate', '%.3g')} ({100 * r['l1_rate'] / r['limit']:.0f} %) | "
            f"{f('l2sq_rate', '%.3g')} | {f('l1_f32_rate', '%.3g')} | {numpy_ratio} | {f('relieff_s', '%.3f')} | "
            f"{f('skrebate_relieff_s', '%.2f')} | {sk_ratio} | {f('corr', '%.6f')} |")


HEADER = ("| n x d | L1 kernel el/s (% of limit) | L2sq el/s | L1 float32 el/s | L1 vs chunked NumPy | "
          "ReliefF fit s | skrebate ReliefF s | skrebate / ours | weight corr |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- |")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", nargs="+", default=["1000x1000", "2000x2000", "100x10000"])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-skrebate", action="store_true")
    p.add_argument("--out", default=None, help="append the Markdown table to this file")
    a = p.parse_args(argv)
    sizes = [tuple(int(v) for v in s.split("x")) for s in a.sizes]
    print(HEADER)
    rows = run(sizes, a.repeat, not a.no_skrebate)
    if a.out:
        with open(a.out, "a") as fh:
            fh.write(f"\n### Kernels and ReliefF ({os.cpu_count()} cores, medians of {a.repeat})\n\n")
            fh.write(f"Machine limit: {rows[0]['limit']:.3g} elements/s.\n\n{HEADER}\n")
            fh.write("\n".join(_row(r) for r in rows) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
