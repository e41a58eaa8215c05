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


def test_a_cache_with_only_some_kernels_is_warmed_up(monkeypatch, tmp_path):
    # a script that fitted one method cached that method's kernels (the main pairwise one among
    # them) and nothing else: only the warm-up's stamp for these sources says every kernel is there
    monkeypatch.setattr(_warmup, "_main_kernel_indexed", lambda: True)
    stamp = tmp_path / f"knnweights-warm-{_warmup._sources_key()}.stamp"
    monkeypatch.setattr(_warmup, "_stamp_path", lambda: str(stamp))
    (tmp_path / "knnweights-warm-0123456789abcdef.stamp").write_text("older sources\n")
    assert _warmup.kernels_cached() is False
    _warmup._write_stamp()
    assert _warmup.kernels_cached() is True
    assert list(tmp_path.iterdir()) == [stamp]
    monkeypatch.setattr(_warmup, "_main_kernel_indexed", lambda: False)  # the kernel's source changed
    assert _warmup.kernels_cached() is False


def test_the_sources_key_follows_the_installed_files(monkeypatch, tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(_warmup, "__file__", str(pkg / "_warmup.py"))
    key = _warmup._sources_key()
    assert _warmup._sources_key() == key
    (pkg / "a.py").write_text("x = 12\n")
    assert _warmup._sources_key() != key
