"""HiGHS for the MDM linear programs: one LP kept alive between the rounds of constraint generation.

:class:`_Relaxation` holds a growing LP ``min c.v  s.t.  A v <= b, v >= 0`` in a ``highspy.Highs``
model, so every solve restarts the simplex from the last optimal basis;
:func:`_highs_vertex` is the crossover of the interior point (:mod:`.lp_ipm`): HiGHS' primal simplex
started from the basis an interior iterate suggests.
"""

import os
import sys

import highspy
import numpy as np
import scipy.sparse as sp

__all__ = []

#: HiGHS' own row/column scaling (``simplex_scale_strategy`` 2) doubles the simplex iterations on
#: MDM's dense rows; the features are standardised by the caller, so the LP is solved unscaled.  Devex pricing
#: (``simplex_dual_edge_weight_strategy`` 1) needs several times the iterations of the default steepest edge.
_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-9, "dual_feasibility_tolerance": 1e-9, "presolve": True,
                  "simplex_scale_strategy": 0}


_banner_done = False


def _new_highs(verbose=0):
    """A ``highspy.Highs`` object; the licence banner HiGHS writes to the process's standard output
    on its first construction is left out unless ``verbose >= 2`` (HiGHS' own log is wanted then).

    The banner comes from the C++ library at construction, before any option can be set, so
    file descriptor 1 is pointed at the null device for that one call.
    """
    global _banner_done
    cls = highspy.Highs
    if _banner_done or verbose >= 2:
        return cls()
    _banner_done = True
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no usable descriptor 1 (embedded interpreters)
        return cls()
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            return cls()
        finally:
            os.dup2(saved, 1)
            os.close(null)
    finally:
        os.close(saved)


class _Relaxation:
    """One growing LP ``min c.v  s.t.  A v <= b, v >= 0`` kept alive in HiGHS between rounds.

    Columns ``0 .. n_tail - 1`` are ``(r, xi)``; feature columns are appended in the
    order they are added.  Rows are appended too; nothing is ever removed, so the last
    optimal basis stays valid and each solve is warm-started from it.
    """

    def __init__(self, tail_cost, verbose=0):
        self.n_tail = tail_cost.size
        self.n_cols = self.n_tail
        self.n_rows = 0
        self._h = h = _new_highs(verbose)
        h.setOptionValue("output_flag", bool(verbose >= 2))
        for key, value in _HIGHS_OPTIONS.items():
            h.setOptionValue(key, value)
        k = self.n_tail
        h.addCols(k, tail_cost, np.zeros(k), np.full(k, np.inf), 0, np.zeros(k, np.int32), np.empty(0, np.int32),
                  np.empty(0))

    def add_rows(self, A, b):
        """Append the rows of ``A`` (CSR over the current columns) with upper bounds ``b``."""
        A = sp.csr_array(A)
        self._h.addRows(A.shape[0], np.full(A.shape[0], -np.inf), np.asarray(b, np.float64), A.nnz,
                        A.indptr[:-1].astype(np.int32), A.indices.astype(np.int32), A.data.astype(np.float64))
        self.n_rows += A.shape[0]

    def add_cols(self, A):
        """Append zero-cost columns ``>= 0`` given as a CSC matrix over the current rows."""
        A = sp.csc_array(A)
        k = A.shape[1]
        self._h.addCols(k, np.zeros(k), np.zeros(k), np.full(k, np.inf), A.nnz, A.indptr[:-1].astype(np.int32),
                        A.indices.astype(np.int32), A.data.astype(np.float64))
        self.n_cols += k

    def solve(self, time_limit=None):
        """Solve (warm-started); returns ``(status, x, dual, objective, iterations)``.

        ``status`` is ``"optimal"``, ``"time_limit"``, ``"infeasible"`` or HiGHS' own
        words; ``dual`` are the multipliers ``>= 0`` of the rows.
        """
        h = self._h
        # HiGHS compares its time_limit with its run clock, which adds up the time of every run()
        h.setOptionValue("time_limit", np.inf if time_limit is None else h.getRunTime() + max(float(time_limit), 1e-3))
        h.run()
        model_status = h.getModelStatus()
        name = getattr(model_status, "name", str(model_status))
        info = h.getInfo()
        iters = int(info.simplex_iteration_count) + int(info.ipm_iteration_count)
        if name == "kTimeLimit":
            return "time_limit", None, None, np.nan, iters
        if name != "kOptimal":
            status = "infeasible" if name in ("kInfeasible", "kUnboundedOrInfeasible") else h.modelStatusToString(
                model_status)
            return status, None, None, np.nan, iters
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=np.float64)
        dual = np.maximum(-np.asarray(sol.row_dual, dtype=np.float64), 0.0)
        return "optimal", x, dual, float(info.objective_function_value), iters



def _highs_vertex(A, b, c, st, time_limit=None, verbose=0):
    """Crossover fallback: the relaxation solved by HiGHS' simplex, started from the basis the IPM iterate suggests.

    Used when :func:`.lp_ipm._vertex` cannot certify the vertex (a degenerate optimum: not as many basic columns as
    active rows).  The guessed basis keeps the ``k = min(#B, #act)`` most clearly basic columns and active rows;
    HiGHS repairs a singular guess and pivots to an optimal basis.  Returns ``(status, x, lam, iterations)``.
    """
    m, nc = A.shape
    relax = _Relaxation(np.asarray(c, dtype=np.float64), verbose)
    relax.add_rows(sp.csr_array(A), b)
    h = relax._h
    # primal simplex: from the guessed basis of a dual-degenerate optimum (more basic columns than active rows)
    # it needs a few pivots, the dual simplex thousands
    if h is not None:
        h.setOptionValue("simplex_strategy", 4)
    try:
        bs = highspy.HighsBasisStatus
        col_score = st.x / st.z  # > 1: basic
        row_score = st.lam / st.s  # > 1: active
        n_act = int(np.count_nonzero(row_score > 1.0))
        n_basic_cols = min(int(np.count_nonzero(col_score > 1.0)), n_act, m)
        basic_cols = np.argsort(-col_score, kind="stable")[:n_basic_cols]
        act_rows = np.argsort(-row_score, kind="stable")[:n_basic_cols]
        col_status = [bs.kLower] * nc
        for j in basic_cols:
            col_status[j] = bs.kBasic
        row_status = [bs.kBasic] * m
        for i in act_rows:
            row_status[i] = bs.kUpper
        basis = highspy.HighsBasis()
        basis.col_status = col_status
        basis.row_status = row_status
        basis.valid = True
        h.setBasis(basis)
    except (ImportError, AttributeError, TypeError):  # pragma: no cover - SciPy's HiGHS: a cold solve
        pass
    status, x, dual, _, iters = relax.solve(time_limit)
    return status, x, dual, iters
