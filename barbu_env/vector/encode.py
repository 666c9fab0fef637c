"""The packed observation of the batched engine: its layout and :func:`unpack_observations`.

The compiled kernels (:mod:`.jit`) pack the binary part of an observation (every block before the
match-only ``remaining``, at its documented offset of ``observation.BLOCKS``) into :data:`NUM_WORDS`
``uint64`` words per game: entry i is bit ``i % 64`` of word ``i // 64``. The small one-hot blocks travel in
four values (:data:`SMALL`), each laid out from its first block's offset (:data:`SH`: shift of a block in
its value). Deal mode only: the match blocks stay 0, as ``encode(deal, seat)`` leaves them without a match.
"""

from __future__ import annotations

import numpy as np

from ..observation import BLOCKS, NUM_PART, OBS_SIZE

#: Packed words per game: the binary entries 0 .. FILLED - 1 (all blocks before the match-only ``remaining``).
FILLED = BLOCKS["remaining"][0]
NUM_WORDS = (FILLED + 63) // 64
PACKED_BYTES = (FILLED + 7) // 8
#: ``DONE_ABS[declarer, step]``: absolute seats that took their doubling decision after ``step`` decisions.
DONE_ABS = np.array([[sum(1 << ((d + 1 + i) & 3) for i in range(k)) for k in range(5)] for d in range(4)], np.int64)
#: The small blocks travel in four values, each laid out from its first block's offset.
SMALL = (
    ("void", ("void", "trick_no", "contract", "trump", "fantan_rank", "declarer")),
    ("leader", ("leader", "to_move", "phase", "doubles", "doubled_done", "must_double", "available", "hearts_broken")),
    ("fantan_playable", ("fantan_playable",)),
    ("finished", ("finished", "rules", "extra_deal", "is_match")),
)
SH = {b: BLOCKS[b][0] - BLOCKS[first][0] for first, blocks in SMALL for b in blocks}


def unpack_observations(bits: np.ndarray, numeric: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """The ``float32 [B, OBS_SIZE]`` observations from :meth:`VectorDeals.observe_packed`'s ``(bits, numeric)``.
    On a GPU the same is ``((bits[..., None] >> arange(8)) & 1).flatten(1)[:, :FILLED]`` for the binary
    entries ``0 .. FILLED - 1``, ``numeric`` at ``NUM_PART .. NUM_PART + 15`` and zeros elsewhere."""
    n = bits.shape[0]
    if out is None:
        out = np.zeros((n, OBS_SIZE), np.float32)
    else:
        out[:, FILLED:NUM_PART] = 0.0
        out[:, NUM_PART + 16 : OBS_SIZE] = 0.0
    out[:, :FILLED] = np.unpackbits(bits, axis=1, count=FILLED, bitorder="little")
    out[:, NUM_PART : NUM_PART + 16] = numeric
    return out


__all__ = ["DONE_ABS", "FILLED", "NUM_WORDS", "PACKED_BYTES", "SH", "unpack_observations"]
