"""GPU backend (extra ``gpu``): the pairwise and soft-margin kernels in PyTorch.

Chosen with ``knnweights.set_config(device="cuda")`` (or ``config_context``); the
functions of :mod:`knnweights.neighbors` then run their O(n^2 d) work here and give
the same results as the compiled CPU kernels to float tolerance.  Each function also
takes an explicit torch ``device`` so the same code can be checked on any device.
"""

import numpy as np

_L1 = 0


def _torch():
    try:
        import torch
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("device='cuda' needs PyTorch: pip install 'knnweights[gpu]'") from exc
    return torch


def resolve_device(device="cuda"):
    """A torch device, with a clear error when CUDA is asked for but absent."""
    torch = _torch()
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device='cuda' was configured but no CUDA GPU is available; use device='cpu'")
    return dev


def _t(a, dev):
    return _torch().as_tensor(np.ascontiguousarray(a), device=dev)


def pairwise_phi(A, B, phi, device="cuda"):
    """``D[i, j] = sum_k phi(A[i, k] - B[j, k])`` on the device, returned as NumPy."""
    torch = _torch()
    dev = resolve_device(device)
    tA, tB = _t(A, dev), _t(B, dev)
    if phi == _L1:
        D = torch.cdist(tA, tB, p=1)
    else:
        D = torch.cdist(tA, tB, p=2, compute_mode="donot_use_mm_for_euclid_dist") ** 2
    return D.cpu().numpy()


def coef_phi_rows(A, B, P, phi, device="cuda", budget_bytes=2**30):
    """``out[i] = sum_j P[i, j] phi(A[i] - B[j])`` on the device, returned as NumPy.

    L2sq is expanded into matrix products (``A^2 rowsum(P) - 2 A (P B) + P B^2``); L1
    has no such expansion and is summed over ``(rows, B, feature-block)`` tiles whose
    size is bounded by ``budget_bytes`` (never the whole ``n x n x d``).
    """
    torch = _torch()
    dev = resolve_device(device)
    tA, tB, tP = _t(A, dev), _t(B, dev), _t(P, dev)
    if phi != _L1:
        return (tA * tA * tP.sum(1, keepdim=True) - 2 * tA * (tP @ tB) + tP @ (tB * tB)).cpu().numpy()
    na, d = tA.shape
    nb = tB.shape[0]
    out = torch.zeros((na, d), dtype=tA.dtype, device=dev)
    per_el = tA.element_size()
    fb = max(1, min(d, budget_bytes // max(1, per_el * nb * min(na, 64))))
    rb = max(1, min(na, budget_bytes // max(1, per_el * nb * fb)))
    for r0 in range(0, na, rb):
        r1 = min(na, r0 + rb)
        for f0 in range(0, d, fb):
            f1 = min(d, f0 + fb)
            diff = (tA[r0:r1, None, f0:f1] - tB[None, :, f0:f1]).abs_()
            out[r0:r1, f0:f1] = torch.einsum("ij,ijk->ik", tP[r0:r1], diff)
    return out.cpu().numpy()
