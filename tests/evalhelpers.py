"""Small estimators for the evaluation-harness tests (importable by joblib / dask workers)."""

import json
import os

import numpy as np

from knnweights.weighters._base import BaseWeighter


class RecordingWeighter(BaseWeighter):
    """A weighter that appends the rows it is fitted on (and its seed) to a JSON-lines log.

    Weights: absolute difference of the class means per feature (deterministic, cheap).
    """

    _metric = "manhattan"
    _parameter_constraints = {"log_path": [str, None], "random_state": ["random_state"]}

    def __init__(self, log_path=None, random_state=None):
        self.log_path = log_path
        self.random_state = random_state

    def _fit(self, X, y):
        if self.log_path is not None:
            line = json.dumps({"seed": self.random_state, "rows": X.tolist()}) + "\n"
            with open(self.log_path, "a", encoding="utf-8") as fh:
                fh.write(line)
        m0, m1 = X[y == 0].mean(axis=0), X[y == 1].mean(axis=0)
        return np.abs(m0 - m1)


def read_log(path):
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


class FlakyMethod:
    """A callable method: 1-NN accuracy; raises in the cell whose seed is ``fail_seed`` while ``marker`` exists.

    Every call appends the cell seed to ``log`` so a test can count the cells run.
    """

    def __init__(self, marker, log, fail_seed):
        self.marker = marker
        self.log = log
        self.fail_seed = fail_seed

    def __call__(self, X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        from sklearn.neighbors import KNeighborsClassifier

        if random_state == self.fail_seed and os.path.exists(self.marker):
            raise RuntimeError("injected failure")
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(f"{random_state}\n")
        acc = KNeighborsClassifier(1).fit(X_train, y_train).score(X_test, y_test)
        return {"accuracy": acc, "n_train_seen": int(len(y_train))}


class LeakyMethod:
    """Negative control: fits the weighter on training AND test rows (a leak the checker must see)."""

    def __init__(self, weighter):
        self.weighter = weighter

    def __call__(self, X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        from sklearn.base import clone

        w = clone(self.weighter).set_params(random_state=random_state)
        w.fit(np.vstack([X_train, X_test]), np.concatenate([y_train, y_test]))
        return 1.0


class WhereMethod:
    """A callable method that records the dask worker it ran on (``"none"`` outside dask)."""

    def __call__(self, X_train, y_train, X_test, y_test, X_val=None, y_val=None, random_state=None):
        from sklearn.neighbors import KNeighborsClassifier

        try:
            from distributed import get_worker

            where = get_worker().address
        except (ImportError, ValueError):
            where = "none"
        return {"accuracy": KNeighborsClassifier(1).fit(X_train, y_train).score(X_test, y_test), "worker": where}
