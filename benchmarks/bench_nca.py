"""NCADiagonal against scikit-learn's NeighborhoodComponentsAnalysis, in the same run.

    python benchmarks/bench_nca.py                   # writes benchmarks/bench_nca.md
    python benchmarks/bench_nca.py --sizes 500x100 --timeout 120

Both with ``tol=1e-5`` (L-BFGS-B ``ftol`` and ``gtol``, the same objective scale
``sum_i p_i`` in both) and ``max_iter=100`` (sklearn's default is 50), each from its
default start: sklearn ``init="identity"`` (what its ``"auto"`` picks for these shapes:
``w = 1`` in diagonal terms); ours ``init="scaled"``, ``w = 1 / mean ||x_i - x_j||^2``.
Each fit runs in its own process after a warm-up fit; median over ``--repeats`` while a
fit stays under 30 s.  Columns: seconds and L-BFGS-B iterations (``*``: stopped by
``max_iter``, not converged), the time ratio sklearn / ours, and the NCA objective
``sum_i p_i`` (expected number of correctly classified training samples) at each one's
result: ours at its diagonal weights, sklearn's at its full ``d x d`` matrix (more
freedom), and ours at ``w = 1``.  The last column, one run of ours from ``w = 1``
(``init="ones"``, sklearn's start), shows what the start does.  Data:
``X ~ N(0, 1)``, ``y = [x_1 + ... + x_5 > 0]`` (bench_suite's generator).
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = ["500x100", "2000x500", "1000x5000"]


def load(size):
    n, d = (int(v) for v in size.split("x"))
    rng = np.random.default_rng([0, n, d])
    X = rng.normal(size=(n, d))
    return X, (X[:, :5].sum(1) > 0).astype(int)


def _child(lib, size, init="scaled"):
    from sklearn.neighbors import NeighborhoodComponentsAnalysis

    from knnweights import NCADiagonal
    from knnweights.weighters.nca import nca_diagonal_objective

    X, y = load(size)
    Xw = np.random.default_rng(1).normal(size=(40, 6))
    yw = (Xw[:, 0] > 0).astype(int)
    if lib == "ours":
        NCADiagonal().fit(Xw, yw)
        t = time.perf_counter()
        est = NCADiagonal(tol=1e-5, max_iter=100, init=init).fit(X, y)
        sec = time.perf_counter() - t
        obj = est.objective_
        start = nca_diagonal_objective(np.ones(X.shape[1]), X, y)[0]
    else:
        NeighborhoodComponentsAnalysis(init="identity").fit(Xw, yw)
        t = time.perf_counter()
        est = NeighborhoodComponentsAnalysis(init="identity", tol=1e-5, max_iter=100).fit(X, y)
        sec = time.perf_counter() - t
        k = est.components_.shape[0]
        obj = nca_diagonal_objective(np.ones(k), X @ est.components_.T, y)[0]
        start = None
    print(json.dumps({"seconds": sec, "n_iter": int(est.n_iter_), "objective": float(obj), "start": start}))


def run_one(lib, size, timeout, init="scaled"):
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "_child", lib, size, init],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def timed(lib, size, timeout, repeats):
    rs = [run_one(lib, size, timeout)]
    while len(rs) < repeats and "seconds" in rs[-1] and rs[-1]["seconds"] < 30.0:
        rs.append(run_one(lib, size, timeout))
    if "seconds" not in rs[0]:
        return rs[0], None
    return rs[0], float(np.median([r["seconds"] for r in rs]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=SIZES)
    ap.add_argument("--timeout", type=float, default=150.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "bench_nca.md"))
    args = ap.parse_args()
    rows = []
    for size in args.sizes:
        o, ot = timed("ours", size, args.timeout, args.repeats)
        s, st = timed("sklearn", size, args.timeout, args.repeats)
        w1 = run_one("ours", size, args.timeout, "ones")

        def fmt(r, t):
            if t is None:
                return f"> {r['timeout']:.0f} s" if "timeout" in r else "error: " + r.get("error", "?")
            return f"{t:.3g} s ({r['n_iter']}{'*' if r['n_iter'] >= 100 else ''} it)"

        if ot is not None and st is not None:
            ratio = f"**{st / ot:.2g}x**"
        elif ot is not None and "timeout" in s:
            ratio = f"**> {s['timeout'] / ot:.2g}x**"
        else:
            ratio = "-"
        row = (f"| {size.replace('x', ' x ')} | {fmt(o, ot)} | {fmt(s, st)} | {ratio} | "
               f"{o.get('objective', float('nan')):.2f} | {s.get('objective', float('nan')):.2f} | "
               f"{o.get('start') or float('nan'):.2f} | {fmt(w1, w1.get('seconds'))}, "
               f"f = {w1.get('objective', float('nan')):.2f} |")
        rows.append(row)
        print(row, flush=True)
    lines = [
        "# NCADiagonal vs scikit-learn NeighborhoodComponentsAnalysis",
        "",
        f"`python benchmarks/bench_nca.py` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; both in the same run, "
        "each fit in a fresh process; the machine was shared with other jobs (contended timings: read the ratios).",
        "",
        "| n x d | NCADiagonal | sklearn NCA (full d x d) | sklearn / ours | objective ours | objective sklearn "
        "(full matrix) | objective at w = 1 | ours from w = 1 (one run) |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
    ]
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        _child(*sys.argv[2:5])
    else:
        main()
