"""The state arrays of the batched engine: :class:`State`, B deals with the game on axis 0 (RULES.md R3-R8).

Hands and every card set are bitmasks (bit = card id, R1.2). All fields live in one ``int64 [B, NUM_COLUMNS]``
array, :attr:`State.data`, one row per game at the columns of :data:`COLUMNS` (a per-seat field takes four
columns, by absolute seat); the compiled kernels of :mod:`.jit` read and write it. Card sets use bits 0..51
only, so their ``uint64`` masks and the ``int64`` columns hold the same bits; the card fields of
:class:`State` are ``uint64`` views of the same memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tables import U64

I64 = np.int64

#: The card-set fields (``uint64`` views) then the int fields, in column order: (name, columns), four
#: columns for a field by absolute seat.
CARD_FIELDS = (("hands", 4), ("played_by", 4), ("trick_by", 4), ("captured", 4), ("excluded", 4), ("played", 1),
               ("trick_mask", 1), ("playable", 1))  # fmt: skip
INT_FIELDS = (("tricks_won", 4), ("points", 4), ("passes", 4), ("doubles", 4), ("fin_place", 4), ("scores", 4),
              ("phase", 1), ("to_move", 1), ("declarer", 1), ("leader", 1), ("led", 1), ("best", 1), ("winner", 1),
              ("top_trump", 1), ("trick_len", 1), ("trick_no", 1), ("contract", 1), ("trump", 1), ("fantan_rank", 1),
              ("double_step", 1), ("must_double", 1), ("num_fin", 1), ("avail_decl", 1), ("avail_names", 1),
              ("pass_run", 1), ("hearts_broken", 1))  # fmt: skip


def _columns() -> dict[str, int]:
    out, c = {}, 0
    for name, width in CARD_FIELDS + INT_FIELDS:
        out[name] = c
        c += width
    return out


#: First column of each field.
COLUMNS = _columns()
NUM_COLUMNS = sum(w for _, w in CARD_FIELDS + INT_FIELDS)


def _start_row() -> np.ndarray:
    row = np.zeros(NUM_COLUMNS, I64)
    for name in ("led", "best", "winner", "top_trump"):
        row[COLUMNS[name]] = -1
    row[COLUMNS["fin_place"] : COLUMNS["fin_place"] + 4] = -1
    return row


#: A game's row before its set-up: "none" (-1) for the empty trick's fields and the Fantan places, else 0.
START_ROW = _start_row()


@dataclass
class State:
    """B deals; seat-indexed fields are ``[B, 4]`` by absolute seat, the others ``[B]``; scalars use -1 for
    "none". Every field is a view of :attr:`data`."""

    data: np.ndarray  # i64 [B, NUM_COLUMNS]
    hands: np.ndarray  # u64 [B,4]
    played_by: np.ndarray  # u64 [B,4] cards each seat played this deal
    trick_by: np.ndarray  # u64 [B,4] the card each seat played to the trick in progress
    captured: np.ndarray  # u64 [B,4] cards in the tricks each seat won (R5.3)
    excluded: np.ndarray  # u64 [B,4] cards each seat has shown it cannot hold
    played: np.ndarray  # u64 [B]
    trick_mask: np.ndarray  # u64 [B]
    playable: np.ndarray  # u64 [B] Fantan table (R7.2)
    tricks_won: np.ndarray  # i64 [B,4]
    points: np.ndarray  # i64 [B,4] running contract points
    passes: np.ndarray  # i64 [B,4]
    doubles: np.ndarray  # i64 [B,4] mask of the absolute seats each seat doubled (R6)
    fin_place: np.ndarray  # i64 [B,4] Fantan finishing place, -1 while in (R7.4)
    scores: np.ndarray  # i64 [B,4] deal scores once over (R8.1)
    phase: np.ndarray  # i64 [B]
    to_move: np.ndarray
    declarer: np.ndarray
    leader: np.ndarray
    led: np.ndarray
    best: np.ndarray
    winner: np.ndarray
    top_trump: np.ndarray
    trick_len: np.ndarray
    trick_no: np.ndarray
    contract: np.ndarray  # row of the contract table, -1 until declared
    trump: np.ndarray
    fantan_rank: np.ndarray
    double_step: np.ndarray
    must_double: np.ndarray  # seat mask (R6.4)
    num_fin: np.ndarray
    avail_decl: np.ndarray  # i64 [B] mask over the 26 declaration actions (R3.1)
    avail_names: np.ndarray  # i64 [B] mask over CONTRACT_NAMES (the observation's available block)
    pass_run: np.ndarray  # i64 [B] Fantan passes since the last card played (the trailing passes of the history)
    hearts_broken: np.ndarray  # i64 [B] 0 or 1

    @classmethod
    def zeros(cls, batch: int) -> State:
        """All-zero state (:attr:`data` and its field views)."""
        data = np.zeros((batch, NUM_COLUMNS), I64)
        kw: dict[str, np.ndarray] = {}
        for fields, arr in ((CARD_FIELDS, data.view(U64)), (INT_FIELDS, data)):
            for name, width in fields:
                c = COLUMNS[name]
                kw[name] = arr[:, c : c + 4] if width == 4 else arr[:, c]
        return cls(data=data, **kw)

    def nbytes(self) -> int:
        """Bytes of the state array."""
        return self.data.nbytes


__all__ = ["CARD_FIELDS", "COLUMNS", "INT_FIELDS", "NUM_COLUMNS", "START_ROW", "State"]
