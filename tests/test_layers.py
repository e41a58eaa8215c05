"""The package's layers (docs/guide/architecture.rst): each imports only the layers below it.

import-linter checks the contract in ``pyproject.toml`` on the import graph of the source tree,
function-level imports included; there is no exceptions list.
"""

import ast
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "src", "knnweights")

#: what a function-level import may bring in: optional dependencies only (the reason: their extras)
OPTIONAL = ("matplotlib", "dask", "distributed", "torch", "bed_reader", "pyarrow", "openpyxl", "skrebate",
            "metric_learn", "psutil", "threadpoolctl")


def test_each_layer_imports_only_the_layers_below_it():
    pytest.importorskip("importlinter")
    proc = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command; "
                           "lint_imports_command()", "--no-cache", os.path.join(ROOT, "pyproject.toml")],
                          cwd=os.path.join(ROOT, "src"), capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 kept, 0 broken" in proc.stdout


def _local_imports():
    for dirpath, _, files in os.walk(SRC):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            tree = ast.parse(open(path, encoding="utf-8").read())
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for inner in ast.walk(node):
                        if isinstance(inner, ast.Import):
                            names = [a.name for a in inner.names]
                        elif isinstance(inner, ast.ImportFrom):
                            names = ["." * inner.level + (inner.module or "")]
                        else:
                            continue
                        yield os.path.relpath(path, SRC), inner.lineno, names


def test_function_level_imports_are_optional_dependencies_only():
    bad = [(p, line, names) for p, line, names in _local_imports()
           if not all(n.split(".")[0] in OPTIONAL for n in names)]
    assert not bad, bad
