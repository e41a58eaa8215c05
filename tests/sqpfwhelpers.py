"""Checks shared by the SQP-FW tests: a run's cost history, objective and local minimality."""

import numpy as np
import pytest

from knnweights._solvers.active_set import project_simplex, sqpfw_objective


def assert_descent_to_local_minimum(X, y, r, theta, *, history_tol, move, min_tol, seed=0, trials=20):
    """The kept steps never raise the objective, ``r.fun`` is the objective at ``r.x``, and
    small random moves on the simplex (``move`` in size) do not lower it by more than ``min_tol``
    (relative to ``|r.fun|`` when ``min_tol`` is given as ``("rel", tol)``)."""
    h = r.cost_history
    assert np.all(np.diff(h) <= history_tol * (1 + np.abs(h[:-1])))
    assert r.fun == pytest.approx(sqpfw_objective(X, y, r.x, theta), rel=1e-9)
    slack = min_tol[1] * abs(r.fun) if isinstance(min_tol, tuple) else min_tol
    rng = np.random.RandomState(seed)
    for _ in range(trials):
        w2 = project_simplex(r.x + move * rng.randn(r.x.size))
        assert sqpfw_objective(X, y, w2, theta) >= r.fun - slack
