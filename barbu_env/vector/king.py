"""``observation.encode`` of Barbu King deals (R11, 3 to 5 seats) by the compiled kernel
:func:`.jit.kingobs.king_row`: the env's engine play encodes King observations with it (the same arrays; tests
compare the two on every step). Importing this module imports numba."""

from __future__ import annotations

import numpy as np

from ..engine.deal import Deal
from ..engine.match import Match
from ..observation import _CONTRACT_INDEX, RULES, Layout, encode, layout, match_rows, names_bits, rules_bits
from .jit.kingobs import OFFSET_BLOCKS, king_row

#: ``id(layout)`` -> (the layout, its block offsets in ``OFFSET_BLOCKS`` order); layouts are cached objects.
_OFFSETS: dict[int, tuple[Layout, np.ndarray]] = {}


def _offsets(lay: Layout) -> np.ndarray:
    hit = _OFFSETS.get(id(lay))
    if hit is not None and hit[0] is lay:
        return hit[1]
    at = np.array([lay.offset[b] for b in OFFSET_BLOCKS], np.int64)
    _OFFSETS[id(lay)] = (lay, at)  # holds ``lay``, so its id is not reused
    return at


def king_encode(deal: Deal, seat: int, match: Match | None = None) -> np.ndarray:
    """``observation.encode(deal, seat, match)`` for a Barbu King deal (``deal.rules.king``)."""
    rules = deal.rules
    c = deal.contract
    k = -1 if c is None else _CONTRACT_INDEX.get(c.name, -2)
    n = deal.n
    if k == -2 or not rules.king or not (type(seat) is int and 0 <= seat < n):
        return encode(deal, seat, match)  # (the reference's answer, or its error)
    lay = layout(rules)
    trick, fin = deal.trick, deal.finished
    king = rules.short | rules.choose << 1 | 4
    f = [n, seat, deal.phase, deal.to_move, deal.declarer, deal.leader, deal.trick_no, deal.num_tricks, k,
         deal.fantan_rank, names_bits(tuple(deal.available)), deal.hearts_broken, deal.playable,
         rules_bits(rules) >> RULES, king, deal.deck, deal.played, len(trick), *trick, *[-1] * (n - len(trick)),
         *fin, *[-1] * (n - len(fin)), *deal.hands, *deal.played_by, *deal.captured, *deal.excluded,
         *deal.tricks_won, *deal.points, *deal.passes]  # fmt: skip
    out = np.empty(lay.size, np.float32)
    king_row(np.array(f, np.int64), _offsets(lay), out)
    if match is not None:
        out[lay.match_entries] = match_rows(match)[seat]
    return out
