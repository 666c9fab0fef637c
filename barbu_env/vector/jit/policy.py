"""A policy network's greedy card choices as a kernel: :func:`greedy_actions` (``nn.PolicyNet``'s trunk and
policy head over a batch of observations, skipping zero inputs).

An observation row holds about 150 non-zero entries of 1228 and most hidden units are zero after a ReLU, so
each layer adds up only the weight rows of its non-zero inputs (``float32``, the bias first, then the inputs in
ascending order). The sums are those of a dense forward pass up to float32 rounding; callers that need the
choices of a reference pass redo the rows :func:`greedy_actions` flags as near ties
(``agents.neural.NeuralAgent.card_actions``).

The network travels as two arrays: ``weights`` (float32, per layer its transposed weight ``[n_in, n_out]``
then its bias) and ``layout`` (int64 ``[L, 3]``: per layer the offset of its weights in ``weights``,
``n_in``, ``n_out``); every layer but the last is followed by a ReLU. A card head (``nn.PolicyNet(card_hidden=k)``)
travels as ``card`` (float32: its state layer's transposed weight ``[width, k]`` and bias, its feature layer's
transposed weight ``[F, k]`` and bias, the identity rows ``[52, k]``, the output weight ``[k]`` and bias) and
``card_sizes`` (int64 ``[width, k, F]``); empty arrays when there is none. The head scores the legal cards only
(from :func:`_card_features`, the per-card features of ``nn.card_features``), so the logits of illegal cards are
the policy layer's.
"""

from __future__ import annotations

import numpy as np

from ...observation import BLOCKS
from .common import helper

_HAND, _UNSEEN, _TRICK, _LEADER = (BLOCKS[b][0] for b in ("hand", "unseen", "trick", "leader"))
_TRUMP, _VOID, _FANTAN = (BLOCKS[b][0] for b in ("trump", "void", "fantan_playable"))
#: Features per card (``len(nn.CARD_FEATURES)``).
_F = 17


@helper
def _card_features(obs: np.ndarray, mask: np.ndarray, i: int, f: np.ndarray) -> None:
    """``f`` (float32 [52, 17]): row i's features of every card, in ``nn.CARD_FEATURES`` order."""
    x = obs[i]
    trick_any = np.zeros(52, np.float32)
    in_trick = 0.0
    lead = np.zeros(4, np.float32)
    for r in range(4):
        lr = x[_LEADER + r]
        for c in range(52):
            v = x[_TRICK + 52 * r + c]
            trick_any[c] += v
            in_trick += v
            if lr != 0.0 and v != 0.0:
                lead[c // 13] = 1.0
    trumped = 0.0
    top = np.full(4, -1, np.int64)  # highest rank of each suit in the trick
    for c in range(52):
        if trick_any[c] != 0.0:
            if x[_TRUMP + c // 13] != 0.0:
                trumped = 1.0
            top[c // 13] = max(top[c // 13], c % 13)
    empty = 1.0 if in_trick == 0.0 else 0.0
    later = np.zeros(4, np.float32)  # per suit: seats still to play this trick that may hold it
    for r in range(1, 4):
        if r <= 3 - in_trick:
            for s in range(4):
                later[s] += 1.0 - x[_VOID + 4 * r + s]
    for s in range(4):
        own = unseen = 0.0
        for k in range(13):
            own += x[_HAND + 13 * s + k]
            unseen += x[_UNSEEN + 13 * s + k]
        win = trumped * x[_TRUMP + s] + (1.0 - trumped) * lead[s]
        hi_u = unseen
        hi_o = own
        lo_u = lo_o = 0.0
        for k in range(13):
            c = 13 * s + k
            hi_u -= x[_UNSEEN + c]
            hi_o -= x[_HAND + c]
            higher = 1.0 if top[s] > k else 0.0
            beats = min(1.0, empty + win * (1.0 - higher) + x[_TRUMP + s] * (1.0 - trumped) * (1.0 - empty))
            row = f[c]
            row[0], row[1], row[2], row[3] = x[_HAND + c], x[_UNSEEN + c], np.float32(mask[i, c]), x[_FANTAN + c]
            row[4], row[5], row[6] = x[_TRUMP + s], lead[s], win
            row[7], row[8], row[9], row[10] = hi_u / 13.0, lo_u / 13.0, hi_o / 13.0, lo_o / 13.0
            row[11], row[12], row[13], row[14] = own / 13.0, unseen / 13.0, beats, higher
            row[15], row[16] = in_trick / 3.0, later[s] / 3.0
            lo_u += x[_UNSEEN + c]
            lo_o += x[_HAND + c]


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
def _card_head(obs: np.ndarray, mask: np.ndarray, i: int, z: np.ndarray, card: np.ndarray, sizes: np.ndarray,
               f: np.ndarray, h0: np.ndarray, h: np.ndarray, out: np.ndarray) -> None:  # fmt: skip
    """Add the card head's score to ``out[i, c]`` for every legal card c of row i (``z``: the trunk's output)."""
    width, k, nf = sizes[0], sizes[1], sizes[2]
    ws = card[: width * k].reshape((width, k))
    o = width * k
    bs = card[o : o + k]
    o += k
    wc = card[o : o + nf * k].reshape((nf, k))
    o += nf * k
    bc = card[o : o + k]
    o += k
    ident = card[o : o + 52 * k].reshape((52, k))
    o += 52 * k
    wo = card[o : o + k]
    bo = card[o + k]
    for j in range(k):
        h0[j] = bs[j] + bc[j]
    for u in range(width):
        v = z[u]
        if v != 0.0:
            for j in range(k):
                h0[j] += v * ws[u, j]
    _card_features(obs, mask, i, f)
    for c in range(52):
        if mask[i, c]:
            for j in range(k):
                h[j] = h0[j] + ident[c, j]
            for q in range(nf):
                v = f[c, q]
                if v != 0.0:
                    for j in range(k):
                        h[j] += v * wc[q, j]
            score = bo
            for j in range(k):
                if h[j] > 0.0:
                    score += h[j] * wo[j]
            out[i, c] += score


@helper
def greedy_actions(obs: np.ndarray, mask: np.ndarray, weights: np.ndarray, layout: np.ndarray, card: np.ndarray,
                   card_sizes: np.ndarray, tie: float, logits: np.ndarray, best: np.ndarray,
                   near: np.ndarray) -> None:  # fmt: skip
    """For each row i of ``obs`` (float32 [n, OBS_SIZE]) and ``mask`` (int8 [n, A]): ``logits[i]`` (float32
    [n, A]) the network's logits (illegal cards: without the card head), ``best[i]`` the first legal action of the
    largest logit and ``near[i]`` whether the two largest legal logits lie within ``tie * (1 + |largest|)``
    (compared in float64)."""
    width = 1
    for k in range(layout.shape[0]):
        width = max(width, layout[k, 2])
    a = np.empty(width, np.float32)
    b = np.empty(width, np.float32)
    n_layers = layout.shape[0]
    k = card_sizes[1] if card.size else 1
    f = np.empty((52, _F), np.float32)
    h0 = np.empty(k, np.float32)
    h = np.empty(k, np.float32)
    for i in range(obs.shape[0]):
        _forward(obs, i, weights, layout, a, b, logits)
        if card.size:  # the last layer's input (the trunk's output) is in b or a, as _forward alternates them
            z = obs[i] if n_layers == 1 else (b if (n_layers - 1) % 2 == 0 else a)
            _card_head(obs, mask, i, z, card, card_sizes, f, h0, h, logits)
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
