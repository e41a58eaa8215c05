"""The first fits after an install: five methods on Sonar with an empty numba cache.

    python benchmarks/first_fit_compile_time.py            # one fresh process, empty NUMBA_CACHE_DIR
    python benchmarks/first_fit_compile_time.py --warm     # a second process on the cache the first one wrote
    python benchmarks/first_fit_compile_time.py --profile SQPFW   # one method: compile seconds per function

Prints the import time, each fit's wall time, the number of numba compilations, the process CPU
time and any warning the fits raise (the target: <= 15 s in all and no numba warning).
"""

import argparse
import os
import subprocess
import sys
import tempfile

CHILD = r"""
import time, warnings
t0 = time.perf_counter()
from numba.core import event
import knnweights
from knnweights.datasets import load
X, y = load("sonar", return_X_y=True)
print(f"import and data: {time.perf_counter() - t0:.1f} s")
count = [0]
class Count(event.Listener):
    def on_start(self, ev):
        count[0] += 1
    def on_end(self, ev):
        pass
with event.install_listener("numba:compile", Count()):
    for name in ["ReliefF", "IM4E", "NCADiagonal", "MDM", "SQPFW"]:
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(knnweights, name)().fit(X, y)
        print(f"{name}: {time.perf_counter() - t:.1f} s", [w.category.__name__ for w in caught])
print(f"total: {time.perf_counter() - t0:.1f} s wall, {time.process_time():.1f} s CPU, {count[0]} compilations")
"""


PROFILE = r"""
import collections, sys, time
from numba.core import event
import knnweights
from knnweights.datasets import load
X, y = load("sonar", return_X_y=True)
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
t = time.perf_counter()
with event.install_listener("numba:compile", Exclusive()):
    getattr(knnweights, sys.argv[1])().fit(X, y)
print(f"{sys.argv[1]}: {time.perf_counter() - t:.1f} s, {sum(calls.values())} compilations, "
      f"{sum(own.values()):.1f} s compiling")
print("| function | compilations | own seconds |")
print("|---|---|---|")
for key, sec in own.most_common(25):
    print(f"| `{key}` | {calls[key]} | {sec:.2f} |")
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--warm", action="store_true", help="run twice and report the second (cached) process too")
    p.add_argument("--profile", metavar="METHOD", help="one method's first fit: compile time per function")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        if args.profile:
            subprocess.run([sys.executable, "-c", PROFILE, args.profile], env=env, check=True)
            return
        for label in ["empty cache"] + (["warm cache"] if args.warm else []):
            print(f"-- {label}")
            subprocess.run([sys.executable, "-c", CHILD], env=env, check=True)


if __name__ == "__main__":
    main()
