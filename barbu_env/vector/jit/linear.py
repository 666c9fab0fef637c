"""A linear layer over sparse input rows as kernels: the forward pass and the weight gradient of ``nn.PolicyNet``'s
first layer (``barbu_env.nn.sparse_linear``), which reads the observation.

An observation row holds about 100-130 non-zero entries of 1228, so both passes visit the non-zero entries of
each row only: the forward adds the transposed weight's rows of a row's non-zero inputs to the bias
(:func:`_add_rows`, in ascending input order, float32), and the weight gradient adds ``x[r, k] * g[r]`` to row k of
the transposed gradient for every row r in order and each of its non-zero inputs k. Input k of the layer is column
``cols[k]`` of ``x`` (a gather the caller would otherwise make, e.g. a suit relabelling). No ``fastmath``: unlike
the inference pass (:mod:`.policy`, fused multiply-adds), each product is rounded before it is added, so training
takes the sums the shipped files were trained with and their commands still give their weights.
"""

from __future__ import annotations

import numpy as np

from .common import helper, kernel


@helper
def _add_rows(wt: np.ndarray, v: np.ndarray, idx: np.ndarray, m: int, y: np.ndarray) -> None:
    """``y`` += ``v[k] * wt[k]`` for k in ``idx[:m]``, added in that order (float32); four rows of ``wt`` per pass
    over ``y``, each entry's sum still taken term by term."""
    n = y.shape[0]
    t = 0
    while t + 4 <= m:
        k0, k1, k2, k3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
        v0, v1, v2, v3 = v[k0], v[k1], v[k2], v[k3]
        r0, r1, r2, r3 = wt[k0], wt[k1], wt[k2], wt[k3]
        for j in range(n):
            y[j] = (((y[j] + v0 * r0[j]) + v1 * r1[j]) + v2 * r2[j]) + v3 * r3[j]
        t += 4
    while t < m:
        e, r = v[idx[t]], wt[idx[t]]
        for j in range(n):
            y[j] += e * r[j]
        t += 1


@helper
def _row(x: np.ndarray, cols: np.ndarray, v: np.ndarray, idx: np.ndarray) -> int:
    """``v[k] = x[cols[k]]`` and ``idx[:m]``: the k whose ``v[k]`` is non-zero, ascending; returns m."""
    m = 0
    for k in range(cols.shape[0]):
        e = x[cols[k]]
        v[k] = e
        idx[m] = k
        m += e != 0.0
    return m


@kernel()
def sparse_forward(x: np.ndarray, cols: np.ndarray, wt: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``out[r] = b + x[r, cols] @ wt`` for every row r of ``x`` (float32 [n, *]; ``cols`` int64 [I], ``wt`` [I, H],
    ``b`` [H], ``out`` [n, H]), over the non-zero inputs only."""
    v = np.empty(cols.shape[0], np.float32)
    idx = np.empty(cols.shape[0], np.int64)
    for r in range(x.shape[0]):
        m = _row(x[r], cols, v, idx)
        y = out[r]
        y[:] = b
        _add_rows(wt, v, idx, m, y)


@kernel()
def sparse_weight_grad(x: np.ndarray, cols: np.ndarray, g: np.ndarray, gwt: np.ndarray) -> None:
    """``gwt = x[:, cols].T @ g`` (``x`` float32 [n, *], ``cols`` int64 [I], ``g`` [n, H], ``gwt`` [I, H],
    overwritten), over the non-zero inputs only, rows in order."""
    gwt[:] = 0.0
    v = np.empty(cols.shape[0], np.float32)
    idx = np.empty(cols.shape[0], np.int64)
    h = g.shape[1]
    for r in range(x.shape[0]):
        m = _row(x[r], cols, v, idx)
        gr = g[r]
        for t in range(m):
            k = idx[t]
            e = v[k]
            row = gwt[k]
            for j in range(h):
                row[j] += e * gr[j]
