"""Simba and G-flip (Gilad-Bachrach, Navot & Tishby 2004): hypothesis-margin weighting."""

import numbers
import time

import numpy as np
from sklearn.utils import check_random_state

from ..engine import jit as _jit
from ..engine import kernels as _kernels
from ..engine.neighbors import nearest_hits_misses
from ..utils import Interval, StrOptions
from ._base import BaseWeighter, warn_max_iter

__all__ = ["Simba", "GFlip"]

# G-flip: length of each sample's list of near neighbours kept between rebuilds
_GFLIP_LIST = 128


class Simba(BaseWeighter):
    """Simba: stochastic gradient ascent on the sum of hypothesis margins.

    The margin of ``x`` under weights ``w`` is
    ``theta(x) = 1/2 (||x - nearmiss(x)||_w - ||x - nearhit(x)||_w)`` with
    ``||z||_w = sqrt(sum_i w_i^2 z_i^2)``.  Starting from ``w = 1``, each step takes
    an instance and moves ``w`` along the gradient of its margin (Gilad-Bachrach,
    Navot & Tishby 2004, Fig. 1; the gradient is their eq. (5)); the result is
    ``w^2 / ||w^2||_inf``, used as weights of the squared Euclidean distance.

    Parameters
    ----------
    n_passes : int, default=1
        Passes over the data, each in a fresh random order (``T = n_passes * n`` steps).
    n_init : int, default=1
        Random starting orders; the run with the largest sum of margins is kept (the
        SQP-FW protocol uses 5).
    random_state : int, RandomState or None
        Seeds the orders of the instances.
    verbose : int, default=0
        ``> 0``: print after every start the sum of margins and the elapsed seconds.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,), max 1
    metric_ : ``"sqeuclidean"``
    margin_ : float
        Sum of the hypothesis margins of the kept run.

    References
    ----------
    R. Gilad-Bachrach, A. Navot and N. Tishby, "Margin based feature selection -
    theory and algorithms", ICML 2004.
    """

    _algorithm_version = 1

    _metric = "sqeuclidean"
    _parameter_constraints = {
        "n_passes": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, n_passes=1, n_init=1, random_state=None, verbose=0):
        self.n_passes = n_passes
        self.n_init = n_init
        self.random_state = random_state
        self.verbose = verbose

    def _fit(self, X, y):
        rng = check_random_state(self.random_state)
        X = np.ascontiguousarray(X, dtype=np.float64)
        best, best_margin = None, -np.inf
        t0 = time.perf_counter()
        if self.verbose:
            print(f"[{type(self).__name__}]")
            print(f"{'Start':>10} {'Sum of margins':>20} {'Time(s)':>10}")
        for start in range(1, self.n_init + 1):
            w = np.ones(X.shape[1])
            order = np.concatenate([rng.permutation(X.shape[0]) for _ in range(self.n_passes)]).astype(np.int64)
            _kernels.simba_pass(X, y, order, w)
            w2 = w * w
            m = w2.max()
            w2 = w2 / m if m > 0 else w2
            margin = _sum_hypothesis_margins(X, y, w2)
            if self.verbose:
                print(f"{start:>10d} {margin:>20.6e} {time.perf_counter() - t0:>10.2f}")
            if margin > best_margin:
                best, best_margin = w2, margin
        self.margin_ = float(best_margin)
        return best


def _sum_hypothesis_margins(X, y, w):
    # nearest hit and miss of every sample in row blocks (no n x n matrix)
    nb = nearest_hits_misses(X, y, w, 1, "sqeuclidean")
    nh = np.sqrt(np.maximum(nb.hit_dist[:, 0], 0))
    nm = np.sqrt(np.maximum(nb.miss_dist[:, 0], 0))
    ok = np.isfinite(nh) & np.isfinite(nm)
    return float(0.5 * (nm[ok] - nh[ok]).sum())


class GFlip(BaseWeighter):
    """G-flip: greedy feature flip maximising the sum of leave-one-out hypothesis margins.

    The evaluation of a feature set ``F`` is ``e(F) = sum_x u(theta_F(x))`` with
    ``theta_F(x) = 1/2 (||x - nearmiss(x)|| - ||x - nearhit(x)||)`` over the features
    of ``F`` (``x`` left out of its own neighbours).  Starting from ``F = {}``, each
    pass visits the features in a random order and flips each one in or out of
    ``F`` when that increases ``e``; it stops after a pass without a flip or at
    ``max_iter`` passes (Gilad-Bachrach, Navot & Tishby 2004, Fig. 2).

    Parameters
    ----------
    utility : {"linear", "zero-one", "sigmoid"}, default="linear"
        ``u`` of the evaluation: the margin itself, ``[theta > 0]`` (the leave-one-out
        1-NN accuracy), or ``1 / (1 + exp(-beta theta))``.
    beta : float, default=1.0
        Slope of the sigmoid utility.
    max_iter : int, default=20
        Most passes over the features.
    random_state : int, RandomState or None
        Seeds the order of the features in each pass.
    verbose : int, default=0
        ``> 0``: print after every pass the evaluation ``e(F)``, the flips, ``|F|`` and
        the elapsed seconds.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        1 for the selected features, 0 otherwise (all zero when no feature set has a
        positive evaluation gain: then no feature helps the 1-NN margin).
    support_ : ndarray of bool
    n_iter_ : int
    cost_history_ : list of float
        ``e(F)`` after each pass.
    metric_ : ``"sqeuclidean"``

    Notes
    -----
    Keeps the ``n x n`` matrix of squared distances over ``F``, updated in place per flip
    in O(n^2) (no ``n x n`` temporary).  A candidate flip changes every distance by
    ``+/- t**2`` for one feature, so the nearest hit and miss of a sample can only come
    from the samples that were near when the rows were last sorted: each row is scanned
    in that (stale) order and stops once a lower bound on the remaining candidates passes
    both minima found (exact: the same minima as a full scan).  Each row keeps its 128
    nearest others (a partition, ``O(n^2)``, then a sort of 128), rebuilt after flips
    once the scans since the last rebuild have taken as long as the rebuild did; a row whose
    list runs out before the bound is scanned in full.  Memory: the ``n x n`` matrix
    plus ``n x 128`` lists.
    """

    _algorithm_version = 1

    _metric = "sqeuclidean"
    _parameter_constraints = {
        "utility": [StrOptions({"linear", "zero-one", "sigmoid"})],
        "beta": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(self, utility="linear", beta=1.0, max_iter=20, random_state=None, verbose=0):
        self.utility = utility
        self.beta = beta
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose

    def _fit(self, X, y):
        rng = check_random_state(self.random_state)
        X = np.asarray(X, dtype=np.float64)
        n, d = X.shape
        u = {"linear": 0, "zero-one": 1, "sigmoid": 2}[self.utility]
        beta = float(self.beta)
        y = np.ascontiguousarray(y, dtype=np.int64)
        D = np.zeros((n, n))
        F = np.zeros(d, dtype=bool)
        buf = np.empty(n)
        cols = np.ascontiguousarray(X.T)
        slack = np.zeros(n)
        # per row, the K nearest others at the last rebuild (12 bytes a pair, n x K)
        sorted_scan = n > 2
        K = min(n - 1, _GFLIP_LIST)
        order = np.zeros((n, max(K, 1)), np.int64)  # valid indices before the first build
        sorted_d0 = np.empty((n, max(K, 1)))
        list_d = np.zeros((n, max(K, 1)))
        work, flips_since_sort, have_order = 0, 0, False
        scan_time, rebuild_time = 0.0, np.inf
        # small rows: whole runs of candidates in one compiled call (no per-candidate
        # overhead); large ones: one candidate a call, its rows in parallel
        batch = n * max(K, 1) * 4 < _jit.SERIAL_WORK

        def next_flip(perm, q):
            # (position of the next accepted candidate or of the next to try, its value or nan)
            nonlocal work, scan_time
            use_list = sorted_scan and have_order
            ts = time.perf_counter()
            if batch:
                q_new, value, visited = _kernels.gflip_scan_candidates(
                    D, cols, perm, q, F, current, y, order, list_d, sorted_d0, slack, u, beta, use_list, 2 * n * n)
            else:
                j = perm[q]
                sign = -1.0 if F[j] else 1.0
                if use_list:
                    visited = _kernels.gflip_sorted_margins(D, cols[j], sign, y, order, list_d, sorted_d0, slack, u,
                                                            beta, buf)
                else:
                    _kernels.gflip_margins(D, cols[j], sign, y, u, beta, buf)
                    visited = n * n
                value = buf.sum()
                q_new = q
                if not value > current + 1e-12 * max(1.0, abs(current)):
                    q_new, value = q + 1, np.nan
            if use_list:
                scan_time += time.perf_counter() - ts
            else:
                work += int(visited)
            return int(q_new), float(value)

        _kernels.gflip_margins(D, cols[0], 0.0, y, u, beta, buf)
        current = float(buf.sum())
        self.cost_history_ = []
        t0 = time.perf_counter()
        if self.verbose:
            print(f"[{type(self).__name__}]")
            print(f"{'Pass':>10} {'Objective Value':>20} {'flips':>8} {'|F|':>8} {'Time(s)':>10}")
        for it in range(1, self.max_iter + 1):
            n_flips = 0
            perm = rng.permutation(d).astype(np.int64)
            q = 0
            while q < d:
                # fresh lists after flips: first after two full scans, then once the scans since
                # the last rebuild have taken as long as it did (lists go stale as flips add
                # up; the result is exact whenever they are rebuilt)
                if sorted_scan and flips_since_sort and (work >= 2 * n * n or scan_time >= rebuild_time):
                    tr = time.perf_counter()
                    _kernels.gflip_sort_rows(D, order, list_d, sorted_d0, slack)
                    rebuild_time = time.perf_counter() - tr
                    work, scan_time, flips_since_sort, have_order = 0, 0.0, 0, True
                q, value = next_flip(perm, q)
                if not np.isnan(value):
                    j = perm[q]
                    _kernels.gflip_flip(D, cols[j], -1.0 if F[j] else 1.0, slack, order, list_d)
                    F[j] = not F[j]
                    current = value
                    n_flips += 1
                    flips_since_sort += 1
                    q += 1
            self.cost_history_.append(float(current))
            if self.verbose:
                print(f"{it:>10d} {current:>20.6e} {n_flips:>8d} {int(F.sum()):>8d} {time.perf_counter() - t0:>10.2f}")
            if not n_flips:
                break
        else:
            warn_max_iter(self, self.max_iter, "the feature set")
        self.n_iter_ = it
        self.support_ = F
        return F.astype(np.float64)
