"""What a first fit compiles stays within its recorded budget.

``benchmarks/first_fits.py --budget`` fits every weighter on Sonar in one fresh process with an
empty numba cache and counts, per method, the compilations and the bytes of LLVM IR numba's
lowering hands to LLVM: numbers that do not depend on the machine's speed or load, and that
follow the compile time of a user's first fit.  ``benchmarks/compile_budget.json`` records them;
a change that makes a method compile more than its budget + 10 % fails here.  A change that
compiles less lowers the budget: rerun ``python benchmarks/first_fits.py --budget`` and commit its
output as the new ``compile_budget.json``.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "first_fits.py"
BUDGET = ROOT / "benchmarks" / "compile_budget.json"

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="needs the repository's benchmarks/ (a source checkout)")


def over_budget(measured, budget, slack=0.10):
    """Lines naming each method and count above ``budget`` by more than ``slack``, and methods
    measured without a budget."""
    lines = []
    for name, row in measured.items():
        if name not in budget:
            lines.append(f"{name}: no budget recorded")
            continue
        for key, value in row.items():
            limit = budget[name][key] * (1 + slack)
            if value > limit:
                lines.append(f"{name}: {key} {value} > budget {budget[name][key]} + {slack:.0%}")
    return lines


def test_over_budget_names_what_grew():
    budget = {"A": {"compilations": 10, "ir_bytes": 1000}}
    assert over_budget({"A": {"compilations": 11, "ir_bytes": 1100}}, budget) == []
    assert over_budget({"A": {"compilations": 12, "ir_bytes": 1000}}, budget) == [
        "A: compilations 12 > budget 10 + 10%"]
    assert over_budget({"A": {"compilations": 1, "ir_bytes": 1101}}, budget) == ["A: ir_bytes 1101 > budget 1000 + 10%"]
    assert over_budget({"B": {"compilations": 0, "ir_bytes": 0}}, budget) == ["B: no budget recorded"]


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_first_fits_compile_within_budget():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["NUMBA_NUM_THREADS"] = "2"  # the threaded twins compile only where a call may use threads
    out = subprocess.run([sys.executable, str(SCRIPT), "--budget"], env=env, capture_output=True, text=True,
                         timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    measured = json.loads(out.stdout)
    budget = json.loads(BUDGET.read_text())
    assert set(measured) == set(budget), "weighters and budgets differ: rerun first_fits.py --budget"
    parfors = {name: row.pop("parfor_helpers") for name, row in measured.items()}
    assert not any(parfors.values()), f"a kernel was made a parfor (an array expression or reduction in it): {parfors}"
    problems = over_budget(measured, budget)
    assert not problems, "first fits compile more than their budget:\n" + "\n".join(problems)
