"""The same weights whether the kernels were compiled in this process or loaded from numba's cache, on 1 or 2
threads, with a kernel's tasks in one part or in parts on threads: the engine's kernels sum every distance in one
fixed order (no reassociation), so nothing a fit decides (an argmin, a tie, a threshold) depends on where or how
its kernels were compiled or run."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.slow

SCRIPT = r"""
import json, sys
import numpy as np
if sys.argv[1:] == ["threaded"]:  # every kernel call runs in parts on the thread pool, however small
    from knnweights.engine import jit
    jit.SERIAL_WORK = 0
from knnweights import IRelief, LHRelief, MultiSURF, ReliefF, SQPFW, Simba
rng = np.random.RandomState(0)
X = rng.randn(70, 12)
y = (X[:, 0] - X[:, 1] + 0.3 * rng.randn(70) > 0).astype(int)
out = {}
for est in (ReliefF(n_neighbors=5), MultiSURF(), IRelief(), LHRelief(max_iter=50), SQPFW(theta=1.0),
            Simba(random_state=0)):
    w = est.fit(X, y).feature_importances_
    out[type(est).__name__] = [float(v).hex() for v in w]
json.dump(out, sys.stdout)
"""


def _weights(cache, threads, *args):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS="1")
    res = subprocess.run([sys.executable, "-c", SCRIPT, *args], env=env, capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout)


def test_compiled_in_process_or_loaded_from_cache_and_any_thread_count_give_the_same_bits(tmp_path):
    cache = tmp_path / "numba-cache"
    compiled = _weights(cache, 2)  # an empty cache: every kernel compiled in the process
    assert any(cache.rglob("*.nbi")), "numba wrote no cache"
    loaded = _weights(cache, 2)  # every kernel loaded from the cache
    one_thread = _weights(cache, 1)
    threaded = _weights(cache, 2, "threaded")  # every call in parts on two threads
    assert compiled == loaded == one_thread == threaded
    assert any(cache.rglob("*upper_phi-*.nbi")), "the kernels were cached"
    assert all(np.isfinite([float.fromhex(v) for v in w]).all() for w in compiled.values())
