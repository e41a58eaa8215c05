"""GPU backend (extra ``gpu``): the pairwise and soft-margin kernels in PyTorch.

Chosen with ``knnweights.set_config(device="cuda")`` (or ``config_context``); the
functions of :mod:`knnweights.engine.neighbors` then run their O(n^2 d) work here and give
the same results as the compiled CPU kernels to float tolerance.  Each function also
takes an explicit torch ``device`` so the same code can be checked on any device.
"""

import numpy as np

from ._kernels import L1


def _torch():
    try:
        import torch  # optional: torch
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
    dev = resolve_device(device)
    return _pairwise_t(_t(A, dev), _t(B, dev), phi).cpu().numpy()


def _pairwise_t(tA, tB, phi):
    torch = _torch()
    if phi == L1:
        return torch.cdist(tA, tB, p=1)
    return torch.cdist(tA, tB, p=2, compute_mode="donot_use_mm_for_euclid_dist") ** 2


def coef_phi_rows(A, B, P, phi, device="cuda", budget_bytes=2**30):
    """``out[i] = sum_j P[i, j] phi(A[i] - B[j])`` on the device, returned as NumPy.

    L2sq is expanded into matrix products (``A^2 rowsum(P) - 2 A (P B) + P B^2``); L1
    has no such expansion and is summed over ``(rows, B, feature-block)`` tiles whose
    size is bounded by ``budget_bytes`` (never the whole ``n x n x d``).
    """
    dev = resolve_device(device)
    return _coef_phi_rows_t(_t(A, dev), _t(B, dev), _t(P, dev), phi, budget_bytes).cpu().numpy()


def soft_margin_block(A, B, Za, Zb, codes_rows, codes_cols, row_offset, sigma, phi, device="cuda",
                      budget_bytes=2**30):
    """One row block of :func:`knnweights.engine.neighbors.soft_margins`, kept on the device.

    The distances of the (pre-scaled) rows ``A`` to ``B``, the soft hit / miss
    probabilities in log space (row ``r`` is sample ``row_offset + r``, excluded from its
    own neighbours) and the coefficient-weighted ``phi`` sums over ``Za`` / ``Zb`` are all
    computed on ``device``; only the ``(rows, d)`` margin block and four per-row vectors
    come back.  Same quantities as the compiled ``soft_coefficients`` + ``coef_phi_rows``.

    Returns
    -------
    z : ndarray (rows, d)
    lse_h, lse_m, ent_h, ent_m : ndarray (rows,)
    """
    torch = _torch()
    dev = resolve_device(device)
    tA, tB = _t(A, dev), _t(B, dev)
    logits = _pairwise_t(tA, tB, phi).to(torch.float64) * (-1.0 / sigma)
    nr, nc = logits.shape
    same = _t(codes_rows, dev)[:, None] == _t(codes_cols, dev)[None, :]
    own = torch.zeros_like(same)
    r = torch.arange(nr, device=dev)
    cols = r + row_offset
    ok = cols < nc
    own[r[ok], cols[ok]] = True
    P = torch.zeros_like(logits)
    out = []
    for mask, sign in ((same & ~own, -1.0), (~same & ~own, 1.0)):
        lg = logits.masked_fill(~mask, -torch.inf)
        lse = torch.logsumexp(lg, dim=1)
        fin = torch.isfinite(lse)
        logp = lg - torch.where(fin, lse, 0.0)[:, None]
        p = torch.where(mask & fin[:, None], torch.exp(logp), 0.0)
        ent = -torch.where(p > 0, p * logp, 0.0).sum(1)
        P += sign * p
        out += [lse, ent]
    tZa, tZb = _t(Za, dev), _t(Zb, dev)
    z = _coef_phi_rows_t(tZa, tZb, P.to(tZa.dtype), phi, budget_bytes)
    lse_h, ent_h, lse_m, ent_m = (v.cpu().numpy() for v in out)
    return z.cpu().numpy(), lse_h, lse_m, ent_h, ent_m


def _coef_phi_rows_t(tA, tB, tP, phi, budget_bytes=2**30):
    torch = _torch()
    dev = tA.device
    if phi != L1:
        return tA * tA * tP.sum(1, keepdim=True) - 2 * tA * (tP @ tB) + tP @ (tB * tB)
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
    return out
