"""Why is EFW's stability on the microarray sets below the paper's?

The EFW paper (Li, Gao & Chen, AAAI 2012) reports R_sta (eq. 18, mean pairwise Spearman
correlation of the rankings over c = 5 subsamples of 90 %) of 0.96-0.97 for EFW at m = 5 on
Arcene, Colon and Prostate.  The full reproduction's judged reading (kernel-soft NH / NM,
standardised features, ``{w >= 0, ||w|| = 1}``) gives 0.84-0.85 there while it lands within
tolerance on the four low-dimensional sets.  This script computes, on the same subsamples as the
reproduction's first seed, R_sta under the other readings the paper's text leaves room for:

* ``judged``: the reproduction's reading (``EFW(neighbors="soft")`` on standardised data);
* ``ordinal ranks``: the same weights ranked as a permutation (ties broken by feature index, as a
  stable sort does and as eq. 19's ``1 - 6 sum d^2 / (d (d^2 - 1))`` presupposes) instead of
  sharing their average rank;
* ``raw values``: the judged estimator on unstandardised values (the paper never says it
  standardised; there the logistic loss saturates and the descent stalls);
* ``relaxed, free`` / ``relaxed, w >= 0``: the paper's "relaxed convex optimization problem"
  (eq. 1 with the diversity term as an l2 penalty, no unit-norm constraint), solved to optimality
  by L-BFGS(-B) from the judged reading's start, with and without non-negative weights;
* references: the normalised positive part of the summed margins (the start of every member,
  a Relief-like weight), E-Relief (the paper's ensemble competitor) and LOGO (its base learner).

    python benchmarks/efw_stability_readings.py [--datasets colon_alon prostate_singh arcene]

One BLAS thread; about a minute per microarray set on one core (Arcene longer).
"""
import argparse
import time
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.model_selection import StratifiedShuffleSplit
from threadpoolctl import threadpool_limits

from knnweights import ERelief, Logo
from knnweights.evaluation import spearman_similarity, stability
from knnweights.reproduce._data import loader
from knnweights.reproduce.efw import _KEYS, _READINGS_TRIED, _efw
from knnweights.reproduce.tables import Config, read_paper_table
from knnweights.weighters.efw import _start as member_start
from knnweights.weighters.efw import efw_objective, ensemble_subsamples, soft_base_margins

M, GAMMA = 5, 0.001


def _paper_values():
    """EFW's stability at m = 5 from the bundled paper table, keyed by bundled dataset name."""
    return {_KEYS[r["dataset_key"]]: float(r["mean"]) for r in read_paper_table("efw_text_stability_m5.csv")
            if r["method"] == "EFW"}


def _ordinal_stability(W):
    """R_sta with each ranking a permutation: equal weights ordered by feature index."""
    d = W.shape[1]
    R = [np.empty(d) for _ in W]
    for r, w in zip(R, W, strict=True):
        r[np.lexsort((np.arange(d), -w))] = np.arange(1, d + 1)
    return float(np.mean([spearman_similarity(R[a], R[b]) for a in range(len(R)) for b in range(a + 1, len(R))]))


def _relaxed(X, y, nonneg):
    """The relaxed convex problem: eq. 1 (``efw_objective``) with no unit-norm constraint."""
    codes = np.unique(y, return_inverse=True)[1]
    Z = soft_base_margins(X, codes, 1.0)
    rows = ensemble_subsamples(codes, M, 0.9, 0)
    Zs = [Z[r] for r in rows]
    d = X.shape[1]
    W0 = np.vstack([member_start(Zk, np.ones(d)) for Zk in Zs])  # the judged reading's start

    def fun(v):
        f, G = efw_objective(v.reshape(M, d), Zs, GAMMA)
        return f, G.ravel()

    res = minimize(fun, W0.ravel(), jac=True, method="L-BFGS-B", options={"maxiter": 15000},
                   bounds=[(0.0, None)] * (M * d) if nonneg else None)
    return res.x.reshape(M, d).mean(axis=0)


def _start(X, y):
    """The members' start (normalised positive part of the summed margins) on all of ``X``."""
    codes = np.unique(y, return_inverse=True)[1]
    return member_start(soft_base_margins(X, codes, 1.0), np.ones(X.shape[1]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    # the sets the reproduction's reason column names as measured here
    ap.add_argument("--datasets", nargs="+", default=list(_READINGS_TRIED))
    ap.add_argument("--out", default="benchmarks/efw_stability_readings.md")
    args = ap.parse_args(argv)
    paper = _paper_values()
    cfg = Config(mode="full", n_jobs=1)
    est = _efw(GAMMA, M, cfg, "soft")
    readings = {
        "judged": lambda X, y, Xr: est.fit(X, y).feature_importances_,
        "raw values": lambda X, y, Xr: est.fit(Xr, y).feature_importances_,
        "relaxed, free": lambda X, y, Xr: _relaxed(X, y, False),
        "relaxed, w >= 0": lambda X, y, Xr: _relaxed(X, y, True),
        "start (summed margins)": lambda X, y, Xr: _start(X, y),
        "E-Relief": lambda X, y, Xr: ERelief(n_estimators=M, random_state=0).fit(X, y).feature_importances_,
        "LOGO": lambda X, y, Xr: Logo().fit(X, y).feature_importances_,
    }
    lines = []
    t_all = time.perf_counter()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the raw-value fits stall and LOGO oscillates: both are the point
        for name in args.datasets:
            X, y = loader(name, std=True)(cfg)
            Xr, _ = loader(name)(cfg)
            split = StratifiedShuffleSplit(n_splits=5, train_size=0.9, test_size=None, random_state=cfg.random_state)
            subs = [i for i, _ in split.split(np.zeros((len(y), 1)), y)]  # the reproduction's first seed
            for label, fit in readings.items():
                t0 = time.perf_counter()
                W = np.array([fit(X[i], y[i], Xr[i]) for i in subs])
                secs = time.perf_counter() - t0
                zeros = float(np.mean(W == 0))
                row = [name, label, f"{stability(weights=W):.4f}",
                       f"{paper[name]:.4f}" if label == "judged" and name in paper else "", f"{100 * zeros:.1f}",
                       f"{secs:.0f}"]
                lines.append(row)
                if label == "judged":
                    lines.append([name, "judged, ordinal ranks", f"{_ordinal_stability(W):.4f}", "", row[4], "-"])
                print(" | ".join(row), flush=True)
    head = ("# EFW stability on the microarray sets: the readings tried\n\n"
            f"`python benchmarks/efw_stability_readings.py --datasets {' '.join(args.datasets)}` "
            f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {time.perf_counter() - t_all:.0f} s, "
            "one BLAS thread). R_sta (eq. 18) of EFW at m = 5, gamma = 0.001 over the five 90 % subsamples of "
            "the full reproduction's first seed (its table averages five seeds). *judged*: the reproduction's "
            "reading; the other rows are described in the script's docstring. *zeros*: share of the weights "
            "exactly 0 (tied at the bottom of the ranking).\n\n"
            "| dataset | reading | R_sta | paper | zeros % | s |\n| --- | --- | --- | --- | --- | --- |\n")
    with open(args.out, "w") as fh:
        fh.write(head + "".join("| " + " | ".join(r) + " |\n" for r in lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
