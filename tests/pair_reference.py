"""The Relief p-values' default pairs written from their definition, for the reference tests."""

import numpy as np


def default_pairs(D, rule, k):
    """The pairs of the default p-values as a 0/1 matrix, found without the outcome on the distances ``D``:
    each sample's ``k`` nearest (equal distances to the lower index), or SURF's / MultiSURF's strict radius."""
    n = D.shape[0]
    off = ~np.eye(n, dtype=bool)
    if rule in ("surf", "multisurf"):
        vals = D[off].reshape(n, n - 1)
        T = np.full(n, D.sum() / n**2) if rule == "surf" else vals.mean(axis=1) - vals.std(axis=1) / 2
        return (D < T[:, None]) & off
    M = np.zeros((n, n), bool)
    for i in range(n):
        M[i, [j for j in np.lexsort((np.arange(n), D[i])) if j != i][:k]] = True
    return M
