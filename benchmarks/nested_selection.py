"""Leaky versus nested evaluation of an automatic feature selection (Breast, Colon, pure noise).

The numbers of ``docs/guide/nested_selection.rst``.  Each data set is evaluated twice on the same
outer splits (repeated stratified 5-fold CV):

* **leaky**: the model (``selection_pipeline``: median imputation, standard scaling and
  ``AutoWeightedKNN``, which chooses the weighter, the number of features kept and ``k`` by a
  5-fold inner CV) is fitted once on ALL samples; the configuration it chooses (its features and
  their weights, its metric and ``k``) is then cross-validated as a fixed kNN.  Also a fixed
  weighter: ReliefF's top 50 features with 5-NN, chosen on all samples, then cross-validated.
* **nested**: ``nested_evaluate``: every outer training part makes the whole choice again
  (imputation, scaling, inner CV, refit) and the outer test part scores it; plain kNN (``k`` by
  inner CV) and L1 logistic regression on the same splits.  The fixed ReliefF top-50 is refitted
  inside each outer training part.

Data: Colon (Alon et al., 62 x 2000); Breast (van 't Veer et al., 78 x 24481 with missing
values) cut to the 2000 genes of highest variance, computed on all samples WITHOUT the labels (an
unsupervised filter cannot leak the labels; any pre-filter that used y would have to sit inside
the folds); and a pure-noise control of Colon's shape (62 x 2000 standard normal, 31 / 31 labels
drawn at random: any accuracy above 0.5 is optimism).

    python benchmarks/nested_selection.py [--repeats 5] [--out benchmarks/nested_selection.md]

One BLAS thread, one process; about 10 minutes on a 2-core machine.
"""
import argparse
import os
import platform
import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.impute import SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from knnweights import ReliefF
from knnweights.classifiers import WeightedKNN
from knnweights.datasets import load
from knnweights.evaluation import RepeatedCV, corrected_interval, nested_evaluate, selection_pipeline
from knnweights.evaluation.auto import KeepTopWeights
from knnweights.evaluation.protocols import root_seed

SEED = 0
N_KEEP_BREAST = 2000  # genes of highest variance kept of Breast (unsupervised pre-filter)
FIXED_M, FIXED_K = 50, 5  # the fixed weighter's configuration: ReliefF top 50, 5-NN


def datasets():
    """``name -> (X, y, note, feature names or None)``."""
    Fc, yc = load("colon_alon", return_X_y=True, as_frame=True)
    Xc, yc = Fc.to_numpy(dtype=np.float64), np.asarray(yc)
    Fb, yb = load("breast_vantveer", return_X_y=True, as_frame=True)
    Xb, yb = Fb.to_numpy(dtype=np.float64), np.asarray(yb)
    missing = np.isnan(Xb).all(axis=0)  # genes without a single value: never kept
    var = np.full(Xb.shape[1], -np.inf)
    var[~missing] = np.nanvar(Xb[:, ~missing], axis=0)  # no y: the same filter whatever the labels
    keep = np.sort(np.argsort(-var, kind="stable")[:N_KEEP_BREAST])
    rng = np.random.default_rng(SEED)
    Xn = rng.standard_normal(Xc.shape)
    yn = rng.permutation(np.repeat(["a", "b"], [Xc.shape[0] // 2, Xc.shape[0] - Xc.shape[0] // 2]))
    breast_note = (f"breast_vantveer, {Xb.shape[0]} x {Xb.shape[1]} ({100 * np.isnan(Xb).mean():.1f} % missing, "
                   f"{int(missing.sum())} genes without any value), cut to the {N_KEEP_BREAST} genes of highest "
                   f"variance on all samples, labels not used ({int(np.isnan(Xb[:, keep]).sum())} missing values "
                   "left, imputed in the model)")
    return {
        "Colon": (Xc, yc, f"colon_alon, {Xc.shape[0]} x {Xc.shape[1]}", list(Fc.columns)),
        "Breast": (Xb[:, keep], yb, breast_note, list(Fb.columns[keep])),
        "Noise": (Xn, yn, f"N(0, 1), {Xn.shape[0]} x {Xn.shape[1]}, random balanced labels, features named by "
                          "their column index", None),
    }


def fixed_model():
    """Median imputation, scaling, ReliefF's top ``FIXED_M`` features with their weights, ``FIXED_K``-NN."""
    return Pipeline([("impute", SimpleImputer(strategy="median", keep_empty_features=True)),
                     ("scale", StandardScaler()),
                     ("knn", WeightedKNN(KeepTopWeights(ReliefF(random_state=SEED), n_features=FIXED_M),
                                         n_neighbors=FIXED_K))])


def frozen(pipe, X):
    """The data and the kNN of a pipeline fitted on all samples: its features, weights, metric and ``k`` fixed."""
    Xt = pipe[:-1].transform(X)
    last = pipe[-1]
    model = getattr(last, "best_estimator_", last)  # AutoWeightedKNN's refitted choice, or a WeightedKNN
    if hasattr(model, "weighter_"):
        return model.weighter_.transform(Xt), clone(model.knn_)
    return Xt, clone(model)  # plain kNN on all features


def leaky_scores(pipe, X, y, splits):
    """Fit ``pipe`` on all samples, then cross-validate its frozen kNN on ``splits``."""
    Z, knn = frozen(clone(pipe).fit(X, y), X)
    return np.array([clone(knn).fit(Z[tr], y[tr]).score(Z[te], y[te]) for _, _, tr, _, te in splits])


def interval(v, splits):
    ntr = float(np.mean([len(tr) for _, _, tr, _, _ in splits]))
    nte = float(np.mean([len(te) for _, _, _, _, te in splits]))
    m, lo, hi = corrected_interval(v, ntr, nte)
    return m, max(lo, 0.0), min(hi, 1.0)


def fmt(m, lo, hi):
    return f"{m:.3f} [{lo:.3f}, {hi:.3f}]"


def run_one(name, X, y, repeats, names=None):
    protocol = RepeatedCV(n_splits=5, n_repeats=repeats, stratified=True)
    splits = list(protocol.split(y, root_seed(SEED), "nested"))  # nested_evaluate's own outer splits
    model = selection_pipeline(cv=5, random_state=SEED)  # the default candidates, as knnweights select
    out = {"name": name, "n_splits": len(splits)}

    t = time.perf_counter()
    full = clone(model).fit(X, y)
    choose = full.named_steps["choose"]
    out["all_choice"] = dict(choose.best_params_)
    out["all_inner"] = choose.best_score_
    out["all_nsel"] = int(choose.support_.sum())
    Z, knn = frozen(full, X)
    leak = np.array([clone(knn).fit(Z[tr], y[tr]).score(Z[te], y[te]) for _, _, tr, _, te in splits])
    out["leaky"] = interval(leak, splits)
    out["t_leaky"] = time.perf_counter() - t
    print(name, "all-sample choice", out["all_choice"], f"inner {choose.best_score_:.3f}",
          "leaky", fmt(*out["leaky"]), f"{out['t_leaky']:.0f} s", flush=True)

    t = time.perf_counter()
    frame = X if names is None else pd.DataFrame(X, columns=names)  # the names only label the features
    res = nested_evaluate(model, frame, y, cv=protocol, random_state=SEED, progress=False)
    out["t_nested"] = time.perf_counter() - t
    assert list(res.scores["n_test"]) == [len(te) for _, _, _, _, te in splits], "outer splits differ"
    out["nested"] = (res.estimate, *res.interval)
    out["summary"] = res.summary
    out["choices"] = res.choices
    out["stability"] = res.stability
    out["consensus"] = list(res.consensus)
    print(name, "nested", fmt(*out["nested"]), f"{out['t_nested']:.0f} s", flush=True)
    print(res.summary.to_string(), flush=True)
    print(res.choices.to_string(), flush=True)
    print(name, f"stability {res.stability.value:.3f} [{res.stability.low:.3f}, {res.stability.high:.3f}]",
          f"consensus {len(res.consensus)}: {res.consensus[:20]}", flush=True)

    t = time.perf_counter()
    fixed = fixed_model()
    out["fixed_leaky"] = interval(leaky_scores(fixed, X, y, splits), splits)
    honest = np.array([clone(fixed).fit(X[tr], y[tr]).score(X[te], y[te]) for _, _, tr, _, te in splits])
    out["fixed_honest"] = interval(honest, splits)
    out["t_fixed"] = time.perf_counter() - t
    print(name, f"ReliefF top {FIXED_M}, {FIXED_K}-NN: leaky", fmt(*out["fixed_leaky"]), "honest",
          fmt(*out["fixed_honest"]), f"{out['t_fixed']:.0f} s", flush=True)
    return out


def choice_label(row):
    w = row["weighter"]
    return "kNN, all, k={}".format(row["n_neighbors"]) if w == "None" else \
        f"{w}, {row['n_features']}, k={row['n_neighbors']}"


def _cpu_name():
    """The CPU's model name (``/proc/cpuinfo`` on Linux), else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def report(results, notes, repeats, total):
    cpu = _cpu_name()
    lines = ["# Leaky versus nested evaluation of an automatic selection", "",
             f"`python benchmarks/nested_selection.py` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{total:.0f} s in all, one process, one BLAS thread, on a shared {os.cpu_count()}-core {cpu} "
             "machine: the times are approximate). Outer splits: stratified 5-fold x {repeats}, the same for "
             "every row of a data set (`nested_evaluate`'s own). Model: `selection_pipeline(cv=5, random_state=0)` "
             "(median imputation, standard scaling, `AutoWeightedKNN` with its default candidates ReliefF, "
             "MultiSURF, IRelief, Simba, NCADiagonal and no weighting, its default grids of features kept and "
             "k, and q <= 0.05 for ReliefF and MultiSURF, the candidates with p-values), as `knnweights select` "
             "runs it. Accuracy: mean [95 % corrected resampled-t interval].", "",
             "Data: " + "; ".join(f"*{k}*: {v}" for k, v in notes.items()) + ".", "",
             "*leaky*: the choice made once on all samples, then that configuration (its features, weights, "
             "metric and k) cross-validated. *inner CV of the choice*: the winning configuration's own inner-CV "
             "score on all samples (what a search reports of its winner). *nested*: `nested_evaluate`, the "
             "whole choice redone in every outer training part. *kNN*, *L1 logistic*: `nested_evaluate`'s "
             f"baselines on the same splits. *ReliefF top {FIXED_M}*: a fixed weighter, its {FIXED_M} best genes "
             f"and {FIXED_K}-NN, chosen on all samples (leaky) or in each training part (honest).", "",
             "| data | leaky | inner CV of the choice | nested | kNN | L1 logistic | "
             f"ReliefF top {FIXED_M} leaky | ReliefF top {FIXED_M} honest |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        s = r["summary"]
        base = {m: fmt(s.loc[m, "mean"], s.loc[m, "low"], s.loc[m, "high"]) for m in s.index}
        lines.append(f"| {r['name']} | {fmt(*r['leaky'])} | {r['all_inner']:.3f} | {fmt(*r['nested'])} | "
                     f"{base.get('kNN', '')} | {base.get('L1 logistic', '')} | {fmt(*r['fixed_leaky'])} | "
                     f"{fmt(*r['fixed_honest'])} |")
    lines += ["", "| data | choice on all samples (weighter, features, k) | stability index [95 %] | "
              "consensus (>= half the outer splits) | features per outer split (median, range) | "
              "time: leaky | time: nested | time: ReliefF top 50 both |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        st, c = r["stability"], r["choices"]
        n = c["n_selected"]
        lines.append(f"| {r['name']} | {choice_label(r['all_choice'])} ({r['all_nsel']} kept) | "
                     f"{st.value:.3f} [{st.low:.3f}, {st.high:.3f}] | {len(r['consensus'])} | "
                     f"{int(np.median(n))} ({int(n.min())}-{int(n.max())}) | {r['t_leaky']:.0f} s | "
                     f"{r['t_nested']:.0f} s | {r['t_fixed']:.0f} s |")
    lines += ["", "Choice in each outer split (weighter, features kept or q-value rule, k; inner-CV score):", ""]
    for r in results:
        c = r["choices"]
        counts = c["weighter"].value_counts()
        lines.append(f"- *{r['name']}*: weighters " + ", ".join(f"{w} {n}" for w, n in counts.items()) + ". "
                     + "; ".join(f"{choice_label(row)} ({row['inner_score']:.2f})" for _, row in c.iterrows()))
        if r["consensus"]:
            lines.append(f"  Consensus: {', '.join(str(f) for f in r['consensus'][:30])}"
                         + (" ..." if len(r["consensus"]) > 30 else "") + ".")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="benchmarks/nested_selection.md")
    ap.add_argument("--repeats", type=int, default=5, help="outer repeats of stratified 5-fold CV (default 5)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    results, notes = [], {}
    with threadpool_limits(1):
        for name, (X, y, note, names) in datasets().items():
            notes[name] = note
            results.append(run_one(name, X, y, args.repeats, names))
    total = time.perf_counter() - t0
    text = report(results, notes, args.repeats, total)
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)
    print("wrote", args.out, f"({total:.0f} s)")


if __name__ == "__main__":
    main()
