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

Other rules have their own layout, :func:`layout` ``(rules)``, made of the same blocks; :func:`layout` of
four-player classic rules without ``positive`` is exactly the table above.

- **n seats** (classic Barbu for 3 or 5 players, R12; Barbu King for 3 to 6, R11.4, R11.5): every ``[r][x]`` block
  has ``n`` rows, relative seat ``r`` being absolute seat ``(observer + r) % n`` (offsets +1 … +(n−1),
  R12.2); ``doubles``, ``finished`` and ``outstanding`` are ``n`` rows of ``n``; ``trick_no`` has
  ``max(13, hand size)`` entries (17 for three players with 52 cards).
- **option positive** (R10.3): one more binary block after ``rules``, ``positive`` (4 entries: ``no_tricks``,
  ``no_hearts``, ``no_queens``, ``salad``, each 1 when that contract is played with negated points); with a
  positive salad the contract blocks (``contract``, ``available`` and each row of ``remaining``) have a
  12th entry, ``anti_salad``.
- **Barbu King** (R11): no blocks that are always empty in King (``trump``, ``doubles``, ``doubled_done``,
  ``must_double``, ``extra_deal``, ``outstanding``), and one more binary block after ``remaining``:

==================  ======  ==================================================================
king                3       ``short``, ``choose`` (R11.3), and 1 for Barbu King (points are bad:
                            ``points`` and ``totals`` keep the game's sign, positive = bad)
==================  ======  ==================================================================

- **six-player King** (R11.5, two packs): the card blocks say "at least one copy", and four more binary
  blocks after ``king`` say "both copies", so they tell how many copies of each card are where:

==================  ======  ==================================================================
hand2               52      own hand holds both copies of the card
played2             312     [r][card] seat r has played both copies
captured2           312     [r][card] seat r's tricks hold both copies
unseen2             52      both copies are unseen (neither in own hand nor played)
==================  ======  ==================================================================

In King's fixed order ``remaining`` holds, for every seat, the contracts of the deals still to come (R11.2)
and ``available`` the contract of this deal.

Sizes: classic Barbu 977 for 3 players, 1228 for 4, 1489 for 5 (973 for 3 players with 32 cards); with
option ``positive`` 4 more (1232 at four players), 6 + n more with a positive salad (1238 for positive1..3);
Barbu King 951 for 3 players, 1186 for 4, 1427 for 5, 2402 for 6. A test checks these against :func:`layout`.

:func:`encode` is the one reference encoder, block by block for any layout. The compiled kernels
(:mod:`barbu_env.vector`) write the classic layout from the batched state; tests check them against
:func:`encode` on every step.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property
from typing import Any

import numpy as np

from .cards import FULL_DECK, SECOND, SUIT_MASK
from .contracts import ANTI_SALAD, CONTRACT_NAMES
from .engine.deal import Deal
from .engine.doubling import doubling_order
from .engine.match import OBLIGATION, Match
from .rules import BOOL_OPTIONS, CHOICES, POSITIVE_CHOICES, Rules

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


#: Entry of each contract in the contract-indexed blocks (``contract``, ``available``, ``remaining``): the order of
#: ``CONTRACT_NAMES``, then ``anti_salad`` (R10.3), which only the layouts of rules with a positive salad hold.
_CONTRACT_BY_INDEX = (*CONTRACT_NAMES, ANTI_SALAD)
_CONTRACT_INDEX = {n: i for i, n in enumerate(_CONTRACT_BY_INDEX)}


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
    """The contract names as bits in the contract-indexed blocks' order (``anti_salad`` last, R10.3)."""
    bits = 0
    for n in names:
        if n in _CONTRACT_INDEX:
            bits |= 1 << _CONTRACT_INDEX[n]
    return bits


@cache
def positive_bits(positive: tuple[str, ...]) -> int:
    """The ``positive`` block (R10.3) as an int: bit i for ``POSITIVE_CHOICES[i]`` negated."""
    return sum(1 << i for i, n in enumerate(POSITIVE_CHOICES) if n in positive)


def _name_flags(names: tuple[str, ...], k: int) -> tuple[int, ...]:
    """``names_bits(names)`` as one 0 or 1 per contract entry of a layout with ``k`` of them."""
    bits = names_bits(names)
    return tuple(bits >> i & 1 for i in range(k))


def block(obs: np.ndarray, name: str) -> np.ndarray:
    """The entries of block ``name`` of an observation (a view), e.g. ``block(obs, "hand")``."""
    off, size = BLOCKS[name]
    return obs[..., off : off + size]


# ================================================================================= any layout (King, n seats)
#: Blocks that Barbu King never fills (no trumps, no doubling, no tie-break deal: R11.1).
_NOT_IN_KING = ("trump", "doubles", "doubled_done", "must_double", "extra_deal", "outstanding")
#: Per-seat blocks: (name, entries per seat row); ``n`` rows for ``n`` seats (``remaining``: one entry per
#: contract of the layout, :data:`_PER_CONTRACT`). Blocks of n x n entries
#: (``doubles``, ``finished``, ``outstanding``) have ``n`` rows of ``n``.
_SEAT_ROWS = {"played": CARDS, "trick": CARDS, "captured": CARDS, "excluded": CARDS, "void": NUM_SUITS,
              "declarer": 1, "leader": 1, "to_move": 1, "doubled_done": 1, "must_double": 1,
              "remaining": NUM_CONTRACTS, "tricks_won": 1, "cards_left": 1, "points": 1, "passes": 1,
              "totals": 1, "deals_left": 1, "played2": CARDS, "captured2": CARDS}  # fmt: skip
_SQUARE = ("doubles", "finished", "outstanding")
#: Blocks with one entry per contract (``remaining``: one row of them per seat).
_PER_CONTRACT = ("contract", "available", "remaining")
KING_FLAGS = 3
#: R11.5: the blocks of six-player King's second copies, after ``king``.
TWO_PACK_BLOCKS: tuple[tuple[str, int], ...] = (("hand2", CARDS), ("played2", SEAT_CARDS), ("captured2", SEAT_CARDS),
                                                ("unseen2", CARDS))  # fmt: skip


@dataclass(frozen=True)
class Layout:
    """An observation layout: ``blocks[name] = (offset, size)``, binary entries first."""

    players: int
    king: bool
    bit_blocks: tuple[tuple[str, int], ...]
    num_blocks: tuple[tuple[str, int, float, float], ...]

    @cached_property
    def blocks(self) -> dict[str, tuple[int, int]]:
        out, off = {}, 0
        for name, size in (*self.bit_blocks, *((name, size) for name, size, _, _ in self.num_blocks)):
            out[name] = (off, size)
            off += size
        return out

    @cached_property
    def offset(self) -> dict[str, int]:
        """``offset[name]``: the first entry of each block."""
        return {name: off for name, (off, _) in self.blocks.items()}

    @cached_property
    def num_contracts(self) -> int:
        """Entries per contract-indexed block: 11 (``CONTRACT_NAMES``), 12 with ``anti_salad`` (R10.3)."""
        return self.blocks["contract"][1]

    @cached_property
    def num_bits(self) -> int:
        return sum(s for _, s in self.bit_blocks)

    @cached_property
    def num_bytes(self) -> int:
        return (self.num_bits + 7) // 8

    @cached_property
    def size(self) -> int:
        return self.num_bits + sum(s for _, s, _, _ in self.num_blocks)

    @cached_property
    def no_match(self) -> list[float]:
        """The numeric match entries outside a match (``totals`` to the end): zeros."""
        return [0.0] * (self.size - self.offset["totals"])

    @cached_property
    def match_spans(self) -> tuple[tuple[int, int], ...]:
        """``(start, end)`` of each run of adjacent :data:`MATCH_BLOCKS` entries."""
        spans: list[list[int]] = []
        for name in MATCH_BLOCKS:
            if name in self.blocks:
                off, size = self.blocks[name]
                if spans and spans[-1][1] == off:
                    spans[-1][1] = off + size
                else:
                    spans.append([off, off + size])
        return tuple((a, b) for a, b in spans)

    @cached_property
    def match_entries(self) -> np.ndarray:
        """The entries of :attr:`match_spans`, in order (the columns of :func:`match_rows`)."""
        return np.concatenate([np.arange(a, b) for a, b in self.match_spans])

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` arrays of the observation space (binary entries in [0, 1])."""
        low = np.zeros(self.size, np.float32)
        high = np.ones(self.size, np.float32)
        for name, _, lo, hi in self.num_blocks:
            off, size = self.blocks[name]
            low[off : off + size] = lo
            high[off : off + size] = hi
        return low, high


def _resize(name: str, size: int, n: int, tricks: int, contracts: int) -> int:
    if name in _SQUARE:
        return n * n
    if name in _PER_CONTRACT:  # ``remaining``: one row per seat
        return contracts * (n if name in _SEAT_ROWS else 1)
    if name in _SEAT_ROWS:
        return n * _SEAT_ROWS[name]
    if name == "trick_no":
        return tricks
    return size


@cache
def _layout(players: int, king: bool, tricks: int, contracts: int, positive: bool) -> Layout:
    """The layout over ``players`` seats with ``tricks`` entries of ``trick_no``, ``contracts`` entries per
    contract-indexed block, and the ``positive`` block (R10.3) after ``rules`` when ``positive``."""
    bits = []
    for name, size in BIT_BLOCKS:
        if not (king and name in _NOT_IN_KING):
            bits.append((name, _resize(name, size, players, tricks, contracts)))
        if name == "rules" and positive:
            bits.append(("positive", len(POSITIVE_CHOICES)))
    nums = [(name, _resize(name, size, players, tricks, contracts), lo, hi) for name, size, lo, hi in NUM_BLOCKS
            if not (king and name in _NOT_IN_KING)]  # fmt: skip
    if king:
        bits.append(("king", KING_FLAGS))
    if players == 6:
        bits += [(name, _resize(name, size, players, tricks, contracts)) for name, size in TWO_PACK_BLOCKS]
    return Layout(players, king, tuple(bits), tuple(nums))


_LAYOUTS: dict[int, tuple[Rules, Layout]] = {}
_LAYOUTS_MAX = 64


def layout(rules: Rules) -> Layout:
    """The observation layout of ``rules``: the classic one (:data:`BLOCKS`, :data:`OBS_SIZE`) for four-player
    Barbu without ``positive``; ``rules.players`` rows per seat block, ``max(13, hand size)`` entries of
    ``trick_no``, with option ``positive`` its block and with a positive salad ``anti_salad`` in the contract
    blocks; Barbu King's blocks for ``game="king"`` (see the module docstring). Cached per ``Rules`` object."""
    hit = _LAYOUTS.get(id(rules))
    if hit is not None and hit[0] is rules:
        return hit[1]
    contracts = NUM_CONTRACTS + ("salad" in rules.positive)
    tricks = max(NUM_TRICKS_MAX, rules.hand_size)
    lay = _layout(rules.players, rules.king, tricks, contracts, bool(rules.positive))
    if len(_LAYOUTS) >= _LAYOUTS_MAX:  # one entry per Rules object: bounded like _RULES_BITS
        _LAYOUTS.clear()
    _LAYOUTS[id(rules)] = (rules, lay)  # holds ``rules``, so its id is not reused while cached
    return lay


#: The classic layout (the table above).
CLASSIC = _layout(NUM_SEATS, False, NUM_TRICKS_MAX, NUM_CONTRACTS, False)
#: ``BLOCKS[name] = (offset, size)`` for every block of the classic layout.
BLOCKS: dict[str, tuple[int, int]] = CLASSIC.blocks
NUM_BITS = CLASSIC.num_bits
OBS_SIZE = CLASSIC.size
NUM_PART = NUM_BITS  # first numeric entry
RULES = BLOCKS["rules"][0]


def observation_bounds() -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` arrays of the classic observation space (binary entries in [0, 1])."""
    return CLASSIC.bounds()


#: The blocks filled from the match, constant within a deal (zero in deal mode).
MATCH_BLOCKS = ("is_match", "remaining", "totals", "deal_no", "deals_left", "outstanding")


def match_spans(rules: Rules) -> tuple[tuple[int, int], ...]:
    """``(start, end)`` of each run of adjacent :data:`MATCH_BLOCKS` entries in the layout of ``rules``."""
    return layout(rules).match_spans


def encode(deal: Deal, seat: int, match: Match | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``seat`` in ``deal`` (the current deal of ``match`` in match mode): a ``float32``
    vector under ``layout(deal.rules)`` (:data:`OBS_SIZE` entries for classic Barbu), for any number of seats
    ``n``; relative seat ``r`` is absolute seat ``(seat + r) % n``. Pure: reads the engine state only. The
    binary part is gathered as one int (bit i = entry i), then unpacked; ``out`` (optional) is filled and
    returned."""
    n = deal.n
    if not (type(seat) is int and 0 <= seat < n):
        raise ValueError(f"bad seat {seat!r}: expected 0..{n - 1}")
    lay = layout(deal.rules)
    at = lay.offset
    rel = [(seat + r) % n for r in range(n)]
    hand, played, deck, excluded = deal.hands[seat], deal.played, deal.deck, deal.excluded
    open_ = deck & ~played & ~hand  # the cards another seat may hold, before what it showed (R5.4)
    if n == 6:  # R11.5: a copy of a card may be unseen while the other is held or played
        open_ = deal.unseen(seat) & FULL_DECK
    x = hand << at["hand"] | open_ << at["unseen"]
    for r, s in enumerate(rel):
        x |= deal.played_by[s] << (at["played"] + CARDS * r)
        x |= deal.captured[s] << (at["captured"] + CARDS * r)
        x |= excluded[s] << (at["excluded"] + CARDS * r)
        could = hand if r == 0 else open_ & ~excluded[s]
        for u in range(NUM_SUITS):
            if not could & SUIT_MASK[u]:
                x |= 1 << (at["void"] + NUM_SUITS * r + u)
    for k, c in enumerate(deal.trick):
        x |= 1 << (at["trick"] + CARDS * ((deal.leader + k - seat) % n) + c)
    x |= 1 << (at["trick_no"] + min(deal.trick_no, deal.num_tricks - 1))
    contract = deal.contract
    if contract is not None:
        i = _CONTRACT_INDEX.get(contract.name, -1)
        x |= 1 << (at["contract"] + i if i >= 0 else at["extra_deal"])  # R2.4 tie-break deal
        if deal.trump >= 0:
            x |= 1 << (at["trump"] + deal.trump)
        if deal.fantan_rank >= 0:
            x |= 1 << (at["fantan_rank"] + deal.fantan_rank)
    x |= 1 << (at["declarer"] + (deal.declarer - seat) % n)
    if deal.leader >= 0:
        x |= 1 << (at["leader"] + (deal.leader - seat) % n)
    if deal.phase != 4:
        x |= 1 << (at["to_move"] + (deal.to_move - seat) % n)
    x |= 1 << (at["phase"] + int(deal.phase))
    if "doubles" in at:  # R6 (not in Barbu King)
        if any(deal.doubles):
            for r in range(n):
                m = deal.doubles[rel[r]]
                for t in range(n):
                    if m >> rel[t] & 1:
                        x |= 1 << (at["doubles"] + n * r + t)
        if deal.must_double:
            for r in range(n):
                if deal.must_double >> rel[r] & 1:
                    x |= 1 << (at["must_double"] + r)
        for s in doubling_order(deal.declarer, n)[: deal.double_step]:
            x |= 1 << (at["doubled_done"] + (s - seat) % n)
    x |= names_bits(tuple(deal.available)) << at["available"]
    if deal.hearts_broken:
        x |= 1 << at["hearts_broken"]
    x |= deal.playable << at["fantan_playable"]
    for place, s in enumerate(deal.finished):
        x |= 1 << (at["finished"] + n * ((s - seat) % n) + place)
    x |= rules_bits(deal.rules) >> RULES << at["rules"]
    if "positive" in at:
        x |= positive_bits(deal.rules.positive) << at["positive"]
    if lay.king:
        rules = deal.rules
        x |= (rules.short | rules.choose << 1 | 4) << at["king"]
    if n == 6:
        x |= _second_copies(deal, seat, rel, at)
    nt = float(deal.num_tricks)
    tw, hands, pts, passes = deal.tricks_won, deal.hands, deal.points, deal.passes
    if n == 6:
        hands = [deal.held(s) for s in range(n)]  # copies masks: bit_count() counts both copies
    numeric = [tw[s] / nt for s in rel] + [hands[s].bit_count() / nt for s in rel]
    numeric += [pts[s] / POINT_SCALE for s in rel] + [passes[s] / nt for s in rel]
    obs = _assemble(x, numeric + lay.no_match, lay, out)
    if match is not None:
        obs[lay.match_entries] = match_rows(match)[seat]
    return obs


def _second_copies(deal: Deal, seat: int, rel: list[int], at: dict[str, int]) -> int:
    """The binary blocks of the second copies (R11.5): own hand, played and captured by each seat, unseen."""
    d: Any = deal  # a TwoPackDeal
    x = d.hands2[seat] << at["hand2"] | d.unseen(seat) >> SECOND << at["unseen2"]
    for r, s in enumerate(rel):
        x |= d.played2_by[s] << (at["played2"] + CARDS * r)
        x |= d.captured2[s] << (at["captured2"] + CARDS * r)
    return x


def match_rows(match: Match) -> np.ndarray:
    """Each seat's entries of the match blocks (``Layout.match_entries``: ``is_match`` and the contracts each
    relative seat has still to declare, then the totals, the deal number, each seat's deals left as declarer
    and, with doubling, the doubles each seat still owes each declarer, R6.4), float32 [players, entries].
    Gathered from the facts by absolute seat (:func:`_match_gather`)."""
    n = match.n
    lay = layout(match.rules)
    facts = [1.0]
    for s in range(n):
        facts += _name_flags(tuple(match.remaining_contracts(s)), lay.num_contracts)
    facts += [t / POINT_SCALE for t in match.totals]
    facts.append(match.deal_no / match.num_deals)
    facts += [k / match.per_declarer for k in match.deals_left(min(match.deal_no, match.num_deals))]
    owed = "outstanding" in lay.blocks
    if owed:
        facts += [k / OBLIGATION for d in range(n) for k in match.outstanding(d)]
    return np.array(facts)[_match_gather(n, owed, lay.num_contracts)].astype(np.float32)


@cache
def _match_gather(n: int, owed: bool, k: int) -> np.ndarray:
    """``[seat, j]``: the fact (:func:`match_rows`' list: is_match, remaining by absolute seat and contract, totals,
    deal number, deals left, owed by declarer and seat) at match entry ``j`` of ``seat``'s observation (``k``
    entries per contract block)."""
    rot = (np.arange(n)[:, None] + np.arange(n)) % n  # rot[seat, r]: the absolute seat of relative seat r
    totals = 1 + n * k
    parts = [np.zeros((n, 1), int), (1 + k * rot[:, :, None] + np.arange(k)).reshape(n, -1),
             totals + rot, np.full((n, 1), totals + n), totals + n + 1 + rot]  # fmt: skip
    if owed:
        parts.append((totals + 2 * n + 1 + n * rot[:, :, None] + rot[:, None, :]).reshape(n, -1))
    return np.concatenate(parts, axis=1)


def _assemble(x: int, numeric: list[float], lay: Layout, out: np.ndarray | None) -> np.ndarray:
    """The observation from its binary part (an int, bit i = entry i) and its numeric part."""
    bits = np.unpackbits(np.frombuffer(x.to_bytes(lay.num_bytes, "little"), np.uint8), count=lay.num_bits,
                         bitorder="little")  # fmt: skip
    if out is None:
        return np.concatenate((bits, numeric), dtype=np.float32)
    out[: lay.num_bits] = bits
    out[lay.num_bits :] = numeric
    return out


def phase_and_contract(obs: np.ndarray, rules: Rules) -> tuple[int, str | None]:
    """The phase (``Phase``, R2.3) and the declared contract's name that an observation under ``rules`` shows
    (blocks ``phase`` and ``contract``): None before the declaration and in an R2.4 tie-break deal, whose
    observation marks ``extra_deal`` instead. Reads two small blocks: no ``Deal`` is needed."""
    blocks = layout(rules).blocks
    off, size = blocks["phase"]
    phase = obs[off : off + size].tolist().index(1.0)
    off, size = blocks["contract"]
    row = obs[off : off + size].tolist()
    return phase, _CONTRACT_BY_INDEX[row.index(1.0)] if 1.0 in row else None


def block_of(obs: np.ndarray, name: str, rules: Rules) -> np.ndarray:
    """The entries of block ``name`` of an observation under ``rules`` (a view); see :func:`block`."""
    off, size = layout(rules).blocks[name]
    return obs[..., off : off + size]


__all__ = [
    "BIT_BLOCKS", "BLOCKS", "MATCH_BLOCKS", "NUM_BITS", "NUM_BLOCKS", "OBS_SIZE", "Layout", "block", "block_of",
    "encode", "layout", "match_rows", "match_spans", "observation_bounds", "phase_and_contract",
]  # fmt: skip
