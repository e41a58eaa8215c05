"""MDM benchmark: fit time and peak memory, full LP vs lazy constraint generation.

Each measurement runs in a fresh subprocess so that its peak resident memory
(``resource.getrusage(...).ru_maxrss``, which includes HiGHS' C++ allocations) and its
Python/NumPy peak (``tracemalloc``) belong to that fit alone.

Usage::

    python benchmarks/bench_mdm.py                      # n = 200, 1000, 5000 at d = 20
    python benchmarks/bench_mdm.py --largest            # + largest n lazy fits in < 60 s
    python benchmarks/bench_mdm.py --genes              # + nonzero weights on microarrays
    python benchmarks/bench_mdm.py --sizes 200 --modes full lazy --soft 0

The full LP has ``n (n - 1) / 2`` (hard) or up to ``n (n - 1)`` (soft) rows of ``d``
nonzeros; it is skipped when its estimated peak memory (about 5 kB per row, measured at
n = 1000) exceeds ``--full-max-gb`` (default 8 GB; n = 5000 would need about 65 GB).
"""

import argparse
import json
import os
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time, tracemalloc
import numpy as np
from knnweights.weighters.mdm import MDM
cfg = json.loads(sys.argv[1])
rng = np.random.default_rng(cfg["seed"])
n, d = cfg["n"], cfg["d"]
y = np.arange(n) % 2
X = rng.normal(size=(n, d))
X[:, :5] += 1.0 * y[:, None] * np.linspace(1.0, 0.2, 5)   # 5 informative features, 15 noise
X *= rng.uniform(0.1, 10.0, size=d)                      # arbitrary feature scales
MDM(soft=False, lazy=True).fit(X[:30], y[:30])           # warm up numba / imports
tracemalloc.start()
t = time.perf_counter()
m = MDM(soft=cfg["soft"], C=cfg["C"], lazy=cfg["lazy"], max_rounds=500).fit(X, y)
elapsed = time.perf_counter() - t
_, peak = tracemalloc.get_traced_memory()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps({"time_s": elapsed, "tracemalloc_peak_mb": peak / 2**20, "maxrss_mb": rss,
                  "objective": m.objective_, "radius": m.radius_, "rounds": m.n_iter_,
                  "constraints": m.n_constraints_, "nonzero_w": int(np.count_nonzero(m.feature_importances_))}))
"""


def run_one(n, d, soft, C, lazy, seed=0, timeout=900):
    cfg = json.dumps({"n": n, "d": d, "soft": soft, "C": C, "lazy": lazy, "seed": seed})
    env = dict(os.environ, OMP_NUM_THREADS="2", NUMBA_NUM_THREADS="2", OPENBLAS_NUM_THREADS="2")
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, cfg], capture_output=True, text=True, timeout=timeout,
                             env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout > {timeout} s"}
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"rc {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def full_matrix_gb(n, d, soft):
    """Estimated peak resident memory of the full LP: about 5.2 kB per row at d = 20.

    Measured: hard n = 1000 (499 500 rows) 2.58 GB, soft n = 1000 (749 000 rows)
    3.65 GB; the CSR matrix itself is only 12 bytes per nonzero (HiGHS copies it,
    presolves it and factorises bases).
    """
    pairs = n * (n - 1) / 2
    rows = pairs * (1.5 if soft else 1.0)  # soft: equal-label pairs twice (half the pairs for 2 classes)
    return rows * 5.2e3 * (d + 2) / 22 / 1e9


def fmt(res):
    if "error" in res:
        return res["error"]
    return (f"{res['time_s']:8.2f} s  peak(tracemalloc) {res['tracemalloc_peak_mb']:8.1f} MB  maxrss "
            f"{res['maxrss_mb']:8.1f} MB  obj {res['objective']:.8g}  rounds {res['rounds']:3d}  "
            f"constraints {res['constraints']}")


def genes():
    import numpy as np

    from knnweights.datasets import load
    from knnweights.weighters.mdm import MDM

    print("\nGene expression: nonzero MDM weights (lazy rows and feature columns)")
    for name in ("colon_alon", "leukemia_golub"):
        X, y = load(name, return_X_y=True, missing="median")
        for soft, C in ((False, 1.0), (True, 0.1), (True, 0.01)):
            t = time.perf_counter()
            m = MDM(soft=soft, C=C).fit(X, y)
            t = time.perf_counter() - t
            w = m.feature_importances_
            print(f"  {name:15s} {X.shape[0]:3d} x {X.shape[1]:5d}  {'soft C=' + str(C) if soft else 'hard':10s} "
                  f"nonzero {np.count_nonzero(w):4d} / {w.size} ({100 * np.count_nonzero(w) / w.size:.1f} %)  "
                  f"r {m.radius_:.4g}  obj {m.objective_:.6g}  {t:.1f} s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 5000])
    p.add_argument("--d", type=int, default=20)
    p.add_argument("--modes", nargs="+", default=["full", "lazy"], choices=["full", "lazy"])
    p.add_argument("--soft", type=int, nargs="+", default=[0, 1], help="0 = hard, 1 = soft")
    p.add_argument("--C", type=float, default=0.01)
    p.add_argument("--full-max-gb", type=float, default=8.0)
    p.add_argument("--largest", action="store_true", help="largest n the lazy form fits in under 60 s")
    p.add_argument("--genes", action="store_true")
    args = p.parse_args(argv)

    print(f"MDM fit, d = {args.d}, 2 classes, seed 0; C = {args.C} for soft; cpu_count {os.cpu_count()}")
    for soft in args.soft:
        for n in args.sizes:
            for mode in args.modes:
                tag = f"{'soft' if soft else 'hard'} n={n:6d} {mode:4s}"
                if mode == "full" and full_matrix_gb(n, args.d, soft) > args.full_max_gb:
                    print(f"{tag}: skipped, the full LP would need about "
                          f"{full_matrix_gb(n, args.d, soft):.1f} GB (> {args.full_max_gb} GB)")
                    continue
                res = run_one(n, args.d, bool(soft), args.C, mode == "lazy")
                print(f"{tag}: {fmt(res)}", flush=True)

    if args.largest:
        print("\nLargest n fitted by the lazy form in under 60 s (doubling, then bisection on a 1000 grid)")
        for soft in args.soft:
            ok, bad, n = 0, None, 5000
            while bad is None or bad - ok > 1000:
                res = run_one(n, args.d, bool(soft), args.C, True, timeout=120)
                good = "error" not in res and res["time_s"] < 60
                print(f"  {'soft' if soft else 'hard'} n={n:6d}: {fmt(res)}", flush=True)
                if good:
                    ok = n
                else:
                    bad = n
                n = 2 * n if bad is None else (ok + bad) // 2 // 1000 * 1000
                if bad is not None and n <= ok:
                    break
            print(f"  => {'soft' if soft else 'hard'}: largest n under 60 s: {ok}")
    if args.genes:
        genes()


if __name__ == "__main__":
    main()
