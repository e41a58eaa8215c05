"""Every weighter's first fit after an install: cold, on a warm cache, and again in the same process.

    python benchmarks/first_fits.py                          # every weighter, Sonar / Colon / (2000, 500)
    python benchmarks/first_fits.py --data synth --methods GFlip IM4E
    python benchmarks/first_fits.py --profile GFlip --data synth   # compile seconds per function
    python benchmarks/first_fits.py --budget                 # compilations and IR per method (JSON)
    python benchmarks/first_fits.py --together --data sonar --methods ReliefF IM4E NCADiagonal MDM SQPFW
    python benchmarks/first_fits.py --src ../base/src src     # two source trees, interleaved per row

For each method and data set, one fresh process with an empty ``NUMBA_CACHE_DIR`` fits the method
twice ("cold": the first fit with every compilation; "second": the same fit again), then a second
fresh process on the cache the first one wrote fits it once ("warm cache").  The cold process also
counts what the first fit compiled, two numbers that do not depend on the machine's speed or load:

* compilations: numba's ``numba:compile`` events (one per function and signature compiled);
* IR kB: the LLVM IR numba's lowering produced for them (the text of each module handed to
  LLVM, before optimisation), the back end's input.

``--together`` fits the methods one after the other in one fresh process with an empty cache (a
user's first session: the five of issue 57's first-session target, say).  ``--budget`` fits every
weighter on Sonar in one process with an empty cache, in the fixed order of ``knnweights.WEIGHTERS``,
and prints what each fit added (a later method reuses what an earlier one compiled), and how many
of numba's parfor helpers it compiled (0: no kernel was made a parfor).
``tests/test_compile_budget.py`` compares that with ``benchmarks/compile_budget.json``.

Data: ``sonar`` (208 x 60, as loaded), ``colon`` (Colon, 62 x 2000, standardised), ``synth`` (standard
normal (2000, 500), ``y = x0 + x1 > 0``).  Parameters are the defaults, except those in ``PARAMS``
(IM4E at (2000, 500): three iterations, as in issue 57).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = r"""
import json, sys, time, warnings
t0 = time.perf_counter()
import numpy as np
from numba.core import codegen, event
import knnweights
from knnweights.datasets import load

def data(name):
    if name == "sonar":
        return load("sonar", return_X_y=True)
    if name == "colon":
        from sklearn.preprocessing import StandardScaler
        X, y = load("colon_alon", return_X_y=True)
        return StandardScaler().fit_transform(X), y
    rng = np.random.default_rng(0)
    X = rng.standard_normal((2000, 500))
    return X, (X[:, 0] + X[:, 1] > 0).astype(int)

PARAMS = {("IM4E", "synth"): {"max_iter": 3}}
stats = {"compilations": 0, "ir": 0, "parfors": 0}

class Count(event.Listener):
    def on_start(self, ev):
        stats["compilations"] += 1
        if ev.data["dispatcher"].py_func.__module__.startswith("numba.parfors"):
            stats["parfors"] += 1  # a parfor made of a kernel (an array expression or reduction in it)
    def on_end(self, ev):
        pass

add_ir_module = codegen.CPUCodeLibrary.add_ir_module
def counted(self, ir_module):
    stats["ir"] += len(str(ir_module))
    return add_ir_module(self, ir_module)
codegen.CPUCodeLibrary.add_ir_module = counted

mode, dataset, methods = sys.argv[1], sys.argv[2], sys.argv[3:]
X, y = data(dataset)
out = {"import": time.perf_counter() - t0, "fits": {}}
with event.install_listener("numba:compile", Count()):
    for name in methods:
        row = out["fits"][name] = {}
        before = dict(stats)
        for fit in ["first", "second"] if mode == "cold" else ["first"]:
            t = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                knnweights.WEIGHTERS[name](**PARAMS.get((name, dataset), {})).fit(X, y)
            row[fit] = time.perf_counter() - t
            row.setdefault("warnings", sorted({w.category.__name__ for w in caught}))
            if fit == "first":
                row["compilations"] = stats["compilations"] - before["compilations"]
                row["ir"] = stats["ir"] - before["ir"]
                row["parfors"] = stats["parfors"] - before["parfors"]
print("RESULT " + json.dumps(out))
"""

PROFILE = r"""
import collections, sys, time
from numba.core import event
import knnweights
exec(sys.argv[3])  # the data function of CHILD
own, calls, stack = collections.Counter(), collections.Counter(), []
class Exclusive(event.Listener):  # a function's compile time without the functions it compiles in turn
    def on_start(self, ev):
        stack.append([time.perf_counter(), 0.0])
    def on_end(self, ev):
        t0, inner = stack.pop()
        dt = time.perf_counter() - t0
        if stack:
            stack[-1][1] += dt
        f = ev.data["dispatcher"].py_func
        key = f"{f.__module__}.{f.__qualname__}"
        own[key] += dt - inner
        calls[key] += 1
X, y = data(sys.argv[2])
t = time.perf_counter()
with event.install_listener("numba:compile", Exclusive()):
    knnweights.WEIGHTERS[sys.argv[1]](**PARAMS.get((sys.argv[1], sys.argv[2]), {})).fit(X, y)
print(f"{sys.argv[1]} on {sys.argv[2]}: {time.perf_counter() - t:.1f} s, {sum(calls.values())} compilations, "
      f"{sum(own.values()):.1f} s compiling")
print("| function | compilations | own seconds |")
print("|---|---|---|")
for key, sec in own.most_common(30):
    print(f"| `{key}` | {calls[key]} | {sec:.2f} |")
"""

DATA = ["sonar", "colon", "synth"]


def weighters():
    code = "import knnweights; print(' '.join(knnweights.WEIGHTERS))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()


def child(mode, dataset, methods, cache, timeout, src=None):
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    try:
        r = subprocess.run([sys.executable, "-c", CHILD, mode, dataset, *methods], env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    for line in r.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    sys.stderr.write(r.stderr[-2000:])
    return None


def budget():
    """Compilations and IR bytes each weighter's first Sonar fit adds, in ``WEIGHTERS``' order."""
    with tempfile.TemporaryDirectory() as cache:
        out = child("budget", "sonar", weighters(), cache, timeout=None)
    if out is None:
        raise SystemExit("the budget run failed")
    return {name: {"compilations": row["compilations"], "ir_bytes": row["ir"], "parfor_helpers": row["parfors"]}
            for name, row in out["fits"].items()}


def together(methods, datasets):
    """Several first fits in one process with an empty cache: each fit's time and what it added."""
    for dataset in datasets:
        with tempfile.TemporaryDirectory() as cache:
            t0 = time.perf_counter()
            out = child("budget", dataset, methods, cache, timeout=None)
            wall = time.perf_counter() - t0
        if out is None:
            raise SystemExit("the run failed")
        print(f"{dataset}: import and data {out['import']:.1f} s")
        for name, row in out["fits"].items():
            print(f"  {name}: {row['first']:.1f} s, {row['compilations']} compilations, {row['ir'] / 1e3:.0f} kB IR")
        print(f"  total: {wall:.1f} s wall, {sum(r['compilations'] for r in out['fits'].values())} compilations")


def table(methods, datasets, timeout, sources):
    print("| data | method | code | cold first fit | warm-cache first fit | second fit | cold - warm | compilations "
          "| IR kB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for dataset in datasets:
        for name in methods:
            for src in sources:  # interleaved: each source's row measured in the same window
                label = src or "installed"
                with tempfile.TemporaryDirectory() as cache:
                    cold = child("cold", dataset, [name], cache, timeout, src)
                    warm = child("warm", dataset, [name], cache, timeout, src) if cold else None
                if cold is None or warm is None:
                    print(f"| {dataset} | {name} | {label} | > {timeout:.0f} s or failed | | | | | |", flush=True)
                    continue
                c, w = cold["fits"][name], warm["fits"][name]
                print(f"| {dataset} | {name} | {label} | {c['first']:.1f} s | {w['first']:.1f} s | "
                      f"{c['second']:.1f} s | {c['first'] - w['first']:.1f} s | {c['compilations']} | "
                      f"{c['ir'] / 1e3:.0f} |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--methods", nargs="+", help="weighters (default: all of knnweights.WEIGHTERS)")
    p.add_argument("--data", nargs="+", choices=DATA, default=DATA)
    p.add_argument("--timeout", type=float, default=600, help="seconds per process")
    p.add_argument("--profile", metavar="METHOD", help="one method's first fit: compile seconds per function")
    p.add_argument("--budget", action="store_true", help="compilations and IR bytes per method on Sonar (JSON)")
    p.add_argument("--together", action="store_true", help="the methods' first fits in one process")
    p.add_argument("--src", nargs="+", default=[None], help="source trees (PYTHONPATH) to compare, row by row")
    args = p.parse_args()
    if args.budget:
        print(json.dumps(budget(), indent=1))
        return
    if args.together:
        together(args.methods or weighters(), args.data)
        return
    if args.profile:
        start = CHILD.index("def data")
        setup = CHILD[start:CHILD.index("stats =")]
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            for dataset in args.data:
                subprocess.run([sys.executable, "-c", "import numpy as np\nfrom knnweights.datasets import load\n"
                                + PROFILE, args.profile, dataset, setup], env=env, check=True)
        return
    table(args.methods or weighters(), args.data, args.timeout, args.src)


if __name__ == "__main__":
    main()
