"""The Relief family's ``pvalues_`` (and covariate-adjusted ones) on genotype bytes: the float copy's
p-values from the byte encoding, the PLINK covariate file, ``knnweights rank study.bed --pvalues --covar``."""

import tracemalloc
import warnings

import numpy as np
import pandas as pd
import pytest

from knnweights import SURF, MultiSURF, Relief, ReliefF
from knnweights.cli import main
from knnweights.engine import genotypes
from knnweights.exceptions import DataError
from knnweights.io import read_plink, read_plink_covariates
from knnweights.weighters import _relief_pvalues


def _genotypes(n=90, d=30, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.binomial(2, rng.uniform(0.1, 0.5, d), size=(n, d)).astype(np.uint8)
    X[:, 5] = rng.integers(0, 2, n)  # a SNP seen as 0/1 only: range 1, multiplier 2
    X[:, 9] = 1  # a constant SNP: p = 1
    y = (X[:, 0].astype(int) + X[:, 1]) % classes
    return X, y


def _fit(est, X, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y, **kw)


PVALUE_ESTIMATORS = [
    ReliefF(n_neighbors=5, pvalues=True), MultiSURF(pvalues=True), SURF(pvalues=True), Relief(pvalues=True),
    ReliefF(n_neighbors=4, pvalues=True, genotype_diff="mismatch"),
    MultiSURF(pvalues=True, genotype_diff="allele-sharing"), MultiSURF(pvalues=True, genotype_diff="mismatch"),
    ReliefF(n_neighbors=3, pvalues=True, genotype_diff="additive", n_instances=50, random_state=0),
    MultiSURF(pvalues=True, discrete_features="auto"), ReliefF(pvalues="pseudo-t"), MultiSURF(pvalues="pseudo-t"),
]


@pytest.mark.parametrize("est", PVALUE_ESTIMATORS, ids=repr)
@pytest.mark.parametrize("classes", [2, 3])
def test_bytes_pvalues_equal_the_float_copys(est, classes):
    X, y = _genotypes(classes=classes)
    a = _fit(est, X.astype(np.float64), y)
    p, q = a.pvalues_.copy(), a.qvalues_.copy()
    assert p.min() < 1e-4 and p[9] == 1.0  # the test has something to find, and a constant SNP gets 1
    for Xb in (X, X.astype(np.int8)):
        b = _fit(est, Xb, y)
        np.testing.assert_allclose(b.pvalues_, p, rtol=1e-12, atol=0)
        np.testing.assert_allclose(b.qvalues_, q, rtol=1e-12, atol=0)
        assert b.target_type_ == "classes"


@pytest.mark.parametrize("est, target", [
    *[(est, target) for est in (ReliefF(n_neighbors=5, pvalues=True, pvalue_null="feature"),
                                MultiSURF(pvalues=True, pvalue_null="feature", genotype_diff="mismatch"),
                                SURF(pvalues=True, pvalue_null="feature", genotype_diff="allele-sharing"))
      for target in ("classes", "continuous")],
    (Relief(pvalues=True, pvalue_null="feature"), "classes")], ids=repr)
def test_bytes_feature_null_equals_the_float_copys(est, target):
    """The feature-permutation null on bytes: each block's difference sums from its encoding (a 0/1 SNP,
    a constant one, levels of the mismatch reading) give the float copy's p-values."""
    X, y = _genotypes(classes=3)
    if target == "continuous":
        y = X[:, 0] + 0.5 * X[:, 1] + np.random.default_rng(1).normal(0, 0.3, X.shape[0])
    a = _fit(est, X.astype(np.float64), y)
    assert a.pvalues_.min() < 1e-3 and a.pvalues_[9] == 1.0
    b = _fit(est, X, y)
    np.testing.assert_allclose(b.pvalues_, a.pvalues_, rtol=1e-12, atol=0)
    outcome = _fit(type(est)(**{**est.get_params(), "pvalue_null": "outcome"}), X, y).pvalues_
    assert not np.allclose(outcome, b.pvalues_)  # the option reached the byte path


def test_feature_blocks_give_the_same_pvalues(monkeypatch):
    """Byte blocks of 256 SNPs read in pair blocks of 7 (blocks that do not divide each other)."""
    X, y = _genotypes(n=80, d=600, seed=2)
    ref = _fit(MultiSURF(pvalues=True), X, y).pvalues_
    refk = _fit(ReliefF(pvalues=True), X, y).pvalues_
    monkeypatch.setattr(genotypes, "_BLOCK_BYTES", 1)
    init = _relief_pvalues.PairMoments.__init__
    monkeypatch.setattr(_relief_pvalues.PairMoments, "__init__",
                        lambda self, data, triangle_work=3e8, feature_block=128: init(self, data, triangle_work, 7))
    np.testing.assert_allclose(_fit(MultiSURF(pvalues=True), X, y).pvalues_, ref, rtol=1e-12, atol=0)
    np.testing.assert_allclose(_fit(ReliefF(pvalues=True), X, y).pvalues_, refk, rtol=1e-12, atol=0)


def test_values_above_15_take_the_float_path_with_their_pvalues():
    X, y = _genotypes()
    X[:, 3] *= 40
    yc = X[:, 0] + np.linspace(0.0, 1.0, y.size)
    for target in (y, yc):
        a = _fit(MultiSURF(pvalues=True), X.astype(np.float64), target).pvalues_.copy()
        np.testing.assert_allclose(_fit(MultiSURF(pvalues=True), X, target).pvalues_, a, rtol=1e-12, atol=0)


def test_missing_calls_are_refused_as_on_floats():
    X, y = _genotypes()
    X8 = X.astype(np.int8)
    X8[3, 4] = -127
    Xf = X.astype(np.float64)
    Xf[3, 4] = np.nan
    for Xb in (X8, Xf):
        with pytest.raises(NotImplementedError, match="not defined with missing values"):
            _fit(MultiSURF(pvalues=True, missing="diff"), Xb, y)


CONTINUOUS_ESTIMATORS = [
    ReliefF(n_neighbors=5, pvalues=True, random_state=0), MultiSURF(pvalues=True, random_state=0),
    SURF(pvalues=True, random_state=0), Relief(pvalues=True, random_state=0),
    ReliefF(pvalues=True, genotype_diff="mismatch", rank_sigma=2.0, random_state=0),
    MultiSURF(pvalues=True, genotype_diff="allele-sharing", random_state=0), ReliefF(pvalues="pseudo-t"),
    ReliefF(n_neighbors=4, pvalues=True, n_instances=40, random_state=0),
]


@pytest.mark.parametrize("est", CONTINUOUS_ESTIMATORS, ids=repr)
def test_continuous_target_on_bytes_equals_the_float_copy(est):
    """RReliefF / the radius rule on the byte diff: the float copy's weights (another summation order: rtol
    1e-12 of the largest), p-values and covariate-adjusted p-values."""
    X, _ = _genotypes(seed=5)
    rng = np.random.default_rng(2)
    y = X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=X.shape[0]) * 0.5
    C = np.column_stack([rng.normal(size=X.shape[0]) + y, rng.normal(size=X.shape[0])])
    a = _fit(est, X.astype(np.float64), y)
    s, p = a.scores_.copy(), a.pvalues_.copy()
    pc = _fit(est, X.astype(np.float64), y, covariates=C).pvalues_.copy()
    assert p.min() < 0.01 and p[9] == 1.0
    b = _fit(est, X, y)
    assert b.target_type_ == "continuous" and not hasattr(b, "classes_")
    np.testing.assert_allclose(b.scores_, s, rtol=0, atol=1e-12 * np.abs(s).max())
    np.testing.assert_allclose(b.pvalues_, p, rtol=1e-12, atol=0)
    np.testing.assert_allclose(_fit(est, X, y, covariates=C).pvalues_, pc, rtol=1e-12, atol=0)


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=5), MultiSURF(), Relief()], ids=repr)
def test_continuous_target_with_missing_calls_equals_the_float_nan_weights(est):
    X, _ = _genotypes(seed=6)
    rng = np.random.default_rng(3)
    y = X[:, 2] + rng.normal(size=X.shape[0])
    M = rng.random(X.shape) < 0.05
    X8 = X.astype(np.int8)
    X8[M] = -127
    Xf = X.astype(np.float64)
    Xf[M] = np.nan
    est.set_params(missing="diff")
    s = _fit(est, Xf, y).scores_.copy()
    np.testing.assert_allclose(_fit(est, X8, y).scores_, s, rtol=0, atol=1e-12 * np.abs(s).max())


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=5, pvalues=True, random_state=3),
                                 MultiSURF(pvalues=True, random_state=1), MultiSURF(pvalues="pseudo-t"),
                                 ReliefF(pvalues=True, genotype_diff="mismatch", random_state=4)], ids=repr)
def test_bytes_covariate_pvalues_equal_the_float_copys(est):
    X, y = _genotypes(n=80, d=25, seed=4, classes=2)
    rng = np.random.default_rng(1)
    C = pd.DataFrame({"pc1": rng.normal(size=80) + y, "pc2": rng.normal(size=80), "sex": rng.choice(["m", "f"], 80)})
    p = _fit(est, X.astype(np.float64), y, covariates=C).pvalues_.copy()
    assert p.min() < 0.01 and np.unique(p).size > 3
    np.testing.assert_allclose(_fit(est, X, y, covariates=C).pvalues_, p, rtol=1e-12, atol=0)
    with pytest.raises(NotImplementedError, match="neighbors_with_covariates"):
        est.fit(X, y, covariates=C, neighbors_with_covariates=True)


def test_pvalues_without_a_float_copy_of_the_matrix(monkeypatch):
    """The peak memory grows with the SNPs by the per-SNP results, far less than a float copy (8 n bytes a SNP)."""
    monkeypatch.setattr(genotypes, "_BLOCK_BYTES", 2**20)
    rng = np.random.default_rng(0)
    n = 120
    X = rng.integers(0, 3, size=(n, 40_000), dtype=np.uint8)
    y = np.repeat([0, 1], n // 2)
    C = rng.normal(size=(n, 3))
    est = ReliefF(n_neighbors=3, pvalues=True, random_state=0)
    est.fit(X[:, :300], y, covariates=C)  # compile outside the measurement
    peaks = []
    for d in (10_000, 40_000):
        Xd = np.ascontiguousarray(X[:, :d])
        tracemalloc.start()
        est.fit(Xd, y, covariates=C)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert est.pvalues_.shape == (d,)
    growth = (peaks[1] - peaks[0]) / 30_000
    assert growth < n * 8 / 4, f"{growth:.0f} bytes a SNP"


# -- PLINK: the covariate file and the command line ------------------------------------------------------------------
def _write_bed(tmp_path, n=80, d=30, seed=7):
    bed_reader = pytest.importorskip("bed_reader")
    rng = np.random.default_rng(seed)
    G = rng.binomial(2, rng.uniform(0.1, 0.5, d), size=(n, d)).astype(np.float32)
    y = (G[:, 3] + G[:, 11] >= 2).astype(int) + 1  # .fam: 1 control, 2 case
    pheno = [str(v) for v in y]
    pheno[0] = "-9"  # no phenotype: left out
    path = tmp_path / "study.bed"
    bed_reader.to_bed(path, G, properties={"sid": [f"rs{100 + i}" for i in range(d)], "pheno": pheno,
                                            "iid": [f"i{i}" for i in range(n)], "fid": [f"f{i % 5}" for i in range(n)]})
    pcs = np.column_stack([rng.normal(size=n) + y, rng.normal(size=n), rng.normal(size=n)])
    return path, G, y, pcs


def _write_covar(tmp_path, pcs, header=True, order=None, edit=None):
    n = pcs.shape[0]
    order = np.arange(n) if order is None else order
    lines = [f"f{i % 5} i{i} " + " ".join(f"{v:.6f}" for v in pcs[i]) for i in order]
    if edit:
        lines = [edit(ln) for ln in lines]
    path = tmp_path / "pcs.txt"
    path.write_text(("FID IID PC1 PC2 PC3\n" if header else "") + "\n".join(lines) + "\n")
    return path


def test_read_plink_covariates_matches_by_fid_and_iid(tmp_path):
    path, G, y, pcs = _write_bed(tmp_path)
    cov = _write_covar(tmp_path, pcs, order=np.random.default_rng(0).permutation(80))
    p = read_plink(path, covar=cov, covar_name="PC1,PC3")
    assert list(p.covariates.columns) == ["PC1", "PC3"] and list(p.covariates.index) == p.samples
    np.testing.assert_allclose(p.covariates.to_numpy(), pcs[1:][:, [0, 2]], atol=1e-6)
    r = read_plink(path, covar=cov, covar_name="PC2-PC3").covariates
    assert list(r.columns) == ["PC2", "PC3"]
    plain = _write_covar(tmp_path, pcs, header=False)
    samples = [(f"f{i % 5}", f"i{i}") for i in (4, 2)]
    got = read_plink_covariates(plain, samples)
    assert list(got.columns) == ["COV1", "COV2", "COV3"]
    np.testing.assert_allclose(got.to_numpy(), pcs[[4, 2]], atol=1e-6)
    with pytest.raises(DataError, match="no line, e.g. FID f1 IID i5"):  # the IID alone does not match
        read_plink_covariates(plain, [("f1", "i5")])


def _first_of_i7(value):
    """An edit of the covariate lines: the first covariate of sample i7 replaced by ``value``."""
    def edit(ln):
        f = ln.split()
        return " ".join(f[:2] + [value] + f[3:]) if f[1] == "i7" else ln
    return edit


@pytest.mark.parametrize("edit, words", [
    (_first_of_i7("-9"), "'PC1' is unknown (-9) for FID f2 IID i7"),
    (_first_of_i7("NA"), "'PC1' is unknown (NA)"),
    (_first_of_i7("male"), "'PC1' is not numeric ('male'"),
    (lambda ln: "" if " i9 " in ln else ln, "1 sample(s) of the genotypes have no line, e.g. FID f4 IID i9"),
])
def test_bad_covariate_files_are_one_line_and_status_2(tmp_path, capsys, edit, words):
    path, G, y, pcs = _write_bed(tmp_path)
    cov = _write_covar(tmp_path, pcs, edit=edit)
    with pytest.raises(DataError, match="pcs.txt: "):
        read_plink(path, covar=cov)
    assert main(["rank", str(path), "--pvalues", "--covar", str(cov)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_cli_quantitative_phenotype_equals_the_librarys_by_snp_name(tmp_path):
    path, G, y, pcs = _write_bed(tmp_path)
    rng = np.random.default_rng(9)
    bmi = 20 + 2.0 * G[:, 3] + rng.normal(size=G.shape[0])
    ph = tmp_path / "pheno.txt"
    ph.write_text("FID IID bmi\n" + "".join(f"f{i % 5} i{i} {bmi[i]:.4f}\n" for i in range(G.shape[0])))
    cov = _write_covar(tmp_path, pcs)
    out = tmp_path / "ranks.csv"
    assert main(["rank", str(path), "--pheno", str(ph), "--pvalues", "--covar", str(cov), "--out", str(out),
                 "--methods", "ReliefF"]) == 0
    t = pd.read_csv(out).set_index("feature")
    p = read_plink(path, pheno=ph, covar=cov)
    assert p.y.dtype.kind == "f"
    e = _fit(ReliefF(pvalues=True, missing="diff", random_state=0), p.X, p.y, covariates=p.covariates)
    assert e.target_type_ == "continuous"
    names = np.array(p.snps)
    np.testing.assert_allclose(t.loc[names, "ReliefF_score"].to_numpy(), e.scores_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(t.loc[names, "ReliefF_p"].to_numpy(), e.pvalues_, rtol=1e-12, atol=0)


def test_cli_pvalues_with_unknown_calls_say_the_fix(tmp_path, capsys):
    bed_reader = pytest.importorskip("bed_reader")
    rng = np.random.default_rng(4)
    G = rng.integers(0, 3, (40, 12)).astype(np.float32)
    G[3, 5] = np.nan
    path = tmp_path / "calls.bed"
    bed_reader.to_bed(path, G, properties={"pheno": [str(1 + i % 2) for i in range(40)]})
    assert main(["rank", str(path), "--pvalues", "--methods", "ReliefF", "--out", str(tmp_path / "r.csv")]) == 2
    text = " ".join(capsys.readouterr().err.split())
    assert "1 SNP(s) have unknown calls; drop or impute them (plink --geno 0)" in text and "Traceback" not in text


def test_cli_flags_are_checked(tmp_path, capsys):
    path, G, y, pcs = _write_bed(tmp_path)
    cov = _write_covar(tmp_path, pcs)
    for extra, words in ((["--covar", str(cov)], "add --pvalues"),
                         (["--pvalues", "--covar", str(cov), "--covar-name", "PC9"], "no covariate column 'PC9'"),
                         (["--pvalues", "--covariates", "PC1"], "--covar FILE"),
                         (["--covar-name", "PC1"], "add --covar FILE"),
                         (["--pvalues", "--pvalue-null", "feature", "--covar", str(cov)], "--pvalue-null feature with "
                                                                                          "--covar")):
        assert main(["rank", str(path), *extra]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err


def test_cli_pvalues_and_covar_equal_the_librarys_by_snp_name(tmp_path):
    path, G, y, pcs = _write_bed(tmp_path)
    cov = _write_covar(tmp_path, pcs, order=np.arange(80)[::-1])
    p = read_plink(path, covar=cov, covar_name="PC1-PC2")
    names = np.array(p.snps)
    for extra, kw, params in (([], {}, {}),
                              (["--covar", str(cov), "--covar-name", "PC1-PC2"], {"covariates": p.covariates},
                               {"random_state": 0}),
                              (["--padj", "holm", "--genotype-diff", "mismatch"], {},
                               {"padj": "holm", "genotype_diff": "mismatch"}),
                              (["--pvalue-null", "feature"], {}, {"pvalue_null": "feature"})):
        out = tmp_path / "ranks.csv"
        assert main(["rank", str(path), "--pvalues", "--out", str(out), "--methods", "ReliefF,MultiSURF",
                     *extra]) == 0
        t = pd.read_csv(out).set_index("feature")
        for est in (ReliefF(pvalues=True, missing="diff", **params), MultiSURF(pvalues=True, missing="diff", **params)):
            e = _fit(est, p.X, p.y, **kw)
            label = type(est).__name__
            np.testing.assert_allclose(t.loc[names, f"{label}_p"].to_numpy(), e.pvalues_, rtol=1e-12, atol=0)
            np.testing.assert_allclose(t.loc[names, f"{label}_q"].to_numpy(), e.qvalues_, rtol=1e-12, atol=0)
