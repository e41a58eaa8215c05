"""LH-RELIEF: fit time, and the Fermat's spiral robustness curve (Cai & Ng, Fig. 1b).

    python benchmarks/bench_lhrelief.py fit-time
    python benchmarks/bench_lhrelief.py search --repeats 3
    python benchmarks/bench_lhrelief.py spiral --counts 0 300 1000 3000 --repeats 1 --cv 5 \
        --n-jobs 2 --out docs/figures/lhrelief_spiral_robustness.png

``fit-time``: ``LHRelief(n_neighbors=5)`` fit time on random data with ``n=500,
d=1000`` (10 informative features) and on the bundled microarray sets ``colon_alon``
and ``leukemia_golub``, for both readings of eq. 9; a fixed number of iterations
(``tol=0``) so the time per iteration is comparable (the multiplicative reading drops
features whose weight decays to 0 from the neighbour search and the QPs, so its later
iterations are cheaper).

``search``: the fits of the reproduction's LH-RELIEF Table 2 / Fig. 2 cells (standardised
Page Blocks, Spambase, Pima: a random 60 % of the rows, the size of an inner training fold;
Pima with 1000 standard-normal irrelevant features), ``LHRelief(n_neighbors=5)`` with its
incremental neighbour search (:class:`knnweights.engine.incremental.IncrementalHitMiss`) and
with one full ``nearest_hits_misses`` per iteration (the search before it), run in turn on one
thread; process CPU seconds (median), and the two fits' weights compared bit for bit.

``spiral``: error of HKNN on LH-RELIEF weights (both readings of eq. 9, damped step
``--damping``), on I-RELIEF weights and on the raw data as standard-normal irrelevant features are appended
(:func:`knnweights.evaluation.robustness.irrelevant_feature_curve`, 10-fold CV, weights
learnt on the training folds; HKNN's ``lambda`` chosen by 3-fold CV inside the training
folds on the weighted data).
"""

import argparse
import time
import warnings

import numpy as np


def _fit_time(X, y, n_neighbors, max_iter, repeats, update="multiplicative"):
    from sklearn.exceptions import ConvergenceWarning

    from knnweights import LHRelief

    times = []
    for _ in range(repeats):
        est = LHRelief(n_neighbors=n_neighbors, max_iter=max_iter, tol=0.0, update=update)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X, y)
        times.append(time.perf_counter() - t0)
    return min(times), est.n_iter_


def fit_time(args):
    from knnweights import LHRelief
    from knnweights.datasets import load

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 250)
    X = rng.normal(size=(500, 1000))
    X[:, :10] += 0.8 * y[:, None]
    LHRelief(n_neighbors=2, max_iter=1, tol=0).fit(X[::25, :5], y[::25])  # compile the kernels
    rows = [("synthetic n=500 d=1000", X, y)]
    for name in ("colon_alon", "leukemia_golub"):
        Xd, yd = load(name, return_X_y=True, missing="median")
        rows.append((f"{name} n={Xd.shape[0]} d={Xd.shape[1]}", np.asarray(Xd, float), np.asarray(yd)))
    print(f"LHRelief(n_neighbors={args.k}) fit, {args.max_iter} iterations, best of {args.repeats}")
    for label, Xr, yr in rows:
        for update in ("multiplicative", "additive"):
            t, it = _fit_time(Xr, yr, args.k, args.max_iter, args.repeats, update)
            print(f"  {label:40s} {update:15s} {t:8.3f} s   ({1000 * t / it:7.1f} ms / iteration)")


def search(args):
    import statistics

    import numba
    from sklearn.exceptions import ConvergenceWarning

    import knnweights.weighters.lhrelief as lh
    from knnweights import LHRelief
    from knnweights.datasets import load
    from knnweights.engine.neighbors import nearest_hits_misses

    numba.set_num_threads(1)
    incremental = lh.IncrementalHitMiss

    class Plain:  # one full search per iteration
        def __init__(self, X, y, metric):
            self.X, self.y = X, y

        def __call__(self, w, k):
            s = w > 0
            Xs = self.X if s.all() else np.ascontiguousarray(self.X[:, s])
            nb = nearest_hits_misses(Xs, self.y, w[s], k, "manhattan")
            return nb.hit_idx, nb.miss_idx

    made = []

    class Recording(incremental):
        def __init__(self, *a):
            super().__init__(*a)
            made.append(self)

    rng = np.random.RandomState(0)
    cases = []
    for name, noise in (("page_blocks", 0), ("spambase", 0), ("pima_diabetes", 0), ("pima_diabetes", 1000)):
        X, y = load(name, return_X_y=True, missing="median")
        X, y = np.asarray(X, float), np.asarray(y)
        X = X[:, np.ptp(X, axis=0) > 0]
        X = (X - X.mean(0)) / X.std(0)
        idx = rng.choice(len(y), int(0.6 * len(y)), replace=False)
        X, y = X[idx], y[idx]
        if noise:
            X = np.hstack([X, rng.randn(len(y), noise)])
        cases.append((f"{name}{f' + {noise} noise' if noise else ''}", X, y))
    print("| data (n x d) | reading | iterations | incremental CPU s | one full search per iteration CPU s | ratio | "
          "full / pruned passes | weights |")
    print("|---|---|---|---|---|---|---|---|")
    for label, X, y in cases:
        for update in ("multiplicative", "additive"):
            t = {"inc": [], "plain": []}
            w = {}
            for _ in range(args.repeats):
                for mode in ("inc", "plain"):
                    lh.IncrementalHitMiss = Recording if mode == "inc" else Plain
                    est = LHRelief(n_neighbors=5, update=update, max_iter=200)  # the reproduction's cells
                    c0 = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", ConvergenceWarning)
                        est.fit(X, y)
                    t[mode].append(time.process_time() - c0)
                    w[mode] = est.feature_importances_
                    if mode == "inc":
                        passes = f"{made[-1].n_full} / {made[-1].n_pruned}"
            lh.IncrementalHitMiss = incremental
            a, b = statistics.median(t["inc"]), statistics.median(t["plain"])
            same = "identical" if np.array_equal(w["inc"], w["plain"]) else "DIFFER"
            print(f"| {label} ({X.shape[0]} x {X.shape[1]}) | {update} | {est.n_iter_} | {a:.2f} | {b:.2f} | "
                  f"{b / a:.2f} | {passes} | {same} |", flush=True)


def spiral(args):
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from knnweights import IRelief, LHRelief
    from knnweights.classifiers import HKNN
    from knnweights.datasets import make_spiral
    from knnweights.evaluation.robustness import irrelevant_feature_curve
    from knnweights.plotting.robustness import plot_irrelevant_feature_curve

    X, y = make_spiral(n_per_class=200, turns=args.turns, random_state=args.seed)
    X = args.radius * X

    def hknn():
        return GridSearchCV(HKNN(n_neighbors=args.K), {"alpha": [1e-3, 1e-2, 1e-1, 1.0, 10.0]}, cv=3)

    estimators = {
        **{f"LH-RELIEF ({u}) + HKNN": Pipeline([("w", LHRelief(n_neighbors=args.k, max_iter=args.max_iter, update=u,
                                                                damping=args.damping)), ("clf", hknn())])
           for u in ("multiplicative", "additive")},
        "I-RELIEF + HKNN": Pipeline([("w", IRelief(sigma=args.sigma, max_iter=args.max_iter)), ("clf", hknn())]),
        "HKNN (no weights)": hknn(),
    }
    t0 = time.perf_counter()
    res = irrelevant_feature_curve(
        estimators, X, y, args.counts, cv=args.cv, n_repeats=args.repeats, random_state=args.seed, n_jobs=args.n_jobs
    )
    print(
        f"spiral: 2 x 200 points, radius {args.radius}, {args.turns} turns; {args.cv}-fold CV x "
        f"{args.repeats} repeats; {time.perf_counter() - t0:.0f} s"
    )
    print("error % (mean +- std over repeats)")
    print(f"{'noise features':>15s} " + " ".join(f"{name:>22s}" for name in res))
    for i, c in enumerate(res[next(iter(res))].counts):
        cells = [f"{100 * r.mean_error[i]:8.2f} +- {100 * r.std_error[i]:5.2f}" for r in res.values()]
        print(f"{c:>15d} " + " ".join(f"{cell:>22s}" for cell in cells))
    if args.out:
        title = f"Fermat's spiral (radius {args.radius:g}, {args.turns:g} turns): {args.cv}-fold CV x {args.repeats}"
        plot_irrelevant_feature_curve(res, title=title, path=args.out)
        print("wrote", args.out)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="what", required=True)
    f = sub.add_parser("fit-time")
    f.add_argument("--k", type=int, default=5)
    f.add_argument("--max-iter", type=int, default=10)
    f.add_argument("--repeats", type=int, default=3)
    q = sub.add_parser("search")
    q.add_argument("--repeats", type=int, default=3)
    s = sub.add_parser("spiral")
    s.add_argument("--counts", type=int, nargs="+", default=[0, 300, 1000, 3000])
    s.add_argument("--repeats", type=int, default=2)
    s.add_argument("--cv", type=int, default=10)
    s.add_argument("--k", type=int, default=5, help="LH-RELIEF neighbours")
    s.add_argument("--K", type=int, default=5, help="HKNN neighbours")
    s.add_argument("--sigma", type=float, default=1.0, help="I-RELIEF kernel width")
    s.add_argument("--max-iter", type=int, default=50)
    s.add_argument("--damping", type=float, default=0.5, help="LH-RELIEF damped step eta")
    s.add_argument("--radius", type=float, default=3.0)
    s.add_argument("--turns", type=float, default=1.0)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--n-jobs", type=int, default=None)
    s.add_argument("--out", default=None)
    args = p.parse_args()
    {"fit-time": fit_time, "search": search, "spiral": spiral}[args.what](args)


if __name__ == "__main__":
    main()
