"""Defaults on data the reproduction did not choose (measurements for defaults_on_new_data.md).

    python benchmarks/defaults_on_new_data.py mulrel
    python benchmarks/defaults_on_new_data.py efw
    python benchmarks/defaults_on_new_data.py sbmlr
    python benchmarks/defaults_on_new_data.py lhrelief-fig1 [--folds 3] [--counts 0,100,300,1000] [--jobs 1]
    python benchmarks/defaults_on_new_data.py timing   (SVM-RFE 2000 x 500 and MDM 80 x 3000, each in a fresh process)
"""

import argparse
import subprocess
import sys
import time
import warnings

import numpy as np


def _rank(w, j):
    return int(np.where(np.argsort(-w, kind="stable") == j)[0][0]) + 1


def mulrel(args):
    from knnweights import IRelief, LHRelief, MulRel, ReliefF

    print("| seed | MulRel (100 rounds) x3 / x17 | MulRel (101 rounds) | stop_reason_ | ReliefF | IRelief | LHRelief |")
    print("|---|---|---|---|---|---|---|")
    for seed in range(args.seeds):
        rng = np.random.RandomState(seed)
        X = rng.randn(300, 60)
        y = np.sign(X[:, 3] - X[:, 17] + 0.5 * rng.randn(300)).astype(int)
        cells = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = MulRel().fit(X, y)
            for est in (MulRel(n_rounds=101), ReliefF(), IRelief(), LHRelief()):
                w = est.fit(X, y).feature_importances_
                cells.append(f"{_rank(w, 3)} / {_rank(w, 17)}")
        w = m.feature_importances_
        print(f"| {seed} | {_rank(w, 3)} / {_rank(w, 17)} | {cells[0]} | {m.stop_reason_} | "
              + " | ".join(cells[1:]) + " |")


def efw(args):
    from knnweights import EFW, Logo, Relief, ReliefF

    cfgs = {f"EFW neighbors={nb!r}" + (f" sigma={sg}" if nb == "soft" else ""): dict(neighbors=nb, sigma=sg)
            for nb, sg in [("full", 1.0), ("subsample", 1.0), ("soft", 0.5), ("soft", 1.0), ("soft", 2.0)]}
    rows = {k: [] for k in [*cfgs, "EFW 'full', members after step 3 (no diversity)", "Relief", "ReliefF", "Logo"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(args.seeds):
            rng = np.random.RandomState(seed)
            X = rng.randn(80, 40)
            y = (X[:, 0] - X[:, 5] + 0.5 * rng.randn(80) > 0).astype(int)
            for k, kw in cfgs.items():
                e = EFW(gamma=0.5, n_estimators=5, random_state=0, **kw).fit(X, y)
                rows[k].append(max(_rank(e.feature_importances_, 0), _rank(e.feature_importances_, 5)))
                if kw["neighbors"] == "full":
                    w0 = e.initial_weights_.mean(axis=0)
                    rows["EFW 'full', members after step 3 (no diversity)"].append(max(_rank(w0, 0), _rank(w0, 5)))
            for k, est in [("Relief", Relief()), ("ReliefF", ReliefF()), ("Logo", Logo())]:
                w = est.fit(X, y).feature_importances_
                rows[k].append(max(_rank(w, 0), _rank(w, 5)))
    print("| method (gamma=0.5, 5 members for EFW) | seeds with x0 and x5 the top two "
          "| lower rank of the two, per seed |")
    print("|---|---|---|")
    for k, v in rows.items():
        print(f"| {k} | {sum(r <= 2 for r in v)} / {len(v)} | {' '.join(map(str, v))} |")


def _fig1_cell(radius, count, fold, folds, seed):
    from sklearn.model_selection import StratifiedKFold

    from knnweights import IRelief, LHRelief
    from knnweights.classifiers import HKNN
    from knnweights.datasets import add_irrelevant_features, make_spiral

    X, y = make_spiral(n_per_class=200, turns=1.0, random_state=seed)
    X = add_irrelevant_features(radius * X, count, random_state=seed + 1)
    tr, te = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(X, y))[fold]
    out = {}
    for name, est in [("LH-RELIEF", LHRelief()), ("I-RELIEF", IRelief()), ("none", None)]:
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if est is None:
                Xtr, Xte, top = X[tr], X[te], None
            else:
                est.fit(X[tr], y[tr])
                Xtr, Xte = est.transform(X[tr]), est.transform(X[te])
                top = sorted(np.argsort(-est.feature_importances_)[:2].tolist()) == [0, 1]
        secs = time.perf_counter() - t
        err = float(np.mean(HKNN().fit(Xtr, y[tr]).predict(Xte) != y[te]))
        out[name] = (err, top, secs, getattr(est, "stop_reason_", ""))
    return radius, count, fold, out


def lhrelief_fig1(args):
    from joblib import Parallel, delayed

    counts = [int(c) for c in args.counts.split(",")]
    cells = [(r, c, f) for r in (1.0, 3.0) for c in counts for f in range(args.folds)]
    res = Parallel(n_jobs=args.jobs)(delayed(_fig1_cell)(r, c, f, args.folds, 0) for r, c, f in cells)
    print("| irrelevant features | radius 1: LH-RELIEF error % (both on top, s/fit, stops) | radius 1: I-RELIEF "
          "| radius 3: LH-RELIEF | radius 3: I-RELIEF | HKNN unweighted r=1 / r=3 |")
    print("|---|---|---|---|---|---|")
    for c in counts:
        row = [str(c)]
        for r in (1.0, 3.0):
            for name in ("LH-RELIEF", "I-RELIEF"):
                got = [o[name] for rr, cc, f, o in res if rr == r and cc == c]
                err = 100 * np.mean([g[0] for g in got])
                top = sum(bool(g[1]) for g in got)
                secs = np.median([g[2] for g in got])
                stops = ",".join(sorted({g[3] for g in got if g[3]}))
                row.append(f"{err:.1f} ({top}/{len(got)}, {secs:.1f} s{', ' + stops if stops else ''})")
        none = [100 * np.mean([o["none"][0] for rr, cc, f, o in res if rr == r and cc == c]) for r in (1.0, 3.0)]
        row.append(f"{none[0]:.1f} / {none[1]:.1f}")
        print("| " + " | ".join(row) + " |")


def sbmlr(args):
    from sklearn.datasets import make_classification

    from knnweights import SBMLR
    from knnweights.weighters.sbmlr import solve_l1_multinomial

    print("| seed | alpha_ | N_W / E_W (W with bias) | nnz / l1 of coef_ | fixed_point_ | warns | sign changes of "
          "N_W/E_W - alpha over [0.05, 5] alpha_ (400 values) |")
    print("|---|---|---|---|---|---|---|")
    for seed in range(args.seeds):
        X, y = make_classification(150, 25, n_informative=3, n_redundant=0, random_state=seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m = SBMLR().fit(X, y)
        W = np.vstack([m.coef_, m.intercept_])
        if not np.count_nonzero(W):
            print(f"| {seed} | {m.alpha_:.4g} | (W = 0) | | {m.fixed_point_} | yes | |")
            continue
        Xa, T = np.hstack([X, np.ones((len(X), 1))]), np.eye(2)[y]
        Wp, prev, changes = None, None, []
        for a in np.geomspace(0.05 * m.alpha_, 5 * m.alpha_, 400)[::-1]:
            Wp, _ = solve_l1_multinomial(Xa, T, a, W0=Wp, tol=1e-9)
            nnz = np.count_nonzero(Wp)
            h = nnz / np.abs(Wp).sum() - a if nnz else -a
            if prev is not None and np.sign(h) != np.sign(prev[1]):
                changes.append(f"{a:.4g}-{prev[0]:.4g}: N_W {nnz}->{prev[2]}")
            prev = (a, h, nnz)
        c = m.coef_
        warned = any("fixed point" in str(w.message) for w in caught)
        print(f"| {seed} | {m.alpha_:.4g} | {np.count_nonzero(W) / np.abs(W).sum():.4g} | "
              f"{np.count_nonzero(c) / np.abs(c).sum():.4g} | {m.fixed_point_} | {'yes' if warned else 'no'} | "
              f"{'; '.join(changes)} |")


_SVMRFE_CHILD = """
import time; t0 = time.perf_counter()
import numpy as np
from knnweights import SVMRFE
rng = np.random.default_rng([0, 2000, 500]); X = rng.normal(size=(2000, 500)); y = (X[:, :5].sum(1) > 0).astype(int)
SVMRFE().fit(X, y)
print(f"{time.perf_counter() - t0:.2f}")
"""
_MDM_CHILD = """
import time; t0 = time.perf_counter()
import sys
from knnweights import MDM
sys.path.insert(0, "benchmarks")
from bench_mdm import lognormal_genes
X, y = lognormal_genes(d=3000)
MDM().fit(X, y)
print(f"{time.perf_counter() - t0:.2f}")
"""


def timing(args):
    """Each fit in a fresh process (import and compiled-kernel loading included): wall and child CPU seconds."""
    import os
    import resource
    import tempfile

    print("| fit | numba cache | wall s | user CPU s | sys CPU s | load average |")
    print("|---|---|---|---|---|---|")
    for name, code in [("SVMRFE() 2000 x 500", _SVMRFE_CHILD), ("MDM() lognormal 80 x 3000", _MDM_CHILD)]:
        for cache in ("cold", "warm"):
            env = dict(os.environ)
            if cache == "cold":
                env["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="nbc_")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True)
            wall = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            print(f"| {name} | {cache} | {wall:.1f} | {after.ru_utime - before.ru_utime:.1f} | "
                  f"{after.ru_stime - before.ru_stime:.1f} | {os.getloadavg()[0]:.1f} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("what")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--folds", type=int, default=3)
    ap.add_argument("--counts", default="0,100,300,1000")
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    {"mulrel": mulrel, "sbmlr": sbmlr, "efw": efw, "lhrelief-fig1": lhrelief_fig1, "timing": timing}[a.what](a)
