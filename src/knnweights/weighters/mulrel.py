"""MulRel: Relief repeated with the target neighbours of the previous round's weights."""

import numbers
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..utils import Interval, StrOptions
from ._base import l2_norm, normalize_weights
from ._relief_base import ReliefBase
from ._relief_margins import relieff_margins

__all__ = ["MulRel"]


class MulRel(ReliefBase):
    """MulRel: Relief repeated with the target neighbours of the previous weights.

    Takeuchi & Sugiyama (SQP-FW paper, Sec. 5) define it to mitigate Relief's
    TN-weight inconsistency: "we repeat the Relief procedure using the TNs defined by
    the learned weights in the previous loop".  Round 1 is plain Relief (unweighted
    nearest hit and miss); each later round finds the ``n_neighbors`` nearest hits and
    misses under the weighted Manhattan distance of the previous round's weights and
    recomputes ``w = (mean z)+ / ||(mean z)+||_2``.  The paper runs a fixed number of
    outer rounds (100); the procedure need not converge (the neighbours can keep
    switching), so ``n_rounds`` rounds are run and the last weights returned, stopping
    early only at an exact fixed point (weights that reproduce themselves).

    The definition itself can end in a 2-cycle whose two ends rank different
    relevant features first, so that the last round's weights depend on the parity
    of ``n_rounds``: with hard nearest neighbours searched under the previous
    weights, the more weight a feature gets, the nearer its target hit *and* miss
    lie in that feature and the smaller its next margin (Relief's TN-weight
    inconsistency, which the repetition was meant to mitigate); two relevant features
    can then take turns at the top, the other one falling below noise features, where
    ReliefF and I-RELIEF rank both first.  Such a fit warns (``ConvergenceWarning``, ``stop_reason_ ==
    "cycle"``); ``cycle_weights_`` holds both ends.  Soft neighbours (:class:`IRelief`)
    or a damped iteration (:class:`LHRelief`) do not cycle there.

    Parameters
    ----------
    n_neighbors : int, default=1
        Nearest hits and misses per instance in every round (1: Relief's nearest hit
        and miss).
    n_rounds : int, default=100
        Outer rounds (the paper's setting).
    normalize : bool, default=True
        Range-normalised differences, as :class:`Relief`.
    small_classes : {"clamp", "error"}, default="clamp"
        ``n_neighbors`` above a class's hits: ``"clamp"`` uses all of them (with a
        ``UserWarning``); ``"error"`` raises a ``ValueError``.
    verbose : int, default=0
        Print one line per round (the step ``||w_t+1 - w_t||_2`` and the elapsed time).

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
    n_iter_ : int
        Rounds run.
    cost_history_ : list of float
        ``||w_t+1 - w_t||_2`` per round.
    stop_reason_ : {"converged", "no_positive_margin", "n_rounds", "cycle"}
        An exact fixed point; no positive margin (the last weights kept); ``n_rounds``
        run without reaching a fixed point; the same with the last rounds alternating
        between two weight vectors (over the last rounds, the median of
        ``||w_t - w_t-2|| / ||w_t - w_t-1||`` below 0.7).  The last two warn (``ConvergenceWarning``).
    cycle_weights_ : ndarray of shape (2, n_features) or None
        With ``stop_reason_ == "cycle"``: the last two rounds' weights (the cycle's
        two ends; the second is ``feature_importances_``); otherwise ``None``.
    metric_ : ``"manhattan"``
    """

    _algorithm_version = 1
    _byte_input = False

    _parameter_constraints = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left")],
        "normalize": ["boolean"],
        "small_classes": [StrOptions({"clamp", "error"})],
        "verbose": ["verbose"],
    }

    def __init__(self, n_neighbors=1, n_rounds=100, normalize=True, small_classes="clamp", verbose=0):
        self.n_neighbors = n_neighbors
        self.n_rounds = n_rounds
        self.normalize = normalize
        self.small_classes = small_classes
        self.verbose = verbose

    def _fit(self, X, y):
        self._check_n_neighbors(self.n_neighbors, y,
                                clamp="small_classes='error'" if self.small_classes == "clamp" else None)
        Z = self._normalized(X)
        w = None
        history = []  # every round's weights, for the 2-cycle test
        self.cost_history_ = []
        self.stop_reason_ = "n_rounds"
        self.cycle_weights_ = None
        t0 = time.perf_counter()
        for it in range(1, self.n_rounds + 1):
            w_new = normalize_weights(relieff_margins(Z, y, self.n_neighbors, None, w=w, per_class=False), "l2")
            if not w_new.any():  # no positive margin under these neighbours: keep the last weights
                w_new = np.zeros(X.shape[1]) if w is None else w
                self.stop_reason_ = "no_positive_margin"
                if self.verbose:
                    print(f"[MulRel] round {it:3d}: no positive margin, the last weights kept")
                break
            step = l2_norm(w_new - (w if w is not None else 0))
            self.cost_history_.append(step)
            w = w_new
            history = history[-(2 * _CYCLE_ROUNDS):] + [w]
            if self.verbose:
                print(f"[MulRel] round {it:3d}: step {step:.3e}, non-zero weights {np.count_nonzero(w)}, "
                      f"{time.perf_counter() - t0:.2f} s")
            if step == 0.0:
                self.stop_reason_ = "converged"
                break
        self.n_iter_ = it
        if self.stop_reason_ == "n_rounds" and _two_cycle(history):
            self.stop_reason_ = "cycle"
            self.cycle_weights_ = np.vstack(history[-2:])
        if self.stop_reason_ in ("n_rounds", "cycle"):
            extra = ""
            if self.stop_reason_ == "cycle":
                a, b = (int(np.argmax(v)) for v in self.cycle_weights_)
                extra = (f" The last rounds alternate between two weight vectors (a 2-cycle, see cycle_weights_; led "
                         f"by feature {a} and by feature {b}): the result depends on the parity of n_rounds. IRelief "
                         "(soft neighbours) or LHRelief (damped) do not cycle this way.")
            warnings.warn(f"MulRel ran n_rounds={self.n_rounds} rounds without reaching a fixed point (last step "
                          f"{self.cost_history_[-1]:.3g}).{extra}", ConvergenceWarning, stacklevel=3)
        return w_new


#: rounds (pairs) of MulRel's 2-cycle test
_CYCLE_ROUNDS = 3


def _two_cycle(history):
    """The last rounds alternate: each iterate is nearer the one two rounds back than the
    one before it (median of ``||w_t - w_t-2|| / ||w_t - w_t-1||`` over the last rounds
    below 0.7; a steady approach gives about 2, a random walk about 1.4)."""
    if len(history) < 2 * _CYCLE_ROUNDS + 1:
        return False
    ratios = []
    for t in range(len(history) - 2 * _CYCLE_ROUNDS + 1, len(history)):
        step = l2_norm(history[t] - history[t - 1])
        if step == 0.0:
            return False
        ratios.append(l2_norm(history[t] - history[t - 2]) / step)
    return float(np.median(ratios)) < 0.7
