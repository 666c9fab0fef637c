"""The compiled kernels of :class:`~.deals.VectorDeals`, bound to one batch: :class:`Kernels`.

The kernels (:mod:`.jit`, numba) work on the :class:`~.core.State` arrays and the per-rules tables; the
engine ``Deal`` and ``observation.encode`` are their reference (tests/test_vector.py compares them step by
step). numba is imported only when a :class:`Kernels` is built or :func:`random_choice` first runs, never by
``import barbu_env``.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ..actions import NUM_ACTIONS
from ..observation import OBS_SIZE
from .core import State
from .encode import NUM_WORDS, PACKED_BYTES
from .tables import U64, Tables

#: The ``backend`` names :class:`~.deals.VectorDeals` accepts (both mean the compiled kernels).
BACKENDS = ("auto", "numba")
I64 = np.int64


def numba_available() -> bool:
    """Whether numba (a dependency of barbu_env) is importable, without importing it."""
    return importlib.util.find_spec("numba") is not None


def resolve(name: str) -> str:
    """``"numba"`` for a name of :data:`BACKENDS`; a ``ValueError`` naming the valid ones otherwise."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}: valid are {list(BACKENDS)} (the compiled numba kernels are "
                         f"the one backend; the engine Deal is their reference)")  # fmt: skip
    return "numba"


class Kernels:
    """The kernels for ``batch`` games under tables ``t``, with their scratch buffers. ``threads``: threads
    of the parallel per-game loops, set before each kernel call (at most ``NUMBA_NUM_THREADS``)."""

    name = "numba"

    def __init__(self, t: Tables, batch: int, threads: int = 1) -> None:
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"bad threads {threads!r}: expected a positive int")
        import numba

        from . import jit

        limit: int = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]  # set by numba.config at import
        if threads > limit:
            raise ValueError(f"threads={threads} exceeds NUMBA_NUM_THREADS={limit}")
        self._jit = jit
        self.tb = jit.jit_tables(t)
        self.threads = int(threads)
        self._set_threads = numba.set_num_threads
        self.words = np.zeros((batch, NUM_WORDS), U64)
        self.order = np.zeros((batch, 64), np.uint8)  # a shuffled deck per game
        self.dealt = np.zeros(batch, I64)  # stands in for VectorDeals' deal counts when not restarting

    def num_threads(self) -> int:
        """Threads the kernels run on."""
        return self.threads

    def nbytes(self) -> int:
        """Bytes of the scratch buffers."""
        return self.words.nbytes + self.order.nbytes + self.dealt.nbytes

    def _threads(self) -> None:
        self._set_threads(self.threads)

    def start(self, st: State, g: np.ndarray, hands: np.ndarray, declarer: np.ndarray,
              must_double: np.ndarray, specs: np.ndarray) -> None:  # fmt: skip
        """Fresh deals in games ``g`` (``Deal.from_hands``): ``hands`` uint64 [n, 4], ``declarer`` [n], R6.4
        ``must_double`` seat masks [n]; ``specs[g % len(specs)]`` is the game's (contract row or -1, trump,
        rank, declaration-action mask, available-names mask). A fixed contract is declared at once."""
        self._jit.start(st.data, self.tb, np.ascontiguousarray(g, I64), np.ascontiguousarray(hands, U64),
                        np.ascontiguousarray(declarer, I64), np.ascontiguousarray(must_double, I64), specs)  # fmt: skip

    def restart(self, st: State, g: np.ndarray, stream: tuple[int, np.ndarray, int], specs: np.ndarray) -> None:
        """Fresh deals in games ``g``: with ``stream = (key, dealt, declarer or -1)`` game g's next deal of the
        stream, ``dealt[g] * B + g``, counted in ``dealt`` (as :meth:`step` restarts a game)."""
        key, dealt, declarer = stream
        deal = np.array([key - (1 << 64) if key >= 1 << 63 else key, declarer], I64)
        self._jit.restart(st.data, self.tb, np.ascontiguousarray(g, I64), deal, dealt, specs, self.order)

    def legal(self, st: State) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions as two words per game: uint64 ``low`` (bit a for a in 0..52: cards, pass) and
        uint64 ``high`` (bit a - 53 for a in 53..86: declarations, doubles)."""
        b = st.phase.shape[0]
        low, high = np.empty(b, U64), np.empty(b, U64)
        self._threads()
        self._jit.legal_words(st.data, self.tb, low, high)
        return low, high

    def observe(self, st: State, seat: np.ndarray, low: np.ndarray, high: np.ndarray, obs: np.ndarray,
                mask: np.ndarray) -> None:  # fmt: skip
        """Fill ``obs`` with the observation of ``seat[g]`` (zero row for -1) and ``mask`` with the legal
        actions of the games whose seat on move is ``seat[g]`` (zero rows elsewhere)."""
        self._threads()
        self._jit.observe(st.data, self.tb, seat, low, high, self.words, obs, mask)

    def observe_rows(self, st: State, games: np.ndarray, low: np.ndarray, high: np.ndarray,
                     ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """``(obs float32 [n, OBS_SIZE], mask int8 [n, NUM_ACTIONS])`` of the seats on move in ``games`` (int64 [n])."""
        n = games.shape[0]
        obs, mask = np.empty((n, OBS_SIZE), np.float32), np.empty((n, NUM_ACTIONS), np.int8)
        self._threads()
        self._jit.observe_rows(st.data, self.tb, games, low, high, np.empty((n, NUM_WORDS), U64), obs, mask)
        return obs, mask

    def observe_packed(self, st: State, seat: np.ndarray, low: np.ndarray, high: np.ndarray,
                       mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """``(bits uint8 [B, PACKED_BYTES], numeric float32 [B, 16])`` of the seats ``seat``; fills ``mask``."""
        b = seat.shape[0]
        words, num = np.empty((b, NUM_WORDS), U64), np.empty((b, 16), np.float32)
        self._threads()
        self._jit.observe_packed(st.data, self.tb, seat, low, high, words, num, mask)
        return words.view(np.uint8)[:, :PACKED_BYTES], num

    def masks(self, low: np.ndarray, high: np.ndarray, mask: np.ndarray) -> None:
        """Fill ``mask`` from the legal words."""
        self._threads()
        self._jit.masks(low, high, mask)

    def step(self, st: State, low: np.ndarray, high: np.ndarray, actions: np.ndarray, rewards: np.ndarray,
             done: np.ndarray, specs: np.ndarray, stream: tuple[int, np.ndarray, int] | None, hold: bool = False,
             ) -> tuple[int, tuple[np.ndarray, np.ndarray] | None]:  # fmt: skip
        """Apply ``actions`` (int [B]) to the games not over, given their legal words ``low``, ``high``. For
        each deal that ends: ``done[g]``, ``rewards[g]`` (zeros in) its scores; with ``stream = (key, dealt,
        declarer or -1)`` game g restarts at once with the stream's deal ``dealt[g] * B + g`` and counts it in
        ``dealt`` (int64 [B]; ``dealing.deal_stream``). Returns ``(deals ended, legal words of the new
        state)``, or ``(-1, None)`` (nothing moved) if a game on move has an illegal action."""
        key, dealt, declarer = stream if stream is not None else (0, self.dealt, -1)
        deal = np.array([stream is not None, key - (1 << 64) if key >= 1 << 63 else key, declarer, hold], I64)
        new_low, new_high = low.copy(), high.copy()
        self._threads()
        ended = self._jit.step(st.data, self.tb, new_low, new_high, np.ascontiguousarray(actions, I64), done,
                               rewards, specs, deal, dealt, self.order)  # fmt: skip
        return ended, (new_low, new_high) if ended >= 0 else None


def make_backend(name: str, t: Tables, batch: int, threads: int = 1) -> Kernels:
    """The kernels for ``batch`` games under tables ``t`` (``name``: see :data:`BACKENDS`); ``threads``: see
    :class:`~.deals.VectorDeals`."""
    resolve(name)
    return Kernels(t, batch, threads)


def random_choice(mask: np.ndarray, u: np.ndarray, backend: str = "auto") -> np.ndarray:
    """The ``floor(u[g] * n_g)``-th legal action of row g of an ``int8 [B, A]`` mask (n_g legal actions;
    0 for rows without any), on numba's current thread count (``VectorDeals`` sets it to its ``threads`` at
    every call)."""
    resolve(backend)
    from .jit import random_actions

    out = np.empty(mask.shape[0], np.int64)
    random_actions(np.ascontiguousarray(mask), u, out)
    return out
