"""EFW and SBMLR with default parameters: this tree's code against another checkout's (before / after).

Each fit runs in a fresh Python process (``python -c``) with ``PYTHONPATH`` set to the
checkout's ``src``; the data are the large cases (bench_suite's synthetic sizes and the
bundled microarrays, raw values, as ``benchmarks/bench_suite.py`` loads them).  Fits under
10 s are repeated (``--repeat``) and the median wall time reported.  The weights of the two
checkouts are compared (largest absolute difference of ``feature_importances_``).

Usage::

    git worktree add /tmp/efw_head HEAD      # the "before" code
    python benchmarks/bench_efw_sbmlr.py --before /tmp/efw_head/src --out benchmarks/bench_efw_sbmlr.md
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
AFTER_SRC = os.path.join(os.path.dirname(HERE), "src")
CASES = ["syn:500x100", "syn:2000x500", "syn:1000x5000", "syn:200x20000", "colon_alon", "leukemia_golub",
         "kidney_sueltmann", "prostate_singh", "arcene", "breast_vantveer"]

CHILD = r"""
import json, sys, time, warnings
import numpy as np
sys.path.insert(0, {bench!r})
from bench_suite import load_data
import knnweights
X, y = load_data({data!r})
est = getattr(knnweights, {method!r})(**{params!r})
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    t = time.perf_counter()
    est.fit(X, y)
    wall = time.perf_counter() - t
cpu = time.process_time()
np.save({out!r}, est.feature_importances_)
info = {{"wall": wall, "n_iter": int(getattr(est, "n_iter_", -1)),
        "warn": sorted({{type(w.message).__name__ for w in caught if "Convergence" in type(w.message).__name__}}),
        "extra": str(getattr(est, "stop_reason_", getattr(est, "fixed_point_", "")))}}
print("RESULT" + json.dumps(info))
"""


def run_one(src, method, data, timeout, tmp):
    out = os.path.join(tmp, f"{os.path.basename(os.path.dirname(src))}_{method}_{data.replace(':', '_')}.npy")
    params = {"random_state": 0} if method == "EFW" else {}  # EFW draws subsamples: same seed both sides
    code = CHILD.format(bench=HERE, data=data, method=method, out=out, params=params)
    env = dict(os.environ, PYTHONPATH=src)
    t = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"wall": None, "timeout": timeout, "elapsed": time.perf_counter() - t}
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")]
    if not line:
        return {"wall": None, "error": p.stderr.strip().splitlines()[-1:] if p.stderr else "no output"}
    r = json.loads(line[0][6:])
    r["w"] = np.load(out)
    return r


def timed(src, method, data, timeout, repeat, tmp):
    runs = [run_one(src, method, data, timeout, tmp)]
    while runs[0]["wall"] is not None and runs[0]["wall"] < 10 and len(runs) < repeat:
        runs.append(run_one(src, method, data, timeout, tmp))
    first = runs[0]
    if first["wall"] is not None:
        first["median"] = statistics.median(r["wall"] for r in runs if r["wall"] is not None)
        first["n_runs"] = len(runs)
    return first


def fmt(r):
    if r["wall"] is None:
        return f"> {r['timeout']} s" if "timeout" in r else f"error {r.get('error')}"
    return f"{r['median']:.2f} s" + (f" (med. of {r['n_runs']})" if r["n_runs"] > 1 else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="src folder of the 'before' checkout")
    ap.add_argument("--methods", nargs="+", default=["SBMLR", "EFW"])
    ap.add_argument("--cases", nargs="+", default=CASES)
    ap.add_argument("--timeout", type=float, default=100.0, help="per fit of this tree's code")
    ap.add_argument("--timeout-before", type=float, default=60.0, help="per fit of the 'before' code")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None, help="write the Markdown table here")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "b"), exist_ok=True)
        for method in a.methods:
            for data in a.cases:
                before = timed(a.before, method, data, a.timeout_before, a.repeat, tmp)
                after = timed(AFTER_SRC, method, data, a.timeout, a.repeat, tmp)
                diff = (float(np.abs(before["w"] - after["w"]).max())
                        if before.get("w") is not None and after.get("w") is not None else None)
                scale = float(np.abs(after["w"]).max()) if after.get("w") is not None else None
                row = (f"| {method} | {data} | {fmt(before)} | {before.get('n_iter', '')} {before.get('extra', '')} | "
                       f"{fmt(after)} | {after.get('n_iter', '')} {after.get('extra', '')} | "
                       f"{'' if diff is None else f'{diff:.2e}'} | {'' if scale is None else f'{scale:.3g}'} |")
                print(row, flush=True)
                rows.append(row)
    load = os.getloadavg()
    head = ["| method | data | before | it / stop | after | it / stop | max abs diff of weights | max weight |",
            "|---|---|---|---|---|---|---|---|"]
    text = "\n".join(head + rows) + f"\n\nload average at the end: {load[0]:.1f} on {os.cpu_count()} cores\n"
    if a.out:
        with open(a.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
