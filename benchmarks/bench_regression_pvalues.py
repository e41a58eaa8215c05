"""Continuous targets and p-values for the Relief family: agreement, calibration, power, time.

Sections (each prints a Markdown table; ``--only`` runs some of them):

* ``skrebate``: agreement with scikit-rebate's continuous-endpoint scores (SURF, MultiSURF:
  the same convention; ReliefF: RReliefF against skrebate's hit / miss rule, a different
  convention) and the speed ratio at (2000, 500), both in the same run (ours: the median of three
  fits; skrebate: one fit), continuous target and class labels.
* ``null``: null calibration of ``pvalues_`` over 50 simulated data sets per cell (no signal,
  four sizes, classes and a continuous target): KS test of the pooled p-values, the rates of
  p < 0.05, 0.01 and 0.001, for the default, the same statistic against the normal (the
  reference before the third moment), the published pseudo-t and, for Relief / ReliefF on
  classes, the label permutation on the fit's own hits and misses; draws the calibration plot
  (docs/figures/pvalues_null_calibration.png).
* ``null_one``: the same for classes with one feature per data set (300 sets), so that the
  p-values are independent.
* ``dependence``: how correlated the p-values of the features of one set are (a pooled KS is
  only fair when they are not).
* ``fdr``: Benjamini-Hochberg at q = 0.05 over ``--fdr-sets`` (200) simulated sets with planted
  effects: mean false discovery proportion and power, against a t-test / Pearson filter.
* ``timing``: ``ReliefF`` and ``MultiSURF`` with and without ``pvalues=True`` at (2000, 500).
* ``xor``: the power on an XOR pair (STIR) where a t-test has none.
* ``mlkr``: MLKR-diagonal weighted kNN regression against plain kNN, 5 relevant of 100.
* ``expression``: the guide's 90 x 800 expression table with 12 planted genes: planted genes in
  the top 20 of a t-test and of ReliefF, with and without ``--log``.

Run: ``python benchmarks/bench_regression_pvalues.py [--only null,fdr] [--sets 50]``
(needs ``pip install skrebate matplotlib`` for the first two).
"""

import argparse
import time
import warnings

import numba
import numpy as np
from scipy import stats

from knnweights import SURF, MLKRDiagonal, MultiSURF, Relief, ReliefF, WeightedKNNRegressor, bh_qvalues

warnings.simplefilter("ignore")


def _interaction(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, d))
    return X, X[:, 0] * X[:, 1] + 0.05 * rng.normal(size=n)


def bench_skrebate(args):
    import skrebate

    print("\n## Agreement with scikit-rebate (continuous endpoint)\n")
    print("| method | n x d | correlation | max abs diff | convention |")
    print("|---|---|---|---|---|")
    X, y = _interaction(300, 50, 1)
    pairs = [("SURF", SURF(), skrebate.SURF(n_features_to_select=50), "same"),
             ("MultiSURF", MultiSURF(), skrebate.MultiSURF(n_features_to_select=50), "same"),
             ("ReliefF (k=10)", ReliefF(n_neighbors=10), skrebate.ReliefF(n_features_to_select=50, n_neighbors=10),
              "differs: RReliefF vs skrebate's |dy| < sd(y) hit / miss rule")]
    for name, ours, theirs, conv in pairs:
        theirs.label_type = "continuous"
        a = ours.fit(X, y).scores_
        b = theirs.fit(X, y).feature_importances_
        print(f"| {name} | 300 x 50 | {np.corrcoef(a, b)[0, 1]:.6f} | {np.max(np.abs(a - b)):.2e} | {conv} |")
    print("\n## Speed at (2000, 500): knnweights the median of three fits, skrebate one fit, in the same run\n")
    print(f"(numba threads: {numba.get_num_threads()}; load average before: {_load()}; CPU-time ratio: "
          "skrebate's process CPU time over the median of ours, summed over our threads)\n")
    print("| method | target | knnweights (s), 3 fits | median | skrebate (s) | ratio | CPU-time ratio |")
    print("|---|---|---|---|---|---|---|")
    X, y = _interaction(2000, 500, 2)
    labels = (y > np.median(y)).astype(int)
    for est in (MultiSURF(), SURF(), ReliefF(n_neighbors=10)):  # compile outside the timing
        est.fit(X[:50, :5], y[:50])
        est.fit(X[:50, :5], labels[:50])
    cases = [("MultiSURF", "continuous", MultiSURF, skrebate.MultiSURF, {}),
             ("SURF", "continuous", SURF, skrebate.SURF, {}),
             ("ReliefF (k=10)", "continuous", ReliefF, skrebate.ReliefF, {"n_neighbors": 10}),
             ("MultiSURF", "classes", MultiSURF, skrebate.MultiSURF, {})]
    for name, target, ours, theirs, kw in cases:
        yy = y if target == "continuous" else labels
        times, cpu = [], []
        for _ in range(3):
            t, c = time.perf_counter(), time.process_time()
            ours(**kw).fit(X, yy)
            times.append(time.perf_counter() - t)
            cpu.append(time.process_time() - c)
        t_ours = float(np.median(times))
        est = theirs(n_features_to_select=500, **kw)
        if target == "continuous":
            est.label_type = "continuous"
        t, c = time.perf_counter(), time.process_time()
        est.fit(X, yy)
        t_theirs = time.perf_counter() - t
        c_theirs = time.process_time() - c
        print(f"| {name} | {target} | {' / '.join(f'{v:.2f}' for v in times)} | {t_ours:.2f} | {t_theirs:.1f} | "
              f"{t_theirs / t_ours:.0f}x | {c_theirs / float(np.median(cpu)):.0f}x |", flush=True)
    print(f"\n(load average after: {_load()})")
    t = time.perf_counter()
    MultiSURF(pvalues=True).fit(X, y)
    print(f"\nMultiSURF(pvalues=True) at (2000, 500): {time.perf_counter() - t:.2f} s")


def _load():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "n/a"


NULL_SIZES = ((60, 40), (200, 20), (120, 100), (400, 50))


def _null_sets(kind, sets, seed0, size):
    n, d = size
    for s in range(sets):
        rng = np.random.default_rng(seed0 + s)
        X = rng.normal(size=(n, d))
        y = rng.integers(0, 2, n) if kind == "classes" else rng.normal(size=n)
        yield X, y


NULL_METHODS = (("Relief", Relief, {}), ("ReliefF", ReliefF, {"n_neighbors": 10}), ("SURF", SURF, {}),
                ("MultiSURF", MultiSURF, {}))


def _variant_pvalues(est, X, y, variant):
    """The default p-values and two variants of them: ``"normal"`` (the same z against the standard normal,
    the reference without the third-moment correction) and ``"own pairs"`` (ReliefF / Relief on classes: the
    label permutation on the fit's own hits and misses, the null used before)."""
    from knnweights.weighters import _relief_regression as rr

    if variant == "default":
        return est.set_params(pvalues=True).fit(X, y).pvalues_
    est = est.set_params(pvalues=False).fit(X, y)
    kind = est.target_type_
    codes = np.unique(y, return_inverse=True)[1] if kind == "classes" else np.zeros(len(y), np.int64)
    data = rr._diff_data(est, X, codes)
    outcome = codes if kind == "classes" else y
    # "pseudo-t" makes the helper take the fit's own hits and misses for classes
    m = rr._pair_moments(est, data, outcome, kind, "pseudo-t" if variant == "own pairs" else "mantel")
    if variant == "normal":
        st = m.statistics("mantel")
        return np.where(st.ok, stats.norm.sf(st.z), 1.0)
    return m.pvalues("mantel")


def bench_null(args):
    print(f"\n## Null calibration ({args.sets} sets per cell, X ~ N(0, 1), no signal)\n")
    print("| method | outcome | pvalues | n x d | KS p (pooled) | mean p | p < 0.05 | p < 0.01 | p < 0.001 |")
    print("|---|---|---|---|---|---|---|---|---|")
    keep = {}
    for name, cls, kw in NULL_METHODS:
        for kind in ("classes", "continuous"):
            variants = ["default", "normal", "pseudo-t"] + (["own pairs"] if kind == "classes" and
                                                           name in ("Relief", "ReliefF") else [])
            for mode in variants:
                cells = []
                for size in NULL_SIZES:
                    if mode == "pseudo-t":
                        p = np.concatenate([cls(pvalues="pseudo-t", **kw).fit(X, y).pvalues_
                                            for X, y in _null_sets(kind, args.sets, 1000, size)])
                    else:
                        p = np.concatenate([_variant_pvalues(cls(**kw), X, y, mode)
                                            for X, y in _null_sets(kind, args.sets, 1000, size)])
                    cells.append(p)
                    if mode == "default":
                        print(f"| {name} | {kind} | {mode} | {size[0]} x {size[1]} | "
                              f"{stats.kstest(p, 'uniform').pvalue:.3g} | {p.mean():.3f} | {np.mean(p < 0.05):.3f} | "
                              f"{np.mean(p < 0.01):.4f} | {np.mean(p < 0.001):.4f} |", flush=True)
                p = np.concatenate(cells)
                keep[(name, kind, mode)] = p
                print(f"| {name} | {kind} | {mode} | all four | {stats.kstest(p, 'uniform').pvalue:.3g} | "
                      f"{p.mean():.3f} | {np.mean(p < 0.05):.3f} | {np.mean(p < 0.01):.4f} | "
                      f"{np.mean(p < 0.001):.4f} |", flush=True)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(9, 4), sharey=True)
        styles = {"default": "-", "normal": ":", "pseudo-t": "--"}
        for ax, kind in zip(axes, ("classes", "continuous"), strict=True):
            for (name, k, mode), p in keep.items():
                if k != kind or name not in ("ReliefF", "MultiSURF") or mode not in styles:
                    continue
                q = np.sort(p)
                ax.plot(np.arange(1, q.size + 1) / (q.size + 1), q, ls=styles[mode], label=f"{name}, {mode}")
            ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
            ax.set_title(f"no signal, {kind} outcome")
            ax.set_xlabel("expected p (uniform quantile)")
            ax.set_xlim(0, 0.2)
            ax.set_ylim(0, 0.2)
        axes[0].set_ylabel("observed p")
        axes[0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"\nwrote {args.plot}")


def bench_dependence(args):
    """Pooled KS over the features of many sets is only a fair test if the features' p-values are not
    correlated within a set: the spread of each set's mean p against the independent ``1 / sqrt(12 d)``."""
    sets = 2 * args.sets
    print(f"\n## Dependence between the features of one set ({sets} sets, 60 x 40, no signal)\n")
    print("| method | outcome | sd of the set mean p | if independent | mean pairwise correlation |")
    print("|---|---|---|---|---|")
    n, d = 60, 40
    for name, cls, kw in NULL_METHODS[1::2]:
        for kind in ("classes", "continuous"):
            means = [cls(pvalues=True, **kw).fit(X, y).pvalues_.mean() for X, y in _null_sets(kind, sets, 1000, (n, d))]
            r = (np.var(means) * d * 12 - 1) / (d - 1)
            print(f"| {name} | {kind} | {np.std(means):.4f} | {1 / np.sqrt(12 * d):.4f} | {r:.3f} |", flush=True)


def bench_null_one(args):
    sets = 6 * args.sets
    print(f"\n## Null calibration, classes, one feature per set ({sets} sets; independent p-values)\n")
    print("| method | KS p, first feature of each set | its mean p | its p < 0.05 | KS p, all features pooled | "
          "pooled mean p |")
    print("|---|---|---|---|---|---|")
    for cls in (ReliefF, MultiSURF, SURF):
        ps = []
        for s in range(sets):
            rng = np.random.default_rng(20000 + s)
            n, d = (60, 40) if s % 2 else (200, 20)
            ps.append(cls(pvalues=True).fit(rng.normal(size=(n, d)), rng.integers(0, 2, n)).pvalues_)
        first = np.array([p[0] for p in ps])
        pooled = np.concatenate(ps)
        print(f"| {cls.__name__} | {stats.kstest(first, 'uniform').pvalue:.3g} | {first.mean():.3f} | "
              f"{np.mean(first < 0.05):.3f} | {stats.kstest(pooled, 'uniform').pvalue:.2g} | {pooled.mean():.3f} |",
              flush=True)


def _planted(kind, seed, n=120, d=100, n_rel=10, effect=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    if kind == "classes":
        y = rng.integers(0, 2, n)
        X[:, :n_rel] += effect * y[:, None]
    else:
        y = X[:, :n_rel] @ np.full(n_rel, effect / np.sqrt(n_rel)) + rng.normal(size=n)
    return X, y


FDR_METHODS = (("ReliefF", lambda: ReliefF(n_neighbors=10), "default"),
               ("ReliefF, own hits / misses", lambda: ReliefF(n_neighbors=10), "own pairs"),
               ("MultiSURF", lambda: MultiSURF(), "default"), ("SURF", lambda: SURF(), "default"),
               ("Relief", lambda: Relief(), "default"), ("ReliefF, normal reference", lambda: ReliefF(n_neighbors=10),
                                                         "normal"),
               ("MultiSURF, normal reference", lambda: MultiSURF(), "normal"))


def bench_fdr(args):
    sets = args.fdr_sets
    print(f"\n## Benjamini-Hochberg at q = 0.05 over {sets} sets (n = 120, d = 100, 10 planted)\n")
    print("| method | outcome (effect) | mean FDP (+- s.e.) | mean power (of 10) | sets with a discovery | "
          "noise features with p < 0.005 |")
    print("|---|---|---|---|---|---|")
    for kind, effect in (("classes", 1.0), ("continuous", 1.0), ("continuous", 3.0)):
        rows = {}
        for s in range(sets):
            X, y = _planted(kind, 5000 + s, effect=effect)
            if kind == "classes":
                base = stats.ttest_ind(X[y == 1], X[y == 0]).pvalue
            else:
                base = np.array([stats.pearsonr(X[:, j], y)[1] for j in range(X.shape[1])])
            ps = {("t-test" if kind == "classes" else "Pearson"): base}
            for name, make, variant in FDR_METHODS:
                if variant == "own pairs" and kind != "classes":
                    continue
                ps[name] = _variant_pvalues(make(), X, y, variant)
            for name, p in ps.items():
                found = np.flatnonzero(bh_qvalues(p) <= 0.05)
                fdp = np.mean(found >= 10) if found.size else 0.0
                rows.setdefault(name, []).append((fdp, np.sum(found < 10), found.size > 0, np.mean(p[10:] < 0.005)))
        for name, r in rows.items():
            a = np.array(r, dtype=float)
            se = a[:, 0].std(ddof=1) / np.sqrt(len(a))
            print(f"| {name} | {kind} ({effect:g}) | {a[:, 0].mean():.3f} +- {se:.3f} | "
                  f"{a[:, 1].mean():.2f} | {int(a[:, 2].sum())} | {a[:, 3].mean():.4f} |", flush=True)


def bench_timing(args):
    print("\n## Time at (2000, 500), median of three fits (s)\n")
    print("| method | outcome | weights | with pvalues=True |")
    print("|---|---|---|---|")
    X, y = _interaction(2000, 500, 2)
    yb = (y > np.median(y)).astype(int)
    for name, cls in (("ReliefF", ReliefF), ("MultiSURF", MultiSURF)):
        cls(pvalues=True).fit(X[:60, :5], yb[:60])
        cls(pvalues=True).fit(X[:60, :5], y[:60])
        for kind, target in (("classes", yb), ("continuous", y)):
            t0, t1 = [], []
            for _ in range(3):
                t = time.perf_counter()
                cls().fit(X, target)
                t0.append(time.perf_counter() - t)
                t = time.perf_counter()
                cls(pvalues=True).fit(X, target)
                t1.append(time.perf_counter() - t)
            print(f"| {name} | {kind} | {np.median(t0):.2f} | {np.median(t1):.2f} |", flush=True)


def bench_xor(args):
    print(f"\n## XOR pair (n = 200, d = 20), {args.sets} sets: rate of both found at q <= 0.05\n")
    print("| method | both XOR features found | false discoveries per set |")
    print("|---|---|---|")
    hits = {"ReliefF mantel": [], "MultiSURF mantel": [], "t-test": []}
    for s in range(args.sets):
        rng = np.random.default_rng(9000 + s)
        X = rng.normal(size=(200, 20))
        y = ((X[:, 0] > 0) ^ (X[:, 1] > 0)).astype(int)
        for name, p in (("ReliefF mantel", ReliefF(pvalues=True).fit(X, y).pvalues_),
                        ("MultiSURF mantel", MultiSURF(pvalues=True).fit(X, y).pvalues_),
                        ("t-test", stats.ttest_ind(X[y == 1], X[y == 0]).pvalue)):
            found = set(np.flatnonzero(bh_qvalues(p) <= 0.05))
            hits[name].append(({0, 1} <= found, len(found - {0, 1})))
    for name, h in hits.items():
        a = np.array(h, dtype=float)
        print(f"| {name} | {a[:, 0].mean():.2f} | {a[:, 1].mean():.2f} |")


def bench_mlkr(args):
    from sklearn.model_selection import KFold, cross_val_score
    from sklearn.neighbors import KNeighborsRegressor

    print("\n## MLKR-diagonal, 5 relevant of 100 features (n = 500), 5-fold CV RMSE\n")
    rng = np.random.default_rng(3)
    X = rng.normal(size=(500, 100))
    y = X[:, :5].sum(axis=1) + 0.3 * rng.normal(size=500)
    cv = KFold(5, shuffle=True, random_state=0)
    print("| model | RMSE | fit + predict (s) |")
    print("|---|---|---|")
    for name, model in (("kNN (k = 5)", KNeighborsRegressor()),
                        ("MLKRDiagonal + kNN", WeightedKNNRegressor(MLKRDiagonal())),
                        ("RReliefF + kNN", WeightedKNNRegressor(ReliefF(n_neighbors=10)))):
        t = time.perf_counter()
        rmse = -cross_val_score(model, X, y, cv=cv, scoring="neg_root_mean_squared_error")
        print(f"| {name} | {rmse.mean():.3f} +- {rmse.std():.3f} | {time.perf_counter() - t:.1f} |", flush=True)


def expression_table(n=90, d=800, n_planted=12, seed=0, dispersion=0.6, fold=2.2):
    """Negative-binomial counts (gene means log-normal), the first ``n_planted`` genes ``fold`` up or down in half."""
    rng = np.random.default_rng(seed)
    mu = np.exp(rng.normal(4.0, 1.5, size=d))
    y = np.repeat([1, 0], [n // 2, n - n // 2])
    change = np.ones(d)
    change[:n_planted] = np.where(np.arange(n_planted) % 2, fold, 1 / fold)
    lam = mu[None, :] * np.where(y[:, None] == 1, change[None, :], 1.0)
    r = 1.0 / dispersion
    X = rng.negative_binomial(r, r / (r + lam)).astype(float)
    return X, y


def bench_expression(args):
    from sklearn.preprocessing import StandardScaler

    print("\n## Expression-like table (90 x 800 counts, 12 planted genes): planted genes in the top 20\n")
    print("| data | t-test | ReliefF (k = 10) | ReliefF q <= 0.05 (planted / all) | MultiSURF |")
    print("|---|---|---|---|---|")
    for seed in range(3):
        X, y = expression_table(seed=seed)
        for name, Z in (("raw counts, standardised", X), ("log2(x + 1), standardised", np.log2(X + 1))):
            Z = StandardScaler().fit_transform(Z)
            t = stats.ttest_ind(Z[y == 1], Z[y == 0], equal_var=False).pvalue
            t = np.where(np.isfinite(t), t, 1.0)
            rf = ReliefF(n_neighbors=10, pvalues=True).fit(Z, y)
            ms = MultiSURF().fit(Z, y)
            def top(order):
                return int(np.sum(order[:20] < 12))

            q = np.flatnonzero(rf.qvalues_ <= 0.05)
            print(f"| seed {seed}, {name} | {top(np.argsort(t))} | {top(np.argsort(-rf.scores_))} | "
                  f"{int(np.sum(q < 12))} / {q.size} | {top(np.argsort(-ms.scores_))} |", flush=True)


SECTIONS = {"skrebate": bench_skrebate, "null": bench_null, "null_one": bench_null_one, "dependence": bench_dependence,
            "fdr": bench_fdr, "timing": bench_timing,
            "xor": bench_xor, "mlkr": bench_mlkr,
            "expression": bench_expression}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", default=",".join(SECTIONS), help="comma-separated sections")
    p.add_argument("--sets", type=int, default=50, help="simulated data sets per cell (default: 50)")
    p.add_argument("--fdr-sets", type=int, default=200, help="simulated data sets of the fdr section (default: 200)")
    p.add_argument("--plot", default="docs/figures/pvalues_null_calibration.png",
                   help="the null-calibration plot ('' for none)")
    args = p.parse_args()
    for name in args.only.split(","):
        t = time.perf_counter()
        SECTIONS[name.strip()](args)
        print(f"\n({name}: {time.perf_counter() - t:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
