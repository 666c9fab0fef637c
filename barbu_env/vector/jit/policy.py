"""A policy network's greedy card choices as a kernel: :func:`greedy_actions` (``nn.PolicyNet``'s trunk and
policy head over a batch of observations, skipping zero inputs).

An observation row holds about 150 non-zero entries of 1228 and most hidden units are zero after a ReLU, so
each layer adds up only the weight rows of its non-zero inputs (``float32``, the bias first, then the inputs in
ascending order). The sums are those of a dense forward pass up to float32 rounding; callers that need the
choices of a reference pass redo the rows :func:`greedy_actions` flags as near ties
(``agents.neural.NeuralAgent.card_actions``).

The network travels as two arrays: ``weights`` (float32, per layer its transposed weight ``[n_in, n_out]``
then its bias) and ``layout`` (int64 ``[L, 3]``: per layer the offset of its weights in ``weights``,
``n_in``, ``n_out``); every layer but the last is followed by a ReLU.
"""

from __future__ import annotations

import numpy as np

from .common import helper


@helper
def _forward(obs: np.ndarray, i: int, weights: np.ndarray, layout: np.ndarray, a: np.ndarray, b: np.ndarray,
             out: np.ndarray) -> None:  # fmt: skip
    """Row i of ``out`` (float32 [n, A]): the logits of row i of ``obs``; ``a``, ``b``: scratch vectors."""
    n_layers = layout.shape[0]
    for k in range(n_layers):
        off, n_in, n_out = layout[k, 0], layout[k, 1], layout[k, 2]
        w = weights[off : off + n_in * n_out].reshape((n_in, n_out))  # 2-D: the inner loop vectorises
        bias = weights[off + n_in * n_out : off + n_in * n_out + n_out]
        x = obs[i] if k == 0 else (b if k % 2 == 0 else a)
        y = out[i] if k == n_layers - 1 else (a if k % 2 == 0 else b)
        for j in range(n_out):
            y[j] = bias[j]
        for c in range(n_in):
            v = x[c]
            if v != 0.0:
                for j in range(n_out):
                    y[j] += v * w[c, j]
        if k < n_layers - 1:
            for j in range(n_out):
                if y[j] < 0.0:
                    y[j] = 0.0


@helper
def greedy_actions(obs: np.ndarray, mask: np.ndarray, weights: np.ndarray, layout: np.ndarray, tie: float,
                   logits: np.ndarray, best: np.ndarray, near: np.ndarray) -> None:  # fmt: skip
    """For each row i of ``obs`` (float32 [n, OBS_SIZE]) and ``mask`` (int8 [n, A]): ``logits[i]`` (float32
    [n, A]) the network's logits, ``best[i]`` the first legal action of the largest logit and ``near[i]``
    whether the two largest legal logits lie within ``tie * (1 + |largest|)`` (compared in float64)."""
    width = 1
    for k in range(layout.shape[0]):
        width = max(width, layout[k, 2])
    a = np.empty(width, np.float32)
    b = np.empty(width, np.float32)
    for i in range(obs.shape[0]):
        _forward(obs, i, weights, layout, a, b, logits)
        top, second, arg = -np.inf, -np.inf, -1
        for j in range(mask.shape[1]):
            if mask[i, j]:
                v = np.float64(logits[i, j])
                if v > top:
                    second, top, arg = top, v, j
                elif v > second:
                    second = v
        best[i] = arg
        near[i] = top - second <= tie * (1.0 + abs(top))


__all__ = ["greedy_actions"]
