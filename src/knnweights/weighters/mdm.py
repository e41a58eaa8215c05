"""MDM: maximum distance minimisation (Hocke & Martinetz 2014), hard and soft, as exact LPs."""

import numbers
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._solvers.mdm_lp import duplicate_conflicts, solve_mdm
from ..utils import Interval, StrOptions
from ._base import BaseWeighter, warn_max_work

__all__ = ["MDM"]

#: ``lazy="auto"`` solves the full LP up to this many pairs ``n (n - 1) / 2``, constraint generation above
_AUTO_FULL_MAX_PAIRS = 1_000
#: lazy form: weight columns are generated too when ``d > 2 * _FEATURE_BLOCK``.  Adding
#: columns to a warm-started HiGHS model costs many primal pivots on dense-solution data,
#: so only wide tables start from a subset.
_FEATURE_BLOCK = 1024
#: default ``max_work`` (GFLOP): see the class docstring
_DEFAULT_MAX_WORK = 500.0


class MDM(BaseWeighter):
    """Maximum distance minimisation: feature weights from one linear program.

    Hard MDM (Hocke & Martinetz 2014, eqs. 6-8) finds ``w >= 0`` and the radius ``r``
    that minimise ``r`` subject to

    * ``||x_i - x_j||_w^2 >= 1`` for every pair of different labels (eq. 6),
    * ``||x_i - x_j||_w^2 <= r`` for every pair of equal labels (eq. 7),

    with ``||z||_w^2 = sum_mu w_mu z_mu^2`` (eq. 1): the largest within-class distance
    is minimised while the smallest between-class distance is held at 1.  Soft MDM
    (eqs. 12-14) adds a slack ``xi_i >= 0`` per sample, relaxes eq. 7 to
    ``||x_i - x_j||_w^2 <= r + xi_i`` for all ordered equal-label pairs ``(i, j)`` (so
    each pair is bounded by both ``r + xi_i`` and ``r + xi_j``, as eq. 13 quantifies over
    all ``i, j``), and minimises ``r + C sum_i xi_i``.  Both are the LP of eq. 9 with
    the rows of eq. 10 (``v = (w, r)`` resp. ``(w, r, xi)``), solved exactly: the lazy form
    by a dense primal-dual interior point per relaxation followed by an exact vertex
    (``knnweights._solvers.lp_ipm.dense_ipm``), the full LP by HiGHS' simplex (``highspy``).

    For ``C >= 1`` the (smaller) hard LP is solved and ``xi = 0`` reported: its optimum
    ``(w, r, 0)`` is optimal for the soft LP too (``r + max xi <= r + C sum xi``), and its
    multipliers, put on the ordered rows ``(i, j)``, ``i < j``, certify it (they sum to at
    most 1 over the compactness rows, so ``C - sum_j lambda_ij >= 0`` for every slack).

    The LP has ``O(n^2)`` rows.  With ``lazy`` it is solved by constraint generation:
    start from each sample's nearest misses and farthest hits, solve, scan all weighted
    distances block by block for violated pairs (different labels closer than 1, equal
    labels farther than ``r + xi_i``), add the most violated ones per sample, and repeat
    until none is violated.  MDM's rows are dense (``d`` nonzeros per pair) and so are its
    optima on gene-expression-like data (hundreds of nonzero weights), where HiGHS' simplex
    needs thousands of slow pivots; each relaxation is therefore solved by a Mehrotra
    interior point (Mehrotra's starting point, Gondzio's centrality correctors, normal
    equations in the smaller of the two dimensions, one BLAS thread, warm-started after
    small changes).  Rounds before the last stop at relative gap ``1e-2`` (their weights
    only find violated pairs); once such a point violates nothing, the same LP is solved
    on and its optimal vertex is recovered exactly: the basic columns and active rows
    read off the iterate give a square system whose solution is kept only if it passes
    the KKT conditions (feasibility, ``lambda >= 0``, reduced costs ``>= 0``); otherwise
    HiGHS' primal simplex starts from that basis.  Every pair and feature is checked
    again at that vertex.  Rows inactive at two successive relaxations leave the LP (each
    pair at most once; the scan brings back any that is violated later).
    A solution of a relaxation that satisfies every constraint is optimal for the full
    LP, so the result is the full LP's optimum (and the duals of the working set, padded
    with zeros, are an optimality certificate for the full LP).

    The weights do not depend on the scaling of the input (the paper's point): scaling
    feature ``j`` by ``c`` scales ``w_j`` by ``1 / c**2`` and leaves every weighted
    distance unchanged.  Features are standardised internally for the solver and the
    weights mapped back.  Constant features get weight 0.  Many weights are exactly 0
    at the LP's vertex solution, which reduces the dimension (see the notes).

    Parameters
    ----------
    soft : bool, default=True
        Soft MDM (eqs. 12-14); ``False`` is hard MDM (eqs. 6-8).
    C : float, default=1.0
        Penalty of the slacks in soft MDM (eq. 14); ignored when ``soft=False``.  For
        ``C >= 1`` soft MDM has the hard optimum (``(w, r + max xi)`` is hard-feasible
        and ``r + max xi <= r + C sum xi``), so the soft form differs from the hard one
        only for ``C < 1``.  The paper's text available to us does not say how C was
        chosen; :func:`knnweights.evaluation.model_selection.select_C` chooses it by
        stratified internal cross-validation over ``10**-3 .. 10**0``.
    lazy : {"auto", True, False}, default="auto"
        Constraint generation (``True``) or the full LP (``False``); ``"auto"`` uses the
        full LP up to 1 000 sample pairs (n <= 45) and constraint generation above.
        With more than 2048 features the lazy form also generates the weight columns
        (features priced in by reduced cost), which makes ``d >> n`` fast.
    max_rounds : int, default=100
        Most LP solves of the lazy form; stopping there emits a ConvergenceWarning.
    n_init : int, default=2
        Nearest misses and farthest hits per sample in the first working set.
    n_add : int or "auto", default="auto"
        Most violated pairs of each kind added per sample and round.  ``"auto"``:
        ``max(3, 800 // n)`` (at most ``n``), i.e. about 1 600 pairs per round for small ``n``,
        where a round (an interior-point solve of a dense LP) costs much more than its size
        grows, and 3 per sample for ``n >= 267``.
    tol : float, default=1e-8
        Violation tolerance of the lazy form, in the LP's distance units (the smallest
        between-class distance is 1).
    time_limit : float or None, default=None
        Wall-clock seconds for the whole fit.  The interior point predicts the time of its
        next iteration (flop count over the rate measured so far) and does not start one
        that would end past the limit; the vertex recovery stops there too, HiGHS gets the
        time left as its ``time_limit``.  The overrun is thus at most the error of one such
        prediction plus one distance scan.  When it runs out, ``fit`` emits a ConvergenceWarning and keeps the best
        feasible point of the full LP found so far (a relaxation's weights, or the last
        interior iterate's, scaled so that every pair satisfies eqs. 6 / 12, with the best
        ``r`` and ``xi`` for them), not the optimum.  ``None``: no limit.  Results then
        depend on the machine's speed and load; prefer ``max_work`` for reproducible runs.
    max_work : float or None, default=500.0
        Budget of floating-point work for the whole fit, in GFLOP (1e9 floating-point
        operations), counted by the solver's own cost model, never by the clock: per
        interior-point iteration (and starting point) of an ``m x k`` relaxation,
        ``min(m, k)^2 max(m, k)`` for the normal matrix (``dsyrk``), ``min(m, k)^3 / 3`` for its
        Cholesky factor and ``10 m k`` for the products with the constraint matrix; per try of
        the exact vertex, an LU of the basis and the KKT checks; per scan of all pairs (and
        pricing of all features), ``2 n^2 d``.  An interior-point iteration or vertex try
        that would pass the budget is not started; ``fit`` then emits a ConvergenceWarning
        and keeps the best feasible point found, as for ``time_limit``
        (``stop_reason_ = "max_work"``).  Since the count depends only on the LP's shapes,
        the stop, and so the weights, are the same on every machine, at any load and with
        any thread count.  The default binds only where the exact optimum is out of reach
        in practice: it is 1.5 times the work of the largest exact fit on the bundled and
        synthetic benchmark tables, and stops the wide tables with a dense optimum, whose
        final LPs cost 100-500 GFLOP per interior-point iteration.  ``None``: no
        budget (the exact optimum, however long it takes).  Applies to the lazy form (the
        full LP of ``lazy=False``, at most 45 samples with ``"auto"``, is solved by HiGHS).
    verbose : int, default=0
        1: one line per LP round (rows, columns, objective, LP iterations, LP time,
        pairs and features added, best feasible objective, work counted for ``max_work``,
        elapsed time) and a line when ``max_work`` or ``time_limit`` stops the fit; 2: one line per
        interior-point iteration and HiGHS' log too.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        The weights ``w`` of eq. 1, in the units of the input (not normalised: they
        put the closest pair of different labels at squared distance 1).
    metric_ : ``"sqeuclidean"``
    radius_ : float
        ``r``: the largest (hard) or the soft bound on within-class squared distances.
    slacks_ : ndarray of shape (n_samples,)
        ``xi`` of soft MDM (zeros for hard MDM).
    objective_ : float
        ``r`` (hard) or ``r + C sum xi`` (soft).
    n_iter_ : int
        LP solves (rounds of constraint generation; 1 for the full LP).
    lp_iterations_ : int
        Interior-point iterations (lazy form; plus simplex iterations of any HiGHS
        crossover) or simplex iterations (full LP), all rounds together.
    lp_time_ : float
        Seconds spent inside the LP solver.
    stop_reason_ : {"optimal", "max_rounds", "time_limit", "max_work"}
        Why the fit ended: the exact optimum, or (with a ConvergenceWarning) the best
        feasible point at ``max_rounds``, ``time_limit`` or the work budget ``max_work``.
    work_ : float
        Floating-point work counted for ``max_work`` (GFLOP), all rounds together.
    n_lp_features_ : int
        Weight columns in the final LP (fewer than ``n_features`` when the lazy form
        generated them; every left-out feature has weight 0 and a nonnegative reduced cost).
    cost_history_ : list of float
        LP objective per round (non-decreasing while only rows are added; adding
        weight columns can lower it).
    n_constraints_ : int
        Constraints (pairs) in the final LP.
    constraint_pairs_ : ndarray of shape (n_constraints_, 2)
        Sample indices ``(i, j)`` of each constraint of the final LP; for soft
        compactness rows the slack is ``xi_i``.
    constraint_kind_ : ndarray of shape (n_constraints_,)
        0 = separation (eq. 6 / 12), 1 = compactness (eq. 7 / 13).
    dual_ : ndarray of shape (n_constraints_,)
        Lagrange multipliers (``>= 0``) of those constraints at the optimal vertex; all
        other pairs have multiplier 0.
    support_vectors_ : ndarray of shape (n_active, 2)
        The pairs with a positive multiplier (the pairs that determine ``w``).

    Notes
    -----
    Infeasibility: the hard and the soft form are infeasible exactly when two
    identical samples have different labels (eq. 6 cannot hold for them); ``fit``
    then raises a ``ValueError`` naming the pair.

    On the colon cancer microarray (``colon_alon``, 62 x 2000) most weights are
    exactly zero, the automatic dimension reduction the paper reports for gene
    expression data.

    References
    ----------
    J. Hocke and T. Martinetz, "Maximum distance minimization for feature weighting",
    Pattern Recognition Letters 52 (2015) 48-52, doi:10.1016/j.patrec.2014.10.003.

    Examples
    --------
    >>> import numpy as np
    >>> from knnweights import MDM
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)); y = (X[:, 0] > 0).astype(int)
    >>> X[:, 0] += 3 * y
    >>> mdm = MDM(soft=False).fit(X, y)
    >>> int(np.argmax(mdm.feature_importances_))
    0
    """

    _algorithm_version = 1

    _metric = "sqeuclidean"
    _min_class_size = 1
    _parameter_constraints = {
        "soft": ["boolean"],
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "lazy": [StrOptions({"auto"}), "boolean"],
        "max_rounds": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_init": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_add": [Interval(numbers.Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "time_limit": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "max_work": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "verbose": ["verbose"],
    }

    def __init__(self, soft=True, C=1.0, lazy="auto", max_rounds=100, n_init=2, n_add="auto", tol=1e-8, time_limit=None,
                 max_work=_DEFAULT_MAX_WORK, verbose=0):
        self.soft = soft
        self.C = C
        self.lazy = lazy
        self.max_rounds = max_rounds
        self.n_init = n_init
        self.n_add = n_add
        self.tol = tol
        self.time_limit = time_limit
        self.max_work = max_work
        self.verbose = verbose

    def _fit(self, X, y):
        X = np.asarray(X, dtype=np.float64)
        n = X.shape[0]
        conflicts = duplicate_conflicts(X, y)
        if conflicts.size:
            i, j = (int(v) for v in conflicts[0])
            raise ValueError(
                f"MDM is infeasible: samples {i} and {j} are identical but have different labels "
                f"({self.classes_[y[i]]!r} and {self.classes_[y[j]]!r}), so no weighting puts them at distance >= 1 "
                f"(eq. 6 / 12). {len(conflicts)} such pair(s) in all. Remove or merge these duplicates (e.g. keep "
                "one sample per distinct point, with its majority label) before fitting."
            )
        # MDM is scale invariant: solve on standardised features, map the weights back
        scale = X.std(axis=0)
        scale[scale == 0] = 1.0
        Xs = (X - X.mean(axis=0)) / scale
        lazy = self.lazy if self.lazy != "auto" else n * (n - 1) // 2 > _AUTO_FULL_MAX_PAIRS
        res = solve_mdm(Xs, y, soft=bool(self.soft), C=float(self.C), lazy=bool(lazy), max_rounds=self.max_rounds,
                        n_init=self.n_init, n_add=_auto_n_add(n) if self.n_add == "auto" else self.n_add,
                        tol=self.tol,
                        feature_block=_FEATURE_BLOCK if X.shape[1] > 2 * _FEATURE_BLOCK else None,
                        time_limit=self.time_limit, max_work=self.max_work, verbose=int(self.verbose))
        if res.status == 1:
            warnings.warn(
                f"MDM stopped at max_rounds={self.max_rounds} LP solves with constraints still violated (largest "
                f"violation {res.max_violation:.3g}); the weights are the best feasible point found (objective "
                f"{res.fun:.6g}), not the MDM optimum. Increase max_rounds or n_add.",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif res.status == 2:
            warnings.warn(
                f"MDM stopped at time_limit={self.time_limit} s ({res.message}, {res.n_rounds} LP round(s), "
                f"{res.lp_iterations} LP iterations); the weights are the best feasible point found (objective "
                f"{res.fun:.6g}, last relaxation {res.history[-1] if res.history else float('nan'):.6g}), not the "
                "MDM optimum. Increase time_limit.",
                ConvergenceWarning,
                stacklevel=3,
            )
        elif res.status == 3:
            warn_max_work(self, self.max_work,
                          f"{res.message}, {res.n_rounds} LP round(s), {res.lp_iterations} LP iterations, "
                          f"{res.work:.4g} GFLOP counted",
                          f"the best feasible point found (objective {res.fun:.6g}, last relaxation "
                          f"{res.history[-1] if res.history else float('nan'):.6g})", "the MDM optimum")
        self.stop_reason_ = {0: "optimal", 1: "max_rounds", 2: "time_limit", 3: "max_work"}[res.status]
        self.work_ = res.work
        self.radius_ = res.r
        self.slacks_ = res.xi
        self.objective_ = res.fun
        self.n_iter_ = res.n_rounds
        self.lp_iterations_ = res.lp_iterations
        self.lp_time_ = res.lp_time
        self.n_lp_features_ = int(res.features.size)
        self.cost_history_ = res.history
        self.n_constraints_ = res.n_constraints
        self.constraint_pairs_ = res.pairs
        self.constraint_kind_ = res.kind
        self.dual_ = res.dual
        self.support_vectors_ = res.pairs[res.dual > 0]
        w = res.w / scale**2
        w[np.ptp(X, axis=0) == 0] = 0.0
        return w


def _auto_n_add(n):
    """``n_add="auto"``: about 1 600 pairs per round for small ``n``, 3 per sample and kind from ``n = 267`` on."""
    return int(min(max(n - 1, 1), max(3, 800 // max(n, 1))))
