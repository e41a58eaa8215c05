"""SQP-FW benchmark: cold fits and the regularisation path at the paper's scale.

Run:  python benchmarks/bench_sqpfw.py [--sizes 200 400 1000] [--repeat 3] [--colon both|fit|path|none]
       [--raw] [--out FILE.md] [--save-weights FILE.npz] [--compare FILE.npz]
      python benchmarks/bench_sqpfw.py --cell DATASET [--split 0] [--save-weights FILE.npz]

``--cell``: one full-protocol SQP-FW cell of ``reproduce sqp-fw --full`` Table 1 (the
``_SQPFWPathKNN`` call on split ``--split`` of ``RepeatedHoldout(10)``, kappa = 1, 2, 3):
CPU seconds of each path, of the predictions (300 thetas x kappas, k = 1, 3, 5) and of the
cell, breakpoints and steps per path, the cell's result; ``--save-weights`` stores the
paths (breakpoints, weights, steps) and the result for a comparison with another version.

Measures, in one run: a cold fit at theta = 1 on synthetic data (d = 20, two classes,
``y = [x0 + x1 + 0.3 noise > 0]``) for each n; a cold fit at theta = 1 on Colon
(62 x 2000, standardised); ``SQPFW.path`` up to theta = 100 on a stratified 2/3 Colon
training split (41 samples); with ``--raw`` also the cold fit with the defaults on the raw
Colon intensities (as ``bench_suite.py`` runs it). Reports the median wall time over ``--repeat`` runs
(``n > 400``: one run; the kernels are compiled before any timing), active-set steps (kept), time per step,
working-set refreshes and the number of non-zero weights; ``--save-weights`` stores every
case's weights (the path: breakpoints and weights) and ``--compare`` adds the largest absolute
weight difference against such a file (another version's run). Targets (2 cores):
n = 200 <= 0.15 s, n = 1000 <= 8 s, Colon cold fit <= 5 s, Colon path <= 3 s.
"""

import argparse
import os
import platform
import sys
import time

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from knnweights import SQPFW
from knnweights.datasets import load

TARGETS = {"n=200": 0.15, "n=1000": 8.0, "colon fit": 5.0, "colon path": 3.0}


def _synthetic(n, d=20, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    y = (X[:, 0] + X[:, 1] + 0.3 * rng.randn(n) > 0).astype(int)
    return X, y


def _colon():
    b = load("colon_alon")
    X, y = np.asarray(b.data, dtype=np.float64), np.asarray(b.target)
    return StandardScaler().fit_transform(X), y


def _colon_raw():
    X, y = load("colon_alon", return_X_y=True, missing="median")
    return np.asarray(X, dtype=np.float64), y


def _median_time(fn, repeat):
    """Median wall time and median process CPU time over ``repeat`` runs, and the last result."""
    times, cpus, out = [], [], None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        times.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    _CPU.append(float(np.median(cpus)))
    return float(np.median(times)), out


_CPU = []  # CPU seconds of the last timing (a shared machine inflates wall time more than CPU time)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[200, 400, 1000])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--colon", choices=["both", "fit", "path", "none"], default="both")
    ap.add_argument("--raw", action="store_true", help="also the default fit on the raw Colon data")
    ap.add_argument("--out", default=None)
    ap.add_argument("--save-weights", default=None)
    ap.add_argument("--compare", default=None)
    ap.add_argument("--cell", default=None, help="one Table 1 SQP-FW cell of this dataset key (e.g. waveform_v1)")
    ap.add_argument("--split", type=int, default=0)
    args = ap.parse_args(argv)
    if args.cell:
        return _cell(args.cell, args.split, args.save_weights)
    weights = {}
    ref = dict(np.load(args.compare)) if args.compare else None

    load_start = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    SQPFW(theta=1.0).fit(*_synthetic(40, 4))  # compile the kernels outside the timings
    SQPFW().path(*_synthetic(40, 4), thetas=[1.0])  # (the path's own kernels too)
    rows = []

    def add(name, secs, steps, refresh, nnz, extra="", w=None):
        target = TARGETS.get(name)
        if w is not None:
            weights[name] = w
            if ref is not None and name in ref:
                diff = (np.abs(w - ref[name]).max() if ref[name].shape == w.shape
                        else f"shape {ref[name].shape} vs {w.shape}")
                extra += f"; max abs weight difference vs {os.path.basename(args.compare)}: {diff:.3g}" \
                    if not isinstance(diff, str) else f"; {diff}"
        row = (f"| {name} | {secs:.3f} | {_CPU[-1]:.3f} | {steps} | {1e6 * secs / max(steps, 1):.0f} | {refresh} | "
               f"{nnz} | {'-' if target is None else f'{target:g}'} | {extra} |")
        rows.append(row)
        print(row, flush=True)

    print("| case | wall s (median) | CPU s (median) | steps | us / step | refreshes | non-zero w | target s | notes |")
    for n in args.sizes:
        X, y = _synthetic(n)
        rep = args.repeat if n <= 400 else 1
        secs, est = _median_time(lambda X=X, y=y: SQPFW(theta=1.0).fit(X, y), rep)
        add(f"n={n}", secs, est.n_iter_, est.n_refresh_, int(np.count_nonzero(est.feature_importances_)),
            f"d=20, theta=1, median of {rep}", est.feature_importances_)
    if args.colon in ("both", "fit"):
        X, y = _colon()
        secs, est = _median_time(lambda: SQPFW(theta=1.0).fit(X, y), args.repeat)
        add("colon fit", secs, est.n_iter_, est.n_refresh_, int(np.count_nonzero(est.feature_importances_)),
            f"62 x 2000 standardised, theta=1, median of {args.repeat}", est.feature_importances_)
    if args.raw:
        X, y = _colon_raw()
        secs, est = _median_time(lambda: SQPFW().fit(X, y), args.repeat)
        add("colon raw fit", secs, est.n_iter_, est.n_refresh_, int(np.count_nonzero(est.feature_importances_)),
            f"62 x 2000 raw intensities, defaults (theta=1), median of {args.repeat}, "
            f"sum(w) - 1 = {est.feature_importances_.sum() - 1:.1e}", est.feature_importances_)
    if args.colon in ("both", "path"):
        X, y = _colon()
        Xtr, _, ytr, _ = train_test_split(X, y, test_size=1 / 3, stratify=y, random_state=0)
        secs, p = _median_time(lambda: SQPFW().path(Xtr, ytr, thetas=[100.0]), args.repeat)
        add("colon path", secs, p.n_steps_, "-", int(np.count_nonzero(p.weights_[-1])),
            f"41 x 2000 training split, theta 0..100, {len(p)} breakpoints, median of {args.repeat}",
            np.column_stack([p.thetas_, p.weights_]))
    header = ("| case | wall s (median) | CPU s (median) | steps | us / step | refreshes | non-zero w | target s "
              "| notes |\n|---|---|---|---|---|---|---|---|---|\n")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    text = (f"# SQP-FW benchmark\n\n`python benchmarks/bench_sqpfw.py {' '.join(argv or sys.argv[1:])}`; "
            f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared with other jobs "
            f"while measured; load average {load_start} at the start, {load} at the end: wall times are "
            f"inflated by the contention).\n\n" + header + "\n".join(rows) + "\n")
    if args.save_weights:
        np.savez(args.save_weights, **weights)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return rows


def _cell(key, split, save):
    """One full-protocol Table 1 SQP-FW cell, timed by parts (process CPU seconds)."""
    import json

    from knnweights.classifiers import _weighted_knn as K
    from knnweights.evaluation import derive_seed
    from knnweights.reproduce import sqpfw as R
    from knnweights.reproduce.tables import Config
    from knnweights.weighters import sqpfw as S

    cfg = Config(mode="full")
    spec = R.table1()
    ds = next(d for d in spec.datasets if d.key == key)
    X, y = ds.load(cfg)
    r = f = tr = va = te = None
    for r, f, tr, va, te in spec.protocol(cfg).split(y, 0, ds.key):  # noqa: B007 (the split is used below)
        if r == split:
            break
    method = next(m for m in spec.methods if m.label == "SQP-FW")
    cell = method.build(cfg)
    SQPFW().path(*_synthetic(80, 4), thetas=[1.0])  # compile the kernels outside the timings
    paths, parts = [], {"predict": 0.0}
    path0, pred0 = S.SQPFW.path, K.predict_weighted_knn_ks

    def path(self, *a, **k):
        t = time.process_time()
        p = path0(self, *a, **k)
        paths.append((self.kappa, time.process_time() - t, p))
        print(f"  kappa={self.kappa}: path {paths[-1][1]:.2f} s CPU, {len(p)} breakpoints, {p.n_steps_} steps",
              flush=True)
        return p

    def pred(*a, **k):
        t = time.process_time()
        out = pred0(*a, **k)
        parts["predict"] += time.process_time() - t
        return out

    S.SQPFW.path, K.predict_weighted_knn_ks = path, pred
    try:
        print(f"{key}: train {len(tr)} x {X.shape[1]}, validation {len(va)}, test {len(te)}", flush=True)
        t = time.process_time()
        res = cell(X[tr], y[tr], X[te], y[te], X_val=X[va], y_val=y[va],
                   random_state=derive_seed(0, "cell", method.label, ds.key, r, f))
        total = time.process_time() - t
    finally:
        S.SQPFW.path, K.predict_weighted_knn_ks = path0, pred0
    print(f"  predictions {parts['predict']:.2f} s CPU; cell {total:.2f} s CPU; {json.dumps(res)}")
    if save:
        arrays = {"result": json.dumps(res)}
        for i, (_, _, p) in enumerate(paths):
            arrays.update({f"thetas{i}": p.thetas_, f"weights{i}": p.weights_, f"steps{i}": p.n_steps_})
        np.savez(save, **arrays)
    return res


if __name__ == "__main__":
    main()
