"""LH-RELIEF (Cai & Ng, "Feature weighting by RELIEF based on local hyperplane approximation").

Table 2 (accuracy of HKNN on the data rescaled by each method's weights, 20 runs,
p-value of the paired t-test of I-RELIEF vs LH-RELIEF), Fig. 1 (Fermat's spiral with
0..3000 irrelevant features) and Fig. 2 (Bupa and Pima with added irrelevant features).
"""

import os

import numpy as np
from sklearn.model_selection import GridSearchCV

from ..classifiers import HKNN
from ..datasets import make_spiral
from ..evaluation import Tuned, weighter_pipeline
from ..plotting import plot_irrelevant_feature_curve
from ..weighters import SBMLR, IRelief, LHRelief, Simba
from ._data import limits_note, loader, ties_tag
from ._figures import as_arrays, curve_cells, figures_doc, savefig
from .tables import DatasetSpec, MethodSpec, TableSpec, holdout_two_to_one

PAPER = "lh-relief"
_ROWS = {"tiny": 80, "quick": 250}


def _inner(cfg):
    return cfg.pick(2, 3, 10)


def _hknn_grid(cfg):
    return {"clf__n_neighbors": cfg.pick([3], [5], [3, 5, 7, 10]),
            "clf__alpha": cfg.pick([1.0], [0.01, 0.1, 1.0], [1e-3, 1e-2, 0.1, 1.0, 10.0])}


def _pipe(weighter, cfg, wgrid):
    grid = dict(_hknn_grid(cfg))
    grid.update({f"weights__weighter__{k}": v for k, v in wgrid.items()})
    est = weighter_pipeline(weighter, HKNN(n_neighbors=cfg.pick(3, 5, 5)))
    if all(len(v) == 1 for v in grid.values()):
        return est.set_params(**{k: v[0] for k, v in grid.items()})
    return Tuned(est, grid, cv=_inner(cfg))


#: the reading of eq. 9 used for LH-RELIEF (both are offered by knnweights.LHRelief)
READING = ("multiplicative eq. 9 (w <- (w * mean z)+, normalised) with a damped step eta = 0.5 (not in the paper: "
           "the undamped iteration 2-cycles on the spiral)")
#: the other reading, shown in Table 2 beside the judged one (Fig. 1 draws both)
READING_ADD = ("additive eq. 9, I-RELIEF's update (w <- (mean z)+, normalised), damped step eta = 0.5; shown beside "
               "the judged multiplicative reading, not counted")


def _lh(cfg, update="multiplicative"):
    return _pipe(LHRelief(update=update, max_iter=cfg.pick(10, 200, 200)), cfg,
                 {"n_neighbors": cfg.pick([3], [5], [3, 5, 7, 10])})


def _lh_additive(cfg):
    return _lh(cfg, update="additive")


def _sbmlr(cfg):
    return _pipe(SBMLR(), cfg, {})


def _ir(cfg):
    return _pipe(IRelief(max_iter=cfg.pick(5, 15, 50), normalize=False), cfg,
                 {"sigma": cfg.pick([1.0], [1.0], [0.1, 0.5, 1.0, 2.0, 5.0])})


def _simba(cfg):
    return _pipe(Simba(random_state=0), cfg, {})


_DS = [("Bupa", "bupa_liver", "bupa_liver"), ("Teach", "tae", "tae"), ("Sonar", "sonar", "sonar"),
       ("Cancer", "lh_cancer_198x32", "wpbc"), ("Prokaryotic", "prokaryotic_reinhardt1998", None),
       ("Eukaryotic", "eukaryotic_reinhardt1998", None), ("Haberman", "haberman", "haberman"),
       ("Page Block", "page_blocks", "page_blocks"), ("Pima", "pima_diabetes", "pima_diabetes"),
       ("Spambase", "spambase", "spambase")]


_RAW = ("the paper scales \"the raw datasets\"; benchmarks/lhrelief_table2_scaling.md, a cheaper protocol: one setting "
        "per method, 5 holdouts")
#: what is known about the misses no cause explains (the reason column says it after "unexplained")
_GAPS = {
    "tae": "raw features come closer to the paper for every weighter on this set (" + _RAW + "): SBMLR 34.4 %, "
           "I-RELIEF 48.0, Simba 54.4, LH-RELIEF 46.8 against the paper's 34.4 / 46.3 / 62.3 / 64.4 (standardised "
           "46.0 / 51.6 / 47.2 / 44.4), but standardised features come closer in 23 of the table's 32 rows",
    "page_blocks": "every method we run gives 95-97 % on standardised features, where the paper's spread over "
                   "89.8-95.7; raw features do not explain it (" + _RAW + "): SBMLR 92.2 %, I-RELIEF 89.0, Simba "
                   "68.7, LH-RELIEF 62.7 against the paper's 95.7 / 94.1 / 89.8 / 94.5",
    "spambase": "every method we run gives 88.5-92.7 % on standardised features against the paper's 78.0-84.8 "
                "(Simba 39.4); raw features do not explain it (" + _RAW + "): Simba drops to 60.4 %, but I-RELIEF "
                "to 66.3 and LH-RELIEF to 61.2 (paper 78.0 / 84.8)",
}


def table2():
    """Table 2: HKNN accuracy after each method's feature weighting, 20 random 2:1 splits."""
    ds = []
    for lab, key, name in _DS:
        if name is None:
            ds.append(DatasetSpec(lab, key, None, reason="Reinhardt & Hubbard 1998 localisation data, not bundled"))
        else:
            note = "standardised"
            if name == "wpbc":
                note = "WPBC stands in (198 x 32 as the paper, but 2 classes, not 6); standardised"
            ds.append(DatasetSpec(lab, key, loader(name, std=True, const=True, max_rows=_ROWS), note=note,
                                  unexplained=_GAPS.get(name, "")))
    methods = [
        MethodSpec("LH-RELIEF", _lh, stand_in="knnweights LHRelief + HKNN", reading=READING),
        MethodSpec("LH-RELIEF (additive)", _lh_additive, stand_in="knnweights LHRelief(update='additive') + HKNN",
                   reading=READING_ADD, paper_label="LH-RELIEF"),
        MethodSpec("I-RELIEF", _ir, stand_in="knnweights IRelief + HKNN"),
        MethodSpec("SBMLR", _sbmlr, stand_in="knnweights SBMLR (exact fixed point alpha = N_W / E_W, penalised "
                                             "bias; score sum_k w_jk^2) + HKNN"),
        MethodSpec("Simba", _simba, stand_in="knnweights Simba + HKNN"),
    ]
    return TableSpec(PAPER, "lhrelief_table2", "LH-RELIEF Table 2: HKNN accuracy (%) after feature weighting",
                     "lhrelief_table2.csv", ds, methods,
                     protocol=holdout_two_to_one(2, 3, 20),
                     reference="LH-RELIEF", wtl_rule="lhrelief",
                     caption="20 random train/test splits 2:1 (the paper does not state the split; --quick: 3 splits), "
                             "hyper-parameters by internal 10-fold CV (--quick: 3-fold over HKNN alpha in "
                             "{0.01, 0.1, 1}, "
                             "fixed k = K = 5, I-RELIEF sigma = 1, 15 iterations; LH-RELIEF: " + READING +
                             ", at most 200 iterations), " + limits_note(_ROWS) +
                             ". Paired t-test of each method vs LH-RELIEF, p < 0.05. The paper's eq. 9 has two "
                             "readings (w <- (w * mean z)+, or I-RELIEF's additive step): the row LH-RELIEF is the "
                             "multiplicative one (the literal "
                             "equation, and the one that keeps Fig. 1's spiral error flat); the row LH-RELIEF "
                             "(additive) is I-RELIEF's update, judged against the same paper number but not "
                             "counted in the fidelity.")


def tables():
    """LH-RELIEF's tables of cells: Table 2."""
    return [table2()]


def _ours(res):
    return "; ".join(f"{k}: " + ", ".join(f"{c}: {100 * e:.1f}%" for c, e in zip(v["counts"], v["mean_error"],
                                                                                 strict=True))
                     for k, v in res.items())


def _robust_verdict(res, lh="LH-RELIEF (multiplicative)", ir="I-RELIEF", rise=0.05, chance=None, margin=0.02):
    """Reproduced: LH-RELIEF's error stays within ``rise`` of its value without noise and
    ends below I-RELIEF's; partly: one of the two.

    ``chance`` is the majority-class error of the data. When LH-RELIEF's error at the
    largest count is within ``margin`` of it (or above), the curve has reached chance
    level: neither being "flat" there nor ending below another method at chance shows
    robustness, so the verdict is "not reproduced" whatever the two tests say.
    """
    e_lh, e_ir = res[lh]["mean_error"], res[ir]["mean_error"]
    flat = max(e_lh) - e_lh[0] <= rise
    lower = e_lh[-1] < e_ir[-1]
    at_chance = chance is not None and e_lh[-1] >= chance - margin
    if at_chance:
        word = "not reproduced"
    else:
        word = "reproduced" if flat and lower else ("partly reproduced" if flat or lower else "not reproduced")
    text = (f"{word} ({lh}: {100 * e_lh[0]:.1f}% without noise, at most {100 * max(e_lh):.1f}%, "
            f"{100 * e_lh[-1]:.1f}% at {res[lh]['counts'][-1]} irrelevant features; {ir} {100 * e_ir[-1]:.1f}% there")
    if chance is not None:
        text += f"; majority-class error {100 * chance:.1f}%"
        if at_chance:
            text += (f": {lh} ends no more than {100 * margin:.0f} points below it, i.e. at chance level, so its "
                     "curve shows no robustness")
    return text + ")"


def _majority_error(y):
    """The error of always predicting the most frequent class."""
    _, counts = np.unique(y, return_counts=True)
    return 1.0 - counts.max() / counts.sum()


@figures_doc
def figures(cfg, out):
    """LH-RELIEF's Fig. 1 (the spiral) and Fig. 2 (Bupa, Pima): HKNN error against irrelevant features added.

    {figures_params}
    """
    it = cfg.pick(10, 200, 200)

    def hknn():  # HKNN's ridge penalty by 3-fold CV inside each training fold
        grid = {"alpha": cfg.pick([1.0], [0.01, 0.1, 1.0], [1e-3, 1e-2, 0.1, 1.0, 10.0])}
        return GridSearchCV(HKNN(n_neighbors=5), grid, cv=3)

    ests = {"LH-RELIEF (multiplicative)": weighter_pipeline(LHRelief(update="multiplicative", max_iter=it), hknn()),
            "LH-RELIEF (additive)": weighter_pipeline(LHRelief(update="additive", max_iter=it), hknn()),
            "I-RELIEF": weighter_pipeline(IRelief(max_iter=it), hknn()),
            "HKNN (no weights)": hknn()}
    cv, reps = cfg.pick((2, 1), (5, 1), (10, 10))
    figs = []
    counts = cfg.pick([0, 50], [0, 300, 1000], list(range(0, 3001, 300)))
    n_per = cfg.pick(40, 200, 200)

    def partial_note(info):
        if info["complete"]:
            return ""
        return (f"**partial: {info['cells_done']} / {info['cells_total']} cells** ({info['repeats_done']} of "
                f"{info['n_repeats']} repeats finished for every count and method; the curve averages those) -- ")

    def judged(res, info, **kw):
        if not res:
            return f"not computed yet (partial: {info['cells_done']} / {info['cells_total']} cells)"
        if not info["complete"]:
            return f"partial: {info['cells_done']} / {info['cells_total']} cells, not judged"
        return _robust_verdict(res, **kw)

    X, y = make_spiral(n_per_class=n_per, turns=1.0, random_state=cfg.random_state)
    X = 3.0 * X  # radius 3, one turn (the paper does not give its spiral's parameters)
    res, info = curve_cells(cfg, "lhrelief_fig1_spiral", ("r3t1-hknn-cv-readings-damped", counts, n_per, it), ests,
                            X, y, counts, cv, reps)
    path = os.path.join(out, "lhrelief_fig1_spiral.png")
    if res:
        savefig(plot_irrelevant_feature_curve(as_arrays(res), title=f"Fermat's spiral ({2 * n_per} points), "
                                                                    "HKNN error"), path)
    figs.append({"title": "LH-RELIEF Fig. 1(b): spiral error vs number of irrelevant features",
                 "png": path if res else None, "cells": info,
                 "claim": "with few irrelevant features the two are similar; as their number grows I-RELIEF's error "
                          "rises sharply while LH-RELIEF's stays stable and lower.",
                 "verdict": judged(res, info, chance=_majority_error(y)),
                 "ours": partial_note(info) + f"spiral of radius 3, one turn (our choice); {cv}-fold CV x {reps} "
                         f"repeat(s), counts {counts}; "
                         "LH-RELIEF with both readings of eq. 9 (multiplicative: the literal one; additive: the "
                         "I-RELIEF one), damped step eta = 0.5: " + (_ours(res) if res else "no finished repeat yet")})
    counts2 = cfg.pick([0, 20], [0, 100, 500], list(range(0, 1001, 100)))
    for lab, name in [("Bupa", "bupa_liver"), ("Pima", "pima_diabetes")]:
        X, y = loader(name, std=True, max_rows=_ROWS)(cfg)
        res, info = curve_cells(cfg, f"lhrelief_fig2_{name}", ("hknn-cv-readings-damped", counts2, it) + ties_tag(name),
                                ests, X, y, counts2, cv, reps)
        path = os.path.join(out, f"lhrelief_fig2_{name}.png")
        if res:
            savefig(plot_irrelevant_feature_curve(as_arrays(res), title=f"{lab}: HKNN error with irrelevant features"),
                    path)
        figs.append({"title": f"LH-RELIEF Fig. 2: {lab} error vs number of irrelevant features",
                     "png": path if res else None, "cells": info,
                     "claim": "LH-RELIEF's error stays lower and more stable than I-RELIEF's as irrelevant "
                              "features are added.",
                     "verdict": judged(res, info, rise=0.05, chance=_majority_error(y)),
                     "ours": partial_note(info) + (_ours(res) if res else "no finished repeat yet")
                             + (f" ({limits_note(_ROWS)})" if cfg.mode != "full" else "")})
    return figs
