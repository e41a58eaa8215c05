"""The Relief family on byte genotype matrices (knnweights.engine.genotypes): the same weights as
the float path, no float copy, sampled instances, feature blocks on a dask cluster."""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

from knnweights import SURF, IRelief, MulRel, MultiSURF, Relief, ReliefF, TuRF
from knnweights.cli import main
from knnweights.engine import config_context, genotypes
from knnweights.exceptions import DataError, SchedulerError
from knnweights.io import read_plink


def _genotypes(n=90, d=30, seed=0, missing=0.0):
    rng = np.random.default_rng(seed)
    X = rng.binomial(2, rng.uniform(0.1, 0.5, d), size=(n, d)).astype(np.uint8)
    X[:, 5] = rng.integers(0, 2, n)  # a feature with range 1 (0/1 only): multiplier 2
    y = (X[:, 0].astype(int) + X[:, 1]) % 3
    M = rng.random((n, d)) < missing
    return X, y, M


def _float(X, M):
    Xf = X.astype(np.float64)
    Xf[M] = np.nan
    return Xf


ESTIMATORS = [
    Relief(), ReliefF(n_neighbors=5), ReliefF(n_neighbors=5, ties="include"), ReliefF(discrete_features=True),
    SURF(), MultiSURF(), MultiSURF(discrete_features="auto"), MultiSURF(normalize=False),
    IRelief(max_iter=3), ReliefF(n_neighbors=3, n_instances=40, random_state=0),
    MultiSURF(n_instances=40, random_state=1), SURF(n_instances=30, random_state=2),
]


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: repr(e))
def test_bytes_give_the_float_weights(est):
    X, y, M = _genotypes()
    a = _fit(est, X.astype(np.float64), y).scores_.copy()
    b = _fit(est, X, y)
    np.testing.assert_allclose(b.scores_, a, rtol=1e-9, atol=1e-12 * np.abs(a).max())
    assert b.n_features_in_ == X.shape[1]
    assert b.ranking_.shape == (X.shape[1],)
    assert not hasattr(b, "feature_names_in_")


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=5), MultiSURF(), SURF(discrete_features=True), Relief(),
                                 IRelief(max_iter=2), MultiSURF(n_instances=40, random_state=0)],
                         ids=lambda e: repr(e))
def test_missing_codes_give_the_float_nan_weights(est):
    X, y, M = _genotypes(missing=0.06, seed=3)
    est.set_params(missing="diff")
    a = _fit(est, _float(X, M), y).scores_.copy()
    X8 = X.astype(np.int8)
    X8[M] = -127  # bed-reader's missing code
    Xu = X.copy()
    Xu[M] = 255
    for Xb in (X8, Xu, np.ma.masked_array(X, M)):
        b = _fit(est, Xb, y).scores_
        np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12 * np.abs(a).max())


def test_missing_code_needs_missing_diff():
    X, y, M = _genotypes(missing=0.05)
    X[M] = 255
    with pytest.raises(ValueError, match="missing='diff'"):
        ReliefF().fit(X, y)


def test_mulrel_refuses_bytes():
    X, y, _ = _genotypes()
    with pytest.raises(NotImplementedError, match="byte"):
        MulRel(n_rounds=1).fit(X, y)


def test_values_above_15_take_the_float_path():
    X, y, _ = _genotypes()
    X[:, 3] *= 40
    np.testing.assert_allclose(MultiSURF().fit(X, y).scores_, MultiSURF().fit(X.astype(float), y).scores_)


def test_no_float_copy_of_the_matrix(monkeypatch):
    """Beyond the n x n distances, memory is a few feature blocks: far less than a float copy of X."""
    monkeypatch.setattr(genotypes, "_BLOCK_BYTES", 2**20)
    rng = np.random.default_rng(0)
    n, d = 150, 100_000
    X = rng.integers(0, 3, size=(n, d), dtype=np.uint8)
    y = np.repeat([0, 1, 2], n // 3)
    MultiSURF().fit(X[:, :300], y)  # compile outside the measurement
    ReliefF().fit(X[:, :300], y)
    for est in (MultiSURF(), ReliefF()):
        tracemalloc.start()
        est.fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < n * d * 8 / 4, f"{type(est).__name__} peak {peak / 2**20:.1f} MiB"


def test_row_chunks_and_feature_blocks_give_the_same_weights(monkeypatch):
    X, y, _ = _genotypes(n=120, d=700)
    ref = MultiSURF().fit(X, y).scores_
    refk = ReliefF().fit(X, y).scores_
    monkeypatch.setattr(genotypes, "_BLOCK_BYTES", 1)  # blocks of 256 features
    with config_context(working_memory=0.3):  # row chunks of the distance matrix
        np.testing.assert_allclose(MultiSURF().fit(X, y).scores_, ref, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ReliefF().fit(X, y).scores_, refk, rtol=1e-12, atol=1e-15)


def test_n_jobs_gives_the_same_weights():
    X, y, _ = _genotypes(n=100, d=300)
    ref = MultiSURF().fit(X, y).scores_
    with config_context(n_jobs=1):
        np.testing.assert_array_equal(MultiSURF().fit(X, y).scores_, ref)


def test_turf_over_bytes_as_over_floats():
    X, y, _ = _genotypes(n=100, d=40)
    a = TuRF(MultiSURF(), pct=0.25, n_features_to_select=4).fit(X, y)
    b = TuRF(MultiSURF(), pct=0.25, n_features_to_select=4).fit(X.astype(float), y)
    np.testing.assert_array_equal(a.ranking_, b.ranking_)
    assert set(a.get_support(indices=True)) >= {0, 1}


# -- n_instances ---------------------------------------------------------------------------------------------------
def test_n_instances_at_n_is_exact_and_seeded_draws_repeat():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 6))
    y = (X[:, 0] > 0).astype(int)
    for cls in (Relief, ReliefF, SURF, MultiSURF):
        exact = cls().fit(X, y).scores_
        np.testing.assert_allclose(cls(n_instances=500).fit(X, y).scores_, exact)
        a = cls(n_instances=30, random_state=3).fit(X, y).scores_
        b = cls(n_instances=30, random_state=3).fit(X, y).scores_
        np.testing.assert_array_equal(a, b)
        assert not np.allclose(a, exact)


def test_multisurf_n_instances_is_the_mean_of_per_instance_margins():
    """Scoring m drawn instances = the mean, over those rows, of the exact fit's per-instance margins
    (each instance's threshold and neighbours use all n rows)."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 5))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = MultiSURF(n_instances=20, random_state=0).fit(X, y)
    rows = est.instances_
    Z = (X - X.min(0)) / np.ptp(X, 0)
    D = np.abs(Z[:, None] - Z[None]).sum(-1)
    z = np.zeros(5)
    for i in rows:
        dd = np.delete(D[i], i)
        T = dd.mean() - dd.std() / 2
        near = (D[i] < T) & (np.arange(60) != i)
        hit, miss = near & (y == y[i]), near & (y != y[i])
        diff = np.abs(Z[i] - Z)
        if hit.any():
            z -= diff[hit].mean(0)
        if miss.any():
            z += diff[miss].mean(0)
    np.testing.assert_allclose(est.scores_, z / rows.size, rtol=1e-10)
    assert est.thresholds_.shape == (20,)


def test_n_iter_and_n_instances_together_refused():
    X, y, _ = _genotypes()
    with pytest.raises(ValueError, match="n_iter and n_instances"):
        ReliefF(n_iter=5, n_instances=5).fit(X.astype(float), y)


# -- dask ------------------------------------------------------------------------------------------------------------
def test_dask_cluster_gives_the_same_weights():
    distributed = pytest.importorskip("dask.distributed")
    X, y, M = _genotypes(n=80, d=200, missing=0.03)
    Xc = X.copy()
    Xm = X.copy()
    Xm[M] = 255
    ref = MultiSURF().fit(Xc, y).scores_
    refk = ReliefF(missing="diff").fit(Xm, y).scores_
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl:
        with config_context(scheduler=cl.scheduler_address):
            np.testing.assert_array_equal(MultiSURF().fit(Xc, y).scores_, ref)
            np.testing.assert_allclose(ReliefF(missing="diff").fit(Xm, y).scores_, refk, rtol=1e-12, atol=1e-15)


def test_unreachable_scheduler_is_a_clear_error():
    pytest.importorskip("dask.distributed")
    X, y, _ = _genotypes()
    with config_context(scheduler="tcp://127.0.0.1:9"), pytest.raises(SchedulerError, match="cannot reach"):
        MultiSURF().fit(X, y)


# -- PLINK ------------------------------------------------------------------------------------------------------------
def _write_bed(tmp_path, n=60, d=40, seed=5):
    bed_reader = pytest.importorskip("bed_reader")
    rng = np.random.default_rng(seed)
    G = rng.integers(0, 3, (n, d)).astype(np.float32)
    G[rng.random((n, d)) < 0.02] = np.nan
    G[:, 7] = rng.integers(0, 3, n)
    G[:, 21] = rng.integers(0, 3, n)
    y = (G[:, 7].astype(int) + G[:, 21].astype(int) >= 2) + 1  # .fam: 1 control, 2 case
    pheno = [str(v) for v in y]
    pheno[0] = "-9"  # no phenotype: left out
    path = tmp_path / "study.bed"
    bed_reader.to_bed(path, G, properties={"sid": [f"rs{100 + i}" for i in range(d)], "pheno": pheno,
                                            "iid": [f"i{i}" for i in range(n)], "fid": [f"f{i}" for i in range(n)]})
    return path, G, y


def test_read_plink_gives_the_genotype_bytes(tmp_path):
    path, G, y = _write_bed(tmp_path)
    p = read_plink(path)
    assert p.X.dtype == np.int8 and p.X.shape == (59, 40)
    np.testing.assert_array_equal(p.X, np.nan_to_num(G[1:], nan=-127).astype(np.int8))
    np.testing.assert_array_equal(p.y, y[1:])
    assert p.snps[:2] == ["rs100", "rs101"] and p.samples[0] == "i1"
    assert "left out" in p.messages[0]
    # lazy: the file read by column range gives the same weights as the matrix
    q = read_plink(str(path)[:-4], lazy=True)
    a = MultiSURF(missing="diff").fit(p.X, p.y).scores_
    np.testing.assert_allclose(MultiSURF(missing="diff").fit(q.X, q.y).scores_, a, rtol=1e-12, atol=1e-15)
    Gf = G[1:].astype(np.float64)
    np.testing.assert_allclose(MultiSURF(missing="diff").fit(Gf, y[1:]).scores_, a, rtol=1e-9, atol=1e-15)


def test_read_plink_pheno_file(tmp_path):
    path, G, y = _write_bed(tmp_path)
    ph = tmp_path / "pheno.txt"
    ph.write_text("FID IID age disease\n" + "".join(f"f{i} i{i} {30 + i} {'NA' if i == 2 else i % 2}\n"
                                                   for i in range(60)))
    p = read_plink(path, pheno=ph, pheno_col="disease")
    assert p.X.shape[0] == 59  # i2 ("NA") unknown; 0/1 coding: "0" is a value
    np.testing.assert_array_equal(p.y, [i % 2 for i in range(60) if i != 2])
    with pytest.raises(DataError, match="no phenotype column 'diseas'; did you mean 'disease'"):
        read_plink(path, pheno=ph, pheno_col="diseas")


def test_cli_ranks_the_snps_of_a_bed_file(tmp_path, capsys):
    path, G, y = _write_bed(tmp_path, n=120, seed=6)
    out = tmp_path / "ranks.csv"
    assert main(["rank", str(path), "--out", str(out), "--top", "3"]) == 0
    t = pd.read_csv(out)
    assert list(t.columns[:4]) == ["feature", "MultiSURF_weight", "MultiSURF_score", "MultiSURF_rank"]
    assert set(t["feature"].head(2)) == {"rs107", "rs121"}
    assert "rs107" in capsys.readouterr().out
    assert main(["rank", str(path), "--methods", "Simba"]) == 2
    assert "cannot score genotype bytes" in capsys.readouterr().err


def test_bed_file_blocks_read_by_the_dask_workers(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    path, G, y = _write_bed(tmp_path, n=70, d=60, seed=8)
    p = read_plink(path)
    ref = MultiSURF(missing="diff").fit(p.X, p.y).scores_
    lazy = read_plink(path, lazy=True)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl:
        with config_context(scheduler=cl.scheduler_address):
            np.testing.assert_allclose(MultiSURF(missing="diff").fit(lazy.X, lazy.y).scores_, ref, rtol=1e-12,
                                       atol=1e-15)


def test_the_callers_genotype_array_is_left_as_it_was():
    X = np.array([[0, 1, -127], [2, -127, 1], [1, 0, 2], [2, 2, 0]], dtype=np.int8)
    before = X.copy()
    MultiSURF(missing="diff").fit(X, np.array([0, 1, 0, 1]))
    np.testing.assert_array_equal(X, before)


def test_cli_bad_phenotypes_are_one_line_and_status_2(tmp_path, capsys):
    path, G, y = _write_bed(tmp_path)
    ph = tmp_path / "pheno.txt"
    ph.write_text("FID IID one bmi\n" + "".join(f"f{i} i{i} 1 {20 + 0.37 * i:.2f}\n" for i in range(60)))
    for extra, words in ((["--pheno", str(ph), "--pheno-col", "one"], "one value"),
                         (["--pheno", str(ph), "--pheno-col", "0"], "1-based"),
                         (["--target-type", "continuous"], "not for a PLINK .bed file")):
        assert main(["rank", str(path), *extra]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err


def test_bytes_refuse_a_survival_outcome_with_one_message():
    X = np.array([[0, 1, 2], [2, 1, 0], [1, 0, 2], [2, 2, 0], [0, 0, 1], [1, 2, 2]], dtype=np.uint8)
    y = np.array([(True, 1.0), (False, 2.0), (True, 3.0), (True, 4.0), (False, 5.0), (True, 6.0)],
                 dtype=[("event", bool), ("time", float)])
    for est in (ReliefF(n_neighbors=1, pvalues=True), MultiSURF()):
        with pytest.raises(NotImplementedError, match="for a survival outcome give X as floats"):
            est.fit(X, y)
