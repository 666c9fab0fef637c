"""``observation.encode`` of Barbu King deals (R11, 3 to 5 seats) by the compiled kernel
:func:`.jit.kingobs.king_row`: the env's engine play encodes King observations with it (the same arrays; tests
compare the two on every step). Importing this module imports numba."""

from __future__ import annotations

import struct
from functools import cache
from typing import Any

import numpy as np

from ..engine.deal import Deal
from ..engine.match import Match
from ..observation import _CONTRACT_INDEX, RULES, Layout, encode, layout, match_rows, names_bits, rules_bits
from ..rules import Rules
from .jit.kingobs import OFFSET_BLOCKS, king_row

#: ``id(rules)`` -> (the rules, then what :func:`king_encode` reads of them: the layout, its block offsets in
#: ``OFFSET_BLOCKS`` order, the rule switches' bits and the King flags); rules objects are immutable.
_CONSTANTS: dict[int, tuple[Any, ...]] = {}
#: Entries kept in :data:`_CONSTANTS` at most (it is emptied past this).
_CONSTANTS_MAX = 64


@cache
def _packer(n: int) -> struct.Struct:
    """The packer of the kernel's 18 + 9n int64 fields for n seats."""
    return struct.Struct(f"={18 + 9 * n}q")


def _constants(rules: Rules) -> tuple[Layout, np.ndarray, int, int]:
    hit = _CONSTANTS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1:]
    if len(_CONSTANTS) >= _CONSTANTS_MAX:
        _CONSTANTS.clear()
    lay = layout(rules)
    consts = (lay, np.array([lay.offset[b] for b in OFFSET_BLOCKS], np.int64), rules_bits(rules) >> RULES,
              rules.short | rules.choose << 1 | 4)  # fmt: skip
    _CONSTANTS[id(rules)] = (rules, *consts)  # holds ``rules``, so its id is not reused
    return consts


def king_encode(deal: Deal, seat: int, match: Match | None = None) -> np.ndarray:
    """``observation.encode(deal, seat, match)`` for a Barbu King deal (``deal.rules.king``)."""
    rules = deal.rules
    c = deal.contract
    k = -1 if c is None else _CONTRACT_INDEX.get(c.name, -2)
    n = deal.n
    if k == -2 or not rules.king or not (type(seat) is int and 0 <= seat < n):
        return encode(deal, seat, match)  # (the reference's answer, or its error)
    lay, offsets, bits, king = _constants(rules)
    trick, fin = deal.trick, deal.finished
    fields = np.empty(18 + 9 * n, np.int64)
    buffer: Any = fields  # (an ndarray is a buffer; numpy's stubs do not say so)
    _packer(n).pack_into(buffer, 0, n, seat, deal.phase, deal.to_move, deal.declarer, deal.leader, deal.trick_no,
                         deal.num_tricks, k, deal.fantan_rank, names_bits(tuple(deal.available)), deal.hearts_broken,
                         deal.playable, bits, king, deal.deck, deal.played, len(trick), *trick,
                         *[-1] * (n - len(trick)), *fin, *[-1] * (n - len(fin)), *deal.hands, *deal.played_by,
                         *deal.captured, *deal.excluded, *deal.tricks_won, *deal.points, *deal.passes)  # fmt: skip
    out = np.empty(lay.size, np.float32)
    king_row(fields, offsets, out)
    if match is not None:
        out[lay.match_entries] = match_rows(match)[seat]
    return out
