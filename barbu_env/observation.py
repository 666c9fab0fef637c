"""The observation vector: named blocks, seat-relative, built by one pure function (RULES.md R1.3, R5.3).

:func:`encode` turns an engine state into a flat ``float32`` vector, the same length for deal and
match mode and for every rule option. The observer is always relative seat 0; relative seat ``r``
is absolute seat ``(observer + r) % 4`` (left = 1, across = 2, right = 3, R1.3). Everything in it is
public or the observer's own: own hand, the public record of play, and what the public record proves
(``Deal.excluded``, voids) — never another seat's cards (a test swaps opponents' hands to check).

The vector has a binary part (every entry 0 or 1; the :data:`BIT_BLOCKS`) followed by a numeric
part (the :data:`NUM_BLOCKS`, scaled to about [-1, 1]). Card blocks hold 52 entries indexed by card
id (R1.2); with the 32-card deck (R10.1) the absent cards stay 0. ``[r][x]`` blocks are 4 rows,
one per relative seat ``r``.

==================  ======  ======  ==================================================================
block               offset  size    meaning
==================  ======  ======  ==================================================================
hand                0       52      own hand
played              52      208     [r][card] cards played by each seat this deal (trick in progress too)
trick               260     208     [r][card] the card each seat played to the trick in progress
captured            468     208     [r][card] cards in the tricks each seat has won (R5.3)
unseen              676     52      deck cards neither in own hand nor played
excluded            728     208     [r][card] cards each seat has publicly shown it cannot hold
                                    (``Deal.excluded``: voids, R4.1, R4.4, R5.4, R5.5, R7.3)
void                936     16      [r][suit] no unplayed card of the suit can be in r's hand, as far as
                                    the observer knows (own row: own hand has none of the suit)
trick_no            952     13      one-hot index of the trick in progress (last one once over)
contract            965     11      one-hot of ``contracts.CONTRACT_NAMES`` (zero until declared)
trump               976     4       one-hot trump suit (Trumps)
fantan_rank         980     13      one-hot starting rank (Fantan)
declarer            993     4       one-hot relative seat of the declarer
leader              997     4       one-hot relative seat that led the trick in progress
to_move             1001    4       one-hot relative seat on move (zero once over)
phase               1005    5       one-hot ``Phase``: declare, double, play, fantan, over
doubles             1010    16      [r][t] seat r doubled seat t in this deal (R6)
doubled_done        1026    4       [r] seat r has taken its doubling decision in this deal (R6.1)
must_double         1030    4       [r] seat r's R6.4 obligation is due in this deal
available           1034    11      contracts the declarer may choose in this deal (R3.1)
hearts_broken       1045    1       a heart was discarded on a trick led in another suit (R4.1)
fantan_playable     1046    52      cards playable on the Fantan table now (R7.2)
finished            1098    16      [r][place] seat r went out in place 0..3 (Fantan, R7.4)
rules               1114    27      one-hot of each string rule option in ``rules.CHOICES`` order,
                                    then ``ace_plays_again``, ``ravage_city``, ``salad``
extra_deal          1141    1       this is an R2.4 tie-break deal
is_match            1142    1       match mode (the match blocks below are filled)
remaining           1143    44      [r][contract] match: contracts seat r has still to declare
tricks_won          1187    4       [r] tricks won / hand size                          (numeric)
cards_left          1191    4       [r] cards in hand / hand size                        (numeric)
points              1195    4       [r] running contract points of the deal / 100        (numeric)
passes              1199    4       [r] Fantan passes / hand size                        (numeric)
totals              1203    4       [r] match totals before this deal / 100              (numeric)
deal_no             1207    1       match: deal number (0-based) / deals in the match    (numeric)
deals_left          1208    4       [r] match: r's deals as declarer left, this one included,
                                    / deals per declarer                                 (numeric)
outstanding         1212    16      [d][s] match: doubles seat s still owes declarer d (R6.4) / 2
==================  ======  ======  ==================================================================

Total :data:`OBS_SIZE` = 1228 (:data:`NUM_BITS` = 1187 binary entries, then 41 numeric). The table is
checked against :data:`BLOCKS` by a test. The function reads only engine state, so a batched
engine can reproduce it bit for bit.

Barbu King (R11) has its own layout, :func:`layout` ``(rules)``: the same blocks with ``n`` rows per
seat block (``n = rules.players``, 3..5, relative seat ``r`` is absolute ``(observer + r) % n``),
``trick_no`` of ``max(13, hand size)`` entries, without the blocks that are always empty in King
(``trump``, ``doubles``, ``doubled_done``, ``must_double``, ``extra_deal``, ``outstanding``), and with
one more binary block after ``remaining``:

==================  ======  ==================================================================
king                3       ``short``, ``choose`` (R11.3), and 1 for Barbu King (points are bad:
                            ``points`` and ``totals`` keep the game's sign, positive = bad)
==================  ======  ==================================================================

Sizes: 951 entries for 3 players, 1186 for 4, 1427 for 5 (a test checks the blocks).
In King's fixed order ``remaining`` holds, for every seat, the contracts of the deals still to come
(R11.2) and ``available`` the contract of this deal. :func:`layout` of classic rules is exactly the
table above, and :func:`encode` dispatches: the fast encoder for classic Barbu, :func:`encode_any`
(block by block, any ``n``) for King. A test checks the two agree on classic deals.

:class:`barbu_env.obs_state.SeatObservations` keeps the classic observations of the four seats up to date
in place as the deal moves on (the env's fast path); a test checks they equal :func:`encode` after every
kind of step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from .cards import SUIT_MASK
from .contracts import CONTRACT_NAMES
from .engine.deal import Deal
from .engine.doubling import doubling_order
from .engine.match import OBLIGATION, Match
from .rules import BOOL_OPTIONS, CHOICES, Rules

NUM_SEATS = 4
CARDS = 52
SEAT_CARDS = NUM_SEATS * CARDS
NUM_SUITS = 4
NUM_TRICKS_MAX = 13
NUM_CONTRACTS = len(CONTRACT_NAMES)
NUM_PHASES = 5
RULE_FLAGS = sum(len(v) for v in CHOICES.values()) + len(BOOL_OPTIONS)
#: Scale of point-valued entries (running points, match totals).
POINT_SCALE = 100.0
#: Bound declared in the observation space for the unbounded numeric entries (never reached).
BIG = 1.0e4

#: Binary blocks, in order: (name, size).
BIT_BLOCKS: tuple[tuple[str, int], ...] = (
    ("hand", CARDS),
    ("played", SEAT_CARDS),
    ("trick", SEAT_CARDS),
    ("captured", SEAT_CARDS),
    ("unseen", CARDS),
    ("excluded", SEAT_CARDS),
    ("void", NUM_SEATS * NUM_SUITS),
    ("trick_no", NUM_TRICKS_MAX),
    ("contract", NUM_CONTRACTS),
    ("trump", NUM_SUITS),
    ("fantan_rank", 13),
    ("declarer", NUM_SEATS),
    ("leader", NUM_SEATS),
    ("to_move", NUM_SEATS),
    ("phase", NUM_PHASES),
    ("doubles", NUM_SEATS * NUM_SEATS),
    ("doubled_done", NUM_SEATS),
    ("must_double", NUM_SEATS),
    ("available", NUM_CONTRACTS),
    ("hearts_broken", 1),
    ("fantan_playable", CARDS),
    ("finished", NUM_SEATS * NUM_SEATS),
    ("rules", RULE_FLAGS),
    ("extra_deal", 1),
    ("is_match", 1),
    ("remaining", NUM_SEATS * NUM_CONTRACTS),
)
#: Numeric blocks, in order after the binary ones: (name, size, low, high).
NUM_BLOCKS: tuple[tuple[str, int, float, float], ...] = (
    ("tricks_won", NUM_SEATS, 0.0, 1.0),
    ("cards_left", NUM_SEATS, 0.0, 1.0),
    ("points", NUM_SEATS, -BIG, BIG),
    ("passes", NUM_SEATS, 0.0, BIG),
    ("totals", NUM_SEATS, -BIG, BIG),
    ("deal_no", 1, 0.0, BIG),
    ("deals_left", NUM_SEATS, 0.0, 1.0),
    ("outstanding", NUM_SEATS * NUM_SEATS, 0.0, 1.0),
)


def _offsets() -> dict[str, tuple[int, int]]:
    out, off = {}, 0
    for name, size in BIT_BLOCKS:
        out[name] = (off, size)
        off += size
    for name, size, _, _ in NUM_BLOCKS:
        out[name] = (off, size)
        off += size
    return out


#: ``BLOCKS[name] = (offset, size)`` for every block.
BLOCKS: dict[str, tuple[int, int]] = _offsets()
NUM_BITS = sum(s for _, s in BIT_BLOCKS)
OBS_SIZE = NUM_BITS + sum(s for _, s, _, _ in NUM_BLOCKS)
_NBYTES = (NUM_BITS + 7) // 8

HAND, PLAYED, TRICK, CAPTURED, UNSEEN, EXCLUDED, VOID = (BLOCKS[n][0] for n in (
    "hand", "played", "trick", "captured", "unseen", "excluded", "void"))  # fmt: skip
TRICK_NO, CONTRACT, TRUMP, FANTAN_RANK, DECLARER, LEADER, TO_MOVE, PHASE = (BLOCKS[n][0] for n in (
    "trick_no", "contract", "trump", "fantan_rank", "declarer", "leader", "to_move", "phase"))  # fmt: skip
DOUBLES, DOUBLED_DONE, MUST_DOUBLE, AVAILABLE, HEARTS_BROKEN, FANTAN_PLAYABLE, FINISHED = (BLOCKS[n][0] for n in (
    "doubles", "doubled_done", "must_double", "available", "hearts_broken", "fantan_playable", "finished"))  # fmt: skip
RULES, EXTRA_DEAL, IS_MATCH, REMAINING = (BLOCKS[n][0] for n in ("rules", "extra_deal", "is_match", "remaining"))
TRICKS_WON, CARDS_LEFT, POINTS, PASSES, TOTALS, DEAL_NO, DEALS_LEFT, OUTSTANDING = (BLOCKS[n][0] for n in (
    "tricks_won", "cards_left", "points", "passes", "totals", "deal_no", "deals_left", "outstanding"))  # fmt: skip
NUM_PART = NUM_BITS  # first numeric entry

_CONTRACT_INDEX = {n: i for i, n in enumerate(CONTRACT_NAMES)}
#: ``_REL[o][r]``: absolute seat of relative seat r for observer o.
_REL = tuple(tuple((o + r) & 3 for r in range(4)) for o in range(4))
_PHASE_BITS = tuple(1 << (PHASE + p) for p in range(NUM_PHASES))


def observation_bounds() -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` arrays of the observation space (binary entries in [0, 1])."""
    low = np.zeros(OBS_SIZE, np.float32)
    high = np.ones(OBS_SIZE, np.float32)
    for name, _, lo, hi in NUM_BLOCKS:
        off, size = BLOCKS[name]
        low[off:off + size] = lo
        high[off:off + size] = hi
    return low, high


_RULES_BITS: dict[int, tuple[Rules, int]] = {}
_RULES_BITS_MAX = 64


def rules_bits(rules: Rules) -> int:
    """The ``rules`` block as an int (bit i = entry ``RULES + i``); cached per ``Rules`` object."""
    hit = _RULES_BITS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    bits, i = 0, 0
    for name, values in CHOICES.items():
        bits |= 1 << (i + values.index(getattr(rules, name)))
        i += len(values)
    for name in BOOL_OPTIONS:
        if getattr(rules, name):
            bits |= 1 << i
        i += 1
    if len(_RULES_BITS) >= _RULES_BITS_MAX:  # every env has its own Rules: bounded, as the engine's caches
        _RULES_BITS.clear()
    _RULES_BITS[id(rules)] = (rules, bits << RULES)  # holds ``rules``, so its id is not reused
    return bits << RULES


@cache
def names_bits(names: tuple[str, ...]) -> int:
    bits = 0
    for n in names:
        if n in _CONTRACT_INDEX:
            bits |= 1 << _CONTRACT_INDEX[n]
    return bits


_GROUPS = sum(1 << (13 * k) for k in range(16))  # bit 0 of each 13-bit group
_LOW12 = _GROUPS * 0xFFF  # the low 12 bits of each group
_HALF = (1 << 104) - 1  # groups 0..7
#: Multiplying groups' bit 0 (stride 13) by this moves group k's bit to bit 84 + k, with no collisions
#: for 8 groups (13(k - k') = 12(j' - j) has no solution with |k - k'| < 12 but k = k').
_GATHER8 = sum(1 << (12 * j) for j in range(8))


def _seat_rows(values: list[int], rel: tuple[int, ...], width: int) -> int:
    """The 4 per-seat values (ints of ``width`` bits), reordered to relative seats, as one int."""
    return (values[rel[0]] | values[rel[1]] << width | values[rel[2]] << (2 * width)
            | values[rel[3]] << (3 * width))  # fmt: skip


def void_bits(deal: Deal, seat: int) -> int:
    """The ``void`` block of ``seat`` as a 16-bit int (bit ``4 r + u``: relative seat r, suit u): own row
    from the own hand; others: no unplayed card outside own hand and their excluded cards."""
    excluded = deal.excluded
    hand = deal.hands[seat]
    open_ = deal.deck & ~deal.played & ~hand
    # 16 groups of 13 bits (group 4r+u = seat r, suit u); a group is empty iff adding 0xFFF to its low
    # 12 bits carries nothing into its top bit and that bit is clear (no carry crosses groups).
    y = (hand | (open_ & ~excluded[(seat + 1) & 3]) << 52 | (open_ & ~excluded[(seat + 2) & 3]) << 104
         | (open_ & ~excluded[(seat + 3) & 3]) << 156)  # fmt: skip
    empty = (((y & _LOW12) + _LOW12 | y) >> 12 & _GROUPS) ^ _GROUPS
    return ((empty & _HALF) * _GATHER8) >> 84 & 255 | (((empty >> 104) * _GATHER8) >> 84 & 255) << 8


def finished_bits(finished: list[int], seat: int) -> int:
    """The ``finished`` block of ``seat`` as an int (bit ``4 r + place``)."""
    f = 0
    for place, s in enumerate(finished):
        f |= 1 << (4 * ((s - seat) & 3) + place)
    return f


def encode_bits(deal: Deal, seat: int, match: Match | None = None) -> int:
    """The binary part of the observation of ``seat`` as an int: bit i is entry i."""
    x = deal_bits(deal, seat)
    return x if match is None else x | match_bits(match, seat)


def deal_bits(deal: Deal, seat: int) -> int:
    """The binary entries that come from the deal (all but ``is_match`` and ``remaining``)."""
    rel = _REL[seat]
    hand = deal.hands[seat]
    played = deal.played
    deck = deal.deck
    excluded = deal.excluded
    x = hand | (deck & ~hand & ~played) << UNSEEN
    x |= _seat_rows(deal.played_by, rel, CARDS) << PLAYED
    x |= _seat_rows(deal.captured, rel, CARDS) << CAPTURED
    x |= _seat_rows(excluded, rel, CARDS) << EXCLUDED
    trick = deal.trick
    if trick:
        leader = deal.leader
        t = 0
        for k, c in enumerate(trick):
            t |= 1 << (c + CARDS * ((leader + k - seat) & 3))
        x |= t << TRICK
    x |= void_bits(deal, seat) << VOID
    phase = deal.phase
    x |= _PHASE_BITS[phase]
    x |= 1 << (TRICK_NO + min(deal.trick_no, deal.num_tricks - 1))
    declarer = deal.declarer
    x |= 1 << (DECLARER + ((declarer - seat) & 3))
    if phase != 4:
        x |= 1 << (TO_MOVE + ((deal.to_move - seat) & 3))
    if deal.leader >= 0:
        x |= 1 << (LEADER + ((deal.leader - seat) & 3))
    c = deal.contract
    if c is not None:
        i = _CONTRACT_INDEX.get(c.name, -1)
        if i >= 0:
            x |= 1 << (CONTRACT + i)
        else:
            x |= 1 << EXTRA_DEAL
        if deal.trump >= 0:
            x |= 1 << (TRUMP + deal.trump)
        if deal.fantan_rank >= 0:
            x |= 1 << (FANTAN_RANK + deal.fantan_rank)
    doubles = deal.doubles
    if doubles[0] | doubles[1] | doubles[2] | doubles[3]:
        d = 0
        for r in range(4):
            m = doubles[rel[r]]
            for t in range(4):
                if m >> rel[t] & 1:
                    d |= 1 << (4 * r + t)
        x |= d << DOUBLES
    if deal.double_step:
        done = 0
        for s in doubling_order(declarer)[: deal.double_step]:
            done |= 1 << ((s - seat) & 3)
        x |= done << DOUBLED_DONE
    md = deal.must_double
    if md:
        x |= ((md | md << 4) >> seat & 15) << MUST_DOUBLE
    x |= names_bits(tuple(deal.available)) << AVAILABLE
    if deal.hearts_broken:
        x |= 1 << HEARTS_BROKEN
    if deal.playable:
        x |= deal.playable << FANTAN_PLAYABLE
    if deal.finished:
        x |= finished_bits(deal.finished, seat) << FINISHED
    x |= rules_bits(deal.rules)
    return x


def match_bits(match: Match, seat: int) -> int:
    """The binary entries that come from the match: ``is_match`` and ``remaining`` (fixed during a deal)."""
    rel = _REL[seat]
    r_bits = 0
    for r in range(4):
        r_bits |= names_bits(tuple(match.remaining_contracts(rel[r]))) << (NUM_CONTRACTS * r)
    return 1 << IS_MATCH | r_bits << REMAINING


def encode_numeric(deal: Deal, seat: int, match: Match | None = None) -> list[float]:
    """The numeric part of the observation of ``seat`` (entries ``NUM_BITS..OBS_SIZE-1``)."""
    return deal_numeric(deal, seat) + (_ZERO_MATCH if match is None else match_numeric(match, seat))


def deal_numeric(deal: Deal, seat: int) -> list[float]:
    """Numeric entries from the deal: ``tricks_won``, ``cards_left``, ``points``, ``passes``."""
    a, b, c, d = _REL[seat]
    n = float(deal.num_tricks)
    tw, h, pts, ps = deal.tricks_won, deal.hands, deal.points, deal.passes
    return [
        tw[a] / n, tw[b] / n, tw[c] / n, tw[d] / n,
        h[a].bit_count() / n, h[b].bit_count() / n, h[c].bit_count() / n, h[d].bit_count() / n,
        pts[a] / POINT_SCALE, pts[b] / POINT_SCALE, pts[c] / POINT_SCALE, pts[d] / POINT_SCALE,
        ps[a] / n, ps[b] / n, ps[c] / n, ps[d] / n,
    ]  # fmt: skip


def match_numeric(match: Match, seat: int) -> list[float]:
    """Numeric entries from the match (fixed during a deal): ``totals``, ``deal_no``, ``deals_left``,
    ``outstanding``."""
    rel = _REL[seat]
    out = [match.totals[s] / POINT_SCALE for s in rel]
    out.append(match.deal_no / match.num_deals)
    k = min(match.deal_no, match.num_deals)
    out += [match.deals_left_of(s, k) / match.per_declarer for s in rel]
    for d in rel:
        owed = match.outstanding(d)
        out += [owed[s] / OBLIGATION for s in rel]
    return out


_ZERO_MATCH = [0.0] * (OBS_SIZE - TOTALS)


def encode(deal: Deal, seat: int, match: Match | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``seat`` in ``deal`` (the current deal of ``match`` in match mode), as a
    ``float32`` vector laid out as the module docstring says (:data:`OBS_SIZE` entries for classic
    Barbu, ``layout(deal.rules).size`` for Barbu King). Pure: reads the engine state only. ``out``
    (optional) is filled in place and returned."""
    if deal.rules.king:
        return encode_any(deal, seat, match, out)
    if not (type(seat) is int and 0 <= seat < 4):
        raise ValueError(f"bad seat {seat!r}: expected 0..3")
    return assemble(encode_bits(deal, seat, match), encode_numeric(deal, seat, match), out)


def assemble(bits: int, numeric: list[float], out: np.ndarray | None = None) -> np.ndarray:
    """The observation vector from its binary part (an int, bit i = entry i) and numeric part."""
    unpacked = _unpack(_frombuffer(bits.to_bytes(_NBYTES, "little"), _U8), count=NUM_BITS, bitorder="little")
    if out is None:
        return _concat((unpacked, numeric), dtype=_F32)
    out[:NUM_BITS] = unpacked
    out[NUM_BITS:] = numeric
    return out


_unpack, _frombuffer, _concat, _U8, _F32 = np.unpackbits, np.frombuffer, np.concatenate, np.uint8, np.float32


def block(obs: np.ndarray, name: str) -> np.ndarray:
    """The entries of block ``name`` of an observation (a view), e.g. ``block(obs, "hand")``."""
    off, size = BLOCKS[name]
    return obs[..., off:off + size]


# ================================================================================= any layout (King, n seats)
#: Blocks that Barbu King never fills (no trumps, no doubling, no tie-break deal: R11.1).
_NOT_IN_KING = ("trump", "doubles", "doubled_done", "must_double", "extra_deal", "outstanding")
#: Per-seat blocks: (name, entries per seat row); ``n`` rows for ``n`` seats. Blocks of n x n entries
#: (``doubles``, ``finished``, ``outstanding``) have ``n`` rows of ``n``.
_SEAT_ROWS = {"played": CARDS, "trick": CARDS, "captured": CARDS, "excluded": CARDS, "void": NUM_SUITS,
              "declarer": 1, "leader": 1, "to_move": 1, "doubled_done": 1, "must_double": 1,
              "remaining": NUM_CONTRACTS, "tricks_won": 1, "cards_left": 1, "points": 1, "passes": 1,
              "totals": 1, "deals_left": 1}  # fmt: skip
_SQUARE = ("doubles", "finished", "outstanding")
KING_FLAGS = 3


@dataclass(frozen=True)
class Layout:
    """An observation layout: ``blocks[name] = (offset, size)``, binary entries first."""

    players: int
    king: bool
    bit_blocks: tuple[tuple[str, int], ...]
    num_blocks: tuple[tuple[str, int, float, float], ...]

    @property
    def blocks(self) -> dict[str, tuple[int, int]]:
        return _layout_offsets(self)

    @property
    def num_bits(self) -> int:
        return sum(s for _, s in self.bit_blocks)

    @property
    def size(self) -> int:
        return self.num_bits + sum(s for _, s, _, _ in self.num_blocks)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` arrays of the observation space (binary entries in [0, 1])."""
        low = np.zeros(self.size, np.float32)
        high = np.ones(self.size, np.float32)
        for name, _, lo, hi in self.num_blocks:
            off, size = self.blocks[name]
            low[off:off + size] = lo
            high[off:off + size] = hi
        return low, high


@cache
def _layout_offsets(lay: Layout) -> dict[str, tuple[int, int]]:
    out, off = {}, 0
    for name, size in lay.bit_blocks:
        out[name] = (off, size)
        off += size
    for name, size, _, _ in lay.num_blocks:
        out[name] = (off, size)
        off += size
    return out


def _resize(name: str, size: int, n: int, tricks: int) -> int:
    if name in _SQUARE:
        return n * n
    if name in _SEAT_ROWS:
        return n * _SEAT_ROWS[name]
    if name == "trick_no":
        return tricks
    return size


@cache
def _layout(players: int, king: bool, tricks: int) -> Layout:
    bits = [(name, _resize(name, size, players, tricks)) for name, size in BIT_BLOCKS
            if not (king and name in _NOT_IN_KING)]  # fmt: skip
    nums = [(name, _resize(name, size, players, tricks), lo, hi) for name, size, lo, hi in NUM_BLOCKS
            if not (king and name in _NOT_IN_KING)]  # fmt: skip
    if king:
        bits.append(("king", KING_FLAGS))
    return Layout(players, king, tuple(bits), tuple(nums))


def layout(rules: Rules) -> Layout:
    """The observation layout of ``rules``: the classic one (:data:`BLOCKS`, :data:`OBS_SIZE`) for
    Barbu, Barbu King's for ``game="king"`` (see the module docstring)."""
    if not rules.king:
        return _layout(4, False, NUM_TRICKS_MAX)
    return _layout(rules.players, True, max(NUM_TRICKS_MAX, rules.hand_size))


def _card_bits(mask: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(mask.to_bytes(7, "little"), np.uint8), count=CARDS, bitorder="little")


def encode_any(deal: Deal, seat: int, match: Match | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``seat`` under ``layout(deal.rules)``, block by block, for any number of
    seats (Barbu King, R11; on classic deals it equals :func:`encode`)."""
    n = deal.n
    if not (type(seat) is int and 0 <= seat < n):
        raise ValueError(f"bad seat {seat!r}: expected 0..{n - 1}")
    lay = layout(deal.rules)
    blocks = lay.blocks
    o = np.zeros(lay.size, np.float32) if out is None else out
    if out is not None:
        o[:] = 0.0
    rel = [(seat + r) % n for r in range(n)]

    def at(name: str) -> int:
        return blocks[name][0]

    def cards(name: str, mask: int, row: int = 0) -> None:
        if mask:
            off = at(name) + CARDS * row
            o[off:off + CARDS] = _card_bits(mask)

    def one(name: str, index: int) -> None:
        if name in blocks:
            o[at(name) + index] = 1.0

    hand, played, deck = deal.hands[seat], deal.played, deal.deck
    cards("hand", hand)
    cards("unseen", deck & ~hand & ~played)
    open_ = deck & ~played & ~hand
    for r, s in enumerate(rel):
        cards("played", deal.played_by[s], r)
        cards("captured", deal.captured[s], r)
        cards("excluded", deal.excluded[s], r)
        could = hand if r == 0 else open_ & ~deal.excluded[s]
        for u in range(NUM_SUITS):
            if not could & SUIT_MASK[u]:
                one("void", NUM_SUITS * r + u)
    for k, c in enumerate(deal.trick):
        one("trick", CARDS * ((deal.leader + k - seat) % n) + c)
    one("trick_no", min(deal.trick_no, deal.num_tricks - 1))
    c = deal.contract
    if c is not None:
        i = _CONTRACT_INDEX.get(c.name, -1)
        one("contract", i) if i >= 0 else one("extra_deal", 0)
        if deal.trump >= 0:
            one("trump", deal.trump)
        if deal.fantan_rank >= 0:
            one("fantan_rank", deal.fantan_rank)
    one("declarer", (deal.declarer - seat) % n)
    if deal.leader >= 0:
        one("leader", (deal.leader - seat) % n)
    if deal.phase != 4:
        one("to_move", (deal.to_move - seat) % n)
    one("phase", int(deal.phase))
    if "doubles" in blocks:
        for r in range(n):
            for t in range(n):
                if deal.doubles[rel[r]] >> rel[t] & 1:
                    one("doubles", n * r + t)
        for s in doubling_order(deal.declarer)[: deal.double_step]:
            one("doubled_done", (s - seat) % n)
        for r in range(n):
            if deal.must_double >> rel[r] & 1:
                one("must_double", r)
    for name in deal.available:
        if name in _CONTRACT_INDEX:
            one("available", _CONTRACT_INDEX[name])
    if deal.hearts_broken:
        one("hearts_broken", 0)
    cards("fantan_playable", deal.playable)
    for place, s in enumerate(deal.finished):
        one("finished", n * ((s - seat) % n) + place)
    rb = rules_bits(deal.rules) >> RULES
    for i in range(RULE_FLAGS):
        if rb >> i & 1:
            one("rules", i)
    if lay.king:
        rules = deal.rules
        for i, flag in enumerate((rules.short, rules.choose, True)):
            if flag:
                one("king", i)
    nt = float(deal.num_tricks)
    for r, s in enumerate(rel):
        o[at("tricks_won") + r] = deal.tricks_won[s] / nt
        o[at("cards_left") + r] = deal.hands[s].bit_count() / nt
        o[at("points") + r] = deal.points[s] / POINT_SCALE
        o[at("passes") + r] = deal.passes[s] / nt
    if match is not None:
        one("is_match", 0)
        for r, s in enumerate(rel):
            for name in match.remaining_contracts(s):
                if name in _CONTRACT_INDEX:
                    one("remaining", NUM_CONTRACTS * r + _CONTRACT_INDEX[name])
            o[at("totals") + r] = match.totals[s] / POINT_SCALE
        o[at("deal_no")] = match.deal_no / match.num_deals
        k = min(match.deal_no, match.num_deals)
        for r, s in enumerate(rel):
            o[at("deals_left") + r] = match.deals_left_of(s, k) / match.per_declarer
        if "outstanding" in blocks:
            for r, d in enumerate(rel):
                owed = match.outstanding(d)
                for t, s in enumerate(rel):
                    o[at("outstanding") + n * r + t] = owed[s] / OBLIGATION
    return o


def block_of(obs: np.ndarray, name: str, rules: Rules) -> np.ndarray:
    """The entries of block ``name`` of an observation under ``rules`` (a view); see :func:`block`."""
    off, size = layout(rules).blocks[name]
    return obs[..., off:off + size]


__all__ = [
    "BIT_BLOCKS", "BLOCKS", "NUM_BITS", "NUM_BLOCKS", "OBS_SIZE", "Layout", "assemble", "block",
    "block_of", "deal_bits", "deal_numeric", "encode", "encode_any", "encode_bits", "encode_numeric", "layout",
    "match_bits", "match_numeric", "observation_bounds",
]  # fmt: skip
