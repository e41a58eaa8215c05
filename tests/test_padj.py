"""P-value adjustments (``padj``) against statsmodels' ``multipletests`` definitions, written out by hand."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import clone

from knnweights import SURF, ReliefF, permutation_pvalues
from knnweights.significance import adjust_pvalues, bh_qvalues


def _reference(p, method):
    """statsmodels.stats.multitest.multipletests, from its definitions (loops over sorted p)."""
    p = np.asarray(p, float)
    m = p.size
    order = np.argsort(p, kind="stable")
    ps = p[order]
    out = np.empty(m)
    if method == "bonferroni":
        return np.minimum(p * m, 1.0)
    if method == "holm":  # step-down: max over j <= i of (m - j + 1) p_(j), 1-based
        adj = [min(1.0, max((m - j) * ps[j] for j in range(i + 1))) for i in range(m)]
    else:  # step-up: min over j >= i of c p_(j) m / j, 1-based
        c = 1.0 if method == "bh" else sum(1.0 / i for i in range(1, m + 1))
        adj = [min(1.0, min(c * ps[j] * m / (j + 1) for j in range(i, m))) for i in range(m)]
    out[order] = adj
    return out


@pytest.mark.parametrize("method", ["bh", "bonferroni", "holm", "by"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_adjust_matches_definitions(method, seed):
    rs = np.random.RandomState(seed)
    p = rs.uniform(size=25) ** 3
    p[3] = p[7]  # a tie
    p[10] = 1.0
    q = adjust_pvalues(p, method)
    assert_allclose(q, _reference(p, method), rtol=1e-14, atol=0)
    assert np.all(q >= p) and np.all(q <= 1)


def test_known_values():
    p = [0.01, 0.04, 0.03, 0.5]
    assert_allclose(adjust_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 1.0])
    assert_allclose(adjust_pvalues(p, "holm"), [0.04, 0.09, 0.09, 0.5])
    cm = 1 + 1 / 2 + 1 / 3 + 1 / 4
    assert_allclose(adjust_pvalues(p, "by"), np.minimum(np.array([0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5]) * cm, 1))


def test_bh_is_bh_qvalues():
    p = np.random.RandomState(0).uniform(size=30)
    assert np.array_equal(adjust_pvalues(p), bh_qvalues(p))


@pytest.mark.parametrize("method", ["bh", "bonferroni", "holm", "by"])
def test_nan_and_range_rejected_like_bh(method):
    for bad in ([0.1, np.nan], [0.1, 1.5], [-0.1, 0.2], [np.inf]):
        with pytest.raises(ValueError, match="finite"):
            adjust_pvalues(bad, method)
    assert adjust_pvalues([], method).size == 0


def test_bad_method():
    with pytest.raises(ValueError):
        adjust_pvalues([0.1], "fdr")


@pytest.fixture
def data():
    rs = np.random.RandomState(0)
    X = rs.normal(size=(60, 6))
    y = (X[:, 0] + 0.5 * rs.normal(size=60) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("est", [ReliefF(n_neighbors=5, pvalues=True), SURF(pvalues=True)])
@pytest.mark.parametrize("method", ["bonferroni", "holm", "by"])
def test_estimator_padj(data, est, method):
    X, y = data
    base = clone(est).fit(X, y)
    p, q_bh = base.pvalues_.copy(), base.qvalues_.copy()
    assert np.array_equal(q_bh, bh_qvalues(p))
    other = clone(est).set_params(padj=method).fit(X, y)
    assert np.array_equal(other.pvalues_, p)
    assert_allclose(other.qvalues_, _reference(p, method), rtol=1e-14)


def test_estimator_bad_padj(data):
    X, y = data
    with pytest.raises(ValueError):
        ReliefF(pvalues=True, padj="fdr").fit(*data)


def test_permutation_pvalues_padj(data):
    X, y = data
    res = permutation_pvalues(ReliefF(n_neighbors=5), X, y, n_permutations=9, random_state=0, padj="holm")
    assert_allclose(res.qvalues, _reference(res.pvalues, "holm"), rtol=1e-14)
    with pytest.raises(ValueError):
        permutation_pvalues(ReliefF(), X, y, n_permutations=9, padj="fdr")


def test_padj_fingerprint():
    from knnweights.evaluation.grid import fingerprint_view

    assert fingerprint_view(ReliefF(pvalues=True)) != fingerprint_view(ReliefF(pvalues=True, padj="holm"))
    assert "padj" not in repr(fingerprint_view(ReliefF()))


def _q_columns(table):
    """``{column stem: (p, q)}`` of every method and baseline with a ``_q`` column, indexed by feature."""
    t = table.set_index("feature")
    return {c[:-2]: (t[c[:-2] + "_p"], t[c]) for c in t.columns if c.endswith("_q")}


@pytest.mark.parametrize("method", ["bh", "holm", "by"])
def test_rank_table_adjusts_every_q_column_by_padj(data, method):
    """Methods with their own p-values, permutation p-values and the baselines: each ``_q`` is ``padj``
    of its own ``_p`` over the table's features; a Relief method built here carries the same ``padj``."""
    from knnweights import rank_table

    X, y = data
    t = rank_table(["ReliefF", "Simba"], X, y, pvalues=True, n_permutations=9, random_state=0, padj=method)
    cols = _q_columns(t)
    assert set(cols) == {"ReliefF", "Simba", "t_test"}
    for stem, (p, q) in cols.items():
        assert_allclose(q, _reference(p.to_numpy(), method), rtol=1e-14, err_msg=stem)
    own = ReliefF(pvalues=True, random_state=0, padj=method).fit(X, y)
    by_name = t.set_index("feature").loc[[f"x{j}" for j in range(X.shape[1])]]
    assert_allclose(by_name["ReliefF_q"], own.qvalues_, rtol=1e-14)


def test_rank_table_applies_its_padj_to_a_fitted_weighters_pvalues(data):
    from knnweights import rank_table

    X, y = data
    fitted = ReliefF(pvalues=True, padj="by").fit(X, y)
    t = rank_table([fitted], X, y, pvalues=True, padj="holm", baselines=False)
    assert_allclose(t["ReliefF_q"], _reference(fitted.pvalues_, "holm"), rtol=1e-14)
    with pytest.raises(ValueError, match="padj"):
        rank_table(["ReliefF"], X, y, padj="fdr")


def test_rank_command_line_padj(data, tmp_path, capsys):
    """``rank --pvalues --padj holm``: the file's q columns are Holm's of its p columns, row by feature name."""
    import pandas as pd

    from knnweights.cli import main

    X, y = data
    path, out = tmp_path / "t.csv", tmp_path / "ranks.csv"
    pd.DataFrame(X, columns=[f"g{j}" for j in range(X.shape[1])]).assign(label=y).to_csv(path, index=False)
    rc = main(["rank", str(path), "--target", "label", "--methods", "ReliefF", "--pvalues", "--padj", "holm",
               "--out", str(out), "--top", "0"])
    assert rc == 0, capsys.readouterr().err
    cols = _q_columns(pd.read_csv(out))
    assert set(cols) == {"ReliefF", "t_test"}
    for stem, (p, q) in cols.items():
        assert_allclose(q, _reference(p.to_numpy(), "holm"), rtol=1e-12, err_msg=stem)
