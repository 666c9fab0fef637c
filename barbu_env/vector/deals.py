"""``VectorDeals``: B deals of classic Barbu stepped at once, for self-play (deal mode, RULES.md R3-R8).

Each step every game's seat on move takes one decision; finished deals report their scores as rewards
and restart at once (automatic reset). Observations and masks are those of the AEC env for the seat on
move (``observation.encode(deal, seat)`` and ``Deal.legal_actions()``), so a policy moves between the
two unchanged. See :class:`VectorDeals`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

import numpy as np

from ..actions import DECLARE_BASE, NUM_ACTIONS, action_name
from ..cards import cards_of
from ..contracts import CONTRACT_NAMES
from ..engine.deal import parse_contract, validate_hands
from ..observation import OBS_SIZE
from ..rules import Rules, load_rules
from .backend import Kernels, make_backend, random_choice
from .core import COLUMNS, NUM_COLUMNS, State
from .dealing import deal_stream, stream_key
from .tables import DECLARE, HOLD, NUM_DECL, OVER, U64, Tables, build_tables

#: Hands of several deals: a ``uint64 [N, 4]`` mask array, or per deal 4 masks / card lists / card strings.
HandsLike = np.ndarray | Iterable[object]

if TYPE_CHECKING:
    from .heuristic import CompiledHeuristic

FAMILIES = ("trumps", "fantan")


class VectorDeals:
    """``batch`` concurrent deals under ``rules`` (a ``Rules``, preset name, path or mapping).

    ``contract`` per game (``contract[g % len(contract)]`` when a sequence):

    - ``None``: the declarer chooses among every contract of the rules (R3, declaration phase);
    - ``"trumps"`` / ``"fantan"``: that contract, the declarer names the trump suit / starting rank (R3.2);
    - ``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``: fixed, no declaration (like ``env(contract=...)``).

    ``seed`` (``None``: fresh entropy) keys the stream of random deals (:mod:`.dealing`): game g's n-th deal is
    the stream's deal ``n * B + g``, whatever the order in which games finish.
    ``declarer``: a seat 0..3, or ``"random"`` (default) drawn per deal. Doubling (R6) follows
    ``rules.doubling`` (``"off"`` skips it). ``boards``: optional ``(hands, declarers)`` queue — hands as a
    ``uint64 [N, 4]`` mask array or N lists of 4 card lists — dealt in order to games as they (re)start;
    once it is used up, finished games go inactive (seat -1, zero mask) and :attr:`finished` turns true.
    ``auto_reset=False`` leaves finished deals over until :meth:`reset_games`.

    The games run in compiled per-game kernels (numba, :mod:`.jit`; compiled on first use, then cached on
    disk); ``backend`` (``"auto"`` or ``"numba"``, :data:`.backend.BACKENDS`) names them. ``threads``: threads
    of the kernels' per-game loops (default 1). More threads pay only on idle cores: with numba's OpenMP layer
    on shared cores, set ``OMP_WAIT_POLICY=passive`` (busy-waiting workers can otherwise stall each step for a
    scheduler time slice).

    Rewards are raw deal scores (contract + doubling settlement, R8.1), ``float32 [B, 4]`` by absolute
    seat, non-zero only on the step that ends a deal — the AEC env's rewards with ``reward_scale=1``.
    """

    def __init__(self, contract: str | Sequence[str | None] | None = None, rules: Rules | str | dict | None = None,
                 batch: int = 256, seed: int | None = None, declarer: int | str = "random",
                 boards: tuple[HandsLike, Sequence[int]] | None = None, auto_reset: bool = True,
                 backend: str = "auto", threads: int = 1) -> None:  # fmt: skip
        if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
            raise ValueError(f"bad batch {batch!r}: expected a positive int")
        if not (declarer == "random" or (isinstance(declarer, (int, np.integer)) and 0 <= int(declarer) < 4)):
            raise ValueError(f"bad declarer {declarer!r}: expected a seat 0..3 or 'random'")
        self.rules: Rules = load_rules(rules)
        self.tables: Tables = build_tables(self.rules)
        self.batch = int(batch)
        self.backend: Kernels = make_backend(backend, self.tables, self.batch, threads)
        self.declarer = declarer
        self._declarer = -1 if declarer == "random" else int(declarer)
        self.auto_reset = auto_reset
        self.key = stream_key(seed)  # the deal stream (see .dealing): deal k depends on (key, k) only
        self._dealt = np.zeros(self.batch, np.int64)  # deals started per game
        specs = list(contract) if isinstance(contract, (list, tuple)) else [cast("str | None", contract)]
        if not specs:
            raise ValueError("contract sequence is empty")
        self._specs = np.array([self._spec(c) for c in specs], np.int64)  # [S, 5]
        self.state = State.zeros(self.batch)
        self.active = np.ones(self.batch, bool)
        self.board_of = np.full(self.batch, -1, np.int64)
        self._boards: tuple[np.ndarray, np.ndarray] | None = None
        self._next_board = 0
        if boards is not None:
            self._boards = self._check_boards(*boards)
        self.obs = np.zeros((self.batch, OBS_SIZE), np.float32)
        self.mask = np.zeros((self.batch, NUM_ACTIONS), np.int8)
        self._legal: tuple[np.ndarray, np.ndarray] | None = None
        self._heuristic: CompiledHeuristic | None = None
        self._started = False

    # ------------------------------------------------------------------ setup
    def _spec(self, contract: str | None) -> tuple[int, int, int, int, int]:
        """(contract row or -1, trump, rank, declaration-action mask, available-names mask)."""
        t = self.tables
        all_decl = sum(1 << i for i in range(NUM_DECL) if t.decl_k[i] >= 0)
        all_names = sum(1 << CONTRACT_NAMES.index(n) for n in t.names)
        if contract is None:
            return -1, -1, -1, all_decl, all_names
        if not isinstance(contract, str):
            raise ValueError(f"bad contract {contract!r}: expected text such as 'no_queens', 'trumps:S', 'fantan:5'")
        if contract in FAMILIES:
            if contract not in t.names:
                raise ValueError(f"contract {contract!r} is not played under these rules: valid are {list(t.names)}")
            k = t.names.index(contract)
            decl = sum(1 << i for i in range(NUM_DECL) if t.decl_k[i] == k)
            return -1, -1, -1, decl, 1 << CONTRACT_NAMES.index(contract)
        name, trump, rank = parse_contract(contract)
        if name in FAMILIES and trump < 0 and rank < 0:
            raise ValueError(f"contract {contract!r} needs a parameter")
        if name not in t.names:
            raise ValueError(f"contract {name!r} is not played under these rules: valid are {list(t.names)}")
        if rank >= 0 and not int(t.deck) >> rank & 1:
            raise ValueError(f"Fantan rank of {contract!r} is not in the {self.rules.deck_size}-card deck")
        return t.names.index(name), trump, rank, all_decl, all_names

    def _check_boards(self, hands: HandsLike, declarers: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        h = self._hand_masks(hands)
        d = np.asarray(declarers, np.int64).reshape(-1)
        if d.shape[0] != h.shape[0] or ((d < 0) | (d > 3)).any():
            raise ValueError(f"boards: need one declarer (0..3) per board, got {d.shape[0]} for {h.shape[0]} boards")
        return h, d

    def _hand_masks(self, hands: HandsLike) -> np.ndarray:
        """``uint64 [N, 4]`` masks from masks or card lists, checked to partition the deck (R1.4)."""
        if isinstance(hands, np.ndarray) and hands.dtype == U64:
            h = hands.reshape(-1, 4)
        else:
            h = np.array([validate_hands(x, self.rules) for x in hands], U64).reshape(-1, 4)
        t = self.tables
        union = h[:, 0] | h[:, 1] | h[:, 2] | h[:, 3]
        bad = (union != t.deck) | (np.bitwise_count(h) != t.hand_size).any(axis=1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(f"hands of board {i} do not deal the {self.rules.deck_size}-card deck "
                             f"{t.hand_size} cards a seat: {[cards_of(int(m)) for m in h[i]]}")  # fmt: skip
        return h

    def _deal(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The next deal of each game ``g`` (R1.4; game g's n-th deal is the stream's deal ``n * B + g``):
        ``(hands uint64 [n, 4], declarer [n])``, the declarer drawn or the fixed one."""
        t = self.tables
        k = self._dealt[g] * self.batch + g
        self._dealt[g] += 1
        return deal_stream(self.key, k, t.deck_ids, t.hand_size, self._declarer)

    def _start(self, g: np.ndarray, hands: np.ndarray, declarer: np.ndarray,
               must_double: int | Sequence[int] | np.ndarray = 0) -> None:  # fmt: skip
        """Fresh deals in games ``g`` (``Kernels.start``)."""
        md = np.broadcast_to(np.asarray(must_double, np.int64), g.shape)
        self.backend.start(self.state, g, hands, declarer, md, self._specs)
        self.active[g] = True
        self._legal = None

    def _new_deals(self, g: np.ndarray) -> None:
        """Restart games ``g``: the next boards of the queue, or random deals."""
        if self._boards is not None:
            hands, decl = self._boards
            take = min(g.shape[0], hands.shape[0] - self._next_board)
            idx = np.arange(self._next_board, self._next_board + take)
            self._next_board += take
            if take:
                self.board_of[g[:take]] = idx
                self._start(g[:take], hands[idx], decl[idx])
            rest = g[take:]
            self.active[rest] = False
            self.state.phase[rest] = OVER
            self.board_of[rest] = -1
            return
        self._start(g, *self._deal(g))

    # ------------------------------------------------------------------ API
    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """New deals in every game (the board queue restarts); returns :meth:`observe`."""
        if seed is not None:
            self.key = stream_key(seed)
            self._dealt[:] = 0
        self._next_board = 0
        self.board_of[:] = -1
        self._new_deals(np.arange(self.batch))
        self._started = True
        return self.observe()

    def reset_games(self, games: Sequence[int] | np.ndarray, hands: HandsLike | None = None,
                    declarer: int | Sequence[int] | np.ndarray | None = None,
                    must_double: int | Sequence[int] | np.ndarray = 0) -> None:  # fmt: skip
        """Restart ``games`` with given ``hands`` (``uint64 [n, 4]`` masks or n lists of 4 card lists;
        default: shuffled) and ``declarer`` (default: the env's), e.g. for duplicate boards.
        ``must_double``: seat masks whose R6.4 obligation is due (default none)."""
        g = np.asarray(games, np.int64).reshape(-1)
        if (g.size and ((g < 0) | (g >= self.batch)).any()) or np.unique(g).size != g.size:
            raise ValueError(f"bad games {games!r}: expected distinct indices in 0..{self.batch - 1}")
        if hands is None and declarer is None and not np.any(must_double):  # the stream's next deals, compiled
            self.backend.restart(self.state, g, (self.key, self._dealt, self._declarer), self._specs)
            self.active[g] = True
            self._legal = None
        else:
            if hands is None or declarer is None:  # the stream's next deals (hands and declarers)
                h, d = self._deal(g)
            if hands is not None:
                h = self._hand_masks(hands)
            if h.shape[0] != g.shape[0]:
                raise ValueError(f"reset_games: {h.shape[0]} hands for {g.shape[0]} games")
            if declarer is not None:
                d = np.broadcast_to(np.asarray(declarer, np.int64), g.shape).copy()
                if ((d < 0) | (d > 3)).any():
                    raise ValueError(f"bad declarer {declarer!r}: expected seats 0..3")
            self._start(g, h, d, must_double)
        self.board_of[g] = -1
        self._started = True

    def load_states(self, rows: State | np.ndarray, games: Sequence[int] | np.ndarray | None = None) -> None:
        """Put game states into ``games`` (default: every game, in order); the games play on from there.

        ``rows``: a :class:`~.core.State` or its ``int64 [n, NUM_COLUMNS]`` :attr:`~.core.State.data`, e.g. rows
        of :func:`.rollout.state_of_deal` (a ``Deal`` in any phase) with other hands put in (PIMC's sampled
        worlds), or rows of this engine's own :attr:`state`. A row whose phase is over (``tables.OVER``) leaves its
        game over (seat -1). The rows must be states of these rules that the engine could reach (hands, trick
        and scores agreeing); only their shape, phase, seats, contract row and card sets are checked. The games
        leave the board queue (:attr:`board_of` -1); the other games are unchanged (before the first :meth:`reset`,
        load every game)."""
        data = rows.data if isinstance(rows, State) else np.asarray(rows)
        if data.ndim != 2 or data.shape[1] != NUM_COLUMNS or data.dtype != np.int64:
            raise ValueError(f"load_states: rows must be int64 [n, {NUM_COLUMNS}] (State.data), got "
                             f"{data.dtype} {data.shape}")  # fmt: skip
        g = np.arange(self.batch) if games is None else np.asarray(games, np.int64).reshape(-1)
        if (g.size and ((g < 0) | (g >= self.batch)).any()) or np.unique(g).size != g.size:
            raise ValueError(f"bad games {games!r}: expected distinct indices in 0..{self.batch - 1}")
        if g.shape[0] != data.shape[0]:
            raise ValueError(f"load_states: {data.shape[0]} rows for {g.shape[0]} games")
        if not self._started and g.shape[0] < self.batch:
            raise ValueError(f"load_states: before the first reset(), load every game ({self.batch} rows)")
        self._check_rows(data)
        self.state.data[g] = data
        self.active[g] = True
        self.board_of[g] = -1
        self._legal = None
        self._started = True

    def _check_rows(self, data: np.ndarray) -> None:
        """``ValueError`` naming the first row of ``data`` whose phase, seats, contract or cards are out of range."""
        col, t = COLUMNS, self.tables
        phase, k = data[:, col["phase"]], data[:, col["contract"]]
        seats = data[:, [col["to_move"], col["declarer"], col["leader"]]]
        cards = data.view(U64)
        hands, played = cards[:, col["hands"] : col["hands"] + 4], cards[:, col["played"]]
        union = hands[:, 0] | hands[:, 1] | hands[:, 2] | hands[:, 3]
        overlap = (np.bitwise_count(hands).sum(axis=1) != np.bitwise_count(union)) | (union & played != 0)
        checks = (
            ("phase", (phase < 0) | (phase > OVER)),
            ("to_move, declarer or leader (seats 0..3)", ((seats < 0) | (seats > 3)).any(axis=1)),
            (f"contract row (-1 in the declaration, then 0..{len(t.names) - 1})",
             np.where(phase == DECLARE, k != -1, (k < 0) | (k >= len(t.names)))),
            ("hands or played cards (outside the deck, or a card in two places)",
             ((union | played) & ~t.deck != 0) | overlap),
        )  # fmt: skip
        for what, bad in checks:
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"load_states: row {i} has bad {what}: not a state of these rules")

    @property
    def seat(self) -> np.ndarray:
        """Seat on move per game; -1 for deals over (``auto_reset=False``) or inactive games."""
        return np.where(self.state.phase != OVER, self.state.to_move, -1)

    @property
    def finished(self) -> bool:
        """True once a board queue is used up and every game is over."""
        return not self.active.any()

    def legal(self) -> tuple[np.ndarray, np.ndarray]:
        """The legal actions as two ``uint64`` words per game (see ``Kernels.legal``); cached."""
        if self._legal is None:
            self._legal = self.backend.legal(self.state)
        return self._legal

    def observe(self, seats: np.ndarray | None = None, over: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(obs float32 [B, OBS_SIZE], mask int8 [B, 87], seat int64 [B])`` for the seat on move of each
        game (or for ``seats``, a seat 0..3 or -1 (none) per game; masks are then zero for seats not on move,
        as in the AEC env). Games over give zero rows, or with ``seats`` and ``over=True`` the seat's observation
        of the finished deal (the AEC env's after the deal's last card; ``auto_reset=False``). The arrays are
        buffers reused by the next call: copy what you keep."""
        self._need_start()
        seat = self.seat
        if seats is None:
            obs_seat = seat
        else:
            want = np.broadcast_to(np.asarray(seats, np.int64).reshape(-1), seat.shape)
            if ((want < -1) | (want > 3)).any():
                raise ValueError(f"bad seats {seats!r}: expected seats 0..3 (or -1 for none) per game")
            obs_seat = want if over else np.where(seat >= 0, want, -1)
        low, high = self.legal()
        self.backend.observe(self.state, obs_seat, low, high, self.obs, self.mask)
        return self.obs, self.mask, seat

    def observe_games(self, games: np.ndarray | Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(obs float32 [n, OBS_SIZE], mask int8 [n, 87])``: :meth:`observe`'s rows of ``games`` only (new
        arrays; zero rows for games over)."""
        self._need_start()
        g = np.ascontiguousarray(games, np.int64).reshape(-1)
        if g.size and ((g < 0) | (g >= self.batch)).any():
            raise ValueError(f"bad games {games!r}: expected indices in 0..{self.batch - 1}")
        low, high = self.legal()
        return self.backend.observe_rows(self.state, g, low, high)

    def observe_packed(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The observations of the seats on move, packed for a device-side unpack: ``(bits uint8 [B, 143],
        numeric float32 [B, 16], mask int8 [B, 87], seat [B])``; :func:`encode.unpack_observations` turns
        ``(bits, numeric)`` into exactly the arrays of :meth:`observe` (a quarter of the bytes to move).
        ``bits`` and ``numeric`` are new arrays; ``mask`` is the buffer of :meth:`observe`."""
        self._need_start()
        seat = self.seat
        low, high = self.legal()
        bits, num = self.backend.observe_packed(self.state, seat, low, high, self.mask)
        return bits, num, self.mask, seat

    def action_masks(self) -> np.ndarray:
        """Only the ``int8 [B, 87]`` masks of the seats on move (no observation)."""
        self._need_start()
        low, high = self.legal()
        self.backend.masks(low, high, self.mask)
        return self.mask

    def heuristic_actions(self, games: np.ndarray | None = None) -> np.ndarray:
        """The heuristic agent's action (``agents.heuristic``, compiled: :mod:`.heuristic`) for the seat on move
        of each game, or of the games set in the bool mask ``games``: int64 [B], -1 for the others and for games
        over."""
        self._need_start()
        if self._heuristic is None:
            from .heuristic import CompiledHeuristic

            self._heuristic = CompiledHeuristic(self.tables, self.backend.num_threads())
        return self._heuristic(self.state, None if games is None else np.ascontiguousarray(games, np.bool_))

    def step(self, actions: Sequence[int] | np.ndarray,
             games: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
        """Apply one action per game (ignored for inactive / over games); returns ``(rewards float32
        [B, 4], done bool [B])``. Finished deals restart at once unless ``auto_reset=False``. ``games`` (bool [B]):
        only these games move, the others stay as they are whatever their action.
        Illegal actions raise ``ValueError`` naming the games and their legal actions; nothing moves then."""
        self._need_start()
        a = np.asarray(actions).reshape(-1)
        if a.shape[0] != self.batch or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.batch} ints (one per game), got shape {a.shape} {a.dtype}")
        live = None  # the games whose action the kernel checks: every game not over, or those of ``games``
        if games is not None:
            g = np.asarray(games)
            if g.shape != (self.batch,) or g.dtype != np.bool_:
                raise ValueError(f"games must be a bool array of shape ({self.batch},), got {g.dtype} {g.shape}")
            live = g & (self.state.phase != OVER)
            if (live & (a == HOLD)).any():  # the kernel's HOLD is no action of a game
                raise self._illegal(a, live)
            a = np.where(g, a, HOLD)
        low, high = self.legal()
        rewards = np.zeros((self.batch, 4), np.float32)
        done = np.zeros(self.batch, bool)
        stream = (self.key, self._dealt, self._declarer) if self.auto_reset and self._boards is None else None
        st = self.state
        ended, self._legal = self.backend.step(st, low, high, a, rewards, done, self._specs, stream, games is not None)
        if ended < 0:
            raise self._illegal(a, st.phase != OVER if live is None else live)
        if ended and stream is None and self.auto_reset:  # the next boards of the queue
            self._new_deals(np.flatnonzero(done))
        return rewards, done

    def _illegal(self, a: np.ndarray, live: np.ndarray) -> ValueError:
        """The error naming the games of ``live`` (bool [B]) whose action is illegal and their legal actions."""
        low, high = self.legal()
        parts: list[str] = []
        games: list[int] = []
        for g in np.flatnonzero(live):
            words = int(low[g]) | int(high[g]) << DECLARE_BASE
            if 0 <= a[g] < NUM_ACTIONS and words >> int(a[g]) & 1:
                continue
            games.append(int(g))
            if len(parts) == 5:
                continue
            legal = [i for i in range(NUM_ACTIONS) if words >> i & 1]
            try:
                what = action_name(int(a[g]))
            except ValueError:
                what = repr(int(a[g]))
            names = ", ".join(f"{action_name(x)} ({x})" for x in legal)
            seat = int(self.state.to_move[g])
            parts.append(f"game {g}: {what} ({int(a[g])}) is illegal for seat {seat}; legal are {names}")
        more = f" (and {len(games) - 5} more games)" if len(games) > 5 else ""
        return ValueError("illegal actions: " + "; ".join(parts) + more)

    def _need_start(self) -> None:
        if not self._started:
            raise ValueError("call reset() (or reset_games()) before observe()/step()")

    # ------------------------------------------------------------------ sizes
    def nbytes(self) -> dict[str, int]:
        """Bytes per game: engine state arrays, observation and mask buffers, kernel scratch."""
        b = self.batch
        return {"state": (self.state.nbytes() + self._dealt.nbytes) // b, "obs": self.obs.nbytes // b,
                "mask": self.mask.nbytes // b, "scratch": self.backend.nbytes() // b}  # fmt: skip


def random_actions(mask: np.ndarray, rng: np.random.Generator, backend: str = "auto") -> np.ndarray:
    """A uniformly random legal action per row of an ``int8 [B, A]`` mask (rows with no legal action get 0).
    One ``rng.random(B)`` draw (``backend``: see :data:`.backend.BACKENDS`)."""
    return random_choice(mask, rng.random(len(mask)), backend)


__all__ = ["VectorDeals", "random_actions"]
