"""The kernel warm-up before repeatable runs (knnweights._warmup)."""

import subprocess

from knnweights import _warmup


def test_ensure_cached_runs_a_child_only_when_the_cache_lacks_the_kernels(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a[0]))
    monkeypatch.delenv("NUMBA_DISABLE_JIT", raising=False)
    for state, ran in ((True, False), (None, False), (False, True)):
        monkeypatch.setattr(_warmup, "kernels_cached", lambda state=state: state)
        calls.clear()
        lines = []
        assert _warmup.ensure_cached(lines.append) is ran
        assert len(calls) == int(ran) and len(lines) == int(ran)
        if ran:  # the child compiles the kernels (and so writes numba's cache)
            assert "compile_kernels" in calls[0][-1]


def test_the_computing_commands_warm_the_cache_first(monkeypatch, capsys):
    from knnweights import cli

    calls = []
    monkeypatch.setattr(_warmup, "ensure_cached", lambda log=None: calls.append(log) or False)
    assert cli.main(["demo", "--dataset", "ionosphere", "--methods", "Relief"]) == 0
    assert len(calls) == 1
    assert cli.main(["datasets"]) == 0
    assert len(calls) == 1  # listing the datasets computes nothing
