"""The state arrays of the batched engine: :class:`State`, B deals with the game on axis 0 (RULES.md R3-R8).

Hands and every card set are ``uint64`` bitmasks (bit = card id, R1.2). The fields are views into four
blocks (:meth:`State.blocks`), which the compiled kernels of :mod:`.jit` read and write.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .tables import U64

I64 = np.int64


@dataclass
class State:
    """B deals; seat-indexed arrays are ``[B, 4]`` by absolute seat. Scalars use -1 for "none"."""

    hands: np.ndarray  # u64 [B,4]
    played_by: np.ndarray  # u64 [B,4] cards each seat played this deal
    captured: np.ndarray  # u64 [B,4] cards in the tricks each seat won (R5.3)
    excluded: np.ndarray  # u64 [B,4] cards each seat has shown it cannot hold
    trick_by: np.ndarray  # u64 [B,4] the card each seat played to the trick in progress
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
    hearts_broken: np.ndarray  # bool [B]

    cards4: np.ndarray | None = None  # u64 [B,5,4]: hands, played_by, trick_by, captured, excluded
    ints4: np.ndarray | None = None  # i64 [B,5,4]: tricks_won, points, passes, doubles, fin_place
    words: np.ndarray | None = None  # u64 [3,B]: played, trick_mask, playable
    scalars: np.ndarray | None = None  # i64 [S,B]: the int fields of SCALAR_FIELDS

    @classmethod
    def zeros(cls, batch: int) -> State:
        """All-zero state. The fields are views into four blocks: per-seat ``[B, 5, 4]`` and per-game
        ``[F, B]`` (one row per field, contiguous); the kernels work on the blocks (:meth:`blocks`)."""
        blocks = {
            "cards4": np.zeros((batch, len(CARD_SEAT_FIELDS), 4), U64),
            "ints4": np.zeros((batch, len(INT_SEAT_FIELDS), 4), I64),
            "words": np.zeros((len(WORD_FIELDS), batch), U64),
            "scalars": np.zeros((len(SCALAR_FIELDS), batch), I64),
        }
        kw: dict[str, np.ndarray] = {}
        for block, names in (("cards4", CARD_SEAT_FIELDS), ("ints4", INT_SEAT_FIELDS)):
            for i, name in enumerate(names):
                kw[name] = blocks[block][:, i, :]
        for block, names in (("words", WORD_FIELDS), ("scalars", SCALAR_FIELDS)):
            for i, name in enumerate(names):
                kw[name] = blocks[block][i]
        kw["scores"] = np.zeros((batch, 4), I64)
        kw["hearts_broken"] = np.zeros(batch, bool)
        return cls(**kw, **blocks)

    def blocks(self) -> tuple[np.ndarray, ...]:
        """``(cards4, ints4, words, scalars, hearts_broken, scores)``: every array of the state, once."""
        return self.cards4, self.ints4, self.words, self.scalars, self.hearts_broken, self.scores

    def nbytes(self) -> int:
        """Bytes of all state arrays."""
        return sum(a.nbytes for a in self.blocks())


#: Order of the per-seat arrays in the stacked blocks (the observation reads them in this order).
CARD_SEAT_FIELDS = ("hands", "played_by", "trick_by", "captured", "excluded")
INT_SEAT_FIELDS = ("tricks_won", "points", "passes", "doubles", "fin_place")
#: Rows of the per-game blocks.
WORD_FIELDS = ("played", "trick_mask", "playable")
SCALAR_FIELDS = ("phase", "to_move", "declarer", "leader", "led", "best", "winner", "top_trump", "trick_len",
                 "trick_no", "contract", "trump", "fantan_rank", "double_step", "must_double", "num_fin",
                 "avail_decl", "avail_names", "pass_run")  # fmt: skip
#: The scalars of a fresh deal before its set-up: "none" (-1) where the trick is empty, else 0 (DECLARE).
SCALAR_START = np.array([-1 if n in ("led", "best", "winner", "top_trump") else 0 for n in SCALAR_FIELDS], np.int64)


__all__ = ["CARD_SEAT_FIELDS", "INT_SEAT_FIELDS", "SCALAR_FIELDS", "SCALAR_START", "WORD_FIELDS", "State"]
