"""A linear layer over sparse input rows as kernels: the forward pass and the weight gradient of ``nn.PolicyNet``'s
first layer (``barbu_env.nn.sparse_linear``), which reads the observation.

An observation row holds about 100-130 non-zero entries of 1228, so both passes visit the non-zero entries of
each row only: the forward adds the transposed weight's rows of a row's non-zero inputs to the bias
(:func:`.policy._add_rows`: in ascending input order, float32, each product fused into the sum: the sums of
:func:`.policy.greedy_actions`' first layer), and the weight gradient adds ``x[r, k] * g[r]`` to row k of the
transposed gradient for every row r in order and each of its non-zero inputs k. Input k of the layer is column
``cols[k]`` of ``x`` (a gather the caller would otherwise make, e.g. a suit relabelling). No other ``fastmath``
flag: the results depend on the inputs only (and on whether the CPU has fused multiply-adds).
"""

from __future__ import annotations

import numpy as np

from .common import helper, kernel
from .policy import _add_rows


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
