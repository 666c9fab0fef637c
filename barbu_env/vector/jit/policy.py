"""A policy network's greedy card choices as a kernel: :func:`greedy_actions` (``nn.PolicyNet``'s trunk and
policy head over a batch of observations, skipping zero inputs).

An observation row holds about 130 non-zero entries of 1228 and most hidden units are zero after a ReLU, so
each layer adds up only the weight rows of its non-zero inputs, listed once per row without a branch per entry
(:func:`_nonzero`, :func:`_positive`). Every sum is taken term by term in the type of the observations and logits
(float32, or float64 with float64 observations): the bias first, then the inputs in ascending order, each product
fused into the sum with one rounding (a fused multiply-add: ``fastmath``'s ``contract`` flag and no other, which
made the batched pass 10-15% faster on the shipped networks, docs/BENCHMARKS.md). :func:`_add_rows` adds
four weight rows per pass over a layer's outputs, each output's sum still in that order. The sums are those of a
dense forward pass up to that type's rounding; ``nn.greedy_choices`` redoes in float64 the rows
:func:`greedy_actions` flags as near ties, so its choices are the float64 network's. The logits of the illegal
actions come out as -inf (no caller reads them).

The network travels as two arrays: ``weights`` (per layer its transposed weight ``[n_in, n_out]`` then its
bias; float32, or uint16 holding float16 bits, which :func:`_f32` widens exactly, so the sums are the same and the
kernel reads half the bytes) and ``layout`` (int64 ``[L, 3]``: per layer the offset of its weights in ``weights``,
``n_in``, ``n_out``); every layer but the last is followed by a ReLU. A card head (``nn.PolicyNet(card_hidden=k)``)
travels as ``card`` (float32: its state layer's transposed weight ``[width, k]`` and bias, its feature layer's
transposed weight ``[F, k]`` and bias, the identity rows ``[52, k]``, the output weight ``[k]`` and bias) and
``card_sizes`` (int64 ``[width, k, F]``); empty arrays when there is none. The head scores the legal cards only,
from their features (:func:`_card_features`, those of ``nn.card_features``; the trick's state they share once per
row, :func:`_trick_state`). The features count cards of 0/1 observation entries, exactly in any order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from ...observation import BLOCKS
from .common import helper, kernel

_HAND, _UNSEEN, _TRICK, _LEADER = (BLOCKS[b][0] for b in ("hand", "unseen", "trick", "leader"))
_TRUMP, _VOID, _FANTAN = (BLOCKS[b][0] for b in ("trump", "void", "fantan_playable"))
#: Features per card (``len(nn.CARD_FEATURES)``).
_F = 17


#: The decorator of the functions that sum products: fused multiply-adds (the only ``fastmath`` flag).
fused = kernel(fastmath={"contract"})

#: Scratch entries of :func:`_trick_state`.
_S = 24


@helper
def _trick_state(x: np.ndarray, nzx: np.ndarray, m: int, s: np.ndarray) -> None:
    """What every card's features of observation ``x`` share (``nzx[:m]``: the positions of its non-zero
    entries, ascending), into ``s`` (float32 [_S]): per suit q, whether the leader played it (``s[q]``), the
    highest rank of it in the trick (``s[4 + q]``, -1: none), the seats still to play this trick that may hold it
    (``s[8 + q]``), own and unseen cards of it (``s[12 + q]``, ``s[16 + q]``); then whether the trick is trumped
    (``s[20]``), its cards (``s[21]``) and whether it is empty (``s[22]``). Sums skip the zero entries only, so
    they are those of every entry in order."""
    lead, top, later, own, unseen = s[0:4], s[4:8], s[8:12], s[12:16], s[16:20]
    lead[:] = 0.0
    top[:] = -1.0
    later[:] = 0.0
    own[:] = 0.0
    unseen[:] = 0.0
    in_trick = 0.0
    trumped = 0.0
    for t in range(m):
        e = nzx[t]
        if _HAND <= e < _HAND + 52:
            own[(e - _HAND) // 13] += x[e]
        elif _UNSEEN <= e < _UNSEEN + 52:
            unseen[(e - _UNSEEN) // 13] += x[e]
        elif _TRICK <= e < _TRICK + 208:
            r, c = (e - _TRICK) // 52, (e - _TRICK) % 52
            in_trick += x[e]
            if x[_LEADER + r] != 0.0:
                lead[c // 13] = 1.0
            if x[_TRUMP + c // 13] != 0.0:
                trumped = 1.0
            top[c // 13] = max(top[c // 13], np.float32(c % 13))
    for r in range(1, 4):
        if r <= 3 - in_trick:
            for q in range(4):
                later[q] += 1.0 - x[_VOID + 4 * r + q]
    s[20], s[21], s[22] = trumped, in_trick, 1.0 if in_trick == 0.0 else 0.0


@helper
def _card_features(x: np.ndarray, legal: float, c: int, s: np.ndarray, f: np.ndarray) -> None:
    """``f`` ([17], the type of the logits): card c's features (``nn.CARD_FEATURES`` order) in observation ``x``,
    ``legal`` its mask entry, ``s`` the row's :func:`_trick_state`."""
    q, k = c // 13, c % 13
    trumped, in_trick, empty = s[20], s[21], s[22]
    own, unseen = np.float64(s[12 + q]), np.float64(s[16 + q])
    win = trumped * x[_TRUMP + q] + (1.0 - trumped) * s[q]
    hi_u, hi_o, lo_u, lo_o = unseen, own, 0.0, 0.0
    for r in range(k):
        hi_u -= x[_UNSEEN + 13 * q + r]
        hi_o -= x[_HAND + 13 * q + r]
        lo_u += x[_UNSEEN + 13 * q + r]
        lo_o += x[_HAND + 13 * q + r]
    hi_u -= x[_UNSEEN + c]
    hi_o -= x[_HAND + c]
    higher = 1.0 if s[4 + q] > k else 0.0
    beats = min(1.0, empty + win * (1.0 - higher) + x[_TRUMP + q] * (1.0 - trumped) * (1.0 - empty))
    f[0], f[1], f[2], f[3] = x[_HAND + c], x[_UNSEEN + c], legal, x[_FANTAN + c]
    f[4], f[5], f[6] = x[_TRUMP + q], s[q], win
    f[7], f[8], f[9], f[10] = hi_u / 13.0, lo_u / 13.0, hi_o / 13.0, lo_o / 13.0
    f[11], f[12], f[13], f[14] = own / 13.0, unseen / 13.0, beats, higher
    f[15], f[16] = in_trick / 3.0, s[8 + q] / 3.0


@helper
def _nonzero(x: np.ndarray, idx: np.ndarray) -> int:
    """``idx[:m]``: the positions of ``x``'s non-zero entries, ascending; returns m (no branch per entry)."""
    m = 0
    for j in range(x.shape[0]):
        idx[m] = j
        m += x[j] != 0.0
    return m


@helper
def _positive(y: np.ndarray, idx: np.ndarray) -> int:
    """``idx[:m]``: the positions of ``y``'s positive entries (the non-zero ones after a ReLU), ascending;
    returns m (no branch per entry)."""
    m = 0
    for j in range(y.shape[0]):
        idx[m] = j
        m += y[j] > 0.0
    return m


def _widen(typingctx: Any, w: Any) -> Any:
    """Typing and code of :func:`_f32`."""
    if w == types.float32:
        return types.float32(w), lambda context, builder, sig, args: args[0]
    if w == types.uint16:
        return types.float32(w), lambda context, builder, sig, args: builder.fpext(
            builder.bitcast(args[0], ir.HalfType()), ir.FloatType())  # fmt: skip
    return None


#: A weight as float32 (in compiled code): a float32 as it is, a uint16 read as the bits of a float16 (exact:
#: every float16 is a float32; one ``vcvtph2ps`` per vector of weights).
_f32 = cast(Callable[[Any], np.float32], intrinsic(_widen))


@fused
def _add_rows(w: np.ndarray, x: np.ndarray, idx: np.ndarray, m: int, y: np.ndarray) -> None:
    """``y`` += ``x[c] * w[c]`` for c in ``idx[:m]``, added in that order, each product fused into the sum (one
    rounding per term; float32; ``w`` float32 or float16 bits, :func:`_f32`); four weight rows per pass over ``y``,
    each entry's sum still taken term by term."""
    n = y.shape[0]
    t = 0
    while t + 4 <= m:
        c0, c1, c2, c3 = idx[t], idx[t + 1], idx[t + 2], idx[t + 3]
        v0, v1, v2, v3 = x[c0], x[c1], x[c2], x[c3]
        r0, r1, r2, r3 = w[c0], w[c1], w[c2], w[c3]
        for j in range(n):
            y[j] = (((y[j] + v0 * _f32(r0[j])) + v1 * _f32(r1[j])) + v2 * _f32(r2[j])) + v3 * _f32(r3[j])
        t += 4
    while t < m:
        v, r = x[idx[t]], w[idx[t]]
        for j in range(n):
            y[j] += v * _f32(r[j])
        t += 1


@fused
def _forward(obs: np.ndarray, mask: np.ndarray, i: int, nzx: np.ndarray, m: int, weights: np.ndarray,
             layout: np.ndarray, acc: np.ndarray, idx: np.ndarray, out: np.ndarray) -> int:  # fmt: skip
    """``out[i, j]`` ([n, A], the type of ``obs``) for every legal action j of row i: its policy logit; the other
    entries -inf. ``nzx[:m]``: the positions of the non-zero entries of ``obs[i]``, ascending; ``acc`` ([2, widest
    layer], the same type): hidden layer k's output goes to ``acc[k % 2]``; ``idx`` (int64 [widest layer]): the
    positions of a hidden layer's positive outputs, those of the trunk's output on return (with hidden layers);
    returns how many inputs the policy layer has that are not zero. Every layer adds its inputs' weight rows over
    all its outputs at once (:func:`_add_rows`: independent sums, which vectorise), the policy layer too."""
    n_layers = layout.shape[0]
    x = obs[i]
    nz, li = m, nzx
    for k in range(n_layers):
        off, n_in, n_out = layout[k, 0], layout[k, 1], layout[k, 2]
        w = weights[off : off + n_in * n_out].reshape((n_in, n_out))  # 2-D: the inner loops vectorise
        bias = weights[off + n_in * n_out : off + n_in * n_out + n_out]
        y = acc[k % 2, :n_out] if k < n_layers - 1 else out[i]
        for j in range(n_out):
            y[j] = _f32(bias[j])
        _add_rows(w, x, li, nz, y)
        if k < n_layers - 1:
            x, li = y, idx
            nz = _positive(y, idx)
    for j in range(out.shape[1]):
        if not mask[i, j]:
            out[i, j] = -np.inf
    return nz


@fused
def _card_head(obs: np.ndarray, mask: np.ndarray, i: int, nzx: np.ndarray, m: int, z: np.ndarray, zi: np.ndarray,
               nz: int, card: np.ndarray, sizes: np.ndarray, f: np.ndarray, fi: np.ndarray, s: np.ndarray,
               h0: np.ndarray, h: np.ndarray, hidden: np.ndarray, cards: np.ndarray, score: np.ndarray,
               out: np.ndarray) -> None:  # fmt: skip
    """Add the card head's score to ``out[i, c]`` for every legal card c of row i (``nzx[:m]``: the positions of the
    non-zero entries of ``obs[i]``; ``z``: the trunk's output, ``zi[:nz]`` the positions of its non-zero entries,
    both ascending; scratch: ``f``, ``h0``, ``h`` ([k]), ``hidden`` ([k, 52]) and ``score`` ([52]) of the type of
    ``out``, ``fi``: int64 [17], ``cards``: int64 [52], ``s``: float32 [_S]). Each legal card's hidden units go to
    a column of ``hidden``; the output layer then sums every card's units at once, unit by unit (each card's sum
    in its units' order)."""
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
    for j in range(k):  # summed in h0's type: float32 as bs[j] + bc[j] would be, float64 exactly
        h0[j] = bs[j]
        h0[j] += bc[j]
    _add_rows(ws, z, zi, nz, h0)
    x = obs[i]
    _trick_state(x, nzx, m, s)
    n = 0
    for c in range(52):
        if mask[i, c]:
            _card_features(x, np.float32(mask[i, c]), c, s, f)
            ic = ident[c]
            for j in range(k):
                h[j] = h0[j] + ic[j]
            _add_rows(wc, f, fi, _nonzero(f, fi), h)
            for j in range(k):
                hidden[j, n] = max(h[j], np.float32(0.0))
            cards[n] = c
            n += 1
    for t in range(n):
        score[t] = bo
    for j in range(k):  # a ReLU unit at 0 adds a zero: the sum of the positive units, in order
        wj, hj = wo[j], hidden[j]
        for t in range(n):
            score[t] += hj[t] * wj
    for t in range(n):
        out[i, cards[t]] += score[t]


@helper
def greedy_actions(obs: np.ndarray, mask: np.ndarray, weights: np.ndarray, layout: np.ndarray, card: np.ndarray,
                   card_sizes: np.ndarray, tie: float, logits: np.ndarray, best: np.ndarray,
                   near: np.ndarray) -> None:  # fmt: skip
    """For each row i of ``obs`` (float32 or float64 [n, OBS_SIZE]) and ``mask`` (int8 [n, A]): ``logits[i]`` (the type
    of ``obs``, [n, A]) the network's logits of the legal actions (the illegal ones -inf),
    ``best[i]`` the first legal action of the largest logit (-1 where none is legal) and ``near[i]`` whether the two
    largest legal logits lie within ``tie * (1 + |largest|)`` (compared in float64)."""
    n_layers = layout.shape[0]
    width = 1
    for k in range(n_layers):
        width = max(width, layout[k, 2])
    acc = np.empty((2, width), logits.dtype)
    nzx = np.empty(obs.shape[1], np.int64)
    idx = np.empty(width, np.int64)
    k = card_sizes[1] if card.size else 1
    f = np.empty(_F, logits.dtype)
    fi = np.empty(_F, np.int64)
    s = np.empty(_S, np.float32)
    h0 = np.empty(k, logits.dtype)
    h = np.empty(k, logits.dtype)
    hidden = np.empty((k, 52), logits.dtype)
    cards = np.empty(52, np.int64)
    score = np.empty(52, logits.dtype)
    for i in range(obs.shape[0]):
        m = _nonzero(obs[i], nzx)
        nz = _forward(obs, mask, i, nzx, m, weights, layout, acc, idx, logits)
        if card.size:  # the trunk's output: the last hidden layer's (acc[n_layers % 2]), or the observation
            if n_layers > 1:
                z, zi = acc[n_layers % 2], idx
            else:
                z, zi = obs[i], nzx
            _card_head(obs, mask, i, nzx, m, z, zi, nz, card, card_sizes, f, fi, s, h0, h, hidden, cards, score, logits)
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
