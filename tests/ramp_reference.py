"""The ramp ``diff`` written from its definition, for the ramp tests' plain-loop references (not collected)."""

import numpy as np


def ramp(a, t_eq, t_diff):
    """0 up to ``t_eq``, 1 from ``t_diff``, linear between (``a`` a range-normalised difference)."""
    return min(1.0, max(0.0, (a - t_eq) / (t_diff - t_eq)))


def ramp_diff_function(X, t_eq, t_diff, disc=()):
    """``diff(i, j)``: the ramp of the range-normalised difference per feature, a 0/1 mismatch on ``disc``."""
    d = X.shape[1]
    rng = X.max(axis=0) - X.min(axis=0)
    rng[rng == 0] = 1.0

    def diff(i, j):
        out = np.empty(d)
        for f in range(d):
            a = abs(X[i, f] - X[j, f]) / rng[f]
            out[f] = float(a != 0) if f in disc else ramp(a, t_eq, t_diff)
        return out

    return diff
