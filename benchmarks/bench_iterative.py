"""Iterative weighters with default parameters: Logo, GFlip, SVMRFE, Simba (and NCADiagonal).

    python benchmarks/bench_iterative.py                  # writes benchmarks/bench_iterative.md
    python benchmarks/bench_iterative.py --timeout 60 --methods Logo GFlip

Every fit runs in its own process (``python bench_iterative.py _child METHOD DATA``)
after a small warm-up fit that loads the compiled kernels; a fit past ``--timeout`` is
killed and reported as ``> timeout``.  Small fits are repeated (``--repeats``, the
median is reported) while a fit stays under 5 s.  Data: ``X ~ N(0, 1)``,
``y = [x_1 + ... + x_5 > 0]`` at (500, 100), (2000, 500), (1000, 5000), (200, 20000)
(the generator of ``bench_suite.py``), and the bundled Colon microarray (62 x 2000).
Reported per cell: seconds, iterations (``n_iter_``: outer iterations, passes or SVM
fits) and whether the method stopped at ``max_iter``.
"""

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = ["syn:500x100", "syn:2000x500", "syn:1000x5000", "syn:200x20000", "colon_alon"]
METHODS = ["Logo", "GFlip", "SVMRFE", "Simba", "NCADiagonal"]


def load_data(data):
    if data.startswith("syn:"):
        n, d = (int(v) for v in data[4:].split("x"))
        rng = np.random.default_rng([0, n, d])
        X = rng.normal(size=(n, d))
        return X, (X[:, :5].sum(1) > 0).astype(int)
    from knnweights.datasets import load

    return load(data, return_X_y=True, missing="median")


def _child(method, data):
    from sklearn.exceptions import ConvergenceWarning

    import knnweights

    cls = getattr(knnweights, method)
    X, y = load_data(data)
    rng = np.random.default_rng(1)
    Xw = rng.normal(size=(30, 8))
    cls().fit(Xw, (Xw[:, 0] > 0).astype(int))  # warm-up: compiled kernels loaded
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        t = time.perf_counter()
        est = cls().fit(X, y)
        seconds = time.perf_counter() - t
    hit_max = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    print(json.dumps({"seconds": seconds, "n_iter": getattr(est, "n_iter_", None), "max_iter": hit_max}))


def run_one(method, data, timeout):
    try:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "_child", method, data],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout}
    if out.returncode:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def cell(rs):
    if "timeout" in rs[0]:
        return f"> {rs[0]['timeout']:.0f} s"
    if "error" in rs[0]:
        return "error: " + rs[0]["error"]
    sec = float(np.median([r["seconds"] for r in rs]))
    it = rs[0]["n_iter"]
    extra = f" ({it} it{', max_iter' if rs[0]['max_iter'] else ''})" if it is not None else ""
    rep = f" [median of {len(rs)}]" if len(rs) > 1 else ""
    return f"{sec:.3g} s{extra}{rep}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--methods", nargs="+", default=METHODS)
    ap.add_argument("--data", nargs="+", default=DATA)
    ap.add_argument("--timeout", type=float, default=90.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "bench_iterative.md"))
    args = ap.parse_args()
    table = {}
    for method in args.methods:
        for data in args.data:
            rs = [run_one(method, data, args.timeout)]
            while len(rs) < args.repeats and "seconds" in rs[-1] and rs[-1]["seconds"] < 5.0:
                rs.append(run_one(method, data, args.timeout))
            table[method, data] = cell(rs)
            print(f"{method:12s} {data:16s} {table[method, data]}", flush=True)
    lines = [
        "# Iterative weighters, default parameters",
        "",
        f"`python benchmarks/bench_iterative.py` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; fit time in a fresh "
        f"process after a warm-up fit, killed after {args.timeout:.0f} s. The machine was shared with other jobs "
        "(timings are contended; compare within a row).",
        "",
        "| method | " + " | ".join(d.replace("syn:", "").replace("x", " x ") for d in args.data) + " |",
        "|---|" + "---|" * len(args.data),
    ]
    for method in args.methods:
        lines.append(f"| {method} | " + " | ".join(table[method, d] for d in args.data) + " |")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote", args.out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        _child(sys.argv[2], sys.argv[3])
    else:
        main()
