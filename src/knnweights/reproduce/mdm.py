"""MDM (Hocke & Martinetz, "Maximum distance minimization for feature weighting", 2014).

The bundled text stops before the experiments (Sec. 3), so there are no paper numbers.
This module runs a small experiment of **our own**, clearly labelled as such: 1-NN
weighted by soft and hard MDM against plain 1-NN (Euclidean) on a few bundled sets, and
the median number of non-zero weights (the paper's claim: MDM reduces the dimensionality
of gene-expression data automatically).
"""

import numpy as np

from ..classifiers import KNNClassifier, WeightedKNN
from ..evaluation import RepeatedCV
from ..weighters import MDM
from ._data import limits_note, loader
from ._figures import figures_doc
from .tables import DatasetSpec, MethodSpec, TableSpec

PAPER = "mdm"
_ROWS = {"tiny": 80, "quick": 250}
_FEATS = {"tiny": 50, "quick": 500}


class _Run:
    """A picklable run_grid callable: fit, 1-NN test accuracy, number of non-zero weights.

    Parameters
    ----------
    kind : {"plain", "soft", "hard"}
        Plain 1-NN, or 1-NN weighted by soft or hard MDM.
    C : float, default=1.0
        Soft MDM's ``C``.
    """

    _algorithm_version = 1
    #: the classes its ``__call__`` uses (their versions are part of its cells' key, see ``_versions``)
    _algorithm_uses = ("knnweights.weighters.mdm:MDM", "knnweights.classifiers._weighted_knn:WeightedKNN",
                       "knnweights.classifiers._weighted_knn:KNNClassifier")

    def __init__(self, kind, C=1.0):
        self.kind, self.C = kind, C

    def __repr__(self):
        return f"MDM-run({self.kind!r}, C={self.C})"

    def __call__(self, X_tr, y_tr, X_te, y_te, X_val=None, y_val=None, random_state=0):
        if self.kind == "plain":
            clf = KNNClassifier(1).fit(X_tr, y_tr)
            return {"accuracy": float(np.mean(clf.predict(X_te) == y_te)), "n_nonzero": int(X_tr.shape[1])}
        clf = WeightedKNN(MDM(soft=self.kind == "soft", C=self.C), 1).fit(X_tr, y_tr)
        w = clf.weighter_.feature_importances_
        return {"accuracy": float(np.mean(clf.predict(X_te) == y_te)), "n_nonzero": int(np.count_nonzero(w > 0))}


def tables():
    """MDM's table of cells: our own experiment (the bundled text has no results)."""
    ds = [DatasetSpec("Sonar", "sonar", loader("sonar", std=True, const=True, max_rows=_ROWS)),
          DatasetSpec("Ionosphere", "ionosphere", loader("ionosphere", std=True, const=True, max_rows=_ROWS)),
          DatasetSpec("Parkinsons", "parkinsons", loader("parkinsons", std=True, const=True, max_rows=_ROWS)),
          DatasetSpec("Pima", "pima_diabetes", loader("pima_diabetes", std=True, max_rows=_ROWS)),
          DatasetSpec("Colon", "colon_alon1999", loader("colon_alon", std=True, max_features=_FEATS),
                      note="gene expression")]
    methods = [MethodSpec("1-NN (Euclidean)", lambda cfg: _Run("plain"), stand_in="sklearn 1-NN"),
               MethodSpec("soft MDM + 1-NN", lambda cfg: _Run("soft", 1.0), stand_in="knnweights MDM(soft=True, C=1)"),
               MethodSpec("soft MDM (C = 0.01) + 1-NN", lambda cfg: _Run("soft", 0.01),
                          stand_in="knnweights MDM(soft=True, C=0.01)"),
               MethodSpec("hard MDM + 1-NN", lambda cfg: _Run("hard"), stand_in="knnweights MDM(soft=False)")]
    return [TableSpec(PAPER, "mdm_ours", "MDM (our own experiment; the paper's results are not in the bundled text): "
                      "1-NN accuracy (%) and non-zero weights", None, ds, methods,
                      protocol=lambda cfg: cfg.pick(RepeatedCV(3, 1), RepeatedCV(5, 2), RepeatedCV(10, 10)),
                      extra_value="n_nonzero", reference="soft MDM + 1-NN", wtl_rule="im4e",
                      caption="OURS, not the paper's: no paper numbers exist in the bundled text. Standardised "
                              "features; 10 x 10-fold CV (--quick: 2 x 5-fold); " + limits_note(_ROWS, _FEATS) +
                              ". W/T/L vs soft MDM with I-M4E's rule (p < 0.01, >= 0.5 points).")]


@figures_doc
def figures(cfg, out):
    """MDM's figures: none.

    {figures_params}
    """
    return []


NOTES = ["MDM: the bundled paper text stops in Sec. 2.2, before the experiments; the MDM table is our own "
         "experiment (no paper numbers to compare with)."]
