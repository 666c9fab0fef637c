"""numpy's seeding and bounded integers as kernels, draw for draw: ``np.random.SeedSequence`` (its pool and
``generate_state``), ``np.random.default_rng(seed)`` (PCG64 seeded from ``SeedSequence(seed)``) and
``Generator.integers(n)`` (Lemire's method on 32-bit draws, as numpy takes them for a range below 2**32).

:func:`game_seeds` is ``evaluation.boards.game_seed`` for a batch of games; :func:`seed_generators` sets up
generators in the state :func:`integers` draws from: per generator six ``uint64`` (the 128-bit PCG state and
increment, high word first, then numpy's buffered 32-bit half: a flag and the value). The tests compare every
function with numpy on many seeds.
"""

from __future__ import annotations

import numpy as np

from ..tables import U64
from .common import helper, kernel

M32 = U64(0xFFFFFFFF)
# SeedSequence's hash constants (numpy/random/bit_generator.pyx)
INIT_A, MULT_A, INIT_B, MULT_B = U64(0x43B0D7E5), U64(0x931E8875), U64(0x8B51F9DD), U64(0x58F38DED)
MIX_MULT_L, MIX_MULT_R, XSHIFT = U64(0xCA01F9DD), U64(0x4973F715), U64(16)
POOL_SIZE = 4
# PCG64's 128-bit multiplier (numpy/random/src/pcg64)
PCG_MULT_HI, PCG_MULT_LO = U64(0x2360ED051FC65DA4), U64(0x4385DF649FCCF645)
#: uint64 words of one generator's state.
GEN_WORDS = 6


@helper
def _hashmix(value: np.uint64, h: np.ndarray) -> np.uint64:
    """SeedSequence's ``hashmix``; ``h[0]``: the running hash constant (updated)."""
    value ^= h[0]
    h[0] = (h[0] * MULT_A) & M32
    value = (value * h[0]) & M32
    return value ^ (value >> XSHIFT)


@helper
def _mix(x: np.uint64, y: np.uint64) -> np.uint64:
    r = (MIX_MULT_L * x - MIX_MULT_R * y) & M32
    return r ^ (r >> XSHIFT)


@helper
def _pool(entropy: np.ndarray, n: int, pool: np.ndarray) -> None:
    """``pool`` (uint64 [4]): the pool of ``SeedSequence`` over the 32-bit words ``entropy[:n]``."""
    h = np.empty(1, U64)
    h[0] = INIT_A
    for i in range(POOL_SIZE):
        pool[i] = _hashmix(entropy[i] if i < n else U64(0), h)
    for i_src in range(POOL_SIZE):
        for i_dst in range(POOL_SIZE):
            if i_src != i_dst:
                pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], h))
    for i_src in range(POOL_SIZE, n):
        for i_dst in range(POOL_SIZE):
            pool[i_dst] = _mix(pool[i_dst], _hashmix(entropy[i_src], h))


@helper
def _generate(pool: np.ndarray, out: np.ndarray) -> None:
    """``out`` (uint64 [k]): ``generate_state(k)``, 32-bit words."""
    h = INIT_B
    for i in range(out.shape[0]):
        v = pool[i % POOL_SIZE] ^ h
        h = (h * MULT_B) & M32
        v = (v * h) & M32
        out[i] = v ^ (v >> XSHIFT)


@helper
def _int_words(value: np.uint64, entropy: np.ndarray, at: int) -> int:
    """The 32-bit words of an int (``[0]`` for 0) into ``entropy[at:]``; returns the next free index."""
    entropy[at] = value & M32
    at += 1
    value >>= U64(32)
    while value:
        entropy[at] = value & M32
        at += 1
        value >>= U64(32)
    return at


@helper
def _mulhi(a: np.uint64, b: np.uint64) -> np.uint64:
    """The high 64 bits of the 128-bit product ``a * b``."""
    a0, a1, b0, b1 = a & M32, a >> U64(32), b & M32, b >> U64(32)
    p0, p1, p2 = a0 * b0, a0 * b1, a1 * b0
    mid = (p0 >> U64(32)) + (p1 & M32) + (p2 & M32)
    return a1 * b1 + (p1 >> U64(32)) + (p2 >> U64(32)) + (mid >> U64(32))


@helper
def _pcg_step(gen: np.ndarray) -> None:
    """``state = state * MULT + inc`` (mod 2**128)."""
    hi, lo = gen[0], gen[1]
    new_hi = _mulhi(lo, PCG_MULT_LO) + hi * PCG_MULT_LO + lo * PCG_MULT_HI
    new_lo = lo * PCG_MULT_LO
    lo2 = new_lo + gen[3]
    gen[0] = new_hi + gen[2] + (U64(1) if lo2 < new_lo else U64(0))
    gen[1] = lo2


@helper
def _next64(gen: np.ndarray) -> np.uint64:
    """PCG64's next output (XSL-RR of the stepped state)."""
    _pcg_step(gen)
    x = gen[0] ^ gen[1]
    rot = gen[0] >> U64(58)
    return (x >> rot) | (x << ((U64(64) - rot) & U64(63)))


@helper
def _next32(gen: np.ndarray) -> np.uint64:
    """numpy's ``next_uint32`` of PCG64: the low half of a 64-bit output, its high half on the next call."""
    if gen[4]:
        gen[4] = U64(0)
        return gen[5]
    v = _next64(gen)
    gen[4] = U64(1)
    gen[5] = v >> U64(32)
    return v & M32


@helper
def integers(gen: np.ndarray, n: int) -> int | np.int64:
    """``Generator.integers(n)`` for 1 <= n <= 2**32 - 1 (no draw when n == 1)."""
    if n == 1:
        return 0
    excl = U64(n)
    m = _next32(gen) * excl
    left = m & M32
    if left < excl:
        threshold = (M32 - (excl - U64(1))) % excl
        while left < threshold:
            m = _next32(gen) * excl
            left = m & M32
    return np.int64(m >> U64(32))


@helper
def _seed_generator(seed: np.uint64, gen: np.ndarray) -> None:
    """``gen``: the state of ``np.random.default_rng(seed)``."""
    entropy = np.empty(2, U64)
    pool = np.empty(POOL_SIZE, U64)
    _pool(entropy, _int_words(seed, entropy, 0), pool)
    w = np.empty(8, U64)
    _generate(pool, w)
    # generate_state(4, uint64): word k is w[2k] | w[2k + 1] << 32; state = (v0 << 64) | v1, inc = (v2 << 64) | v3
    v = np.empty(4, U64)
    for k in range(4):
        v[k] = w[2 * k] | (w[2 * k + 1] << U64(32))
    inc_hi = (v[2] << U64(1)) | (v[3] >> U64(63))  # pcg_setseq_128_srandom_r: inc = initseq << 1 | 1
    inc_lo = (v[3] << U64(1)) | U64(1)
    gen[0], gen[1], gen[2], gen[3], gen[4], gen[5] = U64(0), U64(0), inc_hi, inc_lo, U64(0), U64(0)
    _pcg_step(gen)
    lo = gen[1] + v[1]
    gen[0] = gen[0] + v[0] + (U64(1) if lo < gen[1] else U64(0))
    gen[1] = lo
    _pcg_step(gen)


@kernel()
def seed_generators(seeds: np.ndarray, want: np.ndarray, gens: np.ndarray) -> None:
    """``gens[i, j]`` (uint64 [n, k, GEN_WORDS]): ``default_rng(seeds[i, j])`` where ``want[i, j]``."""
    for i in range(seeds.shape[0]):
        for j in range(seeds.shape[1]):
            if want[i, j]:
                _seed_generator(seeds[i, j], gens[i, j])


@kernel()
def game_seeds(seed_words: np.ndarray, contract_idx: int, boards: np.ndarray, seatings: int, out: np.ndarray) -> None:
    """``out[i * seatings + k, s]`` (uint64 [n * seatings, 4]): ``game_seed(seed, contract_idx, boards[i], k, s)``,
    ``seed_words``: the 32-bit words of ``seed`` (uint64)."""
    m = seed_words.shape[0]
    entropy = np.empty(m + 4, U64)
    entropy[:m] = seed_words
    pool = np.empty(POOL_SIZE, U64)
    one = np.empty(1, U64)
    for i in range(boards.shape[0]):
        for k in range(seatings):
            for s in range(out.shape[1]):
                entropy[m], entropy[m + 1], entropy[m + 2], entropy[m + 3] = 1 + contract_idx, boards[i], k, s
                _pool(entropy, m + 4, pool)
                _generate(pool, one)
                out[i * seatings + k, s] = one[0]


@kernel()
def draws(gens: np.ndarray, ns: np.ndarray, out: np.ndarray) -> None:
    """``out[i] = integers(gens[0], ns[i])`` in order: the draws of one generator for the bounds ``ns``."""
    for i in range(ns.shape[0]):
        out[i] = integers(gens[0], ns[i])


__all__ = ["GEN_WORDS", "draws", "game_seeds", "integers", "seed_generators"]
