"""The gallery examples (examples/plot_*.py) run to the end: the documentation build runs them too."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("plot_*.py"))


@pytest.mark.skipif(not EXAMPLES, reason="examples/ not present (installed package without the sources)")
@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.stem)
def test_example_runs(script, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    env = dict(os.environ, MPLBACKEND="Agg")
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip(), "an example prints what it shows"
