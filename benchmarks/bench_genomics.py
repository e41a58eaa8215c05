"""Genome-scale Relief: byte genotypes, sampled instances, feature blocks on dask.

Each case runs in a fresh Python process (so its peak memory is its own, measured as
``ru_maxrss`` after the fit minus the resident size once the input exists); the wall time
is the fit's.  The simulated genotypes are GAMETES-like: SNPs in Hardy-Weinberg
proportions with minor-allele frequencies uniform in [0.05, 0.5], classes from a planted
epistatic pair (``(g_a + g_b) mod K``, labels flipped at random with probability
``noise``; for two classes that is XOR on the minor-allele counts' parity).

Cases (``--case NAME``, several allowed; ``--all`` runs the list in order)::

    gwas-multisurf   MultiSURF on 2,350 x 230,000 uint8, 3 classes, planted pair
    gwas-relieff     ReliefF (k=10) on the same
    block-cost       the per-block cost at 10,000 rows (distances and margins of one feature block)
    cohort-100k      MultiSURF on 10,000 x 100,000 uint8 (the 10,000 x 1,000,000 projection's check)
    turf             TuRF over MultiSURF on 1,600 x 10,000, 2 classes (pct 0.5 down to 2,500 SNPs: fits on
                     10,000, 5,000 and 2,500 SNPs, as scikit-rebate's TURF(pct=0.5, num_scores_to_return=2500))
    skrebate-turf    the same with scikit-rebate on a subset of rows, extrapolated (quadratic in n)
    sampled-relieff  ReliefF n_instances=1000 on 100,000 x 100 (float), top features vs the exact fit
    exact-relieff    exact ReliefF on 20,000 x 100
    exact-multisurf  exact MultiSURF on 20,000 x 100
    variance         the spread of ReliefF's n_instances estimate against m (20 seeds a size)
    bandwidth        the byte kernels' element rates beside the machine's memory bandwidth (numpy copy)

Usage::

    python benchmarks/bench_genomics.py --case gwas-multisurf --threads 2
    python benchmarks/bench_genomics.py --all --threads 2 --json out.json
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def simulate(n, d, n_classes=3, pair=None, noise=0.1, seed=0):
    """Genotypes (uint8 0/1/2, n x d) and labels from a planted epistatic pair ``(a, b)``."""
    rng = np.random.default_rng(seed)
    pair = (d // 7, (5 * d) // 9) if pair is None else pair
    X = np.empty((n, d), np.uint8)
    step = 8192
    for f0 in range(0, d, step):  # column blocks: no float n x d temporary
        f1 = min(d, f0 + step)
        maf = rng.uniform(0.05, 0.5, f1 - f0)
        X[:, f0:f1] = (rng.random((n, f1 - f0)) < maf).astype(np.uint8) + \
            (rng.random((n, f1 - f0)) < maf).astype(np.uint8)
    a, b = pair
    # the pair: common alleles, so every genotype combination occurs
    X[:, a] = rng.binomial(2, 0.5, n)
    X[:, b] = rng.binomial(2, 0.5, n)
    y = (X[:, a].astype(int) + X[:, b]) % n_classes
    flip = rng.random(n) < noise
    y[flip] = rng.integers(0, n_classes, flip.sum())
    return X, y, pair


CHILD = r"""
import json, resource, sys, time, warnings
sys.path.insert(0, {here!r})
import numpy as np
import numba
numba.set_num_threads({threads})
from bench_genomics import simulate
import knnweights
from knnweights import MultiSURF, ReliefF, TuRF

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

X, y, pair = simulate({n}, {d}, {k}, seed={seed}, noise={noise})
X = X.astype({dtype!r}, copy=False)
{warm}
base = rss()
est = {est}
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    est.fit(X, y)
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
r = getattr(est, "ranking_")
print(json.dumps({{"wall_s": wall, "input_bytes": int(X.nbytes), "peak_beyond_input_bytes": int(peak - base),
                  "rank_a": int(r[pair[0]]), "rank_b": int(r[pair[1]]),
                  "top": [int(i) for i in np.argsort(r)[:10]]}}))
"""

WARM_BYTES = """
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    Xw, yw, _ = simulate(60, 300, {k}, seed=1)
    type({est}).fit({est}, Xw.astype(X.dtype), yw)
    del Xw
"""


def run_child(n, d, est, threads, k=3, seed=0, noise=0.1, dtype="uint8"):
    code = CHILD.format(here=HERE, threads=threads, n=n, d=d, k=k, seed=seed, noise=noise, dtype=dtype, est=est,
                        warm=WARM_BYTES.format(k=k, est=est))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def block_cost(threads, n=10_000, width=8192):
    """Seconds for one feature block of ``width`` SNPs at ``n`` rows: the distances of every pair
    (popcount kernel) and the margin sums for a MultiSURF-like coefficient matrix."""
    import numba

    from knnweights.engine import _kernels_bytes as kb
    from knnweights.engine import genotypes as g

    numba.set_num_threads(threads)
    X, y, _ = simulate(n, width, 3, seed=2)
    G = g.GenotypeMatrix(X)
    data = G.diff_data(y, np.zeros(width, bool), True)
    prm = data.prm
    raw = g._raw_block(X, 0, width)
    E, _ = g._encode(raw, prm)
    W = (E.shape[1] + 63) // 64
    packed = np.empty((n, prm.planes * W), np.uint64)
    kb.pack_planes(E[:64], prm.planes, packed[:64])
    kb.hamming_add_sym(packed[:64], np.zeros((64, 64), np.int32))
    t = time.perf_counter()
    kb.pack_planes(E, prm.planes, packed)
    D = np.zeros((n, n), np.int32)
    kb.hamming_add_sym(packed, D)
    t_dist = time.perf_counter() - t
    del D
    rng = np.random.default_rng(0)
    rows = np.arange(1000)  # 1,000 rows of coefficients (the margin cost is linear in rows)
    coefv = np.array([-0.004, 0.003, 0.003])
    P = np.where(rng.random((rows.size, n)) < 0.3, coefv[y][None, :], 0.0)
    m = E.shape[1]
    U = np.empty((n, (prm.planes + 1) // 2 * m), np.uint8)
    out = np.empty(((rows.size + kb._MR - 1) // kb._MR, prm.planes * m))
    small = np.zeros((64, (prm.planes + 1) // 2 * 64), np.uint8)
    kb.coef_margin(small, 64, prm.planes, rows[:16], P[:16, :64].copy(), 8, np.zeros((1, prm.planes * 64)))
    t = time.perf_counter()
    kb.nibble_planes(E, prm.planes, U)
    kb.coef_margin(U, m, prm.planes, rows, P, 8, out)
    t_marg = (time.perf_counter() - t) * n / rows.size
    return {"n": n, "width": width, "distance_s": t_dist, "margin_s_all_rows": t_marg,
            "pairs_x_snps_per_s_distance": n * n / 2 * width / t_dist,
            "nonzero_pairs_x_snps_per_s_margin": 0.3 * n * n * width / t_marg}


def bandwidth(threads):
    """A numpy copy of 1 GiB (read + write bytes a second) and the kernels' element rates at 2,350 rows."""
    import numba

    from knnweights.engine import _kernels_bytes as kb

    numba.set_num_threads(threads)
    a = np.ones(2**27)
    b = np.empty_like(a)
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(b, a)
        ts.append(time.perf_counter() - t)
    bw = 2 * a.nbytes / min(ts)
    n, B = 2350, 8192
    rng = np.random.default_rng(0)
    E = rng.integers(0, 3, size=(n, B), dtype=np.uint8)
    W = (B + 63) // 64
    packed = np.empty((n, 2 * W), np.uint64)
    kb.pack_planes(E, 2, packed)
    kb.hamming_add_sym(packed[:64], np.zeros((64, 64), np.int32))
    D = np.zeros((n, n), np.int32)
    t = time.perf_counter()
    kb.hamming_add_sym(packed, D)
    t_d = time.perf_counter() - t
    return {"copy_bytes_per_s": bw, "distance_genotype_pairs_per_s": n * n / 2 * B / t_d,
            "distance_bytes_read_per_s": n * n / 2 * 2 * packed.shape[1] * 8 / t_d}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    cases = args.case or []
    if args.all:
        cases = ["bandwidth", "block-cost", "gwas-multisurf", "gwas-relieff", "cohort-100k", "turf", "skrebate-turf",
                 "sampled-relieff", "exact-relieff", "exact-multisurf", "variance"]
    res = {}
    for c in cases:
        t0 = time.perf_counter()
        if c == "gwas-multisurf":
            r = run_child(2350, 230_000, "MultiSURF()", args.threads)
        elif c == "gwas-relieff":
            r = run_child(2350, 230_000, "ReliefF(n_neighbors=10)", args.threads)
        elif c == "cohort-100k":
            r = run_child(10_000, 100_000, "MultiSURF()", args.threads)
        elif c == "turf":
            r = run_child(1600, 10_000, "TuRF(MultiSURF(discrete_features='auto'), pct=0.5, n_features_to_select=2500)",
                          args.threads, k=2)
        elif c == "skrebate-turf":
            r = skrebate_turf(args.threads)
        elif c == "sampled-relieff":
            r = sampled_relieff(args.threads)
        elif c == "exact-relieff":
            r = run_child(20_000, 100, "ReliefF(n_neighbors=10)", args.threads, k=2, dtype="float64")
        elif c == "exact-multisurf":
            r = run_child(20_000, 100, "MultiSURF()", args.threads, k=2, dtype="float64")
        elif c == "variance":
            r = variance(args.threads)
        elif c == "block-cost":
            r = block_cost(args.threads)
        elif c == "bandwidth":
            r = bandwidth(args.threads)
        else:
            raise SystemExit(f"unknown case {c}")
        r["case_wall_s"] = time.perf_counter() - t0
        res[c] = r
        print(c, json.dumps(r), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


SK_CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, {here!r})
import numpy as np
from bench_genomics import simulate
from skrebate import TURF, MultiSURF
X, y, pair = simulate({n}, {d}, 2, seed=0, noise=0.1)
X = X.astype(np.float64)
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    fs = TURF(MultiSURF(n_features_to_select=2, n_jobs=1), pct=0.5, num_scores_to_return=2500)
    fs.fit(X, y)
print(json.dumps({{"wall_s": time.perf_counter() - t}}))
"""


def skrebate_turf(threads, n_sub=(100, 200), d=10_000):
    """scikit-rebate's TuRF(MultiSURF) on row subsets of the 1,600 x 10,000 case, extrapolated to 1,600
    rows by its O(n^2 d) cost (the slope of log time against log n from the two subsets)."""
    times = {}
    for n in n_sub:
        code = SK_CHILD.format(here=HERE, n=n, d=d)
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                             env={**os.environ, "OMP_NUM_THREADS": str(threads)})
        if out.returncode != 0:
            raise RuntimeError(out.stderr[-3000:])
        times[n] = json.loads(out.stdout.strip().splitlines()[-1])["wall_s"]
    a, b = n_sub
    slope = float(np.log(times[b] / times[a]) / np.log(b / a))
    return {"subset_wall_s": times, "fitted_exponent": slope,
            "extrapolated_1600_quadratic_s": times[b] * (1600 / b) ** 2,
            "extrapolated_1600_fitted_s": times[b] * (1600 / b) ** slope}


def sampled_relieff(threads, n=100_000, d=100, m=1000):
    import numba

    from knnweights import ReliefF

    numba.set_num_threads(threads)
    rng = np.random.default_rng(3)
    X = rng.normal(size=(n, d))
    y = (X[:, 3] + X[:, 17] - X[:, 42] > 0).astype(int)
    ReliefF(n_instances=50, random_state=0).fit(X[:2000], y[:2000])
    t = time.perf_counter()
    est = ReliefF(n_instances=m, random_state=0).fit(X, y)
    wall = time.perf_counter() - t
    top = sorted(np.argsort(est.ranking_)[:3].tolist())
    t = time.perf_counter()
    exact = ReliefF().fit(X[:20_000], y[:20_000])
    wall_exact = time.perf_counter() - t
    top_exact = sorted(np.argsort(exact.ranking_)[:3].tolist())
    return {"n": n, "d": d, "m": m, "wall_s": wall, "top3": top, "planted": [3, 17, 42],
            "exact_20000_wall_s": wall_exact, "exact_20000_top3": top_exact}


def variance(threads, n=5000, d=50, sizes=(100, 300, 1000, 3000), seeds=20):
    import numba

    from knnweights import ReliefF

    numba.set_num_threads(threads)
    rng = np.random.default_rng(4)
    X = rng.normal(size=(n, d))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    exact = ReliefF().fit(X, y).scores_
    out = {}
    for m in sizes:
        est = np.array([ReliefF(n_instances=m, random_state=s).fit(X, y).scores_ for s in range(seeds)])
        out[m] = {"sd_feature0": float(est[:, 0].std()), "sd_noise_median": float(np.median(est[:, 2:].std(axis=0))),
                  "rmse_vs_exact": float(np.sqrt(((est - exact) ** 2).mean()))}
    return {"n": n, "exact_feature0": float(exact[0]), "by_m": out}


if __name__ == "__main__":
    main()
