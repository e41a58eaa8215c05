"""Survival outcomes: the Relief family on the null Cox model's martingale residuals, the Cox score baseline,
``rank_table`` and ``knnweights rank --target-type survival``."""

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NearestNeighbors
from sklearn.utils import check_random_state

from knnweights import rank_table
from knnweights.cli import main
from knnweights.significance import univariate_tests
from knnweights.weighters import (
    SURF,
    IRelief,
    MultiSURF,
    Relief,
    ReliefF,
    Simba,
    is_survival_target,
    make_survival_target,
)
from knnweights.weighters._relief_covariates import N_RESAMPLES, SEQUENTIAL_H, _sample_design
from knnweights.weighters._relief_survival import (
    cox_fit,
    cox_score_test,
    martingale_residuals,
    nelson_aalen,
    redraw_survival,
    survival_draws,
)


def _cox_data(n, d, seed, censor_rate=1.0):
    """Cox data: hazard ``exp(1.5 x0 x1 + 0.8 x2)`` (an interaction and a main effect), exponential times,
    independent exponential censoring; the rest noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    T = rng.exponential(1.0 / np.exp(1.5 * X[:, 0] * X[:, 1] + 0.8 * X[:, 2]))
    C = rng.exponential(1.0 / censor_rate, size=n)
    return X, make_survival_target(T <= C, np.minimum(T, C))


def _slow_nelson_aalen(time, event):
    """From the definition: for each sample, the sum over the distinct event times ``s <= t_i`` of
    (events at ``s``) / (samples with time ``>= s``)."""
    out = np.zeros(time.size)
    for i in range(time.size):
        for s in np.unique(time[event]):
            if s <= time[i]:
                out[i] += np.sum(event & (time == s)) / np.sum(time >= s)
    return out


def _slow_cox_score(x, time, event):
    """From the definition: ``U = sum_{events i} (x_i - mean of x over {j: t_j >= t_i})``, ``V = sum_{events i}``
    of the (1/n) variance of x over that risk set; ``z = U / sqrt(V)``."""
    U = V = 0.0
    for i in np.flatnonzero(event):
        r = x[time >= time[i]]
        U += x[i] - r.mean()
        V += np.mean((r - r.mean()) ** 2)
    return U / np.sqrt(V)


def _tied_outcome(seed, n=40):
    rng = np.random.default_rng(seed)
    time = rng.integers(0, 8, size=n).astype(float)  # many ties, time 0 included, censored and events tied
    event = rng.random(n) < 0.6
    event[0] = True
    return time, event


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nelson_aalen_and_martingale_against_definition(seed):
    time, event = _tied_outcome(seed)
    assert np.unique(time).size < time.size and (event & (time == time[0])).any()
    H = nelson_aalen(time, event)
    np.testing.assert_allclose(H, _slow_nelson_aalen(time, event), rtol=1e-12, atol=1e-14)
    M = martingale_residuals(time, event)
    np.testing.assert_allclose(M, event - H, rtol=0, atol=1e-14)
    # the residuals of the null model sum to zero (the score equation of the baseline hazard)
    assert abs(M.sum()) < 1e-10
    assert M.max() <= 1.0


def test_martingale_residuals_permute_with_the_outcomes():
    time, event = _tied_outcome(3, n=60)
    perm = np.random.default_rng(0).permutation(60)
    np.testing.assert_allclose(martingale_residuals(time[perm], event[perm]), martingale_residuals(time, event)[perm],
                               rtol=0, atol=1e-14)


@pytest.mark.parametrize("seed", [0, 1])
def test_cox_score_test_against_definition(seed):
    time, event = _tied_outcome(seed, n=50)
    rng = np.random.default_rng(10 + seed)
    X = np.column_stack([rng.normal(size=50), rng.integers(0, 3, 50), 1e4 + rng.normal(size=50), time * 0.5 + 1,
                         np.full(50, 2.0)])
    z, p = cox_score_test(X, time, event)
    for j in range(4):
        ref = _slow_cox_score(X[:, j], time, event)
        assert z[j] == pytest.approx(ref, rel=1e-9, abs=1e-9)
        assert p[j] == pytest.approx(2 * stats.norm.sf(abs(ref)), rel=1e-8)
    assert z[3] < -3  # larger x with later times: a lower hazard
    assert z[4] == 0.0 and p[4] == 1.0  # a constant feature


def test_cox_score_test_is_the_logrank_test_for_two_groups():
    """Without tied times, the score test of a 0/1 feature is the two-sample log-rank test (scipy's)."""
    rng = np.random.default_rng(4)
    n = 80
    g = rng.random(n) < 0.4
    T = rng.exponential(np.where(g, 0.6, 1.0))
    C = rng.exponential(1.5, size=n)
    time, event = np.minimum(T, C), T <= C
    z, p = cox_score_test(g.astype(float)[:, None], time, event)
    a = stats.CensoredData.right_censored(time[g], ~event[g])
    b = stats.CensoredData.right_censored(time[~g], ~event[~g])
    res = stats.logrank(a, b)
    assert abs(z[0]) == pytest.approx(abs(res.statistic), rel=1e-9)
    assert p[0] == pytest.approx(res.pvalue, rel=1e-7)


@pytest.mark.parametrize("Est", [ReliefF, MultiSURF, Relief, SURF, IRelief])
def test_survival_is_the_continuous_form_on_the_residuals(Est):
    X, y = _cox_data(60, 5, 0)
    kw = {"pvalues": True} if Est is not IRelief else {}
    w = Est(**kw).fit(X, y)
    assert w.target_type_ == "survival"
    M = martingale_residuals(y["time"], y["event"])
    np.testing.assert_allclose(w.martingale_residuals_, M, rtol=0, atol=1e-14)
    ref = Est(target_type="continuous", **kw).fit(X, M)
    np.testing.assert_allclose(w.scores_, ref.scores_, rtol=1e-12, atol=1e-15)
    if kw:
        np.testing.assert_allclose(w.pvalues_, ref.pvalues_, rtol=1e-12, atol=1e-15)
    # target_type="survival" gives the same; a later fit on classes forgets the residuals
    w2 = Est(target_type="survival", **kw).fit(X, y)
    np.testing.assert_allclose(w2.scores_, w.scores_, rtol=1e-12, atol=1e-15)
    w2.set_params(target_type="auto").fit(X, (X[:, 0] > 0).astype(int))
    assert w2.target_type_ == "classes" and not hasattr(w2, "martingale_residuals_")


@pytest.mark.parametrize("Est", [ReliefF, MultiSURF])
def test_planted_features_ranked_first(Est):
    X, y = _cox_data(300, 12, 5)
    assert 0.3 <= 1 - y["event"].mean() <= 0.6
    w = Est().fit(X, y)
    assert set(np.argsort(w.ranking_)[:3]) == {0, 1, 2}
    # the interaction's features: missed by the univariate score test, found by the neighbours
    z, _ = cox_score_test(X, y["time"], y["event"])
    assert np.argsort(-np.abs(z))[0] == 2


@pytest.mark.parametrize("Est", [ReliefF, MultiSURF])
def test_null_pvalues_uniform(Est):
    """Features unrelated to a censored outcome: p-values uniform (several outcomes, many features each)."""
    n, d, fits = 120, 400, 5
    ps = []
    for seed in range(fits):
        rng = np.random.default_rng(100 + seed)
        X = rng.normal(size=(n, d))
        T, C = rng.weibull(1.5, n), rng.exponential(1.2, n)
        y = make_survival_target(T <= C, np.minimum(T, C))
        assert 0.3 <= 1 - y["event"].mean() <= 0.6
        ps.append(Est(pvalues=True).fit(X, y).pvalues_)
    p = np.concatenate(ps)
    m = p.size
    for alpha in (0.05, 0.01):
        lo, hi = stats.binom.ppf([1e-4, 1 - 1e-4], m, alpha) / m
        assert lo <= np.mean(p < alpha) <= hi, (alpha, np.mean(p < alpha))
    assert stats.kstest(p, "uniform").pvalue > 1e-4


def test_bad_survival_input():
    X, y = _cox_data(30, 3, 1)
    est = ReliefF(n_neighbors=5)
    other = np.zeros(30, dtype=[("status", bool), ("time", float)])
    with pytest.raises(ValueError, match="fields 'event' .* and 'time'.*got the fields \\['status', 'time'\\]"):
        est.fit(X, other)
    with pytest.raises(ValueError, match="survival outcome must be a structured array"):
        ReliefF(target_type="survival").fit(X, y["time"])
    with pytest.raises(ValueError, match="target_type='continuous'"):
        ReliefF(target_type="continuous").fit(X, y)
    for field, value, msg in (("time", np.nan, "missing value"), ("time", np.inf, "infinite"),
                              ("time", -1.0, "negative")):
        bad = y.copy()
        bad[field][3] = value
        with pytest.raises(ValueError, match=msg):
            est.fit(X, bad)
    with pytest.raises(ValueError, match="no event"):
        est.fit(X, make_survival_target(np.zeros(30, bool), y["time"]))
    fe = np.zeros(30, dtype=[("event", float), ("time", float)])
    fe["time"] = y["time"]
    fe["event"] = 0.5
    with pytest.raises(ValueError, match="boolean"):
        est.fit(X, fe)
    fe["event"][0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X, fe)
    fe["event"] = 1.0  # 0 / 1 floats are accepted
    assert est.fit(X, fe).target_type_ == "survival"
    with pytest.raises(ValueError, match="all equal"):
        est.fit(X, make_survival_target(np.ones(30, bool), np.full(30, 2.0)))
    with pytest.raises(ValueError, match="samples"):
        est.fit(X[:20], y)
    assert is_survival_target(y) and not is_survival_target(y["time"])


def test_rank_table_survival_baseline_and_refusals():
    X, y = _cox_data(80, 6, 2)
    names = [f"f{j}" for j in range(6)]
    df = pd.DataFrame(X, columns=names)
    t = rank_table(["ReliefF", "MultiSURF"], df, y, pvalues=True, sort_by="mean_rank")
    z, p = cox_score_test(X, y["time"], y["event"])
    row = t.set_index("feature").loc[names]
    np.testing.assert_allclose(row["cox_score_stat"], z, rtol=1e-12)
    np.testing.assert_allclose(row["cox_score_p"], p, rtol=1e-12)
    np.testing.assert_allclose(row["ReliefF_p"], ReliefF(pvalues=True).fit(X, y).pvalues_, rtol=1e-12)
    assert "pearson_p" not in t and "t_test_p" not in t
    with pytest.raises(ValueError, match="survival outcome is scored by"):
        rank_table(["ReliefF", Simba()], X, y)


def test_cli_rank_survival_matches_library(tmp_path, capsys):
    X, y = _cox_data(90, 5, 3)
    names = ["g_a", "g_b", "g_c", "g_d", "g_e"]
    df = pd.DataFrame(X, columns=names)
    df.insert(0, "months", y["time"])
    df["dead"] = np.where(y["event"], "yes", "no")
    path = tmp_path / "cohort.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "ranks.csv"
    rc = main(["rank", str(path), "--target-type", "survival", "--time", "months", "--event", "dead", "--pvalues",
               "--out", str(out), "--scale", "none"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert "survival outcome" in cap.err
    table = pd.read_csv(out).set_index("feature").loc[names]  # by feature name, never by position
    lib = {"ReliefF": ReliefF(random_state=0, pvalues=True).fit(df[names], y),
           "MultiSURF": MultiSURF(random_state=0, pvalues=True).fit(df[names], y)}
    for m, w in lib.items():
        np.testing.assert_allclose(table[f"{m}_weight"], w.feature_importances_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(table[f"{m}_p"], w.pvalues_, rtol=1e-9, atol=1e-12)
    z, p = cox_score_test(X, y["time"], y["event"])
    np.testing.assert_allclose(table["cox_score_stat"], z, rtol=1e-9)
    np.testing.assert_allclose(table["cox_score_p"], p, rtol=1e-9)


@pytest.mark.parametrize("extra, message", [
    ([], "needs --time COL and --event COL"),
    (["--event", "dead", "--target", "g_a"], "leave out --target"),
    (["--event", "g_a"], "event column 'g_a' must be"),
    (["--event", "nope"], "no event column 'nope'"),
    (["--event", "dead", "--methods", "Simba"], "Simba has no definition for a survival outcome"),
    (["--event", "dead", "--covariates", "g_b"], "add --pvalues"),
])
def test_cli_rank_survival_bad_input(tmp_path, capsys, extra, message):
    X, y = _cox_data(30, 3, 4)
    df = pd.DataFrame(X, columns=["g_a", "g_b", "g_c"])
    df["months"], df["dead"] = y["time"], y["event"].astype(int)
    path = tmp_path / "c.csv"
    df.to_csv(path, index=False)
    rc = main(["rank", str(path), "--target-type", "survival", "--time", "months", *extra])
    err = capsys.readouterr().err
    assert rc == 2
    errors = [line for line in err.strip().splitlines() if not line.startswith("note:")]
    assert len(errors) == 1 and message in errors[0]


def test_cli_time_without_survival(tmp_path, capsys):
    path = tmp_path / "c.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "t": [1.0, 2, 3, 4], "y": [0, 1, 0, 1]}).to_csv(path, index=False)
    assert main(["rank", str(path), "--target", "y", "--time", "t"]) == 2
    assert "add --target-type survival" in capsys.readouterr().err


# ---- covariate-adjusted p-values: the Cox model on the covariates and the outcomes redrawn from it ----

def _breslow_loglik(beta, W, time, event):
    """From the definition: sum over the distinct event times ``s`` of ``sum_{events at s} w beta -
    d_s log sum_{time_j >= s} exp(w_j beta)``."""
    eta = W @ beta
    total = 0.0
    for s in np.unique(time[event]):
        dead = event & (time == s)
        total += eta[dead].sum() - dead.sum() * np.log(np.exp(eta[time >= s]).sum())
    return total


def _tied_cox_data(n, seed):
    rng = np.random.default_rng(seed)
    W = np.column_stack([rng.normal(size=n), rng.integers(0, 2, n), rng.normal(size=n)])
    T = rng.exponential(1.0 / np.exp(W @ np.array([0.7, -0.5, 0.0])))
    C = rng.exponential(1.5, size=n)
    return W, np.round(np.minimum(T, C), 1), T <= C  # rounded: tied times, events and censorings together


@pytest.mark.parametrize("seed", [0, 1])
def test_cox_fit_against_definition(seed):
    W, time, event = _tied_cox_data(80, seed)
    assert len(np.unique(time)) < 70 and (~event).sum() > 10
    beta, times, H = cox_fit(W, time, event)
    ll = _breslow_loglik(beta, W, time, event)
    best = optimize.minimize(lambda b: -_breslow_loglik(b, W, time, event), np.zeros(3), method="BFGS")
    assert ll >= -best.fun - 1e-9  # at least the optimum a general-purpose optimiser finds
    np.testing.assert_allclose(beta, best.x, atol=1e-4)
    h = 1e-5  # stationary: the definition's numerical gradient vanishes at beta
    grad = [(_breslow_loglik(beta + h * e, W, time, event) - _breslow_loglik(beta - h * e, W, time, event)) / (2 * h)
            for e in np.eye(3)]
    np.testing.assert_allclose(grad, 0.0, atol=1e-6)
    # Breslow's baseline cumulative hazard, from the definition
    eta = W @ beta
    ref = np.cumsum([np.sum(event & (time == s)) / np.exp(eta[time >= s]).sum() for s in np.unique(time[event])])
    np.testing.assert_array_equal(times, np.unique(time[event]))
    np.testing.assert_allclose(H, ref, rtol=1e-10)


def test_cox_fit_without_covariates_is_nelson_aalen_and_separation_warns():
    W, time, event = _tied_cox_data(60, 3)
    beta, times, H = cox_fit(np.zeros((60, 0)), time, event)
    assert beta.shape == (0,)
    na = nelson_aalen(time, event)
    np.testing.assert_allclose(H, [na[time == s][0] for s in times], rtol=1e-12)
    group = (np.arange(60) < 30).astype(float)  # every event in the first group: no finite optimum
    with pytest.warns(ConvergenceWarning, match="grows without bound"):
        beta, _, _ = cox_fit(group[:, None], time, event & (group == 1))
    assert beta[0] > 5


def test_redrawn_outcomes_keep_the_observed_censoring():
    W, time, event = _tied_cox_data(100, 4)
    t, e = redraw_survival(time, event, W, np.random.default_rng(0), 300)
    assert t.shape == e.shape == (100, 300)
    cens = ~event
    assert np.all(t[cens] <= time[cens][:, None])  # a censored sample keeps its censoring time
    assert np.all(e[cens] | (t[cens] == time[cens][:, None]))  # before it only an event
    assert np.all(e[event] | (t[event] >= time[event][:, None]))  # an event's censoring: at or after its time
    assert set(np.unique(t)) <= set(np.unique(time))
    # the model reproduces the observed censoring fraction
    assert abs((~e).mean() - cens.mean()) < 0.05


def test_redrawn_event_times_follow_the_model():
    """Without censoring, ``P(T_i <= s) = 1 - exp(-H0(s) exp(w_i beta))``: empirical frequencies of many draws
    within 5 standard errors."""
    rng = np.random.default_rng(5)
    n = 60
    W = rng.normal(size=(n, 2))
    time = np.round(rng.exponential(1.0 / np.exp(W @ np.array([1.0, 0.3]))), 2)
    event = np.ones(n, bool)
    beta, times, H = cox_fit(W, time, event)
    B = 20000
    t, e = redraw_survival(time, event, W, np.random.default_rng(6), B)
    lp = np.exp(W @ beta)
    for s in np.quantile(times, [0.2, 0.5, 0.8]):
        Hs = H[np.searchsorted(times, s, side="right") - 1]
        prob = 1 - np.exp(-Hs * lp)
        freq = ((t <= s) & e).mean(axis=1)
        assert np.all(np.abs(freq - prob) <= 5 * np.sqrt(prob * (1 - prob) / B) + 1e-12)


def _confounded_cox(n, n_conf, n_null, seed):
    """A numeric covariate ``c`` and a binary ``s`` drive the hazard (and ``s`` the censoring), ``n_conf``
    features follow ``c`` only, ``n_null`` are noise, the last one has an effect beyond the covariates."""
    rng = np.random.default_rng(seed)
    c, s, x_sig = rng.normal(size=n), rng.integers(0, 2, n), rng.normal(size=n)
    T = rng.exponential(1.0 / np.exp(2.0 * c + 0.5 * s + 1.0 * x_sig))
    C = rng.exponential(np.where(s == 1, 1.0, 2.0))
    X = np.hstack([c[:, None] + 0.3 * rng.normal(size=(n, n_conf)), rng.normal(size=(n, n_null)), x_sig[:, None]])
    cov = pd.DataFrame({"c": c, "s": np.array(["no", "yes"])[s]})
    return X, make_survival_target(T <= C, np.minimum(T, C)), cov


def _ks_at_support(p):
    v, counts = np.unique(p, return_counts=True)
    return float(stats.kstwo.sf(np.max(np.abs(np.cumsum(counts) / p.size - v)), p.size))


@pytest.mark.parametrize("Est", [ReliefF, MultiSURF])
def test_covariates_remove_a_confounder_of_a_censored_outcome(Est):
    n_conf, n_null = 8, 120
    unadj, adj = {"conf": [], "null": [], "sig": []}, {"conf": [], "null": [], "sig": []}
    for r in range(2):
        X, y, cov = _confounded_cox(240, n_conf, n_null, [9, r])
        assert 0.3 <= 1 - y["event"].mean() <= 0.6
        for out, C in ((unadj, None), (adj, cov)):
            p = Est(pvalues=True, random_state=r).fit(X, y, covariates=C).pvalues_
            out["conf"].extend(p[:n_conf])
            out["null"].extend(p[n_conf:-1])
            out["sig"].append(p[-1])
    assert np.median(unadj["conf"]) < 0.05  # unadjusted: the covariate's shadow is "found"
    conf = np.array(adj["conf"])
    assert np.mean(conf <= 0.05) <= 0.25 and np.median(conf) > 0.1  # adjusted: a null feature again
    assert max(adj["sig"]) <= 0.05  # an effect beyond the covariates stays
    null = np.array(adj["null"])  # beside strong signal: not too many small p-values (conservative is allowed)
    for alpha in (0.05, 0.01):
        assert np.sum(null <= alpha) <= stats.binom.isf(0.001, null.size, alpha), (alpha, np.mean(null <= alpha))


@pytest.mark.parametrize("Est", [ReliefF, MultiSURF])
def test_null_pvalues_uniform_given_covariates(Est):
    """The hazard depends on the covariates only (Weibull times, censoring 40 % and dependent on a covariate):
    noise features' adjusted p-values uniform, as far as 600 of them show."""
    ps = []
    for r in range(3):
        rng = np.random.default_rng([21, r])
        n = 200
        c, s = rng.normal(size=n), rng.integers(0, 2, n)
        T = rng.weibull(1.5, n) / np.exp(1.5 * c + 0.5 * s)
        C = rng.exponential(np.where(s == 1, 1.0, 2.0))
        X = np.hstack([c[:, None] + 0.5 * rng.normal(size=(n, 4)), rng.normal(size=(n, 200))])
        y = make_survival_target(T <= C, np.minimum(T, C))
        assert 0.3 <= 1 - y["event"].mean() <= 0.6
        cov = pd.DataFrame({"c": c, "s": np.array(["no", "yes"])[s]})
        ps.append(Est(pvalues=True, random_state=r).fit(X, y, covariates=cov).pvalues_[4:])
    null = np.concatenate(ps)
    for alpha in (0.05, 0.01):  # binomial bounds at 0.1 % each side
        lo, hi = stats.binom.ppf(0.001, null.size, alpha), stats.binom.isf(0.001, null.size, alpha)
        assert lo <= np.sum(null <= alpha) <= hi, (alpha, np.mean(null <= alpha))
    assert _ks_at_support(null) > 0.001


def test_covariate_pvalues_of_a_survival_outcome_match_the_definition():
    """ReliefF's pairs (the k nearest, found without the outcome), each feature's pair differences
    residualised on ``[1, |dc|, [s_i != s_j]]`` by least squares, ``S = r_a . g`` on the martingale residuals'
    differences, counted against the residuals of outcomes redrawn from the Cox model (all of them, then
    Besag & Clifford's rule)."""
    X, y, cov = _confounded_cox(70, 2, 3, 12)
    k, seed = 4, 5
    Z = (X - X.min(0)) / np.ptp(X, axis=0)
    idx = NearestNeighbors(n_neighbors=k + 1, metric="manhattan", algorithm="brute").fit(Z).kneighbors(
        Z, return_distance=False)
    src = np.repeat(np.arange(70), k)
    dst = np.array([[j for j in row if j != i][:k] for i, row in enumerate(idx)]).ravel()
    M = martingale_residuals(y["time"], y["event"])
    c, s = cov["c"].to_numpy(), (cov["s"] == "yes").to_numpy()
    Zc = np.column_stack([np.ones(src.size), np.abs(c[src] - c[dst]) / np.ptp(c), s[src] != s[dst]])
    rng = np.random.default_rng(check_random_state(seed).randint(np.iinfo(np.int32).max))
    values = np.column_stack([c, s.astype(float)])
    draws = survival_draws(y["time"], y["event"], _sample_design(values, np.array([False, True])), rng, N_RESAMPLES)
    g = np.abs(M[src] - M[dst]) / np.ptp(M)
    G = np.abs(draws[src] - draws[dst]) / np.ptp(M)
    est = ReliefF(n_neighbors=k, pvalues=True, random_state=seed).fit(X, y, covariates=cov)
    checked = 0
    for f in range(X.shape[1]):
        a = np.abs(Z[src, f] - Z[dst, f])
        r_a = a - Zc @ np.linalg.lstsq(Zc, a, rcond=None)[0]
        S, S_star = r_a @ g, r_a @ G
        if np.min(np.abs(S_star - S)) <= 1e-8 * np.abs(r_a).sum():
            continue  # a redraw within rounding of the observed statistic
        cum = np.cumsum(S_star >= S)
        ref = (SEQUENTIAL_H / (np.argmax(cum >= SEQUENTIAL_H) + 1) if cum[-1] >= SEQUENTIAL_H
               else (1 + cum[-1]) / (N_RESAMPLES + 1))
        assert est.pvalues_[f] == ref
        checked += 1
    assert checked >= 4
    # pseudo-t has no reference draws: it is the continuous outcome's on the residuals
    t_surv = ReliefF(n_neighbors=k, pvalues="pseudo-t").fit(X, y, covariates=cov).pvalues_
    t_cont = ReliefF(n_neighbors=k, pvalues="pseudo-t", target_type="continuous").fit(X, M, covariates=cov).pvalues_
    np.testing.assert_allclose(t_surv, t_cont, rtol=1e-12)


def test_cli_rank_survival_with_covariates_matches_library(tmp_path, capsys):
    X, y, cov = _confounded_cox(120, 2, 3, 13)
    names = ["g_a", "g_b", "g_c", "g_d", "g_e", "g_f"]
    df = pd.DataFrame(X, columns=names)
    df.insert(2, "age", cov["c"])  # between features: found by name, not position
    df.insert(0, "smoker", cov["s"])
    df["months"], df["dead"] = y["time"], np.where(y["event"], "yes", "no")
    path = tmp_path / "cohort.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "ranks.csv"
    rc = main(["rank", str(path), "--target-type", "survival", "--time", "months", "--event", "dead", "--pvalues",
               "--covariates", "age,smoker", "--out", str(out), "--scale", "none", "--methods", "ReliefF"])
    assert rc == 0, capsys.readouterr().err
    table = pd.read_csv(out).set_index("feature")
    assert sorted(table.index) == sorted(names)  # the covariates are not features
    w = ReliefF(random_state=0, pvalues=True).fit(df[names], y, covariates=df[["age", "smoker"]])
    unadjusted = ReliefF(random_state=0, pvalues=True).fit(df[names], y)
    np.testing.assert_allclose(table.loc[names, "ReliefF_p"], w.pvalues_, rtol=1e-12)
    np.testing.assert_allclose(table.loc[names, "ReliefF_q"], w.qvalues_, rtol=1e-12)
    assert not np.allclose(table.loc[names, "ReliefF_p"], unadjusted.pvalues_)
    p = cox_score_test(df[names].to_numpy(), y["time"], y["event"])[1]
    adj = univariate_tests(df[names], y, survival=True, covariates=df[["age", "smoker"]])["cox_adj"]
    assert "cox_score_stat" not in table  # the baseline is the score test given the covariates
    np.testing.assert_allclose(table.loc[names, "cox_score_adj_stat"], adj[0], rtol=1e-9)
    np.testing.assert_allclose(table.loc[names, "cox_score_adj_p"], adj[1], rtol=1e-9)
    assert not np.allclose(adj[1], p)
