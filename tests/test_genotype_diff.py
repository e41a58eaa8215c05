"""The genotype readings of the Relief family (``genotype_diff``): each against a reference written
from its definition, the byte path equal to the float path, the conflicts refused, the command line."""

import warnings

import numpy as np
import pandas as pd
import pytest

from knnweights import SURF, IRelief, MultiSURF, Relief, ReliefF
from knnweights.cli import main

READINGS = ("additive", "mismatch", "allele-sharing")


def _snps(n=48, d=7, seed=0, missing=0.0):
    """Genotypes 0/1/2 (feature 3 only 0/1: observed range 1, where additive and allele sharing differ),
    a class from features 0 and 1, and a mask of unknown calls (none in class 1 of feature 2's first rows)."""
    rng = np.random.default_rng(seed)
    X = rng.binomial(2, rng.uniform(0.25, 0.5, d), size=(n, d)).astype(np.uint8)
    X[:, 3] = rng.integers(0, 2, n)
    y = ((X[:, 0] == 1) ^ (X[:, 1] == 2)).astype(np.int64)
    flip = rng.random(n) < 0.1
    y[flip] = 1 - y[flip]
    M = rng.random((n, d)) < missing
    if missing:
        M[:3, 2] = True  # pairs with both values unknown
    return X, y, M


def _reference_diff(X, y, reading):
    """``diff_f(i, j)`` of every pair, ``(n, n, d)``, from the definitions (``X`` float, NaN unknown).

    Known pairs: additive ``|a - b| / range_f`` (the observed range of the known values), mismatch
    ``[a != b]``, allele sharing ``|a - b| / 2``.  One value unknown (Kononenko 1994): the expected diff
    of the known value against the unknown instance's class-conditional genotype frequencies; both
    unknown: the expected diff of two draws, one from each instance's class."""
    n, d = X.shape
    classes, ci = np.unique(y, return_inverse=True)
    v = np.arange(3.0)
    out = np.empty((n, n, d))
    for f in range(d):
        col = X[:, f]
        known = ~np.isnan(col)
        if reading == "mismatch":
            tab = (v[:, None] != v[None, :]).astype(float)
        elif reading == "allele-sharing":
            tab = np.abs(v[:, None] - v[None, :]) / 2.0
        else:
            r = np.ptp(col[known])
            tab = np.abs(v[:, None] - v[None, :]) / (r if r > 0 else 1.0)
        P = np.array([np.bincount(col[known & (y == c)].astype(int), minlength=3) for c in classes], float)
        P /= P.sum(axis=1, keepdims=True)
        a = np.where(known, col, 0).astype(int)
        A = P @ tab  # A[c, b]: expected diff of value b against class c's genotypes
        both = (P @ tab @ P.T)[ci[:, None], ci[None, :]]
        i_unknown = A[ci[:, None], a[None, :]]
        j_unknown = A[ci[None, :], a[:, None]]
        ki, kj = known[:, None], known[None, :]
        out[:, :, f] = np.where(ki & kj, tab[a[:, None], a[None, :]],
                                np.where(kj, i_unknown, np.where(ki, j_unknown, both)))
    return out


def _reference_relieff(diff, y, k):
    """ReliefF (k hits, k misses of the other class, lower index first among equal distances), two classes."""
    n = y.size
    D = np.round(diff.sum(axis=2), 9)  # equal distances summed in other orders stay equal
    np.fill_diagonal(D, np.inf)
    w = np.zeros(diff.shape[2])
    for i in range(n):
        for same, sign in ((True, -1.0), (False, 1.0)):
            nn = np.lexsort((np.arange(n), np.where((y == y[i]) == same, D[i], np.inf)))[:k]
            w += sign * diff[i, nn].mean(axis=0)
    return w / n


def _reference_multisurf(diff, y):
    """MultiSURF, two classes: neighbours closer than ``mean_i - std_i / 2`` of the other ``n - 1`` distances."""
    n = y.size
    D = diff.sum(axis=2)
    w = np.zeros(diff.shape[2])
    for i in range(n):
        others = np.arange(n) != i
        near = others & (D[i] < D[i, others].mean() - D[i, others].std() / 2.0)
        for same, sign in ((True, -1.0), (False, 1.0)):
            sel = near & ((y == y[i]) == same)
            if sel.any():
                w += sign * diff[i, sel].mean(axis=0)
    return w / n


def _inputs(X, M):
    """The same genotypes as float (NaN unknown) and as bytes (uint8, 255 unknown)."""
    Xf = X.astype(np.float64)
    Xf[M] = np.nan
    Xb = X.copy()
    Xb[M] = 255
    return Xf, Xb


def _fit(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.fit(X, y)


@pytest.mark.parametrize("missing", [0.0, 0.08])
@pytest.mark.parametrize("reading", READINGS)
def test_each_reading_matches_its_definition_on_bytes_and_floats(reading, missing):
    X, y, M = _snps(missing=missing)
    Xf, Xb = _inputs(X, M)
    diff = _reference_diff(Xf, y, reading)
    ref = {"ReliefF": _reference_relieff(diff, y, 3), "MultiSURF": _reference_multisurf(diff, y)}
    for name, est in (("ReliefF", ReliefF(n_neighbors=3)), ("MultiSURF", MultiSURF())):
        est.set_params(genotype_diff=reading, missing="diff")
        tol = 1e-12 * np.abs(ref[name]).max()
        for data in (Xb, Xf):
            np.testing.assert_allclose(_fit(est, data, y).scores_, ref[name], rtol=1e-9, atol=tol,
                                       err_msg=f"{name} on {data.dtype}")


def test_the_readings_differ_where_the_definitions_say():
    """Allele sharing is additive halved on a SNP observed with range 1 and equal on range 2; mismatch
    scores a 0-2 pair as a 0-1 pair."""
    X, y, _ = _snps()
    Xf = X.astype(float)
    add, mm, ash = (_reference_diff(Xf, y, r) for r in READINGS)
    np.testing.assert_array_equal(ash[:, :, 3], add[:, :, 3] / 2)
    np.testing.assert_array_equal(ash[:, :, 0], add[:, :, 0])
    i, j = np.argwhere((X[:, None, 0] == 0) & (X[None, :, 0] == 2))[0]
    assert mm[i, j, 0] == 1.0 and add[i, j, 0] == 1.0
    i, j = np.argwhere((X[:, None, 0] == 0) & (X[None, :, 0] == 1))[0]
    assert mm[i, j, 0] == 1.0 and add[i, j, 0] == 0.5
    a = _fit(ReliefF(n_neighbors=3, genotype_diff="additive"), X, y).scores_
    b = _fit(ReliefF(n_neighbors=3, genotype_diff="allele-sharing"), X, y).scores_
    assert not np.allclose(a, b)


ESTIMATORS = [Relief(), ReliefF(n_neighbors=5), ReliefF(n_neighbors=5, ties="include"), SURF(), MultiSURF(),
              IRelief(max_iter=3), MultiSURF(n_instances=30, random_state=1)]


@pytest.mark.parametrize("reading", READINGS)
@pytest.mark.parametrize("est", ESTIMATORS, ids=lambda e: repr(e))
def test_bytes_give_the_float_weights_for_each_reading(est, reading):
    X, y, M = _snps(n=70, d=20, seed=3, missing=0.05)
    Xf, Xb = _inputs(X, M)
    est.set_params(genotype_diff=reading, missing="diff")
    a = _fit(est, Xf, y).scores_.copy()
    b = _fit(est, Xb, y).scores_
    np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12 * np.abs(a).max())


def test_named_readings_are_the_parameters_they_stand_for():
    """additive is the default diff, mismatch is ``discrete_features=True``; allele sharing on complete
    0/1/2 data is ``normalize=False`` halved."""
    X, y, _ = _snps(n=60, d=12, seed=4)
    for Xin in (X, X.astype(float)):
        np.testing.assert_allclose(_fit(MultiSURF(genotype_diff="additive"), Xin, y).scores_,
                                   _fit(MultiSURF(), Xin, y).scores_, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(_fit(ReliefF(genotype_diff="mismatch"), Xin, y).scores_,
                                   _fit(ReliefF(discrete_features=True), Xin, y).scores_, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(_fit(ReliefF(genotype_diff="allele-sharing"), Xin, y).scores_,
                                   _fit(ReliefF(normalize=False), Xin, y).scores_ / 2, rtol=1e-12, atol=1e-15)
    est = _fit(ReliefF(genotype_diff="mismatch"), X, y)
    assert est.discrete_features_.all()


@pytest.mark.parametrize("params, match", [
    ({"genotype_diff": "mismatch", "discrete_features": "auto"}, "discrete_features"),
    ({"genotype_diff": "allele-sharing", "normalize": False}, "normalize"),
    ({"genotype_diff": "genotypic"}, "genotype_diff"),
])
def test_conflicting_or_unknown_readings_are_refused(params, match):
    X, y, _ = _snps()
    for Xin in (X, X.astype(float)):
        with pytest.raises(ValueError, match=match):
            ReliefF(**params).fit(Xin, y)


def test_allele_sharing_needs_allele_counts():
    X, y, _ = _snps()
    X[0, 4] = 3
    for Xin in (X, X.astype(float), X.astype(float) + 0.5):
        with pytest.raises(ValueError, match="0, 1 or 2"):
            MultiSURF(genotype_diff="allele-sharing").fit(Xin, y)
    MultiSURF(genotype_diff="mismatch").fit(X, y)  # the other readings take any codes


def test_ramp_with_a_genotype_reading_is_refused():
    X, y, _ = _snps()
    with pytest.raises(ValueError, match="ramp"):
        ReliefF(genotype_diff="mismatch", diff="ramp").fit(X.astype(float), y)


def test_cli_genotype_diff_is_the_library_weighter(tmp_path):
    bed_reader = pytest.importorskip("bed_reader")
    from knnweights.io import read_plink

    X, y, M = _snps(n=80, d=30, seed=6, missing=0.02)
    G = X.astype(np.float32)
    G[M] = np.nan
    path = tmp_path / "study.bed"
    bed_reader.to_bed(path, G, properties={"sid": [f"rs{i}" for i in range(30)], "pheno": [str(v + 1) for v in y]})
    out = tmp_path / "ranks.csv"
    assert main(["rank", str(path), "--methods", "MultiSURF", "--genotype-diff", "mismatch", "--out", str(out)]) == 0
    t = pd.read_csv(out).set_index("feature")
    p = read_plink(path)
    est = MultiSURF(genotype_diff="mismatch", missing="diff").fit(p.X, p.y)
    s = pd.Series(est.scores_, index=p.snps)
    np.testing.assert_allclose(t.loc[p.snps, "MultiSURF_score"], s, rtol=1e-9, atol=1e-15)
    with pytest.raises(SystemExit):
        main(["rank", str(path), "--genotype-diff", "allele"])
    assert main(["rank", str(tmp_path / "table.csv"), "--target", "y", "--genotype-diff", "mismatch"]) == 2
