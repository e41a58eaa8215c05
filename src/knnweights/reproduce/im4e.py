"""I-M4E (Bei & Hong, "Maximizing margin quality and quantity"): Tables 3, 4 and 5.

Protocol (Sec. 5.2): 10 x 10-fold CV; W/T/L counted from the competitor's side against
I-M4E (paired two-tailed t-test p < 0.01 and >= 0.5 points).  I-M4E: lambda = N, sigma by
internal CV over 1, 1/2, ..., 2^-13; classification by the expected-distance rule
(eq. 10).  UCI sets: two largest classes, standardised.  Microarray sets: halving
feature elimination (Table 3) or chi-square top-2000 genes (Table 4).  Tables 1-2 are
toy examples whose point coordinates the paper does not give: quoted, not recomputed.
"""

from sklearn.feature_selection import SelectKBest
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler

from ..classifiers import ExpectedDistanceClassifier, KNNClassifier
from ..evaluation import HalvingElimination, RepeatedCV, Tuned, halving_grid, weighted_knn
from ..weighters import IM4E, SVMRFE, GFlip, Logo, Relief, ReliefF, Simba
from ._data import limits_note, loader
from ._figures import figures_doc
from ._weka import WekaNaiveBayes, weka_ibk, weka_smo
from ._weka_chi2 import weka_chi_squared
from .tables import DatasetSpec, MethodSpec, TableSpec

PAPER = "im4e"
WEKA = "WEKA-only classifier with no faithful scikit-learn counterpart"


def _sigmas(cfg):
    return cfg.pick([1.0, 0.125], [1.0, 0.25, 0.0625], list(halving_grid()))


def _inner(cfg):
    return cfg.pick(2, 3, 10)


def _im4e(cfg, sigma=None):
    max_iter = cfg.pick(10, 30, 100)
    if sigma is not None:
        return ExpectedDistanceClassifier(sigma=sigma, weights=IM4E(sigma=sigma, max_iter=max_iter))
    est = ExpectedDistanceClassifier(sigma=1.0, weights=IM4E(sigma=1.0, max_iter=max_iter))
    grid = [{"sigma": [s], "weights__sigma": [s]} for s in _sigmas(cfg)]
    return Tuned(est, grid, cv=_inner(cfg))


def _logo(cfg, sigma=None):
    max_iter = cfg.pick(3, 5, 50)
    if sigma is not None:
        return weighted_knn(Logo(sigma=sigma, sigma_units="absolute", max_iter=max_iter), n_neighbors=3)
    grid = {"weighter__weighter__sigma": cfg.pick([1.0], [1.0], list(halving_grid()))}
    return Tuned(weighted_knn(Logo(sigma_units="absolute", max_iter=max_iter), n_neighbors=3), grid, cv=_inner(cfg))


def _logo_abs(cfg):
    """Table 3's LOGO: kernel width 1 in absolute distance units, as the I-M4E paper states its widths."""
    return Logo(sigma=1.0, sigma_units="absolute", max_iter=cfg.pick(2, 3, 50))


def _rff(cfg):
    return Tuned(weighted_knn(ReliefF(n_neighbors=cfg.pick(3, 10, 10))), {"n_neighbors": [1, 3, 5]}, cv=_inner(cfg))


def _w1nn(cls):
    def build(cfg):
        kw = {"random_state": 0} if "random_state" in cls.__init__.__code__.co_varnames else {}
        return weighted_knn(cls(**kw), n_neighbors=1)

    return build


def _smo(cfg):
    """Table 5's SMO: :func:`~knnweights.reproduce._weka.weka_smo` with p = 1, 2, 3 or RBF, the kernel by
    internal CV (the paper reports the best kernel; PUK has no scikit-learn counterpart)."""
    grid = [{"svc__kernel": ["poly"], "svc__degree": [1, 2, 3], "svc__gamma": [1.0], "svc__coef0": [0.0]},
            {"svc__kernel": ["rbf"], "svc__gamma": [0.01]}]
    return Tuned(weka_smo(), grid, cv=_inner(cfg))


# -- Table 5 (UCI) ---------------------------------------------------------------------
_UCI = [("VC", "vertebral_column"), ("EC", "ecoli"), ("GI", "glass"), ("HS", "haberman"), ("HR", "hayes_roth"),
        ("SH", "statlog_heart"), ("IONO", "ionosphere"), ("LYM", "lymphography"), ("PARK", "parkinsons"),
        ("WQ", "wine_quality"), ("WPBC", "wpbc")]
_UCI_ROWS = {"tiny": 80, "quick": 300}
_UCI_DIFFERS = {"wine_quality": "the paper does not say red or white wine; we pool both (6497 samples), two largest "
                                "classes (quality 5 and 6)",
                "hayes_roth": "UCI's train and test files pooled (the paper does not say which it used)"}


#: Glass: the paper says "the largest two classes", but its baselines' accuracies are those of window
#: (classes 1-3) vs non-window glass (5-7): that split is used (the numbers are in NOTES)
_GLASS = {"window": [1, 2, 3], "non-window": [5, 6, 7]}


def _uci(key):
    if key == "glass":
        return (loader(key, groups=_GLASS, std=True, max_rows=_UCI_ROWS),
                "window (classes 1-3) vs non-window glass (5-7), standardised: the paper says its two largest "
                "classes, but its baselines' accuracies are those of this split (see the notes)")
    return (loader(key, two=True, std=True, max_rows=_UCI_ROWS),
            "two largest classes, standardised" + (" (red + white)" if key == "wine_quality" else ""))


def table5():
    """Table 5: accuracy on 11 UCI sets (two largest classes), 10 x 10-fold CV."""
    ds = [DatasetSpec(lab, key, load, note=note, differs=_UCI_DIFFERS.get(key, ""))
          for (lab, key), (load, note) in zip(_UCI, map(_uci, (k for _, k in _UCI)), strict=True)]
    methods = [
        MethodSpec("ADT", reason=WEKA + " (alternating decision tree)"),
        MethodSpec("BN", reason=WEKA + " (Bayesian network)"),
        MethodSpec("IB1", lambda cfg: weka_ibk(1), stand_in="sklearn MinMaxScaler + knnweights KNNClassifier(1) "
                   "(IBk's attribute normalisation) for WEKA IB1"),
        MethodSpec("IB3", lambda cfg: weka_ibk(3), stand_in="sklearn MinMaxScaler + knnweights KNNClassifier(3) "
                   "(IBk's attribute normalisation) for WEKA IB3"),
        MethodSpec("NBC", lambda cfg: WekaNaiveBayes(), stand_in="knnweights WekaNaiveBayes (WEKA NaiveBayes's "
                   "NormalEstimator: precision, sd >= precision / 6, interval probabilities) for WEKA naive Bayes"),
        MethodSpec("RBF", reason=WEKA + " (RBF network)"),
        MethodSpec("SMO", _smo, stand_in="sklearn MinMaxScaler + SVC with WEKA SMO's defaults (C = 1, "
                   "poly <x, y>^1/2/3, RBF gamma 0.01; kernel by internal CV; PUK not available) for WEKA SMO "
                   "(paper: best kernel reported)"),
        MethodSpec("SIM", _w1nn(Simba), stand_in="knnweights Simba + 1-NN"),
        MethodSpec("GFP", _w1nn(GFlip), stand_in="knnweights GFlip + 1-NN"),
        MethodSpec("RLF", _w1nn(Relief), stand_in="knnweights Relief + 1-NN"),
        MethodSpec("RFF", _rff, stand_in="knnweights ReliefF + k-NN, k in {1,3,5} by internal CV"),
        MethodSpec("LOGO", _logo, stand_in="knnweights Logo + 3-NN, absolute sigma (quick: sigma=1, 5 iterations)",
                   reading="Logo's classifier is not given in the I-M4E paper: 3-NN on the weighted features"),
        MethodSpec("I-M4E", _im4e, stand_in="knnweights IM4E + ExpectedDistanceClassifier (eq. 10)",
                   reading="lambda = N and sigma from {1, 1/2, ..., 2^-13} by internal CV (Sec. 5.2)"),
    ]
    return TableSpec(PAPER, "im4e_table5", "I-M4E Table 5: accuracy (%) on 11 UCI sets", "im4e_table5.csv", ds,
                     methods, protocol=lambda cfg: cfg.pick(RepeatedCV(3, 1), RepeatedCV(5, 2), RepeatedCV(10, 10)),
                     reference="I-M4E", wtl_rule="im4e",
                     caption="Protocol: full = 10 x 10-fold CV; --quick = 2 x 5-fold CV, sigma grid {1, 1/4, 1/16} "
                             "with 3-fold internal CV, " + limits_note(_UCI_ROWS) + ". W/T/L from the competitor's "
                             "side vs I-M4E: p < 0.01 (paired t-test) and >= 0.5 points.")


# -- Tables 3 and 4 (microarray) -------------------------------------------------------
_MICRO = [("Breast", "breast_vantveer2002", "breast_vantveer"), ("Colon", "colon_alon1999", "colon_alon"),
          ("GLI", "gli_freije2004", None), ("Myeloma", "myeloma_tian2003", None),
          ("Prostate", "prostate_singh2002_136", "prostate_singh")]
_MICRO_FEATS = {"tiny": 60, "quick": 200}
#: what is known about the misses no cause explains (the reason column says it after "unexplained")
_MICRO_GAPS = {"breast_vantveer": "every method of Tables 3 and 4 on this set, SVM-RFE with SVMs and IB1 included, "
                                  "is far below the paper, while the same protocol comes within tolerance "
                                  "on most Colon and Prostate cells: the gap lies in the data or their preparation, "
                                  "which the paper does not describe (the source has 36,458 missing values, gene "
                                  "medians imputed here). Selection bias explains part of it at most: choosing "
                                  "Table 4's 2000 genes (WEKA's chi-square) on all 78 samples before the CV raises "
                                  "IB1 / IB3 from 66.9 / 60.6 % to 75.8 / 75.6 % (same folds), still below the "
                                  "paper's 87.0 / 86.1 %, while on Prostate the honest protocol gives the paper's "
                                  "numbers (84.2 / 87.5 % against 84.1 / 87.9 %) "
                                  "(benchmarks/breast_selection_bias.md)"}


def _micro_ds(std=False):
    out = []
    for lab, key, name in _MICRO:
        if name is None:
            out.append(DatasetSpec(lab, key, None,
                                   reason="not among the bundled datasets (see paper_tables/README.md)"))
        else:
            notes = (["missing values: feature median"] if name == "breast_vantveer" else []) + \
                (["standardised"] if std else [])
            out.append(DatasetSpec(lab, key, loader(name, max_features=_MICRO_FEATS, std=std),
                                   note="; ".join(notes), unexplained=_MICRO_GAPS.get(name, "")))
    return out


def _halving(ranker_fn, estimator_fn=None):
    def build(cfg):
        ranker = ranker_fn(cfg)
        est = estimator_fn(cfg) if estimator_fn else None
        return HalvingElimination(ranker, est, min_features=cfg.pick(10, 25, 50), cv=_inner(cfg))

    return build


def table3():
    """Table 3: accuracy on gene-expression sets after halving feature elimination, 10 x 10-fold CV."""
    def svm(kernel, degree=3):
        return lambda cfg: weka_smo(kernel, degree)

    def im4e_est(cfg):
        s = cfg.pick(0.25, 0.25, 0.25)
        return ExpectedDistanceClassifier(sigma=s, weights=IM4E(sigma=s, max_iter=cfg.pick(10, 30, 100)))

    methods = [
        MethodSpec("LOGO", _halving(lambda cfg: _logo_abs(cfg), lambda cfg: weighted_knn(_logo_abs(cfg), 3)),
                   stand_in="knnweights Logo + 3-NN, absolute sigma = 1 (not tuned here)",
                   reading="kernel width fixed at 1 (the paper tunes it; how is not said for Table 3)"),
        MethodSpec("RFF", _halving(lambda cfg: ReliefF(n_neighbors=cfg.pick(3, 10, 10))),
                   stand_in="knnweights ReliefF + weighted 1-NN; the paper's RELIEF-F classifies by k-NN with k in "
                            "{1, 3, 5} chosen by internal CV (Sec. 5.2; Table 5 does so), here k = 1 inside the "
                            "halving's internal CV", substitute=True),
        MethodSpec("SIM", _halving(lambda cfg: Simba(random_state=0)), stand_in="knnweights Simba + 1-NN"),
        MethodSpec("RLF", _halving(lambda cfg: Relief()), stand_in="knnweights Relief + 1-NN"),
        MethodSpec("ADT", reason=WEKA + " (alternating decision tree)"),
        MethodSpec("GFP", _halving(lambda cfg: GFlip(random_state=0)), stand_in="knnweights GFlip + 1-NN"),
        MethodSpec("SVM1", _halving(lambda cfg: SVMRFE(), svm("poly", 1)),
                   stand_in="SVM-RFE + sklearn SVC poly 1 with WEKA SMO's defaults for WEKA SMO", substitute=True),
        MethodSpec("SVM2", _halving(lambda cfg: SVMRFE(), svm("poly", 2)),
                   stand_in="SVM-RFE + sklearn SVC poly 2 with WEKA SMO's defaults for WEKA SMO", substitute=True),
        MethodSpec("SVM3", _halving(lambda cfg: SVMRFE(), svm("poly", 3)),
                   stand_in="SVM-RFE + sklearn SVC poly 3 with WEKA SMO's defaults for WEKA SMO", substitute=True),
        MethodSpec("SVMP", reason="SVM with the PUK kernel (WEKA only)"),
        MethodSpec("SVMR", _halving(lambda cfg: SVMRFE(), svm("rbf")),
                   stand_in="SVM-RFE + sklearn SVC RBF with WEKA SMO's defaults for WEKA SMO", substitute=True),
        MethodSpec("I-M4E", _halving(lambda cfg: IM4E(sigma=0.25, max_iter=cfg.pick(10, 30, 100)), im4e_est),
                   stand_in="knnweights IM4E + ExpectedDistanceClassifier, sigma = 1/4 (not tuned here)",
                   reading="kernel width fixed at 1/4 (the paper tunes it by internal CV)"),
    ]
    return TableSpec(PAPER, "im4e_table3", "I-M4E Table 3: accuracy (%) on gene-expression sets, halving "
                     "feature elimination", "im4e_table3.csv", _micro_ds(std=True), methods,
                     protocol=_micro_protocol,
                     reference="I-M4E", wtl_rule="im4e",
                     caption="Genes standardised (zero mean, unit variance; the paper does not say how it scales "
                             "them, but its kernel widths, I-M4E's sigma from 1 down and LOGO's, presuppose "
                             "unit-scale features: on raw Colon intensities, gene SD ~150, I-M4E with sigma = 1/4 "
                             "scored 72 % over one 10-fold CV against 85 % standardised, paper 85.5 %). Halving "
                             "elimination (lowest-weight half out until < 50 features; count by internal "
                             "CV). full = 10 x 10-fold CV with 10-fold internal CV; --quick = 1 x 5-fold CV, 3-fold "
                             "internal CV, stop below 25 features, " + limits_note(None, _MICRO_FEATS) +
                             ". Kernel widths and ReliefF's k fixed (not tuned) in this table.")


def _im4e_chi(cfg):
    k = cfg.pick(50, 150, 2000)
    est = Pipeline([("scale", MinMaxScaler()), ("chi2", SelectKBest(weka_chi_squared, k=k)),
                    ("clf", ExpectedDistanceClassifier(sigma=1.0,
                                                       weights=IM4E(sigma=1.0, max_iter=cfg.pick(10, 30, 100))))])
    grid = [{"clf__sigma": [s], "clf__weights__sigma": [s]} for s in _sigmas(cfg)]
    return Tuned(est, grid, cv=_inner(cfg))


def _micro_protocol(cfg):
    """Tables 3 and 4: 10 x 10-fold CV (quick: 1 x 5-fold, tiny: 1 x 3-fold)."""
    return cfg.pick(RepeatedCV(3, 1), RepeatedCV(5, 1), RepeatedCV(10, 10))


def table4():
    """Table 4: accuracy on gene-expression sets after WEKA's chi-square top-2000 genes, 10 x 10-fold CV."""
    def chi(clf_fn):
        def build(cfg):
            k = cfg.pick(50, 150, 2000)
            return Pipeline([("scale", MinMaxScaler()), ("chi2", SelectKBest(weka_chi_squared, k=k)),
                             ("clf", clf_fn(cfg))])

        return build

    chi_reading = ("WEKA's chi-square of MDL-discretised genes; genes of equal score (0 for every gene the MDL "
                   "test leaves in one bin) taken from the highest column index down (WEKA's Ranker leaves that "
                   "order to its quicksort)")
    methods = [
        MethodSpec("BN", reason=WEKA + " (Bayesian network)"),
        MethodSpec("NBC", chi(lambda cfg: WekaNaiveBayes()), stand_in="knnweights WekaNaiveBayes (WEKA NaiveBayes's "
                   "NormalEstimator) for WEKA naive Bayes", reading=chi_reading),
        MethodSpec("IB1", chi(lambda cfg: KNNClassifier(1)), stand_in="knnweights 1-NN for WEKA IB1",
                   reading=chi_reading),
        MethodSpec("IB3", chi(lambda cfg: KNNClassifier(3)), stand_in="knnweights 3-NN for WEKA IB3",
                   reading=chi_reading),
        MethodSpec("RBF", reason=WEKA + " (RBF network)"),
        MethodSpec("I-M4E", _im4e_chi, stand_in="knnweights IM4E + ExpectedDistanceClassifier, sigma by internal CV",
                   reading=chi_reading),
    ]
    return TableSpec(PAPER, "im4e_table4", "I-M4E Table 4: accuracy (%) on gene-expression sets, chi-square "
                     "top-2000 genes", "im4e_table4.csv", _micro_ds(), methods,
                     protocol=_micro_protocol,
                     reference="I-M4E", wtl_rule="im4e",
                     caption="Chi-square selection as WEKA's ChiSquaredAttributeEval makes it (each gene "
                             "discretised by Fayyad & Irani's MDL splits, then Pearson's chi-square of bins x "
                             "classes), in each training fold, of the best 2000 genes (--quick: 150 of the "
                             + str(_MICRO_FEATS["quick"]) + " highest-variance genes). full = 10 x 10-fold CV; "
                             "--quick = 1 x 5-fold CV.")


def tables():
    """I-M4E's tables of cells: Tables 5, 3 and 4."""
    return [table5(), table3(), table4()]


@figures_doc
def figures(cfg, out):
    """I-M4E's figures: none (Figs. 1-2 are toy examples without coordinates).

    {figures_params}
    """
    return []


NOTES = ["I-M4E Tables 1-2 (toy examples, Figs. 1-2): the paper gives no point coordinates, so they are quoted in "
         "paper_tables/im4e_table1.csv / im4e_table2.csv and cannot be recomputed.",
         "I-M4E Table 5, Glass (GI): the paper says it keeps each set's two largest classes, which for Glass are "
         "building windows float vs non-float processed (146 samples; 1-NN 80 % in 10-fold CV, 14 points below the "
         "paper's IB1). The paper's baselines match window glass (classes 1-3) vs non-window glass (5-7) instead: "
         "IB1 94.6, IB3 94.9, NBC 90.6, SMO 92.6 in the paper; 1-NN 93.7, 3-NN 93.6, GaussianNB 90.3 and an RBF SVC "
         "94.0 on that split (5 x 10-fold CV, standardised), so GI uses it (214 samples).",
         "I-M4E Tables 3-5, WEKA's classifiers: the stand-ins follow WEKA's defaults, which the paper used. "
         "NaiveBayes (knnweights.reproduce._weka.WekaNaiveBayes: values rounded to each attribute's precision, "
         "sd >= precision / 6, interval probabilities): 97.5 / 82.2 / 83.9 % on EC / IONO / LYM in 2 x 10-fold CV "
         "against the paper's 97.7 / 82.5 / 84.1 (GaussianNB: 93.6 / 88.7 / 73.3). IBk scales attributes by their "
         "training ranges (IB3 on LYM 81.2 % against the paper's 81.19; 85.2 without). SMO scales them to [0, 1], "
         "C = 1, PolyKernel <x, y>^p, RBF gamma = 0.01."]
