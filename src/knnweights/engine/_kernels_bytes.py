"""Compiled kernels of Relief's ``diff`` on byte matrices (genotypes 0/1/2 and a missing code).

Every kernel here works on one *feature block* of the data at a time: ``raw`` is the
block's values as ``uint8`` (``MISSING`` = 255 marks an unknown value, known values are
``0..MAX_VALUE``) and ``E`` its *encoding*, a ``uint8`` matrix whose plain L1 distance is
``S`` times Relief's distance over the block (``S`` a small integer common to all
features, see :mod:`knnweights.engine.genotypes`):

- a continuous feature is one column ``m_f * x`` with ``m_f = S / range_f`` (``S`` when not
  range-normalised), so ``|m_f a - m_f b| = S |a - b| / range_f``;
- a discrete feature with ``L`` levels is ``ceil(L / 2)`` columns holding the levels as
  the vertices of a cross-polytope around ``h = S / 2``: level ``2q`` is ``2h`` in column
  ``q``, level ``2q + 1`` is ``0`` there, every other column ``h``; two different levels
  are at L1 distance ``2h = S`` (``diff = 1``), equal ones at 0;
- an unknown value is ``0`` (continuous) or ``h`` everywhere (discrete); the difference
  between Relief's ``diff`` for a pair with an unknown value and what ``E`` adds for it
  comes from small per-feature tables (``Acorr``, ``T2``) and the per-row lists of the
  unknown entries.

The L1 sums over ``E`` accumulate in ``int32``: exact, so their order (tiles, threads,
feature blocks, machines) does not change a bit.  No kernel here uses ``fastmath``.
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._kernels import tile_box, upper_tiles
from .jit import array_work, full_2d, njit, size_dispatch, task_range

MISSING = 255
MAX_VALUE = 15

# tiles of the pairwise (popcount) kernel: 16 x 64 output pairs a task
_TILE_I = 16
_TILE_J = 64
# the dense margin kernel: blocks of _MR rows x _MK plane columns (uint8 counters, _MR x groups x _MK bytes)
_MR = 16
_MK = 4096


@njit(cache=True, nogil=True)
def column_stats(raw, vmin, vmax, present, n_missing, bad, part, parts):  # pragma: no cover - compiled
    """Per column of ``raw``: min / max of the known values, a bit mask of the values present,
    the number of unknown entries and whether a value above ``MAX_VALUE`` occurs."""
    n, B = raw.shape
    for f in task_range(B, part, parts):
        lo = 255
        hi = 0
        mask = 0
        miss = 0
        big = False
        for i in range(n):
            v = raw[i, f]
            if v == MISSING:
                miss += 1
            elif v > MAX_VALUE:
                big = True
            else:
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
                mask |= 1 << v
        vmin[f] = lo
        vmax[f] = hi
        present[f] = mask
        n_missing[f] = miss
        bad[f] = big
    return vmin


@njit(cache=True, nogil=True)
def class_histogram(raw, codes, n_classes, H, part, parts):  # pragma: no cover - compiled
    """``H[c, f, v]``: how many samples of class ``c`` have value ``v`` (16: unknown) in column ``f``."""
    n, B = raw.shape
    for f in task_range(B, part, parts):
        for c in range(n_classes):
            for v in range(MAX_VALUE + 2):
                H[c, f, v] = 0
        for i in range(n):
            v = raw[i, f]
            H[codes[i], f, MAX_VALUE + 1 if v == MISSING else v] += 1
    return H


@njit(cache=True, nogil=True)
def encode(raw, vmin, mult, disc, col_start, level, h, E, part, parts):  # pragma: no cover - compiled
    """Fill the encoding ``E`` (module docstring) of the block ``raw``.

    ``vmin[f]``, ``mult[f]``: a continuous value ``v`` is ``(v - vmin) * mult`` (unknown: 0);
    ``disc[f]``: discrete; ``col_start[f]``: the
    first column of feature ``f`` in ``E`` (``col_start[B]`` = the number of columns);
    ``level[f, v]``: the level index of value ``v`` (discrete features).
    """
    n, B = raw.shape
    for i in task_range(n, part, parts):
        for f in range(B):
            v = raw[i, f]
            c0 = col_start[f]
            if not disc[f]:
                E[i, c0] = 0 if v == MISSING else (v - vmin[f]) * mult[f]
            else:
                for c in range(c0, col_start[f + 1]):
                    E[i, c] = h
                if v != MISSING:
                    lv = level[f, v]
                    E[i, c0 + lv // 2] = 2 * h if lv % 2 == 0 else 0
    return E


@intrinsic
def _popcount(typingctx, x):
    """``llvm.ctpop.i64``: the number of set bits of a ``uint64`` (one instruction where the CPU has it)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.ctpop.i64")
        return builder.call(fn, args)

    return sig, codegen


@njit(cache=True, nogil=True)
def pack_planes(E, S, out, part, parts):  # pragma: no cover - compiled
    """Bit planes of the encoding: bit ``k`` of plane ``p`` of row ``i`` is ``E[i, k] > p``.

    ``out`` (n, S * W) ``uint64``, ``W = ceil(ncols / 64)``, plane after plane; then
    ``sum_k |E[i, k] - E[j, k]|`` is the number of bits where rows ``i`` and ``j`` differ
    (the unary code of a value ``0..S``), so the L1 sum is a popcount of the XOR."""
    n, m = E.shape
    W = (m + 63) // 64
    for i in task_range(n, part, parts):
        for p in range(S):
            for w in range(W):
                word = np.uint64(0)
                for b in range(min(64, m - 64 * w)):
                    if E[i, 64 * w + b] > p:
                        word |= np.uint64(1) << np.uint64(b)
                out[i, p * W + w] = word
    return out


@njit(cache=True, nogil=True)
def _hamming_tile(A, B, i0, i1, j0, j1, acc):  # pragma: no cover - compiled
    W = A.shape[1]
    for i in range(i0, i1):
        for j in range(j0, j1):
            s = np.uint64(0)
            for w in range(W):
                s += _popcount(A[i, w] ^ B[j, w])
            acc[i - i0, j - j0] = np.int32(s)
    return acc


@njit(cache=True, nogil=True)
def hamming_add(A, B, out, part, parts):  # pragma: no cover - compiled
    """``out[i, j] += popcount(A[i] ^ B[j])`` over packed rows (int32, exact)."""
    na = A.shape[0]
    nb = B.shape[0]
    n_tj = (nb + _TILE_J - 1) // _TILE_J
    for t in task_range(((na + _TILE_I - 1) // _TILE_I) * n_tj, part, parts):
        i0, i1, j0, j1 = tile_box(t, n_tj, na, nb, _TILE_I, _TILE_J)
        acc = np.empty((i1 - i0, j1 - j0), np.int32)
        _hamming_tile(A, B, i0, i1, j0, j1, acc)
        for i in range(i0, i1):
            for j in range(j0, j1):
                out[i, j] += acc[i - i0, j - j0]
    return out


@njit(task_pipeline=True, cache=True, nogil=True)
def hamming_add_sym(A, out, part, parts):  # pragma: no cover - compiled
    """``hamming_add(A, A, out)`` on the tiles touching the upper triangle only (then :func:`mirror_lower`)."""
    n = A.shape[0]
    tiles = upper_tiles(n, _TILE_I, _TILE_J)
    for t in task_range(tiles.shape[0], part, parts):
        i0 = tiles[t, 0] * _TILE_I
        i1 = min(i0 + _TILE_I, n)
        j0 = tiles[t, 1] * _TILE_J
        j1 = min(j0 + _TILE_J, n)
        acc = np.empty((i1 - i0, j1 - j0), np.int32)
        _hamming_tile(A, A, i0, i1, j0, j1, acc)
        for i in range(i0, i1):
            for j in range(max(i, j0), j1):
                out[i, j] += acc[i - i0, j - j0]
    return out


@njit(cache=True, nogil=True)
def l1_add_weighted(A, B, wcol, out, part, parts):  # pragma: no cover - compiled
    """``out[i, j] += sum_k wcol[k] |A[i, k] - B[j, k]|`` (float64, in column order, continuing the running
    sum in ``out``: feature blocks in order give the one-pass sum's bits)."""
    na, d = A.shape
    nb = B.shape[0]
    for i in task_range(na, part, parts):
        for j in range(nb):
            s = out[i, j]
            for k in range(d):
                s += wcol[k] * abs(np.int32(A[i, k]) - np.int32(B[j, k]))
            out[i, j] = s
    return out


@njit(cache=True, nogil=True)
def unpack_planes(E, S, out, part, parts):  # pragma: no cover - compiled
    """``out[i, p * m + k] = E[i, k] > p`` (uint8 0/1), the bit planes one byte a bit."""
    n, m = E.shape
    for i in task_range(n, part, parts):
        for p in range(S):
            for k in range(m):
                out[i, p * m + k] = np.uint8(E[i, k] > p)
    return out


@njit(cache=True, nogil=True)
def _row_margin(U, i, js, cs, m, S, cnt8, cnt, gvals, gsize, out):  # pragma: no cover - compiled
    """``out[k] += sum_t cs[t] |E[i, k] - E[js[t], k]|`` for ``t < m``, from the bit planes ``U``.

    The neighbours are grouped by their coefficient (a Relief row has one per class:
    the hits, and the misses of each class); within a group the plane counts
    ``#{j : E[j, k] > p}`` are summed exactly (``uint8`` counters, 32 a vector instruction,
    moved to ``int32`` every 255 rows), and ``sum_j |e_i - e_j| = sum_p (N_g - count if
    e_i > p else count)``.  A row with more distinct coefficients than there are groups
    takes the rest one term at a time in float64."""
    G = cnt.shape[0]
    SW = U.shape[1]
    ncol = SW // S
    ng = 0
    for t in range(m):
        j = js[t]
        c = cs[t]
        g = -1
        for q in range(ng):
            if gvals[q] == c:
                g = q
                break
        if g < 0 and ng < G:
            g = ng
            gvals[g] = c
            gsize[g] = 0
            for k in range(SW):
                cnt8[g, k] = 0
                cnt[g, k] = 0
            ng += 1
        if g >= 0:
            u = U[j]
            c8 = cnt8[g]
            for k in range(SW):
                c8[k] += u[k]
            gsize[g] += 1
            if gsize[g] % 255 == 0:
                c32 = cnt[g]
                for k in range(SW):
                    c32[k] += c8[k]
                    c8[k] = 0
        else:
            for p in range(S):
                for k in range(ncol):
                    out[k] += c * np.int32(U[i, p * ncol + k] != U[j, p * ncol + k])
    for g in range(ng):
        c = gvals[g]
        N = gsize[g]
        for p in range(S):
            for k in range(ncol):
                q = p * ncol + k
                v = cnt[g, q] + np.int32(cnt8[g, q])
                out[k] += c * (N - v if U[i, q] else v)


@njit(cache=True, nogil=True)
def nibble_planes(E, S, out, part, parts):  # pragma: no cover - compiled
    """Two bit planes a byte: ``out[i, a * m + k]`` holds ``E[i, k] > 2a`` in its low nibble and
    ``E[i, k] > 2a + 1`` in its high one (``ceil(S / 2) * m`` columns)."""
    n, m = E.shape
    for i in task_range(n, part, parts):
        for a in range((S + 1) // 2):
            for k in range(m):
                e = E[i, k]
                out[i, a * m + k] = np.uint8(e > 2 * a) | (np.uint8(e > 2 * a + 1) << np.uint8(4))
    return out


@njit(cache=True, nogil=True)
def coef_margin(U, m, S, rows, P, n_groups, out, part, parts):  # pragma: no cover - compiled
    """``out[rb, p * m + k] = sum_{r in row block rb} sum_j P[r, j] |u_p(rows[r], k) - u_p(j, k)|``:
    the margin sums of bit plane ``p`` of the encoding ``E`` (n x m) for the rows of each
    block (sum them over the planes and blocks for the L1 terms of ``E``).  ``U`` holds
    the planes two a byte (:func:`nibble_planes`).

    Tasks are blocks of ``_MR`` rows, each running over slabs of ``_MK`` byte columns: each
    slab of a row ``j`` is read once for the whole block and added to the counters of
    every row of the block that has ``j`` as a neighbour, one counter set per distinct
    coefficient of the row (a Relief row has one per class: the hits, the misses of each
    class).  The counters are bytes holding two 4-bit counts (one add counts both planes,
    32 bytes a vector instruction), moved to ``int32`` every 15 rows: exact; then
    ``sum_j |u_i - u_j| = N_g - count`` if ``u_i`` else ``count``.  A row with more
    distinct coefficients than ``n_groups`` takes the others one term at a time.  Zero
    coefficients and the sample itself are skipped; the order of every sum is fixed."""
    nr, n = P.shape
    SW = U.shape[1]
    n_rb = (nr + _MR - 1) // _MR
    for rb in task_range(n_rb, part, parts):
        r0 = rb * _MR
        r1 = min(nr, r0 + _MR)
        R = r1 - r0
        gid = full_2d(R, n, -1, np.int8)
        gvals = full_2d(R, n_groups, 0.0, np.float64)
        gsize = full_2d(R, n_groups, 0, np.int32)
        for r in range(R):
            i = rows[r0 + r]
            ng = 0
            for j in range(n):
                c = P[r0 + r, j]
                if c == 0.0 or j == i:
                    continue
                g = -2
                for q in range(ng):
                    if gvals[r, q] == c:
                        g = q
                        break
                if g == -2 and ng < n_groups:
                    g = ng
                    gvals[r, g] = c
                    ng += 1
                gid[r, j] = g
                if g >= 0:
                    gsize[r, g] += 1
        G = n_groups
        cnt8 = np.empty((R * G, _MK), np.uint8)  # 2-d and sliced by row: the adds vectorise
        lo32 = np.empty((R * G, _MK), np.int32)
        hi32 = np.empty((R * G, _MK), np.int32)
        fill = np.empty(R * G, np.int32)
        acc_lo = np.empty(_MK, np.float64)
        acc_hi = np.empty(_MK, np.float64)
        for k0 in range(0, SW, _MK):
            K = min(SW, k0 + _MK) - k0
            for rg in range(R * G):  # zeroed as loops: a slice assignment would be made a parfor
                fill[rg] = 0
                for k in range(_MK):
                    cnt8[rg, k] = 0
                    lo32[rg, k] = 0
                    hi32[rg, k] = 0
            for k in range(_MK):
                acc_lo[k] = 0.0
                acc_hi[k] = 0.0
            for j in range(n):
                u = U[j, k0:k0 + K]
                for r in range(R):
                    g = np.int64(gid[r, j])
                    if g == -1:
                        continue
                    if g >= 0:
                        rg = r * G + g
                        c8 = cnt8[rg]
                        for k in range(K):
                            c8[k] += u[k]
                        fill[rg] += 1
                        if fill[rg] == 15:
                            fill[rg] = 0
                            l32 = lo32[rg]
                            h32 = hi32[rg]
                            for k in range(K):
                                l32[k] += c8[k] & 15
                                h32[k] += c8[k] >> 4
                                c8[k] = 0
                    else:
                        c = P[r0 + r, j]
                        ui = U[rows[r0 + r], k0:k0 + K]
                        for k in range(K):
                            x = ui[k] ^ u[k]
                            acc_lo[k] += c * np.int32(x & 15)
                            acc_hi[k] += c * np.int32(x >> 4)
            for r in range(R):
                ui = U[rows[r0 + r], k0:k0 + K]
                for g in range(G):
                    N = gsize[r, g]
                    if N == 0:
                        continue
                    c = gvals[r, g]
                    rg = r * G + g
                    c8 = cnt8[rg]
                    l32 = lo32[rg]
                    h32 = hi32[rg]
                    for k in range(K):
                        v = l32[k] + np.int32(c8[k] & 15)
                        acc_lo[k] += c * (N - v if ui[k] & 15 else v)
                        v = h32[k] + np.int32(c8[k] >> 4)
                        acc_hi[k] += c * (N - v if ui[k] >> 4 else v)
            for k in range(K):
                q = k0 + k
                a = q // m
                col = q + a * m
                out[rb, col] = acc_lo[k]
                if 2 * a + 1 < S:
                    out[rb, col + m] = acc_hi[k]
    return out


@njit(cache=True, nogil=True)
def index_margin(U, rows, idx, coef, S, n_groups, n_chunks, out, part, parts):  # pragma: no cover - compiled
    """:func:`coef_margin` for listed neighbours ``idx`` (negative skipped) with ``coef``."""
    nr, kk = idx.shape
    ncol = U.shape[1] // S
    step = (nr + n_chunks - 1) // n_chunks
    for t in task_range(n_chunks, part, parts):
        cnt8 = np.empty((n_groups, S * ncol), np.uint8)
        cnt = np.empty((n_groups, S * ncol), np.int32)
        gvals = np.empty(n_groups, np.float64)
        gsize = np.empty(n_groups, np.int32)
        js = np.empty(kk, np.int64)
        cs = np.empty(kk, np.float64)
        o = out[t]
        for k in range(ncol):
            o[k] = 0.0
        for r in range(t * step, min(nr, (t + 1) * step)):
            i = rows[r]
            m = 0
            for q in range(kk):
                j = idx[r, q]
                c = coef[r, q]
                if j >= 0 and c != 0.0 and j != i:
                    js[m] = j
                    cs[m] = c
                    m += 1
            _row_margin(U, i, js, cs, m, S, cnt8, cnt, gvals, gsize, o)
    return out


@njit(cache=True, nogil=True, inline="always")
def _pair_correction(raw, i, j, ci, cj, mptr, mind, Acorr, T2, wf):  # pragma: no cover - compiled
    """Relief's ``diff`` minus the encoding's, summed over the features unknown in ``i`` or ``j``."""
    s = 0.0
    for p in range(mptr[i], mptr[i + 1]):
        f = mind[p]
        v = raw[j, f]
        if v != MISSING:
            s += wf[f] * Acorr[f, ci, v]
        else:
            s += wf[f] * T2[f, ci, cj]
    for p in range(mptr[j], mptr[j + 1]):
        f = mind[p]
        v = raw[i, f]
        if v != MISSING:
            s += wf[f] * Acorr[f, cj, v]
    return s


@njit(cache=True, nogil=True)
def missing_distance_add(raw, rows, codes, mptr, mind, Acorr, T2, wf, out, part, parts):  # pragma: no cover - compiled
    """``out[r, j] += correction(rows[r], j)`` for every ``j`` but ``rows[r]`` itself."""
    n = raw.shape[0]
    for r in task_range(rows.shape[0], part, parts):
        i = rows[r]
        for j in range(n):
            if j != i:
                out[r, j] += _pair_correction(raw, i, j, codes[i], codes[j], mptr, mind, Acorr, T2, wf)
    return out


@njit(cache=True, nogil=True, inline="always")
def _add_pair_terms(raw, i, j, ci, cj, c, mptr, mind, Acorr, T2, o):  # pragma: no cover - compiled
    for p in range(mptr[i], mptr[i + 1]):
        f = mind[p]
        v = raw[j, f]
        o[f] += c * (Acorr[f, ci, v] if v != MISSING else T2[f, ci, cj])
    for p in range(mptr[j], mptr[j + 1]):
        f = mind[p]
        v = raw[i, f]
        if v != MISSING:
            o[f] += c * Acorr[f, cj, v]


@njit(cache=True, nogil=True)
def missing_index_add(raw, rows, codes, mptr, mind, Acorr, T2, idx, coef, n_chunks, out, part,  # pragma: no cover
                      parts):
    """``out[t, f] = sum_{r in chunk t} sum_q coef[r, q] correction_f(rows[r], idx[r, q])``: the
    per-feature corrections of the margin sums for listed neighbours (negative ``idx``
    skipped), ``n_chunks`` contiguous chunks of rows."""
    nr, kk = idx.shape
    step = (nr + n_chunks - 1) // n_chunks
    for t in task_range(n_chunks, part, parts):
        for f in range(out.shape[1]):
            out[t, f] = 0.0
        for r in range(t * step, min(nr, (t + 1) * step)):
            i = rows[r]
            for q in range(kk):
                j = idx[r, q]
                c = coef[r, q]
                if j < 0 or c == 0.0 or j == i:
                    continue
                _add_pair_terms(raw, i, j, codes[i], codes[j], c, mptr, mind, Acorr, T2, out[t])
    return out


# -- serial / threaded choice per call (knnweights.engine.jit.size_dispatch) ----------------------------------------
column_stats = size_dispatch(column_stats, array_work)
class_histogram = size_dispatch(class_histogram, array_work)
encode = size_dispatch(encode, array_work)
pack_planes = size_dispatch(pack_planes, array_work)
hamming_add = size_dispatch(hamming_add, array_work)
hamming_add_sym = size_dispatch(hamming_add_sym, array_work)
l1_add_weighted = size_dispatch(l1_add_weighted, array_work)
unpack_planes = size_dispatch(unpack_planes, array_work)
nibble_planes = size_dispatch(nibble_planes, array_work)
coef_margin = size_dispatch(coef_margin, array_work)
index_margin = size_dispatch(index_margin, array_work)
missing_distance_add = size_dispatch(missing_distance_add, array_work)
missing_index_add = size_dispatch(missing_index_add, array_work)
