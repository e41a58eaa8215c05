"""Every public name of the API contract (shared/API.md) imports, and the package has no import cycles."""

import importlib
import subprocess
import sys

import pytest

WEIGHTER_NAMES = [
    "IM4E", "LHRelief", "SQPFW", "MDM", "EFW", "ERelief", "Relief", "ReliefF", "SURF", "MultiSURF",
    "IRelief", "Simba", "GFlip", "Logo", "MulRel", "NCADiagonal", "SVMRFE",
]
CLASSIFIER_NAMES = ["ExpectedDistanceClassifier", "HKNN", "CKNN", "WeightedKNN"]
EVALUATION_NAMES = ["win_tie_loss", "corrected_ttest", "stability", "nested_evaluate", "AutoWeightedKNN"]
DATASET_NAMES = ["list_datasets", "load", "make_spiral", "add_irrelevant_features"]


SELECTION_NAMES = ["SelectTopK", "TuRF", "rank_table", "AutoWeightedKNN"]


@pytest.mark.parametrize("name", WEIGHTER_NAMES + SELECTION_NAMES + ["WEIGHTERS", "set_config", "get_config",
                                                                      "config_context"])
def test_top_level_names_import(name):
    import knnweights

    assert getattr(knnweights, name) is not None


def test_every_weighter_is_listed():
    import knnweights

    for name in WEIGHTER_NAMES:
        assert knnweights.WEIGHTERS[name] is getattr(knnweights, name)
    assert set(SELECTION_NAMES) <= set(knnweights.__all__)


@pytest.mark.parametrize(
    "module, names",
    [("knnweights.classifiers", CLASSIFIER_NAMES), ("knnweights.evaluation", EVALUATION_NAMES),
     ("knnweights.datasets", DATASET_NAMES)],
)
def test_subpackage_names_import(module, names):
    mod = importlib.import_module(module)
    for name in names:
        assert callable(getattr(mod, name)), name


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    ["knnweights.engine", "knnweights.weighters", "knnweights.selection", "knnweights._solvers.mdm_lp",
     "knnweights._solvers.lp_ipm",
     "knnweights.evaluation.tuning", "knnweights.evaluation.elimination", "knnweights.evaluation.nested",
     "knnweights.evaluation.grid", "knnweights.reproduce", "knnweights.cli", "knnweights.plotting"],
)
def test_each_module_imports_first_in_a_fresh_interpreter(module):
    # an import cycle shows up as an ImportError when the cycle's second module is imported first
    out = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
