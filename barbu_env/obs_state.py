"""The four seats' classic observations kept in step with the engine in place (the env's fast path).

:class:`SeatObservations` holds one observation vector per seat (the layout of
:mod:`barbu_env.observation`, each in its seat's relative frame) as the rows of one ``float32`` array;
``observe(deal, seat, match)`` brings all rows up to date and returns a copy of the seat's row.

- A card played is a single numpy assignment through a precomputed index array into all four rows
  (``played``, ``trick``, the owner's ``hand`` or the others' ``unseen``, ``cards_left``, ``to_move``);
  a won trick moves its cards from ``trick`` to ``captured`` (one assignment per card) and ``trick_no``,
  ``leader``, ``to_move`` and ``tricks_won`` with one more. One card of trick play, one card or pass of
  Fantan and one doubling decision since the last update take such fast paths.
- Anything else (several actions, a phase change) compares every block with the copy kept from the last
  update and rewrites only the entries that changed: what only a won trick changes when the trick
  number, leader or phase changed; what trick play never changes (contract, doubles, Fantan state, rules)
  outside trick play.
- ``void`` entries only ever turn on during a deal. The other seats' rows of seat ``t`` in suit ``u`` are
  watched only once ``t`` holds no card of ``u`` outside its excluded ones (before that, such a card is
  open to everyone else); hands are disjoint, so only the holder of one of the open cards of ``u`` can
  see ``t`` void.
- A new deal (or match deal number) is encoded from scratch: seat 0's row with
  :func:`~barbu_env.observation.encode`, the others rotated from it, then each row's own ``hand``,
  ``unseen`` and ``void``; a new deal of deal mode where nothing was played yet starts from a cached
  template of the rows of deals of its kind (same rules, contract, declarer, phase: all but the hands).
  So is a deal whose hands no longer match its history.

Tests (and a differential check against the previous implementation) check every row equals ``encode``
whatever the order and rate at which the seats look. Classic 4-seat layout only (the env encodes Barbu
King per seat with ``encode_any``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .actions import DOUBLE_BASE
from .cards import HEARTS, SUIT_MASK
from .engine.deal import Deal, mask_to_list
from .engine.doubling import doubling_order
from .engine.match import Match
from .observation import (
    _CONTRACT_INDEX,
    AVAILABLE,
    BLOCKS,
    CAPTURED,
    CARDS,
    CARDS_LEFT,
    CONTRACT,
    DOUBLED_DONE,
    DOUBLES,
    EXCLUDED,
    EXTRA_DEAL,
    FANTAN_PLAYABLE,
    FANTAN_RANK,
    FINISHED,
    HAND,
    HEARTS_BROKEN,
    LEADER,
    MUST_DOUBLE,
    OBS_SIZE,
    PASSES,
    PHASE,
    PLAYED,
    POINT_SCALE,
    POINTS,
    TO_MOVE,
    TRICK,
    TRICK_NO,
    TRICKS_WON,
    TRUMP,
    UNSEEN,
    VOID,
    encode,
    finished_bits,
    names_bits,
    rules_bits,
    void_bits,
)

_DOUBLE = 1
_PLAY = 2
_FANTAN = 3
_OVER = 4
_SEATS = range(4)
_BASE = tuple(OBS_SIZE * s for s in _SEATS)  # start of each seat's row in the flat array
_BIT = tuple(1 << c for c in range(CARDS))
_SUIT_OF = tuple(c // 13 for c in range(CARDS))
_SUITS = tuple(tuple(u for u in range(4) if m >> u & 1) for m in range(16))  # the suits of a 4-bit set
_SEATS_OF = _SUITS  # the seats of a 4-bit set
_OTHERS = tuple(tuple(s for s in _SEATS if s != t) for t in _SEATS)
_OFF_ON = np.array([0.0] * 4 + [1.0] * 4, np.float32)  # the values of an index array that moves an entry


def _rows(t: int, off: int, width: int = 1) -> list[int]:
    """Flat index, in each seat's row, of entry ``off`` of relative seat ``(t - s) % 4``'s block row."""
    return [_BASE[s] + off + width * ((t - s) & 3) for s in _SEATS]


def _swap_index(off: int, old: int, new: int) -> list[int]:
    """Flat indices of a one-hot seat block at ``off`` (``to_move``, ``leader``) that move it from seat ``old``
    to seat ``new`` in all four rows: ``old``'s entries (to clear) then ``new``'s (to set); -1: none."""
    return (_rows(old, off) if old >= 0 else []) + (_rows(new, off) if new >= 0 else [])


def _card_index(p: int, c: int, trick: bool) -> np.ndarray:
    """Where card ``c`` played by ``p`` goes in the four rows: ``played`` (and ``trick``), then the owner's
    ``hand`` or the others' ``unseen`` entry, then ``cards_left`` of ``p`` (see :func:`_card_values`)."""
    idx = _rows(p, PLAYED + c, CARDS) + (_rows(p, TRICK + c, CARDS) if trick else [])
    idx += [_BASE[s] + (HAND if s == p else UNSEEN) + c for s in _SEATS]
    return np.array(idx + _rows(p, CARDS_LEFT), np.intp)


#: ``_CARD_INDEX[trick][p][c]``: the entries card ``c`` played by ``p`` sets (Fantan / trick play).
_CARD_INDEX = tuple(tuple(tuple(_card_index(p, c, t) for c in range(CARDS)) for p in _SEATS) for t in (False, True))
#: ``_PLAY_CARD[p][c]``: :data:`_CARD_INDEX` ``[True][p][c]``, then ``to_move`` from ``p`` to the next seat.
_PLAY_CARD = tuple(
    tuple(np.concatenate((_CARD_INDEX[1][p][c], _swap_index(TO_MOVE, p, (p + 1) & 3))) for c in range(CARDS))
    for p in _SEATS
)
_CARD_VALUES: dict[tuple[int, float], tuple[np.ndarray, ...]] = {}


def _card_values(trick: int, nt: float) -> tuple[np.ndarray, ...]:
    """``[k]``: the values of :func:`_card_index`'s entries once the player has ``k`` cards left (``trick``:
    0 Fantan, 1 trick play, 2 :data:`_PLAY_CARD`)."""
    key = (trick, nt)
    if key not in _CARD_VALUES:
        ones = [1.0] * (4 if trick == 0 else 8) + [0.0] * 4
        more = [0.0] * 4 + [1.0] * 4 if trick == 2 else []
        _CARD_VALUES[key] = tuple(np.array(ones + [k / nt] * 4 + more, np.float32) for k in range(CARDS + 1))
    return _CARD_VALUES[key]


#: ``_CARD_ROWS[off][t][c]``: entry ``c`` of seat ``t``'s row of the block at ``off``, in all four rows.
_CARD_ROWS = {
    off: tuple(tuple(np.array(_rows(t, off + c, CARDS), np.intp) for c in range(CARDS)) for t in _SEATS)
    for off in (TRICK, CAPTURED)
}
#: ``_TO_CAPTURED[p][w][c]``: card ``c`` of ``p`` leaves the ``trick`` rows for ``w``'s ``captured`` rows.
_TO_CAPTURED = tuple(
    tuple(
        tuple(np.concatenate((_CARD_ROWS[TRICK][p][c], _CARD_ROWS[CAPTURED][w][c])) for c in range(CARDS))
        for w in _SEATS
    )
    for p in _SEATS
)
#: ``_SUIT_ROWS[t][u]``: the 13 ``excluded`` entries of seat ``t``'s suit ``u`` in all four rows (seat by seat).
_SUIT_ROWS = tuple(
    tuple(np.array([i + k for i in _rows(t, EXCLUDED + 13 * u, CARDS) for k in range(13)], np.intp) for u in range(4))
    for t in _SEATS
)
_SUIT_PATTERNS: dict[int, np.ndarray] = {}  # 13-bit rank mask -> its 13 entries, four times


def _suit_pattern(m: int) -> np.ndarray:
    p = _SUIT_PATTERNS.get(m)
    if p is None:
        p = _SUIT_PATTERNS[m] = np.array([m >> k & 1 for k in range(13)] * 4, np.float32)
    return p


#: ``_SEAT_ROWS[off][t]``: entry ``off`` of relative seat ``(t - s) % 4`` in each row ``s`` (one-entry rows).
_SEAT_ROWS = {off: tuple(np.array(_rows(t, off), np.intp) for t in _SEATS) for off in (TRICKS_WON, POINTS)}
_SWAPS: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}


def _swap(off: int, old: int, new: int) -> tuple[np.ndarray, np.ndarray]:
    """Index and values that move the one-hot seat block at ``off`` (``to_move``, ``leader``) from seat ``old``
    to seat ``new`` in all four rows (-1: none)."""
    key = (off, old, new)
    hit = _SWAPS.get(key)
    if hit is None:
        idx = _swap_index(off, old, new)
        vals = [0.0] * (4 if old >= 0 else 0) + [1.0] * (4 if new >= 0 else 0)
        hit = _SWAPS[key] = (np.array(idx, np.intp), np.array(vals, np.float32))
    return hit


_TRICK_ENDS: dict[tuple[float, int, int, int, int], tuple[np.ndarray, np.ndarray]] = {}


def _trick_end(nt: float, i: int, leader: int, w: int, won: int) -> tuple[np.ndarray, np.ndarray]:
    """Index and values of trick ``i`` (led by ``leader``) won by ``w``, its ``won``-th trick: ``trick_no``
    moves to ``i + 1``, ``leader`` and ``to_move`` (back to the leader) to ``w``, ``tricks_won`` of ``w``
    becomes ``won / nt``."""
    key = (nt, i, leader, w, won)
    hit = _TRICK_ENDS.get(key)
    if hit is None:
        idx, vals = _rows(w, TRICKS_WON), [won / nt] * 4
        if i + 1 < nt:  # the last trick's number stays
            idx += [b + TRICK_NO + i for b in _BASE] + [b + TRICK_NO + i + 1 for b in _BASE]
            vals += [0.0] * 4 + [1.0] * 4
        if leader != w:
            idx += _swap_index(LEADER, leader, w) + _swap_index(TO_MOVE, leader, w)
            vals += [0.0] * 4 + [1.0] * 4 + [0.0] * 4 + [1.0] * 4
        hit = _TRICK_ENDS[key] = (np.array(idx, np.intp), np.array(vals, np.float32))
    return hit


#: ``_VOID_AT[t][u][s]``: the ``void`` bit (of observer ``s``'s 16) and flat index of seat ``t``'s suit ``u``.
_VOID_AT = tuple(
    tuple(
        tuple((1 << (4 * ((t - s) & 3) + u), _BASE[s] + VOID + 4 * ((t - s) & 3) + u) for s in _SEATS) for u in range(4)
    )
    for t in _SEATS
)


def _double_bits(deal: Deal) -> int:
    """``doubles`` (bit ``4 s + t``: ``s`` doubled ``t``), ``doubled_done`` (bit ``16 + s``) and ``must_double``
    (bit ``20 + s``) of absolute seats, as one int."""
    d = deal.doubles
    x = (d[0] & 15) | (d[1] & 15) << 4 | (d[2] & 15) << 8 | (d[3] & 15) << 12 | (deal.must_double & 15) << 20
    for s in doubling_order(deal.declarer)[: deal.double_step]:
        x |= 1 << (16 + s)
    return x


#: ``_DOUBLE_AT[b]``: the entry of bit ``b`` of :func:`_double_bits` in each row (rows and columns relative).
_DOUBLE_AT = tuple(
    np.array(
        [_BASE[o] + DOUBLES + 4 * ((b // 4 - o) & 3) + ((b % 4 - o) & 3) for o in _SEATS]
        if b < 16
        else _rows(b & 3, DOUBLED_DONE if b < 20 else MUST_DOUBLE),
        np.intp,
    )
    for b in range(24)
)


#: Rows of a new deal but for each seat's ``hand``, ``unseen`` and ``void``, by :func:`_fresh_key`.
_TEMPLATES: dict[tuple, np.ndarray] = {}
_ZEROS = [0, 0, 0, 0]


def _fresh_key(deal: Deal) -> tuple | None:
    """For a deal where nothing was played yet (deal mode), what its rows depend on besides the hands."""
    if deal.history or deal.played_by != _ZEROS or deal.excluded != _ZEROS or deal.doubles != _ZEROS:
        return None
    if deal.hearts_broken or deal.finished or deal.passes != _ZEROS or deal.points != _ZEROS or deal.trick_no:
        return None
    return (deal.rules, deal.contract, deal.trump, deal.fantan_rank, deal.declarer, deal.phase, deal.to_move,
            deal.leader, deal.double_step, deal.must_double, deal.available, deal.playable)  # fmt: skip


def _rotation(seat: int) -> np.ndarray:
    """Index into seat 0's observation of each entry of ``seat``'s (``hand``, ``unseen``, ``void``: seat 0's)."""
    g = np.arange(OBS_SIZE, dtype=np.intp)
    for name, (off, size) in BLOCKS.items():
        if name in ("doubles", "outstanding", "finished"):  # [r][t]: rows, and columns but for places
            for r in _SEATS:
                for t in _SEATS:
                    g[off + 4 * r + t] = off + 4 * ((seat + r) & 3) + ((seat + t) & 3 if name != "finished" else t)
        elif name in _SEAT_BLOCKS:
            w = size // 4
            for r in _SEATS:
                a = off + w * ((seat + r) & 3)
                g[off + w * r : off + w * (r + 1)] = np.arange(a, a + w)
    return g


#: Blocks of 4 rows, one per relative seat (``void`` is not a rotation: each seat's own).
_SEAT_BLOCKS = ("played", "trick", "captured", "excluded", "declarer", "leader", "to_move", "doubled_done",
                "must_double", "remaining", "tricks_won", "cards_left", "points", "passes", "totals",
                "deals_left")  # fmt: skip
_ROTATIONS = tuple(_rotation(s) for s in _SEATS)


def _flip(b: memoryview, off: int, diff: int, new: int) -> None:
    """Entries ``off + i`` for each bit i of ``diff``: set to bit i of ``new``."""
    while diff:
        low = diff & -diff
        b[off + low.bit_length() - 1] = 1.0 if new & low else 0.0
        diff ^= low


def _flip4(b: memoryview, off: int, diff: int, new: int) -> None:
    """:func:`_flip` of the same entries in all four rows (blocks that are not seat-relative)."""
    for base in _BASE:
        _flip(b, base + off, diff, new)


def _contract_bits(deal: Deal) -> int:
    """The ``contract``, ``extra_deal``, ``trump`` and ``fantan_rank`` entries, as bits of an int."""
    c = deal.contract
    if c is None:
        return 0
    i = _CONTRACT_INDEX.get(c.name, -1)
    x = 1 << (CONTRACT + i if i >= 0 else EXTRA_DEAL)
    if deal.trump >= 0:
        x |= 1 << (TRUMP + deal.trump)
    if deal.fantan_rank >= 0:
        x |= 1 << (FANTAN_RANK + deal.fantan_rank)
    return x


class SeatObservations:
    """The classic observations of the four seats, updated in place from the engine (see the module
    docstring). ``observe(deal, seat, match)`` returns a new array equal to ``encode(deal, seat, match)``."""

    __slots__ = ("_owners", "available", "captured", "cbits", "contract", "dbits", "deal", "deal_no",
                 "double_step", "doubles", "excluded", "fantan_rank", "fantan_values", "finished", "flat", "hands",
                 "hearts_broken", "hlen", "leader", "match", "move", "must_double", "mv", "nt", "passes", "phase",
                 "playable", "points", "rem", "rows", "rules", "state", "trick_i", "trick_no", "tricks_won",
                 "trump", "tvoid", "values", "void")  # fmt: skip

    def __init__(self) -> None:
        self.state = np.zeros((4, OBS_SIZE), np.float32)
        self._views()
        self.deal: Deal | None = None
        self.match: Match | None = None

    def _views(self) -> None:
        self.flat = self.state.reshape(-1)
        self.rows = tuple(self.state)
        self.mv = memoryview(self.flat)  # scalar writes through a memoryview cost about half numpy's

    def __getstate__(self) -> dict[str, Any]:  # views (a memoryview above all) are neither pickled nor copied
        skip = ("flat", "rows", "mv")
        return {k: getattr(self, k) for k in self.__slots__ if k not in skip and hasattr(self, k)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)
        self._views()

    def observe(self, deal: Deal, seat: int, match: Match | None = None) -> np.ndarray:
        """The observation of ``seat`` in ``deal`` (the current deal of ``match``), a new array."""
        if deal is not self.deal or match is not self.match or (match is not None and match.deal_no != self.deal_no):
            self._full(deal, match)
        else:
            n = len(deal.history) - self.hlen
            phase = deal.phase
            was = self.phase
            if n == 1 and (phase == was or phase == _OVER or was == _DOUBLE):  # one action: the fast paths
                if was == _PLAY:
                    self._play(deal)  # the usual step: one card played in trick play (or the last one)
                elif was == _FANTAN == phase:
                    self._fantan(deal)
                elif was == _DOUBLE and phase != _OVER and deal.history[-1][1] >= DOUBLE_BASE:
                    self._double(deal)
                else:
                    self._sync(deal)
            elif n or phase != was:
                self._sync(deal)
        return self.rows[seat].copy()

    def _play(self, deal: Deal) -> None:
        """One card played in trick play since the last update (:meth:`_sync`'s common case)."""
        p, c = deal.history[-1]
        h = deal.hands[p]
        if c >= CARDS or self.hands[p] ^ _BIT[c] != h:
            self._sync(deal)
            return
        self.hlen += 1
        self.hands[p] = h
        self.rem ^= _BIT[c]
        flat = self.flat
        flat[_PLAY_CARD[p][c]] = self.values[h.bit_count()]  # one numpy call writes all four rows
        self.move = (p + 1) & 3
        u = _SUIT_OF[c]
        x = h & SUIT_MASK[u]
        if not x & ~self.excluded[p]:  # rare: p may now be seen void in u
            self._own_void(p, u, x)
        if deal.trick_no != self.trick_no:
            self._won(deal)
        if deal.phase == _OVER:  # the last trick (R5.3) or an early end (R4.2, R4.3)
            _flip4(self.mv, PHASE, 1 << _PLAY | 1 << _OVER, 1 << _OVER)
            self.phase = _OVER
            m = -1
        else:
            m = deal.to_move
        if m != self.move:
            idx, vals = _swap(TO_MOVE, self.move, m)
            flat[idx] = vals
            self.move = m
        if deal.excluded != self.excluded:
            self._sync_void(self._sync_excluded(deal) | 1 << u, deal.hands)
        elif self.tvoid[u]:  # _sync_void's loop for suit u, inlined: it seldom finds anything
            hands, ex, left_u = deal.hands, self.excluded, self.rem & SUIT_MASK[u]
            for t in _SEATS_OF[self.tvoid[u]]:
                left = left_u & ~ex[t]
                if not left or not left & ~hands[self.owner[(left & -left).bit_length() - 1]]:
                    self._sync_void(1 << u, hands)
                    break
        if u == HEARTS and deal.hearts_broken != self.hearts_broken:  # only a heart breaks hearts (R4.1)
            self.hearts_broken = deal.hearts_broken
            _flip4(self.mv, HEARTS_BROKEN, 1, int(deal.hearts_broken))

    def _fantan(self, deal: Deal) -> None:
        """One card or pass in Fantan since the last update (R7)."""
        p, c = deal.history[-1]
        touched = 0
        if c < CARDS:
            h = deal.hands[p]
            if self.hands[p] ^ _BIT[c] != h:
                self._sync(deal)
                return
            self.hands[p] = h
            self.rem ^= _BIT[c]
            self.flat[_CARD_INDEX[0][p][c]] = self.fantan_values[h.bit_count()]
            u = _SUIT_OF[c]
            x = h & SUIT_MASK[u]
            if not x & ~self.excluded[p]:
                self._own_void(p, u, x)
            if self.tvoid[u]:
                touched = 1 << u
        self.hlen += 1
        if deal.to_move != self.move:
            self._set_move(deal.to_move)
        if deal.playable != self.playable:
            _flip4(self.mv, FANTAN_PLAYABLE, deal.playable ^ self.playable, deal.playable)
            self.playable = deal.playable
        if deal.excluded != self.excluded:
            touched |= self._sync_excluded(deal)
        if touched:
            self._sync_void(touched, deal.hands)
        if deal.passes != self.passes or deal.finished != self.finished:
            self._sync_phase(deal)

    def _double(self, deal: Deal) -> None:
        """One doubling decision (R6) since the last update: ``doubles``, ``doubled_done``, ``to_move``; after
        the last one, the start of play (``phase``; ``leader`` and Fantan's ``playable`` if they changed)."""
        self.hlen += 1
        self._sync_doubles(deal)
        phase = deal.phase
        if phase != _DOUBLE:
            _flip4(self.mv, PHASE, 1 << _DOUBLE | 1 << phase, 1 << phase)
            self.phase = phase
            if deal.leader != self.leader:
                idx, vals = _swap(LEADER, self.leader, deal.leader)
                self.flat[idx] = vals
                self.leader = deal.leader
            if deal.playable != self.playable:
                _flip4(self.mv, FANTAN_PLAYABLE, deal.playable ^ self.playable, deal.playable)
                self.playable = deal.playable
        if deal.to_move != self.move:
            self._set_move(deal.to_move)

    def _set_move(self, m: int) -> None:
        """``to_move`` in every row: seat ``m`` (-1: none)."""
        idx, vals = _swap(TO_MOVE, self.move, m)
        self.flat[idx] = vals
        self.move = m

    def _sync_doubles(self, deal: Deal) -> None:
        x = _double_bits(deal)
        diff = x ^ self.dbits
        while diff:
            low = diff & -diff
            self.flat[_DOUBLE_AT[low.bit_length() - 1]] = 1.0 if x & low else 0.0
            diff ^= low
        self.dbits = x
        self.doubles = deal.doubles[:]
        self.double_step = deal.double_step
        self.must_double = deal.must_double

    def _own_void(self, p: int, u: int, held: int) -> None:
        """Seat ``p`` holds no card of suit ``u`` but excluded ones (``held``): watch its rows in ``u``, and its
        own row is void once it holds none."""
        self.tvoid[u] |= 1 << p
        bit, i = _VOID_AT[p][u][p]
        if not held and not self.void[p] & bit:
            self.void[p] |= bit
            self.mv[i] = 1.0

    def _won(self, deal: Deal) -> None:
        """The trick in progress at the last update was won: its cards move to the winner's ``captured``."""
        leader, trick, w = deal.last_trick
        if deal.trick_no != self.trick_no + 1 or leader != self.leader:
            self._sync_tricks(deal)
            return
        flat = self.flat
        for k, c in enumerate(trick):
            flat[_TO_CAPTURED[(leader + k) & 3][w][c]] = _OFF_ON
        self.captured = deal.captured[:]
        tw = deal.tricks_won
        key = (self.nt, self.trick_no, leader, w, tw[w])
        idx, vals = _TRICK_ENDS.get(key) or _trick_end(*key)
        flat[idx] = vals
        self.trick_no = deal.trick_no
        self.trick_i = min(deal.trick_no, deal.num_tricks - 1)
        self.leader = self.move = w
        self.tricks_won = tw[:]
        if deal.points != self.points:
            self._sync_points(deal.points)

    def _sync(self, deal: Deal) -> None:
        """Bring every row in step with ``deal`` (any change since the last update)."""
        hist = deal.history
        n = len(hist)
        touched = 0  # suits whose void entries may have changed
        if n != self.hlen:
            flat, hands, ex, tvoid = self.flat, deal.hands, self.excluded, self.tvoid
            trick = deal.fantan_rank < 0
            where = _CARD_INDEX[trick]
            values = _card_values(int(trick), self.nt)
            mine, rem = self.hands, self.rem
            for p, c in hist[self.hlen :]:
                if c < CARDS:  # card c went from p's hand to the table (other entries: see _sync_phase)
                    h = hands[p]
                    flat[where[p][c]] = values[h.bit_count()]
                    mine[p] ^= _BIT[c]
                    rem ^= _BIT[c]
                    u = _SUIT_OF[c]
                    x = h & SUIT_MASK[u]
                    if not x & ~ex[p]:
                        self._own_void(p, u, x)
                    if tvoid[u]:
                        touched |= 1 << u
            self.hlen, self.rem = n, rem
            if mine != hands:  # the hands changed otherwise than by the history: start over
                self._full(deal, self.match)
                return
        phase = deal.phase
        was = self.phase
        if phase != was:
            _flip4(self.mv, PHASE, 1 << was | 1 << phase, 1 << phase)
            self.phase = phase
        if deal.trick_no != self.trick_no or deal.leader != self.leader or phase != was:
            self._sync_tricks(deal)
        m = -1 if phase == _OVER else deal.to_move
        if m != self.move:
            self._set_move(m)
        if deal.excluded != self.excluded:
            touched |= self._sync_excluded(deal)
        if touched:
            self._sync_void(touched, deal.hands)
        if deal.hearts_broken != self.hearts_broken:
            self.hearts_broken = deal.hearts_broken
            _flip4(self.mv, HEARTS_BROKEN, 1, int(deal.hearts_broken))
        if was != _PLAY or phase != _PLAY:  # trick play (R4, R5) changes none of these
            self._sync_phase(deal)

    def _sync_tricks(self, deal: Deal) -> None:
        """``trick`` (rewritten), ``trick_no``, ``leader``, ``captured``, ``tricks_won``, ``points``."""
        flat = self.flat
        self.trick_no = deal.trick_no
        i = min(deal.trick_no, deal.num_tricks - 1)
        if i != self.trick_i:
            _flip4(self.mv, TRICK_NO, 1 << i | 1 << self.trick_i, 1 << i)
            self.trick_i = i
        self.state[:, TRICK : TRICK + 4 * CARDS] = 0.0
        leader = deal.leader
        rows = _CARD_ROWS[TRICK]
        for k, c in enumerate(deal.trick):
            flat[rows[(leader + k) & 3][c]] = 1.0
        if leader != self.leader:
            idx, vals = _swap(LEADER, self.leader, leader)
            flat[idx] = vals
            self.leader = leader
        cap, old = deal.captured, self.captured
        if cap != old:
            rows = _CARD_ROWS[CAPTURED]
            for t in _SEATS:
                d = cap[t] ^ old[t]
                while d:
                    low = d & -d
                    flat[rows[t][low.bit_length() - 1]] = 1.0 if cap[t] & low else 0.0
                    d ^= low
            self.captured = cap[:]
        tw, old = deal.tricks_won, self.tricks_won
        if tw != old:
            for t in _SEATS:
                if tw[t] != old[t]:
                    flat[_SEAT_ROWS[TRICKS_WON][t]] = tw[t] / self.nt
            self.tricks_won = tw[:]
        if deal.points != self.points:
            self._sync_points(deal.points)

    def _sync_points(self, pts: list[int]) -> None:
        old = self.points
        for t in _SEATS:
            if pts[t] != old[t]:
                self.flat[_SEAT_ROWS[POINTS][t]] = pts[t] / POINT_SCALE
        self.points = pts[:]

    def _sync_excluded(self, deal: Deal) -> int:
        """The ``excluded`` rows (a suit at a time); returns the suits that changed."""
        ex, old, hands, tvoid = deal.excluded, self.excluded, deal.hands, self.tvoid
        suits = 0
        for t in _SEATS:
            if ex[t] != old[t]:
                d = ex[t] ^ old[t]
                for u in range(4):
                    sm = SUIT_MASK[u]
                    if d & sm:
                        self.flat[_SUIT_ROWS[t][u]] = _suit_pattern((ex[t] & sm) >> (13 * u))
                        suits |= 1 << u
                        if not hands[t] & sm & ~ex[t]:
                            tvoid[u] |= 1 << t
        self.excluded = ex[:]
        return suits

    def _sync_void(self, touched: int, hands: list[int]) -> None:
        """The ``void`` entries of the other seats' rows of the watched seats ``t`` in the suits in ``touched`` (as
        ``void_bits``): observer ``s`` sees ``t`` void in ``u`` when the unplayed cards of ``u`` not excluded for
        ``t`` (none of them ``t``'s) are all in ``s``'s hand."""
        rem, ex, void, tvoid, b = self.rem, self.excluded, self.void, self.tvoid, self.mv
        for u in _SUITS[touched]:
            left_u = rem & SUIT_MASK[u]
            for t in _SEATS_OF[tvoid[u]]:
                left = left_u & ~ex[t]
                if left:  # hands are disjoint: only the holder of one of these cards may hold them all
                    s = self.owner[(left & -left).bit_length() - 1]
                    if left & ~hands[s]:
                        continue
                    seers: tuple[int, ...] = (s,)
                else:  # every other row of t in u is void for good: stop watching
                    seers = _OTHERS[t]
                    tvoid[u] ^= 1 << t
                at = _VOID_AT[t][u]
                for s in seers:
                    bit, i = at[s]
                    if not void[s] & bit:
                        void[s] |= bit
                        b[i] = 1.0

    def _sync_phase(self, deal: Deal) -> None:
        """What changes only outside trick play: contract, doubling, ``available``, Fantan, rules."""
        b = self.mv
        if deal.contract is not self.contract or deal.trump != self.trump or deal.fantan_rank != self.fantan_rank:
            x = _contract_bits(deal)
            _flip4(b, 0, x ^ self.cbits, x)
            self.cbits = x
            self.contract, self.trump, self.fantan_rank = deal.contract, deal.trump, deal.fantan_rank
        if deal.doubles != self.doubles or deal.double_step != self.double_step or deal.must_double != self.must_double:
            self._sync_doubles(deal)
        if deal.available is not self.available:
            x = names_bits(tuple(self.available))
            y = names_bits(tuple(deal.available))
            _flip4(b, AVAILABLE, x ^ y, y)
            self.available = deal.available
        if deal.playable != self.playable:
            _flip4(b, FANTAN_PLAYABLE, deal.playable ^ self.playable, deal.playable)
            self.playable = deal.playable
        if deal.finished != self.finished:
            for s, base in enumerate(_BASE):
                x = finished_bits(self.finished, s)
                y = finished_bits(deal.finished, s)
                _flip(b, base + FINISHED, x ^ y, y)
            self.finished = deal.finished[:]
        if deal.rules is not self.rules:
            x = rules_bits(self.rules)
            y = rules_bits(deal.rules)
            _flip4(b, 0, x ^ y, y)
            self.rules = deal.rules
        ps = deal.passes
        if ps != self.passes:
            nt = self.nt
            for s, base in enumerate(_BASE):
                for t in _SEATS:
                    b[base + PASSES + ((t - s) & 3)] = ps[t] / nt
            self.passes = ps[:]

    def _full(self, deal: Deal, match: Match | None) -> None:
        """Every row from scratch, and the copies the next updates compare with: seat 0's row encoded and the
        others rotated from it (a new deal of a kind seen before: copied from a template), then each row's
        own ``hand``, ``unseen`` and ``void``."""
        if deal.rules.king:
            raise ValueError("SeatObservations holds the classic layout: use encode_any for Barbu King")
        rows, hands, state = self.rows, deal.hands, self.state
        key = _fresh_key(deal) if match is None else None
        template = _TEMPLATES.get(key) if key is not None else None
        if template is not None:
            state[:] = template
            void = 0
        else:
            encode(deal, 0, match, rows[0])
            for s in 1, 2, 3:
                rows[0].take(_ROTATIONS[s], out=rows[s])
            void = void_bits(deal, 0)
            if key is not None:
                if len(_TEMPLATES) >= 128:
                    _TEMPLATES.clear()
                template = _TEMPLATES[key] = state.copy()
                for off, size in ((HAND, CARDS), (UNSEEN, CARDS), (VOID, 16)):
                    template[:, off : off + size] = 0.0
        rem = deal.deck & ~deal.played
        x = 0
        for s in _SEATS:
            x |= (hands[s] | (rem & ~hands[s]) << CARDS) << (2 * CARDS * s)
        own = np.unpackbits(np.frombuffer(x.to_bytes(52, "little"), np.uint8), bitorder="little").reshape(4, -1)
        state[:, HAND : HAND + CARDS] = own[:, :CARDS]
        state[:, UNSEEN : UNSEEN + CARDS] = own[:, CARDS:]
        self.void = [void_bits(deal, s) for s in _SEATS]
        for s in _SEATS:
            _flip(self.mv, _BASE[s] + VOID, void ^ self.void[s], self.void[s])
        self.deal, self.match = deal, match
        self.deal_no = match.deal_no if match is not None else 0
        self.hlen = len(deal.history)
        self.hands = hands[:]
        self.rem = rem
        self.phase = deal.phase
        self.move = -1 if deal.phase == _OVER else deal.to_move
        self.trick_no = deal.trick_no
        self.trick_i = min(deal.trick_no, deal.num_tricks - 1)
        self.leader = deal.leader
        self.captured = deal.captured[:]
        self.tricks_won = deal.tricks_won[:]
        self.points = deal.points[:]
        self.excluded = ex = deal.excluded[:]
        self.tvoid = [0] * 4
        for t in _SEATS:
            h = hands[t] & ~ex[t]
            for u in range(4):
                if not h & SUIT_MASK[u]:
                    self.tvoid[u] |= 1 << t
        self.hearts_broken = deal.hearts_broken
        self.contract, self.trump, self.fantan_rank = deal.contract, deal.trump, deal.fantan_rank
        self.cbits = _contract_bits(deal)
        self.doubles = deal.doubles[:]
        self.double_step = deal.double_step
        self.must_double = deal.must_double
        self.dbits = _double_bits(deal)
        self.available = deal.available
        self.playable = deal.playable
        self.finished = deal.finished[:]
        self.rules = deal.rules
        self.passes = deal.passes[:]
        self.nt = float(deal.num_tricks)
        self.values = _card_values(2, self.nt)
        self.fantan_values = _card_values(0, self.nt)
        self._owners = None

    @property
    def owner(self) -> list[int]:
        """``owner[c]``: the seat dealt card ``c`` (cards only ever leave a hand for the table); made when
        first needed."""
        if self._owners is None:
            self._owners = [0] * CARDS
            for s in _SEATS:
                for c in mask_to_list(self.deal.hands[s] | self.deal.played_by[s]):
                    self._owners[c] = s
        return self._owners


__all__ = ["SeatObservations"]
