"""EFW (Li, Gao & Chen, "Ensemble feature weighting based on local learning and diversity", AAAI 2012).

Stability at m = 5 (running text), Fig. 1 (stability against m on Wisconsin and Sonar)
and Fig. 2 (linear-SVM accuracy against the number of top-ranked features, 5-fold CV).
Stability: c = 5 subsamples of 90 %, mean pairwise Spearman correlation of the rankings.
"""

import math
import os
import time

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit

from ..evaluation import stability, stability_of, top_feature_curve
from ..plotting import plot_top_feature_curves
from ..weighters import EFW, ERelief
from ..weighters.efw import base_margins
from ._data import data_doc, limits_note, loader, ties_tag
from ._figures import as_arrays, cached, figures_doc, not_computed, savefig
from .tables import TableResult, TableSpec, read_paper_table, within_tolerance

PAPER = "efw"
_ROWS = {"tiny": 100, "quick": 400}
_FEATS = {"tiny": 100, "quick": 1000}
_KEYS = {"arcene": "arcene", "pima_diabetes": "pima_diabetes", "colon_alon1999": "colon_alon",
         "ionosphere": "ionosphere", "prostate_singh2002_136": "prostate_singh", "waveform_v1": "waveform"}


def tables():
    """EFW's tables of cells: none (its stability numbers are a custom table, see :func:`custom_tables`)."""
    return []


def _efw(gamma, m, cfg, neighbors="full"):
    return EFW(n_estimators=m, gamma=gamma, neighbors=neighbors, max_iter=cfg.pick(100, 500, 2000), random_state=0)


#: where EFW's nearest hit / miss come from (the paper leaves it open); the first is compared
READINGS = [
    ("soft", "EFW(neighbors='soft', sigma=1): kernel-soft NH/NM as in LOGO (the local learner the paper builds "
             "on), found on each stability subsample"),
    ("data set", "NH/NM found once on the whole (standardised) data set and reused by every stability subsample "
                 "and ensemble member (the experiment's training data, l. 54)"),
    ("training set", "EFW(neighbors='full'): NH/NM found once on each stability subsample, reused by its members"),
    ("subsample", "EFW(neighbors='subsample'): NH/NM searched inside each member's subsample (literal loop)"),
]
_NEIGHBORS = {"training set": "full", "subsample": "subsample", "soft": "soft"}
#: the sets on which the other readings the text leaves room for were measured (said in a miss reason)
_READINGS_TRIED = ("colon_alon", "prostate_singh", "arcene")


@data_doc
def stability_reading(X, y, gamma, m, reading, cfg, random_state):
    """R_sta (c = 5 subsamples of 90 %) of EFW under one reading of where NH / NM come from.

    Parameters
    ----------
    {Xy}
    gamma : float
        EFW's diversity weight (0: EFWWD).
    m : int
        Base feature selectors of the ensemble.
    reading : str
        Where NH / NM come from (a label of :data:`READINGS`).
    cfg : Config
        The run (mode, parallelism).
    random_state : int
        Seed of the subsampling.

    Returns
    -------
    float
    """
    if reading != "data set":
        return float(stability_of(_efw(gamma, m, cfg, _NEIGHBORS[reading]), X, y, n_subsamples=5, fraction=0.9,
                                  random_state=random_state, n_jobs=cfg.n_jobs))
    codes = np.unique(y, return_inverse=True)[1]
    Z = base_margins(X, codes)
    split = StratifiedShuffleSplit(n_splits=5, train_size=0.9, test_size=None, random_state=random_state)
    W = [_efw(gamma, m, cfg).fit(X[i], y[i], margins=Z[i]).feature_importances_
         for i, _ in split.split(np.zeros((len(y), 1)), y)]  # the same subsamples as stability_of
    return float(stability(weights=np.array(W)))


def custom_tables(cfg):
    """The stability numbers of the text (EFW vs EFWWD at m = 5), each reading beside the paper's.

    Parameters
    ----------
    cfg : Config
        The run.

    Returns
    -------
    list of TableResult
    """
    t0 = time.monotonic()
    seeds = cfg.pick(1, 2, 5)
    spec = TableSpec(PAPER, "efw_stability_m5", "EFW text: stability (Spearman) at m = 5, c = 5, mu = beta = 0.9",
                     "efw_text_stability_m5.csv", [], [], protocol=None, metric="stability",
                     caption="Stability R_sta (eq. 18, mean pairwise Spearman correlation over c = 5 subsamples of "
                             "90 %), EFWWD = EFW with gamma = 0, features standardised (the loss is not scale-free: "
                             "on raw microarray values it saturates and the descent stalls); ours: mean (std) over "
                             f"{seeds} seed(s) of the subsampling; tolerance 2 SE + 0.02. Where NH/NM come from is "
                             "not stated in the paper; each reading is a row: " +
                             "; ".join(f"*{k}*: {v}" for k, v in READINGS) + ". Only the first reading (soft) "
                             "is counted in the fidelity summary; the others are shown beside it. "
                             + limits_note(_ROWS, _FEATS) + " (fewer features raise or lower R_sta).")
    rows = []
    before = getattr(cfg, "computed", 0)
    for r in read_paper_table("efw_text_stability_m5.csv"):
        key = r["dataset_key"]
        if cfg.datasets is not None and key not in cfg.datasets and r["dataset"] not in cfg.datasets \
                and _KEYS[key] not in cfg.datasets:
            continue
        gamma = 0.001 if r["method"] == "EFW" else 0.0
        name = _KEYS[key]
        for i, (reading, text) in enumerate(READINGS):
            def compute(name=name, gamma=gamma, reading=reading):
                X, y = loader(name, std=True, max_rows=_ROWS, max_features=_FEATS)(cfg)
                return [stability_reading(X, y, gamma, 5, reading, cfg, cfg.random_state + s) for s in range(seeds)]

            row = {"table": spec.name, "dataset": r["dataset"], "dataset_key": key,
                   "method": f"{r['method']} [NH/NM: {reading}]",
                   "stand_in": "knnweights EFW" + (" (gamma = 0)" if gamma == 0 else ""),
                   "dataset_note": "standardised", "paper": float(r["mean"]), "paper_as_printed": r["as_printed"],
                   "paper_std": None, "reading": reading, "miss_reason": ""}
            try:
                got = cached(cfg, "efw_stability", (name, gamma, seeds, "std", reading) + ties_tag(name), compute,
                             deps=[_efw(gamma, 5, cfg, _NEIGHBORS.get(reading, "full"))])
                if got is None:  # --report-only and not in the store yet
                    row.update(ours_mean=None, ours_std=None, ours_se=None, n_cells=0, diff=None, within=None,
                               status="partial: not computed yet")
                    rows.append(row)
                    continue
                vals = np.asarray(got)
                mean = float(vals.mean())
                std = float(vals.std(ddof=1)) if vals.size > 1 else 0.0
                se = std / math.sqrt(vals.size) if vals.size > 1 else float("nan")
                within = within_tolerance(mean, se, float(r["mean"]), points=0.02)
                row.update(ours_mean=round(mean, 4), ours_std=round(std, 4),
                           ours_se=round(se, 4) if vals.size > 1 else None, n_cells=int(vals.size),
                           diff=round(mean - float(r["mean"]), 4), within=within if i == 0 else None,
                           status="ok" if i == 0 else f"reading shown beside the compared one "
                                                      f"({'within' if within else 'outside'} tolerance; not counted)")
                if i == 0 and within is False:
                    row["miss_reason"] = (f"paper ambiguity, reading used: {text}" +
                                          (f"; dataset differs from the paper's: {limits_note(_ROWS, _FEATS)}"
                                           if cfg.mode != "full" else "") +
                                          ("; the other readings measured on this set stay below the paper's "
                                           "value too (benchmarks/efw_stability_readings.md: ranks as a "
                                           "permutation, raw values, the paper's relaxed convex problem); only "
                                           "the members' unoptimised start, the summed margins, reaches it, on "
                                           "Arcene alone" if name in _READINGS_TRIED else ""))
            except NotImplementedError as exc:
                row.update(ours_mean=None, ours_std=None, ours_se=None, n_cells=0, diff=None, within=None,
                           status=f"not implemented: {exc}")
            except Exception as exc:  # noqa: BLE001
                row.update(ours_mean=None, ours_std=None, ours_se=None, n_cells=0, diff=None, within=None,
                           status=f"failed: {type(exc).__name__}: {exc}")
            rows.append(row)
    res = TableResult(spec, rows)
    res.cells_total = sum(1 for r in rows if not str(r.get("status", "")).startswith("partial"))
    res.cells_expected = len(rows)
    res.cells_run = getattr(cfg, "computed", 0) - before
    res.seconds = time.monotonic() - t0
    return [res]


def _fig1_verdict(res, gap):
    low = min(min(v) for v in res.values())
    ok_gap, ok_high = gap <= 0.01, low >= 0.9
    word = "reproduced" if ok_gap and ok_high else ("partly reproduced" if ok_gap or ok_high else "not reproduced")
    return f"{word} (largest EFW - EFWWD gap {gap:.4f}, lowest stability {low:.4f}; kernel-soft NH/NM)"


@figures_doc
def figures(cfg, out):
    """EFW's Fig. 1 (stability against m) and Fig. 2 (accuracy against the number of top features).

    {figures_params}
    """
    import matplotlib  # optional: matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # optional: matplotlib

    figs = []
    ms = cfg.pick([2, 5], [2, 5, 10], [2, 3, 5, 7, 10, 15, 20])

    for lab, name in [("Wisconsin", "breast_cancer_wisconsin_original"), ("Sonar", "sonar")]:
        def compute(name=name):
            X, y = loader(name, std=True, max_rows=_ROWS)(cfg)
            return {meth: [stability_reading(X, y, g, m, READINGS[0][0], cfg, cfg.random_state) for m in ms]
                    for meth, g in [("EFW", 0.001), ("EFWWD", 0.0)]}

        res = cached(cfg, "efw_fig1", (name, ms, "std", READINGS[0][0]) + ties_tag(name), compute,
                     deps=[_efw(0.001, 5, cfg, READINGS[0][0])])
        if res is None:
            figs.append(not_computed(f"EFW Fig. 1: stability against m, {lab}"))
            continue
        fig, ax = plt.subplots(figsize=(5, 3.5))
        for meth, v in res.items():
            ax.plot(ms, v, marker="o", label=meth)
        ax.set_xlabel("m (number of base feature selectors)")
        ax.set_ylabel("stability R_sta (Spearman)")
        ax.set_title(f"{lab}: stability against m")
        ax.legend()
        path = os.path.join(out, f"efw_fig1_{name}.png")
        savefig(ax, path)
        gap = max(abs(a - b) for a, b in zip(res["EFW"], res["EFWWD"], strict=True))
        figs.append({"title": f"EFW Fig. 1: stability against m, {lab}", "png": path,
                     "claim": "EFW and EFWWD differ by no more than 0.01 and both are close to 1 for every m.",
                     "verdict": _fig1_verdict(res, gap),
                     "ours": f"m = {ms}: EFW {np.round(res['EFW'], 4).tolist()}, EFWWD "
                             f"{np.round(res['EFWWD'], 4).tolist()}; largest gap {gap:.4f}."})
    sets = cfg.pick([("Sonar", "sonar")], [("Sonar", "sonar"), ("Ionosphere", "ionosphere"), ("Pima", "pima_diabetes"),
                                           ("Wisconsin", "breast_cancer_wisconsin_original")],
                    [("Arcene", "arcene"), ("Colon", "colon_alon"), ("Prostate", "prostate_singh"),
                     ("Wisconsin", "breast_cancer_wisconsin_original"), ("Ionosphere", "ionosphere"),
                     ("Sonar", "sonar"), ("Waveform", "waveform"), ("Pima", "pima_diabetes")])
    for lab, name in sets:
        def compute(name=name):
            X, y = loader(name, std=True, max_rows=_ROWS, max_features=_FEATS)(cfg)
            d = X.shape[1]
            grid = sorted({max(1, int(round(f * d))) for f in (0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0)})
            out_ = {}
            for meth, w in [("EFW", _efw(0.001, 5, cfg, "soft")), ("EFWWD", _efw(0.0, 5, cfg, "soft")),
                            ("E-Relief", ERelief(n_estimators=5, random_state=0))]:
                b = top_feature_curve(w, X, y, grid, cv=5, random_state=cfg.random_state, n_jobs=cfg.n_jobs)
                out_[meth] = {"n_features": np.asarray(b.n_features).tolist(), "mean": np.asarray(b.mean).tolist(),
                              "std": np.asarray(b.std).tolist()}
            return out_

        res = cached(cfg, "efw_fig2", (name, "std") + ties_tag(name), compute,
                     deps=[_efw(0.001, 5, cfg, "soft"), ERelief(n_estimators=5, random_state=0)])
        if res is None:
            figs.append(not_computed(f"EFW Fig. 2: accuracy against the number of top features, {lab}"))
            continue
        path = os.path.join(out, f"efw_fig2_{name}.png")
        savefig(plot_top_feature_curves(as_arrays(res), title=f"{lab}: linear SVM (C = 1), 5-fold CV"), path)
        best = {k: max(v["mean"]) for k, v in res.items()}
        wins = sum(1 for i in range(len(res["EFW"]["mean"]))
                   if res["EFW"]["mean"][i] >= max(res[k]["mean"][i] for k in res))
        n_counts = len(res["EFW"]["mean"])
        figs.append({"title": f"EFW Fig. 2: accuracy against the number of top features, {lab}", "png": path,
                     "verdict": _fig2_verdict(wins, n_counts),
                     "claim": "the ensemble methods, especially EFW, reach higher accuracy than the others in most "
                              "cases (VR-Lmba is not in knnweights: the variance-reduction sample weighting of Han & "
                              "Yu 2010 is not implemented, so its curve is missing).",
                     "ours": f"best mean accuracy {', '.join(f'{k} {100 * v:.1f}%' for k, v in best.items())}; EFW "
                             f"best or tied at {wins}/{n_counts} feature counts."})
    return figs


def _fig2_verdict(wins, n_counts):
    """Fig. 2's claim judged on the curves drawn: EFW best or tied at most feature counts.

    The paper's single-selector baselines (and VR-Lmba) are not drawn, so "than the others"
    is judged among the ensembles only: "partly reproduced" at best.
    """
    among = "among the drawn ensembles; the paper's other selectors are not drawn"
    if 2 * wins > n_counts:
        return f"partly reproduced (EFW best or tied at {wins}/{n_counts} feature counts {among})"
    return f"not reproduced (EFW best or tied at only {wins}/{n_counts} feature counts {among})"
