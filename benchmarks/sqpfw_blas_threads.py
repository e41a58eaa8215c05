"""SQP-FW on Colon: can the all-pairs product of the ratio test use two threads and keep the trajectory?

Run:  python benchmarks/sqpfw_blas_threads.py [--out FILE.md]

The target is the Colon cold fit (62 x 2000 standardised, theta = 1) in 5 s on
2 cores; one core gives ~6-7 s, a third of it in the ratio test's all-pairs product
``X_P diag(dw) X_P^T`` (``_active_set_kernels._pair_matrix``, one BLAS ``dgemm`` per moving step).
The fit must keep its pivot sequence (same weights, <= 1e-8), and on Colon the pivots are decided
by rounding at degenerate points (``bench_sqpfw.md``, *Tried and not kept*), so a parallel
product is only usable if it returns the same bits as the one-call, one-thread product.

Measures, with the BLAS numba calls (scipy's):

1. the product ``(X_P * v) @ X_P.T`` at the shapes a Colon fit meets (n = 62 and the 41-sample
   training split; p = 40 .. 2000 genes of the standardised data, v a random positive direction):
   one call on one thread against (a) the same call on two BLAS threads and (b) two calls on
   the two halves of the rows (what a two-thread split in numba would run): bit-identical or not,
   and the one-thread time of one call and of each half (medians of 15 batches of 300 calls);
2. the Colon cold fit itself, as ``bench_sqpfw.py`` runs it, with the fit's one-thread BLAS limit
   (``engine.linalg.single_thread_blas``) and with that limit raised to two threads: steps,
   objective, non-zero weights and the largest weight difference.
"""

import argparse
import contextlib
import platform
import time

import numpy as np
from bench_sqpfw import _CPU, _colon, _median_time
from numba import njit
from threadpoolctl import threadpool_limits

from knnweights import SQPFW
from knnweights._solvers import active_set


@njit(cache=False)
def _one_call(XV, XP):
    return XV @ XP.T


@njit(cache=False)
def _two_halves(XV, XP):
    n = XV.shape[0]
    a = n // 2
    G = np.empty((n, n))
    G[:a] = XV[:a] @ XP.T
    G[a:] = XV[a:] @ XP.T
    return G


def _products(X):
    rng = np.random.RandomState(0)
    rows = []
    for n in (62, 41):
        for p in (40, 170, 600, 2000):
            XP = np.ascontiguousarray(X[:n, :p])
            XV = XP * rng.uniform(0.1, 1.0, p)
            with threadpool_limits(1, user_api="blas"):
                ref = _one_call(XV, XP)
                halves = _two_halves(XV, XP)
                t_one, t_half = _times(XV, XP)
            with threadpool_limits(2, user_api="blas"):
                two = _one_call(XV, XP)
            rows.append((n, p, two, halves, ref, t_one, t_half))
    out = []
    for n, p, two, halves, ref, t_one, t_half in rows:
        out.append(f"| {n} x {p} | {_same(two, ref)} | {_same(halves, ref)} | {t_one:.1f} | {t_half:.1f} |")
    return out


def _times(XV, XP, batches=15, calls=300):
    """Median microseconds of one call, and of the two row-half calls per half, on one thread."""
    one, half = [], []
    for _ in range(batches):
        t = time.perf_counter()
        for _ in range(calls):
            _one_call(XV, XP)
        one.append((time.perf_counter() - t) / calls * 1e6)
        t = time.perf_counter()
        for _ in range(calls):
            _two_halves(XV, XP)
        half.append((time.perf_counter() - t) / calls * 1e6 / 2)
    return float(np.median(one)), float(np.median(half))


def _same(a, b):
    if np.array_equal(a, b):
        return "identical"
    k = int(np.sum(a != b))
    return f"differs: {k} / {a.size} entries, max {np.abs(a - b).max():.1e}"


@contextlib.contextmanager
def _two_thread_blas():
    with threadpool_limits(2, user_api="blas"):
        yield


def _fit(X, y, blas):
    saved = active_set.single_thread_blas
    if blas == 2:
        active_set.single_thread_blas = _two_thread_blas
    try:
        wall, est = _median_time(lambda: SQPFW(theta=1.0).fit(X, y), 1)
        return est, wall, _CPU[-1]
    finally:
        active_set.single_thread_blas = saved


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    X, y = _colon()
    lines = [
        "# SQP-FW on Colon: a two-thread all-pairs product against the trajectory",
        "",
        f"`python benchmarks/sqpfw_blas_threads.py`; {platform.machine()}, "
        f"{time.strftime('%d %b %H:%M UTC', time.gmtime())}.",
        "",
        "## The product `(X_P * v) @ X_P.T` against one call on one BLAS thread",
        "",
        "| n x p | one call, two BLAS threads | two calls on the row halves, one thread each "
        "| us, one call (one thread) | us per half |",
        "| --- | --- | --- | --- | --- |",
        *_products(X),
        "",
        "## The Colon cold fit (theta = 1), one-thread BLAS against two",
        "",
        "| BLAS threads in the fit | steps | objective | non-zero w | max abs w difference | wall s | CPU s |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    _fit(X[:, :50], y, 1)  # compile outside the timings
    ref = None
    for blas in (1, 2):
        est, wall, cpu = _fit(X, y, blas)
        w = est.feature_importances_
        if ref is None:
            ref = w
        lines.append(f"| {blas} | {est.n_iter_} | {est.objective_:.6f} | {int(np.sum(w > 0))} | "
                     f"{np.abs(w - ref).max():.2e} | {wall:.2f} | {cpu:.2f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)


if __name__ == "__main__":
    main()
