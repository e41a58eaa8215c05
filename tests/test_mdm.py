"""MDM (Hocke & Martinetz 2014): exactness of the lazy LP, optimality certificates, invariances."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy.optimize import linprog
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from knnweights._solvers import lp_highs, lp_ipm, mdm_lp
from knnweights._solvers.mdm_lp import COMPACTNESS, SEPARATION, duplicate_conflicts, solve_mdm
from knnweights.classifiers import WeightedKNN
from knnweights.weighters.mdm import MDM


def _data(n, d=4, n_classes=3, seed=0, shift=1.5):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, size=d)
    X[:, 0] += shift * y
    X[:, 1] -= shift * (y == 1)
    return X, y


def _reference_lp(X, y, soft, C):
    """The LP of eqs. 9-11 / 12-14 written out from the paper, one row per ordered pair.

    Built independently of knnweights._solvers.mdm_lp with an (n, n, d) array (tests only). Returns
    ``(f, A, b, rows)`` with ``rows[(i, j)]`` the row of ordered pair ``(i, j)``.
    """
    n, d = X.shape
    E = (X[:, None, :] - X[None, :, :]) ** 2
    n_var = d + 1 + (n if soft else 0)
    A, b, rows = [], [], {}
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            row = np.zeros(n_var)
            if y[i] != y[j]:
                row[:d] = -E[i, j]
                b.append(-1.0)
            else:
                row[:d] = E[i, j]
                row[d] = -1.0
                if soft:
                    row[d + 1 + i] = -1.0
                b.append(0.0)
            rows[(i, j)] = len(A)
            A.append(row)
    f = np.zeros(n_var)
    f[d] = 1.0
    if soft:
        f[d + 1:] = C
    return f, np.array(A), np.array(b), rows


def _full_multipliers(mdm_pairs, mdm_kind, mdm_dual, rows, soft, m):
    """Scatter the working-set multipliers onto the reference LP's rows (zeros elsewhere)."""
    lam = np.zeros(m)
    for (i, j), k, v in zip(mdm_pairs, mdm_kind, mdm_dual, strict=True):
        assert k in (SEPARATION, COMPACTNESS)
        if k == SEPARATION or not soft:
            assert i < j  # symmetric constraints are stored once, as i < j
        lam[rows[(int(i), int(j))]] += v
    return lam


# -- exactness of the lazy constraint generation ------------------------------------------


@pytest.mark.parametrize("soft", [False, True])
@pytest.mark.parametrize("n,d,seed,shift", [(45, 4, 0, 1.5), (60, 12, 0, 3.0), (90, 12, 1, 3.0), (140, 4, 2, 1.5)])
def test_lazy_generation_equals_full_lp(soft, n, d, seed, shift):
    X, y = _data(n, d=d, seed=seed, shift=shift)
    C = 0.05
    full = solve_mdm(X, y, soft=soft, C=C, lazy=False)
    lazy = solve_mdm(X, y, soft=soft, C=C, lazy=True, n_init=1)
    assert lazy.converged
    if d == 12:
        assert lazy.n_rounds >= 2  # the working set really grew
    assert lazy.n_constraints < full.n_constraints
    assert abs(lazy.fun - full.fun) <= 1e-7 * max(1.0, abs(full.fun))
    np.testing.assert_allclose(lazy.w, full.w, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(lazy.r, full.r, rtol=1e-6, atol=1e-9)
    # objective of the relaxations never decreases as constraints are added (up to the relative gap to which
    # the interior point solves the rounds before the last one)
    hist = np.asarray(lazy.history)
    assert np.all(np.diff(hist) >= -mdm_lp._IPM_TOL_FIRST * (1.0 + np.abs(hist[1:])))
    assert hist[-1] == lazy.fun


def test_lazy_needs_several_rounds_and_matches_the_reference_optimum():
    X, y = _data(120, d=6, seed=3)
    lazy = solve_mdm(X, y, soft=True, C=0.02, lazy=True, n_init=1, n_add=1)
    assert lazy.n_rounds >= 2
    f, A, b, _ = _reference_lp(X, y, True, 0.02)
    ref = linprog(f, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
    assert ref.status == 0
    assert abs(lazy.fun - ref.fun) <= 1e-7 * max(1.0, abs(ref.fun))


def _lognormal_genes(n=40, d=60, n_planted=6, shift=1.0, seed=0):
    """Gene-expression-like table (benchmarks/bench_mdm.py, small): lognormal values, planted genes."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    Z = rng.normal(size=(n, d))
    Z[:, :n_planted] += shift * y[:, None]
    return np.exp(Z), y


@pytest.mark.parametrize("soft,C", [(False, 1.0), (True, 0.3), (True, 1.0)])
def test_lazy_rows_and_columns_equal_full_lp_on_dense_lognormal_data(soft, C):
    # the case that stalled HiGHS (dense optimum: most weights nonzero, most pairs near-tight)
    X, y = _lognormal_genes()
    Xs = (X - X.mean(0)) / X.std(0)
    full = solve_mdm(Xs, y, soft=soft, C=C, lazy=False)
    lazy = solve_mdm(Xs, y, soft=soft, C=C, lazy=True, n_init=1, feature_block=8)
    assert lazy.converged and lazy.n_rounds >= 3 and lazy.status == 0
    assert abs(lazy.fun - full.fun) <= 1e-7 * max(1.0, abs(full.fun))
    assert np.count_nonzero(full.w) > 10  # a dense optimum, not a few planted genes
    _assert_certificate(Xs, y, soft, C, lazy.w, lazy.r, lazy.xi, lazy.pairs, lazy.kind, lazy.dual, lazy.fun)
    _assert_certificate(Xs, y, soft, C, full.w, full.r, full.xi, full.pairs, full.kind, full.dual, full.fun)


@pytest.mark.parametrize("soft", [False, True])
def test_time_limit_warns_and_returns_a_feasible_point(soft, capsys):
    X, y = _data(60, d=12, seed=0, shift=3.0)
    C = 0.05
    with pytest.warns(ConvergenceWarning, match=r"time_limit=0.0001 s.*best feasible point"):
        mdm = MDM(soft=soft, C=C, lazy=True, n_init=1, time_limit=1e-4, verbose=1).fit(X, y)
    assert "MDM round" in capsys.readouterr().out
    assert mdm.dual_.shape == (mdm.n_constraints_,) and mdm.constraint_pairs_.shape == (mdm.n_constraints_, 2)
    w, r, xi = mdm.feature_importances_, mdm.radius_, mdm.slacks_
    D = (((X[:, None, :] - X[None, :, :]) ** 2) * w).sum(-1)
    same = y[:, None] == y[None, :]
    off = ~np.eye(len(y), dtype=bool)
    assert D[~same].min() == pytest.approx(1.0, rel=1e-9)  # eq. 6 holds, tight after scaling
    assert np.all(D[same & off] <= (r + xi[:, None] * np.ones(len(y)))[same & off] * (1 + 1e-9))
    assert mdm.objective_ == pytest.approx(r + (C * xi.sum() if soft else 0.0), rel=1e-12)
    # the optimum is lower (or equal): a feasible point is only an upper bound
    opt = MDM(soft=soft, C=C, lazy=True).fit(X, y)
    assert opt.objective_ <= mdm.objective_ + 1e-9


@pytest.mark.parametrize("method,backend", [("ipm", lp_ipm._DenseRelaxation), ("simplex", lp_highs._Relaxation)])
def test_time_limit_inside_the_lp_solver_keeps_the_best_feasible_point(monkeypatch, method, backend):
    # the LP solver reports its time limit in round 2, after round 1's violated pairs were appended
    solve = backend.solve
    calls = []

    def limited(self, time_limit=None):
        calls.append(1)
        return ("time_limit", None, None, np.nan, 0) if len(calls) == 2 else solve(self, time_limit)

    monkeypatch.setattr(backend, "solve", limited)
    X, y = _data(60, d=12, seed=0, shift=3.0)
    res = solve_mdm(X, y, soft=False, lazy=True, n_init=1, time_limit=100.0, method=method)
    assert res.status == 2 and not res.converged and res.n_rounds == 2
    assert res.dual.shape == (res.n_constraints,) and res.pairs.shape == (res.n_constraints, 2)
    D = (((X[:, None, :] - X[None, :, :]) ** 2) * res.w).sum(-1)
    same = y[:, None] == y[None, :]
    assert D[~same].min() == pytest.approx(1.0, rel=1e-9)
    assert D[same].max() == pytest.approx(res.r, rel=1e-9) and res.fun == res.r
    assert res.fun >= solve_mdm(X, y, soft=False, lazy=False).fun - 1e-9


def test_verbose_prints_one_line_per_round(capsys):
    X, y = _data(60, d=12, seed=0, shift=3.0)
    mdm = MDM(soft=False, lazy=True, n_init=1, verbose=1).fit(X, y)
    out = [line for line in capsys.readouterr().out.splitlines() if line.startswith("MDM round")]
    assert len(out) == mdm.n_iter_ >= 2
    assert "rows" in out[0] and "objective" in out[0] and "IPM iterations" in out[0]


# -- optimality certificates -----------------------------------------------------------


def _assert_certificate(X, y, soft, C, w, r, xi, pairs, kind, dual, objective):
    """Primal/dual feasibility, complementary slackness and zero gap on the full reference LP."""
    f, A, b, rows = _reference_lp(X, y, soft, C)
    v = np.concatenate([w, [r], xi if soft else []])
    lam = _full_multipliers(pairs, kind, dual, rows, soft, len(b))
    scale = np.abs(A).max()
    # primal feasibility on *every* pair (lazy pairs left out included)
    assert np.all(A @ v - b <= 1e-7 * scale)
    assert np.all(v >= 0)
    # dual feasibility: lambda >= 0 and reduced costs f + A^T lambda >= 0 (every feature included)
    assert np.all(lam >= 0)
    g = f + A.T @ lam
    assert np.all(g >= -1e-6 * scale)
    # complementary slackness
    assert np.max(np.abs(lam * (b - A @ v))) <= 1e-6 * scale
    assert np.max(np.abs(v * g)) <= 1e-6 * scale * max(1.0, v.max())
    # strong duality: primal f.v equals dual -b.lambda
    primal, dual_value = f @ v, -b @ lam
    assert abs(primal - dual_value) <= 1e-6 * max(1.0, abs(primal))
    assert abs(primal - objective) <= 1e-7 * max(1.0, abs(primal))


@pytest.mark.parametrize("soft,C", [(False, 1.0), (True, 0.05), (True, 1.0)])
@pytest.mark.parametrize("lazy", [False, True])
def test_duals_certify_optimality_of_the_full_lp(soft, C, lazy):
    # soft with C >= 1 is solved as hard MDM: its duals must certify the soft LP too
    X, y = _data(60, d=5, seed=4)
    mdm = MDM(soft=soft, C=C, lazy=lazy, n_init=1).fit(X, y)
    _assert_certificate(X, y, soft, C, mdm.feature_importances_, mdm.radius_, mdm.slacks_, mdm.constraint_pairs_,
                        mdm.constraint_kind_, mdm.dual_, mdm.objective_)
    assert len(mdm.support_vectors_) >= 1


@pytest.mark.parametrize("soft", [False, True])
def test_feature_generation_for_many_features_equals_full_lp(soft):
    # d >> n (the microarray case): weight columns priced in by reduced cost, rows added lazily
    X, y = _data(24, d=40, n_classes=2, seed=14, shift=2.0)
    C = 0.05
    full = solve_mdm(X, y, soft=soft, C=C, lazy=False)
    lazy = solve_mdm(X, y, soft=soft, C=C, lazy=True, n_init=1, feature_block=3)
    assert lazy.converged and lazy.n_rounds >= 2
    assert lazy.features.size < X.shape[1]
    assert abs(lazy.fun - full.fun) <= 1e-7 * max(1.0, abs(full.fun))
    assert np.all(lazy.w[np.setdiff1d(np.arange(X.shape[1]), lazy.features)] == 0)
    _assert_certificate(X, y, soft, C, lazy.w, lazy.r, lazy.xi, lazy.pairs, lazy.kind, lazy.dual, lazy.fun)
    # a basic (vertex) solution has at most as many nonzero variables (w, r, xi) as tight rows
    I, J = lazy.pairs.T
    D = ((X[I] - X[J]) ** 2) @ lazy.w
    bound = np.where(lazy.kind == SEPARATION, 1.0, lazy.r + lazy.xi[I])
    n_tight = np.count_nonzero(np.abs(D - bound) <= 1e-7 * max(1.0, lazy.r))
    n_nonzero = np.count_nonzero(lazy.w) + (lazy.r > 0) + np.count_nonzero(lazy.xi)
    assert n_nonzero <= n_tight


def test_multipliers_of_separation_rows_sum_to_the_objective():
    # hard MDM: by strong duality r* = sum of the separation multipliers (b = -1 there, 0 else)
    X, y = _data(70, seed=5)
    mdm = MDM(soft=False, lazy=True).fit(X, y)
    sep = mdm.constraint_kind_ == SEPARATION
    assert mdm.dual_[sep].sum() == pytest.approx(mdm.radius_, rel=1e-7)
    # and the compactness multipliers sum to 1 (the reduced cost of r is 1 - sum, r > 0)
    assert mdm.dual_[~sep].sum() == pytest.approx(1.0, rel=1e-7)


# -- properties of the solution --------------------------------------------------------


def test_solution_satisfies_the_papers_constraints_with_tight_extremes():
    X, y = _data(80, seed=6)
    mdm = MDM(soft=False).fit(X, y)
    w = mdm.feature_importances_
    D = (((X[:, None, :] - X[None, :, :]) ** 2) * w).sum(-1)
    same = y[:, None] == y[None, :]
    off = ~np.eye(len(y), dtype=bool)
    assert D[~same].min() == pytest.approx(1.0, rel=1e-7)  # eq. 6, tight
    assert D[same & off].max() == pytest.approx(mdm.radius_, rel=1e-7)  # eq. 7, r is the largest


@pytest.mark.parametrize("C", [1.0, 4.0])
def test_soft_with_C_at_least_one_has_the_hard_optimum(C):
    # (w, r + max xi) is feasible for hard MDM and r + max xi <= r + C sum xi when C >= 1
    X, y = _data(60, seed=7)
    hard = MDM(soft=False).fit(X, y)
    soft = MDM(soft=True, C=C).fit(X, y)
    assert soft.objective_ == pytest.approx(hard.radius_, rel=1e-7)
    small = MDM(soft=True, C=0.01).fit(X, y)
    assert small.objective_ < hard.radius_ - 1e-6  # slack pays off when it is cheap


def test_scaling_a_feature_by_c_scales_its_weight_by_one_over_c_squared():
    X, y = _data(70, d=5, seed=8)
    c = np.array([1.0, 10.0, 0.1, 1.0, 3.0])
    for soft in (False, True):
        a = MDM(soft=soft, C=0.05).fit(X, y)
        b = MDM(soft=soft, C=0.05).fit(X * c, y)
        np.testing.assert_allclose(b.feature_importances_, a.feature_importances_ / c**2, rtol=1e-6, atol=1e-12)
        assert b.radius_ == pytest.approx(a.radius_, rel=1e-7)
        # the LP itself, without the estimator's internal standardisation
        ra = solve_mdm(X, y, soft=soft, C=0.05, lazy=True)
        rb = solve_mdm(X * c, y, soft=soft, C=0.05, lazy=True)
        np.testing.assert_allclose(rb.w, ra.w / c**2, rtol=1e-5, atol=1e-12)
    rng = np.random.default_rng(0)
    Xt = rng.normal(size=(40, 5)) * 2
    ka = WeightedKNN(MDM(soft=True, C=0.05), n_neighbors=3).fit(X, y)
    kb = WeightedKNN(MDM(soft=True, C=0.05), n_neighbors=3).fit(X * c, y)
    np.testing.assert_array_equal(ka.predict(Xt), kb.predict(Xt * c))


def test_constant_features_get_weight_zero_and_informative_feature_dominates():
    rng = np.random.default_rng(9)
    n = 60
    y = np.arange(n) % 2
    X = np.column_stack([y * 4.0 + rng.normal(size=n) * 0.3, rng.normal(size=(n, 3)), np.full(n, 7.0)])
    mdm = MDM(soft=False).fit(X, y)
    w = mdm.feature_importances_
    assert w[-1] == 0.0
    assert np.argmax(w * X.var(axis=0)) == 0


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("soft", [False, True])
def test_identical_points_with_different_labels_raise_naming_the_pair(soft):
    X, y = _data(30, seed=10)
    X[17] = X[4]
    y[17] = (y[4] + 1) % 3
    with pytest.raises(ValueError, match=r"samples 4 and 17 are identical.*Remove or merge"):
        MDM(soft=soft).fit(X, y)
    # identical points with the *same* label are fine
    y[17] = y[4]
    assert np.all(np.isfinite(MDM(soft=soft).fit(X, y).feature_importances_))


def test_duplicate_conflicts_matches_brute_force():
    rng = np.random.default_rng(11)
    X = rng.integers(0, 2, size=(40, 3)).astype(float)
    y = rng.integers(0, 3, 40)
    got = {tuple(p) for p in duplicate_conflicts(X, y)}
    same = (X[:, None, :] == X[None, :, :]).all(-1) & (y[:, None] != y[None, :])
    brute = {(i, j) for i, j in zip(*np.nonzero(np.triu(same, 1)), strict=True)}
    # the function reports one conflicting neighbour per sorted run; every report is a real conflict
    assert got and got <= brute
    assert {i for p in brute for i in p} >= {i for p in got for i in p}
    groups_with_conflict = {tuple(X[i]) for p in brute for i in p}
    assert groups_with_conflict == {tuple(X[i]) for p in got for i in p}


def test_max_rounds_warns_and_weights_stay_finite():
    X, y = _data(60, d=12, seed=0, shift=3.0)
    with pytest.warns(ConvergenceWarning, match="max_rounds=1"):
        mdm = MDM(soft=False, lazy=True, max_rounds=1, n_init=1).fit(X, y)
    assert np.all(np.isfinite(mdm.feature_importances_)) and mdm.n_iter_ == 1


@parametrize_with_checks([MDM(soft=True, C=0.1), MDM(soft=False, lazy=True)])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_auto_n_add_adds_about_1600_pairs_per_round_for_small_n_and_3_per_sample_above():
    from knnweights.weighters.mdm import _auto_n_add

    assert [_auto_n_add(n) for n in (2, 5, 62, 80, 200, 266, 267, 5000)] == [1, 4, 12, 10, 4, 3, 3, 3]
    X, y = _data(60, d=6, seed=3, shift=2.0)
    auto = MDM(soft=False, lazy=True).fit(X, y)
    explicit = MDM(soft=False, lazy=True, n_add=13).fit(X, y)  # 800 // 60 = 13
    np.testing.assert_array_equal(auto.constraint_pairs_, explicit.constraint_pairs_)
    assert auto.objective_ == explicit.objective_


@pytest.mark.slow
def test_highs_banner_left_out_of_standard_output_unless_verbose():
    # HiGHS writes its licence banner from C++ on the first construction in a process: a fresh one
    code = ("from knnweights._solvers.lp_highs import _new_highs; import sys; "
            "_new_highs(int(sys.argv[1])); _new_highs(0); print('end')")
    quiet = subprocess.run([sys.executable, "-c", code, "0"], capture_output=True, text=True, check=True)
    loud = subprocess.run([sys.executable, "-c", code, "2"], capture_output=True, text=True, check=True)
    assert quiet.stdout == "end\n"
    assert "HiGHS" in loud.stdout and loud.stdout.endswith("end\n")
