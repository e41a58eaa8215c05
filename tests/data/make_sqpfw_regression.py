"""Generate ``sqpfw_regression.npz``: SQP-FW weights of the NumPy implementation the compiled step loop replaced.

The file was recorded once (``python tests/data/make_sqpfw_regression.py``) with that implementation and is a
fixed reference: ``tests/test_sqpfw.py::test_regression_against_reference_weights`` requires the current code
to reproduce these weights to 1e-8.
"""

import os

import numpy as np

# (n, d, seed, n_classes, theta, kappa, lambda_)
CASES = [
    (60, 5, 0, 2, 1.0, 1, 1),
    (60, 5, 1, 2, 20.0, 1, 1),
    (80, 8, 2, 3, 5.0, 2, 2),
    (100, 10, 3, 2, 0.3, 1, 3),
    (100, 6, 4, 3, 50.0, 3, 1),
    (120, 12, 5, 2, 3.0, 1, 1),
    (150, 15, 6, 4, 10.0, 2, 1),
    (200, 20, 7, 2, 1.0, 1, 1),
    (30, 60, 9, 2, 30.0, 1, 1),
    (36, 50, 10, 2, 3.0, 1, 1),
]
PATH_CASES = [(50, 4, 6, 2, 30.0), (70, 6, 11, 3, 20.0)]


def data(n, d, seed, n_classes):
    rng = np.random.RandomState(seed)
    X = rng.randn(n, d)
    score = X[:, 0] + 0.7 * X[:, 1] - 0.4 * X[:, min(2, d - 1)] ** 2
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])).astype(np.int64)
    return X, y


def main():
    from knnweights._solvers.active_set import sqpfw_active_set, sqpfw_path
    from knnweights.engine.linalg import single_thread_blas

    with single_thread_blas():
        _run(sqpfw_active_set, sqpfw_path)


def _run(sqpfw_active_set, sqpfw_path):

    out = {}
    for k, (n, d, seed, nc, theta, kappa, lam) in enumerate(CASES):
        X, y = data(n, d, seed, nc)
        r = sqpfw_active_set(X, y, theta, kappa, lam, max_iter=100000)
        assert r.status == 0
        out[f"w{k}"], out[f"fun{k}"], out[f"nit{k}"] = r.x, r.fun, r.nit
    for k, (n, d, seed, nc, tmax) in enumerate(PATH_CASES):
        X, y = data(n, d, seed, nc)
        p = sqpfw_path(X, y, tmax, max_iter=100000)
        out[f"path_thetas{k}"], out[f"path_weights{k}"] = p.thetas_, p.weights_
    np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sqpfw_regression.npz"), **out)


if __name__ == "__main__":
    main()
