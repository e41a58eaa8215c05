"""The PyTorch backend gives the CPU kernels' results (to float tolerance).

The backend code is device-agnostic: where PyTorch is installed it is checked on the
torch CPU device; the end-to-end checks through ``set_config(device="cuda")`` run only
where a CUDA GPU is present and are skipped elsewhere.
"""

import numpy as np
import pytest

from knnweights import IRelief, config_context
from knnweights.engine import kernels as _kernels
from knnweights.engine.neighbors import soft_margins, weighted_distances

torch = pytest.importorskip("torch")
from knnweights.engine import _torch_backend  # noqa: E402

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA GPU here")


@pytest.mark.parametrize("phi", [0, 1])
def test_backend_kernels_match_cpu_kernels(phi):
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(37, 11)), rng.normal(size=(29, 11))
    P = rng.normal(size=(37, 29))
    ref = np.empty((37, 29))
    _kernels.pairwise_phi(A, B, phi, ref)
    np.testing.assert_allclose(_torch_backend.pairwise_phi(A, B, phi, "cpu"), ref, rtol=1e-10, atol=1e-10)
    ref_z = np.empty((37, 11))
    _kernels.coef_phi_rows(A, B, P, phi, ref_z)
    got = _torch_backend.coef_phi_rows(A, B, P, phi, "cpu", budget_bytes=4096)  # forces many tiles
    np.testing.assert_allclose(got, ref_z, rtol=1e-9, atol=1e-9)


def test_cuda_requested_without_gpu_is_a_clear_error():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        _torch_backend.resolve_device("cuda")


@needs_cuda
@pytest.mark.parametrize("metric", ["manhattan", "sqeuclidean"])
def test_gpu_path_equals_cpu_path(metric):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(300, 40)), rng.integers(0, 3, 300)
    w = rng.uniform(0.1, 1, 40)
    cpu_d, cpu_z = weighted_distances(X, w=w, metric=metric), soft_margins(X, y, w, 0.5, metric).z
    with config_context(device="cuda"):
        np.testing.assert_allclose(weighted_distances(X, w=w, metric=metric), cpu_d, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(soft_margins(X, y, w, 0.5, metric).z, cpu_z, rtol=1e-8, atol=1e-8)
        gpu_w = IRelief(max_iter=5).fit(X, y).feature_importances_
    np.testing.assert_allclose(gpu_w, IRelief(max_iter=5).fit(X, y).feature_importances_, atol=1e-8)


@pytest.mark.parametrize("phi", [0, 1])
@pytest.mark.parametrize("sigma", [2.0, 1e-6])
def test_backend_soft_margin_block_matches_cpu_kernels(phi, sigma):
    """Distances, soft probabilities and margin sums on the device give the compiled CPU kernels' results."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 7))
    y = np.r_[np.zeros(30, int), np.ones(9, int), 2]  # the last sample has no hit
    Z = rng.normal(size=(40, 7))
    for s, e in [(0, 40), (11, 23)]:
        D = np.empty((e - s, 40))
        _kernels.pairwise_phi(X[s:e], X, phi, D)
        P = np.empty_like(D)
        ref = [np.empty(e - s) for _ in range(4)]
        _kernels.soft_coefficients(D, y[s:e], y, s, 1.0 / sigma, P, *ref)
        ref_z = np.empty((e - s, 7))
        _kernels.coef_phi_rows(Z[s:e], Z, P, phi, ref_z)
        z, lh, lm, eh, em = _torch_backend.soft_margin_block(X[s:e], X, Z[s:e], Z, y[s:e], y, s, sigma, phi, "cpu")
        np.testing.assert_allclose(z, ref_z, rtol=1e-8, atol=1e-10)
        for got, want in zip((lh, lm, eh, em), ref, strict=True):
            np.testing.assert_array_equal(np.isfinite(got), np.isfinite(want))
            np.testing.assert_allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["IRelief", "IM4E", "NCADiagonal", "Logo"])
def test_backend_path_end_to_end_on_torch_cpu(monkeypatch, name):
    """The whole device path (distances, soft margins, margin sums in PyTorch) run on the torch CPU device
    gives the compiled path's weights: what ``device="cuda"`` runs, minus the card."""
    from knnweights import WEIGHTERS
    from knnweights.engine import neighbors

    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(60, 6)), rng.integers(0, 2, 60)
    X[:, 0] += 2 * y
    params = {"max_iter": 5} if name != "Logo" else {"max_iter": 3}
    ref = WEIGHTERS[name](**params).fit(X, y).feature_importances_
    real = neighbors.get_config
    monkeypatch.setattr(neighbors, "on_gpu", lambda: True)
    monkeypatch.setattr(neighbors, "get_config", lambda: {**real(), "device": "cpu"})
    got = WEIGHTERS[name](**params).fit(X, y).feature_importances_
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-9)
