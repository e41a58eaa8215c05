"""Sphinx configuration of the knnweights documentation.

Build (from the repository root, after ``pip install ".[docs]"``)::

    sphinx-build -W -b html docs docs/_build/html

The API reference (``api.rst``) is generated here from each public module's ``__all__``,
so every public name is documented and a new one cannot be forgotten.
"""

import os
import sys
from pathlib import Path

import knnweights

HERE = Path(__file__).parent
ROOT = HERE.parent

project = "knnweights"
author = "the knnweights developers"
copyright = "2026, the knnweights developers"
release = version = knnweights.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

exclude_patterns = ["_build", "results", "figures", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json", "auto_examples/*.md5", "sg_execution_times.rst"]
templates_path = ["_templates"]
html_theme = "pydata_sphinx_theme"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
html_static_path = []

autosummary_generate = True
# no defaults: the class template's ``:members:`` must not be overridden (a ``"members": False`` default hid
# every method of the class pages)
autodoc_default_options = {}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
# the public API's docstrings (every page of api.rst, generated from the sections' ``__all__`` below) are
# validated (numpydoc; a failure is a warning, so ``-W`` fails the build): a docstring (GL08), a summary line
# (SS01), every parameter documented (PR01) with a type (PR04) and a description (PR07), none that does not
# exist (PR02), a space before each parameter's colon (PR10, else the line is not parsed as name : type), a
# Returns section (RT01) that describes each value (RT03)
numpydoc_validation_checks = {"GL08", "SS01", "PR01", "PR02", "PR04", "PR07", "PR10", "RT01", "RT03"}
numpydoc_validation_exclude = {r"\.__init__$", r"\.set_params$", r"\.get_params$", r"\.set_output$",
                               r"\.fit_transform$", r"\.get_metadata_routing$", r"\.set_.*_request$"}
numpydoc_xref_param_type = False
suppress_warnings = ["autosummary.import_cycle"]
nitpicky = False

intersphinx_mapping = {}

os.environ.setdefault("MPLBACKEND", "Agg")
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "show_memory": False,
    "within_subsection_order": "FileNameSortKey",
}

# -- the API reference, generated from __all__ --------------------------------------------
_SECTIONS = [
    ("Weighters", "knnweights", "Every weighter is a scikit-learn transformer (``fit``, ``feature_importances_``, "
     "``ranking_``, ``transform``); ``knnweights.WEIGHTERS`` maps each name to its class."),
    ("Classifiers", "knnweights.classifiers", "The classifiers the papers use, and weighted kNN regression."),
    ("Significance", "knnweights.significance", "P-values for feature weights: the Relief family's pair test, "
     "permutation tests for any weighter, Benjamini-Hochberg q-values, the univariate baselines."),
    ("Evaluation", "knnweights.evaluation", "Repeated CV with inner tuning, paired tests with win/tie/loss, "
     "feature elimination, irrelevant-feature robustness, stability."),
    ("Datasets", "knnweights.datasets", "The bundled datasets (no network) and generators."),
    ("Files", "knnweights.io", "A user's table (CSV / TSV / Parquet / Excel) and PLINK genotypes, read as the "
     "command line reads them."),
    ("Plotting", "knnweights.plotting", "Figures of the evaluation (``pip install knnweights[plot]``)."),
    ("Engine", "knnweights.engine", "The shared neighbour engine's configuration and helpers."),
]


def _public(modname):
    import importlib
    import inspect

    mod = importlib.import_module(modname)
    names = [n for n in getattr(mod, "__all__", []) if not n.startswith("_")]
    out = []
    for n in names:
        obj = getattr(mod, n, None)
        if obj is None or isinstance(obj, (dict, str)) or inspect.ismodule(obj):
            continue  # the engine's compiled-kernel modules are building blocks, not API pages
        home = getattr(obj, "__module__", "") or ""
        if modname == "knnweights" and home.startswith(("knnweights.classifiers", "knnweights.significance",
                                                        "knnweights.evaluation")):
            continue  # documented in its own section (a name re-exported at the top level)
        out.append(n)
    return out


def _write_api():
    lines = ["API reference", "=============", "",
             "Every public name of the package, generated from the modules' ``__all__``.", ""]
    for title, modname, blurb in _SECTIONS:
        names = _public(modname)
        if not names:
            continue
        lines += [title, "-" * len(title), "", blurb, "", f".. currentmodule:: {modname}", "",
                  ".. autosummary::", "   :toctree: generated", ""]
        lines += [f"   {n}" for n in sorted(names, key=str.lower)]
        lines.append("")
    text = "\n".join(lines)
    path = HERE / "api.rst"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


_write_api()
sys.path.insert(0, str(ROOT / "examples"))


# -- docstrings: a name ending in "_" (fitted attributes) is a reference in reStructuredText --
import re  # noqa: E402

_TRAILING = re.compile(r"(?<![\w`\\])([A-Za-z][A-Za-z0-9_]*[A-Za-z0-9])_(?![\w`])")
_HEADER = re.compile(r"^(\s*[A-Za-z_][\w, ]*\s:\s)(.*)$")


def _escape_outside_literals(text):
    parts = re.split(r"(``.*?``|`[^`]*`)", text)
    return "".join(p if i % 2 else _TRAILING.sub(r"\1\\_", p) for i, p in enumerate(parts))


def _escape_trailing_underscores(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        m = _HEADER.match(line)
        lines[i] = m.group(1) + _escape_outside_literals(m.group(2)) if m else _escape_outside_literals(line)


_SKLEARN_GENERATED = re.compile(r"set_\w+_request")


def _skip_sklearn_generated(app, what, name, obj, skip, options):
    """scikit-learn's metadata-routing setters (``set_fit_request``, ...) are made per class at
    import time, so ``:no-inherited-members:`` keeps them; their docstrings are scikit-learn's."""
    return True if _SKLEARN_GENERATED.fullmatch(name) else None


def setup(app):
    app.connect("autodoc-process-docstring", _escape_trailing_underscores, priority=100)
    app.connect("autodoc-skip-member", _skip_sklearn_generated)
