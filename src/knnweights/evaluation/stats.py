"""Paired tests and the papers' win / tie / loss rules.

* I-M4E (Bei & Hong, Sec. 5.2): Student's paired two-tailed t-test over the 10 x 10
  cross-validation accuracies; a method **wins** when ``p < 0.01`` **and** its mean
  accuracy is at least 0.5 percentage points higher, otherwise the two **tie**
  (``win_tie_loss(a, b)`` with the defaults).
* LH-RELIEF (Cai & Ng, Table 2): paired two-tailed t-test at ``p < 0.05`` with no
  minimum difference (``win_tie_loss(a, b, alpha=0.05, min_diff=0)``).
* Nadeau & Bengio (2003), "Inference for the generalization error", Machine Learning
  52: the corrected resampled t-test, whose variance term ``(1/J + n_test/n_train) s^2``
  accounts for the overlap of the training sets of repeated splits
  (:func:`corrected_ttest`).

Accuracies are in percent (as the papers print them), so ``min_diff`` is in percentage
points.  Differences that are all equal never give NaN: all zero is a tie with
``p = 1``; a constant non-zero difference has ``p = 0`` (its t statistic is infinite).
"""

from collections import Counter

import numpy as np
from scipy import stats as _sps

from .results import as_records, paired_cells

__all__ = [
    "paired_ttest",
    "corrected_ttest",
    "corrected_interval",
    "wilcoxon_test",
    "paired_outcome",
    "win_tie_loss",
    "count_outcomes",
    "win_tie_loss_table",
    "format_wtl",
]


def _as_diffs(acc_a, acc_b=None):
    a = np.asarray(acc_a, dtype=np.float64).ravel()
    if acc_b is None:
        d = a
    else:
        b = np.asarray(acc_b, dtype=np.float64).ravel()
        if a.shape != b.shape:
            raise ValueError(f"paired samples need equal lengths; got {a.shape[0]} and {b.shape[0]}.")
        d = a - b
    if d.size == 0:
        raise ValueError("no paired values given.")
    if not np.all(np.isfinite(d)):
        raise ValueError("paired values must be finite (no NaN or inf).")
    return d


def _t_from(mean, var_term, df):
    """Two-tailed p of ``t = mean / sqrt(var_term)``; zero variance handled without NaN."""
    if var_term <= 0.0 or not np.isfinite(var_term):
        if mean == 0.0:
            return 0.0, 1.0
        return float(np.copysign(np.inf, mean)), 0.0
    t = mean / np.sqrt(var_term)
    p = 2.0 * _sps.t.sf(abs(t), df)
    return float(t), float(min(1.0, p))


def paired_ttest(acc_a, acc_b):
    """Student's paired two-tailed t-test of ``acc_a`` against ``acc_b``.

    Parameters
    ----------
    acc_a, acc_b : array-like of shape (n,)
        Paired results (e.g. the accuracy of two methods on the same folds).

    Returns
    -------
    t : float
        ``mean(d) / (std(d, ddof=1) / sqrt(n))`` with ``d = acc_a - acc_b``;
        ``0`` when all differences are zero, ``+-inf`` when they are equal and non-zero.
    p : float
        Two-tailed p-value (``n - 1`` degrees of freedom); ``1`` for identical inputs,
        ``0`` for a constant non-zero difference.  Equals :func:`scipy.stats.ttest_rel`
        wherever that is defined.
    """
    d = _as_diffs(acc_a, acc_b)
    n = d.size
    if n < 2:
        return _t_from(float(d.mean()), 0.0 if d[0] == 0 else np.inf, 1)
    var = d.var(ddof=1)
    # differences equal up to rounding: treat as zero variance (no spurious huge t)
    if var <= (1e-12 * max(1.0, float(np.abs(d).max()))) ** 2:
        var = 0.0
    return _t_from(float(d.mean()), var / n, n - 1)


def corrected_ttest(diffs, n_train, n_test):
    """Nadeau & Bengio's corrected resampled t-test.

    For ``J`` paired differences from repeated train/test splits (repeated CV or
    random subsampling), ``t = mean(d) / sqrt((1/J + n_test/n_train) * s^2)`` with
    ``s^2 = var(d, ddof=1)``, compared with Student's t on ``J - 1`` degrees of freedom
    (Nadeau & Bengio 2003, Machine Learning 52:239-281, Sec. 4; Bouckaert & Frank 2004).
    The plain paired t-test uses ``1/J`` alone and is too liberal because the
    training sets overlap.

    Parameters
    ----------
    diffs : array-like of shape (J,)
        Differences of the two methods' results on the same splits.
    n_train, n_test : int
        Training and test set sizes of one split (for k-fold CV:
        ``n_test/n_train = 1/(k-1)``).

    Returns
    -------
    t, p : float
        Statistic and two-tailed p-value (``p = 1`` when all differences are zero).

    Examples
    --------
    >>> t, p = corrected_ttest([1.0, 2.0, 3.0, 2.0], n_train=90, n_test=10)
    >>> round(t, 4), round(p, 4)
    (4.0762, 0.0267)
    """
    d = _as_diffs(diffs)
    return _t_from(float(d.mean()), _corrected_variance(d, n_train, n_test), d.size - 1)


def _corrected_variance(d, n_train, n_test):
    """Nadeau & Bengio's variance of the mean of ``d``: ``(1/J + n_test/n_train) var(d, ddof=1)``."""
    if n_train <= 0 or n_test <= 0:
        raise ValueError(f"n_train and n_test must be positive; got {n_train} and {n_test}.")
    J = d.size
    if J < 2:
        raise ValueError("the corrected resampled t-test needs at least 2 differences.")
    var = d.var(ddof=1)
    if var <= (1e-12 * max(1.0, float(np.abs(d).max()))) ** 2:
        var = 0.0
    return (1.0 / J + n_test / n_train) * var


def corrected_interval(values, n_train, n_test, confidence=0.95):
    """Confidence interval of a mean over resampled splits, with Nadeau & Bengio's corrected variance.

    ``mean +- t_{J-1} sqrt((1/J + n_test/n_train) s^2)``: the interval that inverts
    :func:`corrected_ttest` (the plain ``s^2 / J`` ignores the overlap of the training sets of
    repeated splits and is too narrow).

    Parameters
    ----------
    values : array-like of shape (J,)
        One result per split (an accuracy, or a difference of two methods' results).
    n_train, n_test : int
        Training and test set sizes of one split.
    confidence : float, default=0.95
        Coverage of the interval.

    Returns
    -------
    mean : float
        The mean of ``values``.
    low, high : float
        The interval's bounds (both the mean when the values are all equal).

    Examples
    --------
    >>> mean, low, high = corrected_interval([0.8, 0.9, 0.85, 0.75], n_train=90, n_test=10)
    >>> round(mean, 3), round(low, 3), round(high, 3)
    (0.825, 0.702, 0.948)
    """
    d = _as_diffs(values)
    mean = float(d.mean())
    half = float(_sps.t.ppf(0.5 + confidence / 2.0, d.size - 1) * np.sqrt(_corrected_variance(d, n_train, n_test)))
    return mean, mean - half, mean + half


def wilcoxon_test(acc_a, acc_b):
    """Wilcoxon signed-rank test of ``acc_a`` against ``acc_b`` (two-sided).

    Zero differences are dropped (``zero_method="wilcox"``).  It assumes less than the
    t-test (no normality), at the price of less power on few folds.

    Parameters
    ----------
    acc_a : array-like of shape (n,)
        Results of the first method (e.g. accuracies per fold).
    acc_b : array-like of shape (n,)
        Results of the second method on the same folds, in the same order.

    Returns
    -------
    statistic : float
        The signed-rank statistic of :func:`scipy.stats.wilcoxon`.
    p : float
        Two-sided p-value; identical inputs give ``(0.0, 1.0)``.
    """
    d = _as_diffs(acc_a, acc_b)
    if np.all(d == 0):
        return 0.0, 1.0
    res = _sps.wilcoxon(d, zero_method="wilcox", alternative="two-sided")
    return float(res.statistic), float(res.pvalue)


def _p_value(acc_a, acc_b, test, n_train, n_test):
    if test == "ttest":
        return paired_ttest(acc_a, acc_b)[1]
    if test == "corrected":
        if n_train is None or n_test is None:
            raise ValueError('test="corrected" needs n_train and n_test.')
        return corrected_ttest(_as_diffs(acc_a, acc_b), n_train, n_test)[1]
    if test == "wilcoxon":
        return wilcoxon_test(acc_a, acc_b)[1]
    raise ValueError(f'test must be "ttest", "corrected" or "wilcoxon"; got {test!r}.')


def win_tie_loss(acc_a, acc_b, alpha=0.01, min_diff=0.5, test="ttest", n_train=None, n_test=None):
    """Win, tie or loss of method ``a`` against method ``b`` on paired results.

    ``a`` **wins** when the paired two-tailed test gives ``p < alpha`` and
    ``mean(acc_a) - mean(acc_b) >= min_diff``; it **loses** when ``p < alpha`` and
    ``mean(acc_b) - mean(acc_a) >= min_diff``; otherwise it is a **tie**.  The defaults
    are I-M4E's rule (Bei & Hong, Sec. 5.2: ``p < 0.01`` and at least 0.5 points);
    LH-RELIEF's is ``alpha=0.05, min_diff=0``.

    Parameters
    ----------
    acc_a, acc_b : array-like of shape (n,)
        Paired accuracies in percent (same folds, same order).
    alpha : float, default=0.01
        Significance level of the paired test.
    min_diff : float, default=0.5
        Minimum mean difference, in the unit of the accuracies (percentage points).
    test : {"ttest", "corrected", "wilcoxon"}, default="ttest"
        Student's paired t-test, Nadeau & Bengio's corrected test (needs ``n_train``,
        ``n_test``) or the Wilcoxon signed-rank test.
    n_train, n_test : int, optional
        Split sizes for ``test="corrected"``.

    Returns
    -------
    outcome : {"win", "tie", "loss"}
        The outcome from ``a``'s side.

    Examples
    --------
    >>> a = [90.0, 91.0, 92.0, 90.0, 91.0, 92.0]
    >>> b = [80.0, 80.5, 81.0, 80.0, 80.5, 81.5]
    >>> win_tie_loss(a, b), win_tie_loss(b, a), win_tie_loss(a, a)
    ('win', 'loss', 'tie')
    """
    mean = float(_as_diffs(acc_a, acc_b).mean())
    return paired_outcome(mean, lambda: _p_value(acc_a, acc_b, test, n_train, n_test), alpha=alpha,
                          min_diff=min_diff)


def paired_outcome(mean_diff, p, *, alpha, min_diff=0.0):
    """Win, tie or loss from a mean paired difference and its test's p-value: every W/T/L rule of the package.

    ``"win"`` when ``p < alpha`` and ``mean_diff >= min_diff``, ``"loss"`` when ``p < alpha``
    and ``-mean_diff >= min_diff``, else ``"tie"``; a zero difference is always a tie.

    Parameters
    ----------
    mean_diff : float
        Mean difference of the judged side minus the other, oriented so that larger is
        better (for an error rate: the other's minus the judged side's).
    p : float or callable
        The paired test's p-value, or a function returning it, called only when the
        difference is large enough to matter (a tie then needs no test).
    alpha : float
        Significance level.
    min_diff : float, default=0.0
        Minimum absolute mean difference for a win or a loss.

    Returns
    -------
    outcome : {"win", "tie", "loss"}
        The outcome from the judged side.
    """
    if abs(mean_diff) < min_diff or mean_diff == 0.0:
        return "tie"
    p = p() if callable(p) else p
    if not p < alpha:
        return "tie"
    return "win" if mean_diff > 0 else "loss"


def count_outcomes(outcomes):
    """Wins, ties and losses counted from a sequence of outcomes, with their ``"w/t/l"``.

    Parameters
    ----------
    outcomes : iterable of {"win", "tie", "loss"}
        One outcome per comparison.

    Returns
    -------
    counts : dict
        ``wins``, ``ties``, ``losses`` (ints) and ``wtl`` (:func:`format_wtl`).
    """
    c = Counter(outcomes)
    counts = {"wins": c["win"], "ties": c["tie"], "losses": c["loss"]}
    return {**counts, "wtl": format_wtl(counts)}


def format_wtl(counts):
    """``"w/t/l"`` as the papers print it, from a ``(wins, ties, losses)`` triple or dict.

    Parameters
    ----------
    counts : tuple of int or dict
        ``(wins, ties, losses)``, or a dict with keys ``wins``, ``ties``, ``losses``
        (a row of :func:`win_tie_loss_table`).

    Returns
    -------
    wtl : str
        E.g. ``"1/0/4"``.
    """
    if isinstance(counts, dict):
        counts = (counts["wins"], counts["ties"], counts["losses"])
    return "{}/{}/{}".format(*(int(c) for c in counts))


def win_tie_loss_table(results, reference, *, alpha=0.01, min_diff=0.5, test="corrected", value="accuracy",
                       methods=None):
    """W/T/L of every method against ``reference`` over datasets, counted from the competitor's side.

    For each dataset and each method other than ``reference``, the paired results of
    the method and the reference on the same (repeat, fold) cells are compared with
    :func:`win_tie_loss` (the competitor as ``a``), as I-M4E's Tables 3-5 print them
    ("the number of times each algorithm W/T/L when compared to I-M4E": ``1/0/4``
    means it beat I-M4E on one dataset and lost on four).

    The default test is Nadeau & Bengio's corrected resampled t-test: the cells of
    repeated cross-validation share most of their training rows, so the plain paired
    t-test, which treats them as independent, finds differences far too often.  The
    papers used the plain test; ``test="ttest"`` reproduces their tables.

    Parameters
    ----------
    results : list of dict or pandas.DataFrame
        Tidy rows with keys ``method``, ``dataset``, ``repeat``, ``fold`` and ``value``
        (as :func:`knnweights.evaluation.run_grid` returns).
    reference : str
        The reference method.
    alpha : float, default=0.01
        Significance level of the paired test, as in :func:`win_tie_loss`.
    min_diff : float, default=0.5
        Minimum mean difference (percentage points), as in :func:`win_tie_loss`.
    test : {"corrected", "ttest", "wilcoxon"}, default="corrected"
        As in :func:`win_tie_loss`; ``"corrected"`` takes ``n_train`` / ``n_test``
        from the rows (their means; :func:`~knnweights.evaluation.run_grid` writes
        them), ``"ttest"`` is the papers' plain paired t-test.
    value : str, default="accuracy"
        Column compared (e.g. ``"score"`` for another scorer).
    methods : list of str, optional
        Order of the competitors (default: order of first appearance).

    Returns
    -------
    list of dict
        One row per competitor: ``method``, ``wins``, ``ties``, ``losses``, ``wtl``
        (``"w/t/l"``) and ``per_dataset`` (dataset -> outcome, p-value, mean difference).
    """
    rows = as_records(results)
    table, sizes = paired_cells(rows, value)
    datasets = list(dict.fromkeys(r["dataset"] for r in rows))
    if methods is None:
        methods = [m for m in dict.fromkeys(r["method"] for r in rows) if m != reference]
    out = []
    for m in methods:
        per = {}
        for ds in datasets:
            ref, comp = table.get((reference, ds)), table.get((m, ds))
            if not ref or not comp:
                continue
            cells = sorted(set(ref) & set(comp))
            if not cells:
                continue
            a = np.array([comp[c] for c in cells])
            b = np.array([ref[c] for c in cells])
            n_train = n_test = None
            if test == "corrected":
                if ds not in sizes:
                    raise ValueError(
                        f'test="corrected" (the default) needs n_train and n_test in the rows of dataset {ds!r} '
                        '(run_grid writes them); pass test="ttest" for the plain paired t-test.')
                n_train, n_test = sizes[ds]
            outcome = win_tie_loss(a, b, alpha=alpha, min_diff=min_diff, test=test, n_train=n_train, n_test=n_test)
            per[ds] = {"outcome": outcome, "p": _p_value(a, b, test, n_train, n_test) if len(cells) > 1 else 1.0,
                       "diff": float(a.mean() - b.mean()), "n_pairs": len(cells)}
        out.append({"method": m, **count_outcomes(v["outcome"] for v in per.values()), "per_dataset": per})
    return out
