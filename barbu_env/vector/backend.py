"""Backends of :class:`~.deals.VectorDeals`: ``"numpy"`` (array code of ``core`` / ``encode``, the reference)
and ``"numba"`` (compiled per-game kernels of ``jit``, the fast one, ``pip install barbu_env[fast]``).

Both work on the same :class:`~.core.State` and :class:`~.tables.Tables` and give identical results; a
backend only decides how the legality words, observations, masks and transitions are computed.
``"auto"`` picks numba when it is installed. numba is imported only here, when it is chosen.
"""

from __future__ import annotations

import importlib.util
from typing import Protocol

import numpy as np

from .core import State, apply, is_legal, legal_words, start
from .dealing import deal_stream
from .encode import masks_into, observe_into, pack, packed_bytes, zero_tail
from .tables import OVER, Tables

BACKENDS = ("auto", "numpy", "numba")


def numba_available() -> bool:
    """Whether numba is installed (without importing it)."""
    return importlib.util.find_spec("numba") is not None


def resolve(name: str) -> str:
    """``"numpy"`` or ``"numba"`` for a backend name (``"auto"``: numba if installed); errors for the rest."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}: valid are {list(BACKENDS)}")
    if name == "auto":
        return "numba" if numba_available() else "numpy"
    if name == "numba" and not numba_available():
        raise ImportError("backend='numba' needs numba, which is not installed: pip install barbu_env[fast]")
    return name


class Backend(Protocol):
    """What :class:`~.deals.VectorDeals` asks of a backend (documented on :class:`NumpyBackend`)."""

    name: str

    def num_threads(self) -> int: ...
    def nbytes(self) -> int: ...
    def legal(self, st: State, t: Tables) -> tuple[np.ndarray, np.ndarray]: ...
    def observe(self, st: State, t: Tables, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                obs: np.ndarray, mask: np.ndarray) -> None: ...  # fmt: skip
    def observe_packed(self, st: State, t: Tables, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                       mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...  # fmt: skip
    def masks(self, low: np.ndarray, high: np.ndarray, mask: np.ndarray) -> None: ...
    def step(self, st: State, t: Tables, low: np.ndarray, high: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
             done: np.ndarray, specs: np.ndarray, stream: tuple[int, np.ndarray, int] | None,
             ) -> tuple[int, tuple[np.ndarray, np.ndarray] | None]: ...  # fmt: skip


class NumpyBackend:
    """The array-programming backend (whole-batch numpy operations; ``tables.xp`` for a torch port)."""

    name = "numpy"

    def __init__(self, t: Tables, batch: int, threads: int = 1) -> None:
        del t, batch, threads  # stateless; numpy runs on one thread

    def num_threads(self) -> int:
        """Threads the backend runs on."""
        return 1

    def nbytes(self) -> int:
        """Bytes of the backend's own buffers."""
        return 0

    def legal(self, st: State, t: Tables) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions as ``(low, high)`` uint64 words per game (``core.legal_words``)."""
        return legal_words(st, t)

    def observe(self, st: State, t: Tables, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                obs: np.ndarray, mask: np.ndarray) -> None:  # fmt: skip
        """Fill ``obs`` with the observation of ``seat[g]`` (zero row for -1) and ``mask`` with the legal
        actions of the games whose seat on move is ``seat[g]`` (zero rows elsewhere)."""
        zero_tail(obs)
        observe_into(st, t, seat, obs)
        masks_into(low, high, mask)
        mask[seat != np.where(st.phase != OVER, st.to_move, -1)] = 0

    def observe_packed(self, st: State, t: Tables, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                       mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """``(bits uint8 [B, PACKED_BYTES], numeric float32 [B, 16])`` of the seats ``seat``; fills ``mask``."""
        w, num = pack(st, t, seat)
        masks_into(low, high, mask)
        return packed_bytes(w), num.astype(np.float32)

    def masks(self, low: np.ndarray, high: np.ndarray, mask: np.ndarray) -> None:
        """Fill ``mask`` from the legal words."""
        masks_into(low, high, mask)

    def step(self, st: State, t: Tables, low: np.ndarray, high: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
             done: np.ndarray, specs: np.ndarray, stream: tuple[int, np.ndarray, int] | None,
             ) -> tuple[int, tuple[np.ndarray, np.ndarray] | None]:  # fmt: skip
        """Apply ``actions`` (int [B]) to the games not over, given their legal words ``low``, ``high``. For
        each deal that ends: ``done[g]``, ``rewards[g]`` (zeros in) its scores; with ``stream = (key, dealt,
        declarer or -1)`` game g restarts at once with the stream's deal ``dealt[g] * B + g`` and counts it in
        ``dealt`` (int64 [B]; ``core.start``, ``dealing.deal_stream``). Returns ``(deals ended, legal words of
        the new state or None)``, or ``(-1, None)`` (nothing moved) if a game on move has an illegal action."""
        live = st.phase != OVER
        if (live & ~is_legal(low, high, actions)).any():
            return -1, None
        ended = apply(st, t, np.where(live, actions, 0))
        rewards[ended] = st.scores[ended]
        done[ended] = True
        if stream is not None and ended.size:
            key, dealt, declarer = stream
            hands, decl = deal_stream(key, dealt[ended] * len(dealt) + ended, t.deck_ids, t.hand_size, declarer)
            dealt[ended] += 1
            start(st, t, ended, hands, decl, 0, specs)
        return int(ended.size), None


def make_backend(name: str, t: Tables, batch: int, threads: int = 1) -> Backend:
    """The backend ``name`` (see :data:`BACKENDS`) for ``batch`` games under tables ``t``; ``threads``: see
    :class:`~.deals.VectorDeals`."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"bad threads {threads!r}: expected a positive int")
    if resolve(name) == "numba":
        from .jit import NumbaBackend

        return NumbaBackend(t, batch, threads)
    return NumpyBackend(t, batch, threads)


def random_choice(mask: np.ndarray, u: np.ndarray, backend: str = "auto") -> np.ndarray:
    """The ``floor(u[g] * n_g)``-th legal action of row g of an ``int8 [B, A]`` mask (n_g legal actions;
    0 for rows without any): the same result with either backend (numba: on its current thread count, which
    ``VectorDeals`` sets to its ``threads`` at every call)."""
    if resolve(backend) == "numba":
        from .jit import random_actions

        out = np.empty(mask.shape[0], np.int64)
        random_actions(np.ascontiguousarray(mask), u, out)
        return out
    cum = np.cumsum(mask.T, axis=0, dtype=np.uint8)  # along actions, vectorised over the games
    pick = (u * cum[-1]).astype(np.uint8)
    return (cum <= pick[None, :]).argmin(axis=0)
