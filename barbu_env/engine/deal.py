"""One deal of Barbu: declare → double → trick play or Fantan → scored (RULES.md R2.3–R8, R11).

The state is plain ints and short lists: hands are bitmasks (one bit per card id, R1.2), the
current trick is a list, and everything a search agent needs is copied by :meth:`Deal.clone`.
:meth:`Deal.legal_actions` is the one place that decides legality; :meth:`Deal.apply` rejects any
other action with a ``ValueError`` naming the legal ones.

Besides the rules state, a deal keeps ``excluded[seat]``: cards that seat has *publicly shown* it
cannot hold (voids, R5.4/R5.5 trump duties, R4.1 heart leads, R4.4 forced discards, R7.3 forced
passes). The hidden-card sampler of :mod:`barbu_env.engine.infostate` reads it.

The number of seats is ``rules.players`` (4; 3 or 5, R11.4 / R12; 6 in Barbu King, R11.5, whose two packs
:mod:`barbu_env.engine.two_packs` adds): per-seat lists have that length, play moves to ``(seat + 1) % n``
and a trick holds ``n`` cards.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Mapping, Sequence
from enum import IntEnum
from typing import Any, ClassVar, cast

import numpy as np

from ..actions import (
    ANTI_SALAD,
    DECLARE_BASE,
    DOUBLE_BASE,
    FANTAN_BASE,
    PASS,
    PLAIN_CONTRACTS,
    TRUMPS_BASE,
    action_name,
    anti_salad_id,
    contract_name,
    declare_id,
)
from ..cards import (
    ACE,
    ACE_OF_HEARTS,
    HEARTS,
    KING_OF_HEARTS,
    NUM_CARDS,
    SUIT_MASK,
    above,
    cards_of,
    format_card,
    parse_cards,
)
from ..contracts import ANTI_SALAD as ANTI_SALAD_NAME
from ..contracts import FANTAN, Contract, contract_table, ravage_scores
from ..rules import Rules
from .doubling import double_targets, legal_double_ids, settlement, split_scores


class Phase(IntEnum):
    """Phases of a deal (R2.3)."""

    DECLARE = 0
    DOUBLE = 1
    PLAY = 2
    FANTAN = 3
    OVER = 4


DECLARE, DOUBLE, PLAY, FANTAN_PLAY, OVER = range(5)
_HEARTS = SUIT_MASK[HEARTS]
_NON_HEARTS = ((1 << NUM_CARDS) - 1) & ~_HEARTS
_KH = 1 << KING_OF_HEARTS

# _SUIT_CARDS[s][m]: card ids of the 13-bit rank mask m in suit s (turns a mask into a list fast).
_SUIT_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(13 * s + r for r in range(13) if m >> r & 1) for m in range(1 << 13)) for s in range(4)
)
# the four suits' tables as globals: one global read each instead of a global read and a tuple index
_C0, _C1, _C2, _C3 = _SUIT_CARDS
_SHIFT = (0, 13, 26, 39)  # bit offset of each suit in a card mask
_BIT: tuple[int, ...] = tuple(1 << c for c in range(NUM_CARDS))  # _BIT[c] == 1 << c, made once
#: ``_CARD_BIT.get(a, 0)``: the bit of card id ``a``, 0 for any other int (one lookup tests the range too)
_CARD_BIT: dict[int, int] = dict(enumerate(_BIT))
#: ``_SUIT[c]``, ``_RANK[c]``: ``c // 13`` and ``c % 13`` as lookups (int division is not specialised, indexing is)
_SUIT: tuple[int, ...] = tuple(c // 13 for c in range(NUM_CARDS))
_RANK: tuple[int, ...] = tuple(c % 13 for c in range(NUM_CARDS))
#: ``_BELOW[c]``: the bit of the card one rank below ``c`` in its suit, 0 for a two (Fantan builds down, R7.2)
_BELOW: tuple[int, ...] = tuple(1 << (c - 1) if c % 13 else 0 for c in range(NUM_CARDS))
#: ``_RANKS_ABOVE[c]``: the 13-bit rank mask of the ranks above card ``c``'s (``above(c)`` within its suit)
_RANKS_ABOVE: tuple[int, ...] = tuple(8191 & ~((2 << (c % 13)) - 1) for c in range(NUM_CARDS))
#: ``_MOVE[seat][action]`` == ``(seat, action)``: history entries made once (no new tuple per move; every action
#: id of every seat count)
_MOVE: tuple[tuple[tuple[int, int], ...], ...] = tuple(
    tuple((s, a) for a in range(anti_salad_id(5) + 1)) for s in range(6)
)


def mask_to_list(m: int) -> list[int]:
    """Card ids of a mask, ascending (table lookup per suit)."""
    return [*_C0[m & 8191], *_C1[m >> 13 & 8191], *_C2[m >> 26 & 8191], *_C3[m >> 39]]


def parse_contract(text: str | int) -> tuple[str, int, int]:
    """``(name, trump suit or -1, fantan rank or -1)`` of ``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``
    or a declare action id."""
    if type(text) is str or type(text) is int:
        parsed = _PARSED.get(text)
        if parsed is None:
            if len(_PARSED) >= 1024:  # texts differ in case and spaces: bounded
                _PARSED.clear()
            parsed = _PARSED[text] = _parse_contract(text)  # only valid texts get here (the others raise)
        return parsed
    return _parse_contract(text)


_PARSED: dict[str | int, tuple[str, int, int]] = {}  # contract text or id -> parse_contract's answer


def _parse_contract(text: str | int) -> tuple[str, int, int]:
    a = text if isinstance(text, int) else declare_id(str(text))
    if TRUMPS_BASE <= a < FANTAN_BASE:
        return "trumps", a - TRUMPS_BASE, -1
    if FANTAN_BASE <= a < DOUBLE_BASE:
        return "fantan", -1, a - FANTAN_BASE
    if DECLARE_BASE <= a < TRUMPS_BASE:
        return PLAIN_CONTRACTS[a - DECLARE_BASE], -1, -1
    if a == ANTI_SALAD:
        return contract_name(a), -1, -1
    raise ValueError(f"action {a} is not a declaration")


def validate_hands(hands: Any, rules: Rules) -> list[int]:
    """Bitmask hands from one hand per seat (a list of card strings/ids, a text ``"AS KH 2C"`` or a bitmask
    int); raises ``ValueError`` saying what is wrong (``TypeError`` for a value that is no hand at all). With two
    packs (six-player King, R11.5) the hands are copies masks and a card may be listed twice."""
    n = rules.players
    if isinstance(hands, (str, bytes, Mapping)) or not (hasattr(hands, "__len__") and hasattr(hands, "__iter__")):
        raise TypeError(f"hands must be a list of {n} hands (one per seat), got {hands!r}")
    if len(hands) != n:
        raise ValueError(f"hands must be {n} lists of cards (one per seat), got {hands!r}")
    if n == 6:  # R11.5: two packs
        from .two_packs import validate_two_pack_hands

        return validate_two_pack_hands(hands, rules)
    deck = rules.deck
    seen: dict[int, int] = {}
    masks = []
    for seat, hand in enumerate(hands):
        cards = _hand_cards(hand, seat, rules.hand_size)
        if len(cards) != rules.hand_size:
            count = f"more than {rules.hand_size}" if len(cards) > rules.hand_size else len(cards)
            raise ValueError(f"hand of seat {seat} has {count} cards; each hand needs {rules.hand_size}")
        m = 0
        for c in cards:
            if not deck >> c & 1:
                raise ValueError(
                    f"card {format_card(c)} (seat {seat}) is not in the {rules.deck_size}-card deck of these rules "
                    f"(R10.1 deck, cards removed for {rules.players} players by R11.4 / R12.1)"
                )
            if c in seen:
                raise ValueError(f"card {format_card(c)} is dealt twice (seats {seen[c]} and {seat})")
            seen[c] = seat
            m |= 1 << c
        masks.append(m)
    return masks


def _hand_cards(hand: object, seat: int, hand_size: int) -> list[int]:
    """The card ids of one seat's hand (at most ``hand_size + 1`` of them: enough to tell a hand too long)."""
    if isinstance(hand, (int, np.integer)) and not isinstance(hand, (bool, np.bool_)):
        m = int(hand)
        if m < 0 or m >> NUM_CARDS:
            got = "a negative int" if m < 0 else f"bit {m.bit_length() - 1} set"
            raise ValueError(
                f"bad bitmask for the hand of seat {seat}: {got}; a hand sets bits 0..{NUM_CARDS - 1} only"
            )
        return cards_of(m)
    if isinstance(hand, str):
        return parse_cards(hand)
    if isinstance(hand, bytes) or not hasattr(hand, "__iter__"):
        raise TypeError(
            f"bad hand {hand!r} of seat {seat}: expected a list of cards (strings like 'QS' or ids 0..51), "
            "a text like 'AS KH 2C' or a bitmask int"
        )
    return parse_cards(itertools.islice(hand, hand_size + 1))


def seat_index(value: object, what: str, n: int) -> int:
    """``value`` as a seat 0..n-1 (numpy integers too, not a bool); else ``ValueError`` naming ``what``."""
    if type(value) is int and 0 <= value < n:
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and 0 <= value < n:
        return int(value)
    raise ValueError(f"bad {what} {value!r}: expected a seat 0..{n - 1}")


def deal_hands(rng: np.random.Generator, rules: Rules) -> list[int]:
    """Shuffle the deck with ``rng`` and deal ``rules.hand_size`` cards to each seat (R1.4); copies masks with
    two packs (R11.5)."""
    if rules.players == 6:
        from .two_packs import deal_two_packs

        return deal_two_packs(rng, rules)
    return _deal_masks(rng, rules.deck, rules.players)


def _deal_masks(rng: np.random.Generator, deck: int, players: int) -> list[int]:
    # ``rng.shuffle`` of a list draws exactly what it draws for an array (and ``rng.permutation(len(deck))``,
    # which shuffles an arange): the same Fisher-Yates swaps, so the hands are those of dealing
    # ``cards[permutation]``; a list skips the array path's set-up. A sum of distinct powers of two is their OR.
    bits = _DECK_BITS.get(deck)
    if bits is None:
        bits = _DECK_BITS[deck] = [1 << c for c in cards_of(deck)]
    s = bits[:]
    rng.shuffle(s)
    if players == 4:
        k = len(s) >> 2
        a, b, c = sum(s[:k]), sum(s[k : 2 * k]), sum(s[2 * k : 3 * k])
        return [a, b, c, deck - a - b - c]  # the last hand is the rest of the deck (one sum() less)
    k = len(s) // players
    hands = []
    for i in range(0, len(s), k):  # (a loop, not a comprehension: that would make cells of s and k on every call)
        hands.append(sum(s[i : i + k]))
    return hands


_DECK_BITS: dict[int, list[int]] = {}  # deck mask -> the bit of each of its cards, ascending
_DEFAULT_RULES = Rules()
#: ``(rules, deck, players, hand_size, contract table, play flags, next seat of each seat)``: what a new deal
#: derives from its rules.
_RuleConsts = tuple[
    Rules, int, int, int, dict[str, Contract], tuple[bool, bool, bool, bool, bool, bool], tuple[int, ...]
]
#: ``id(rules)`` -> its ``_RuleConsts``, computed once per ``Rules`` object (frozen; the entry keeps it alive
#: so its id is not reused).
_RULE_CONSTS: dict[int, _RuleConsts] = {}


#: ``(id(contract), num_tricks)`` -> ``(contract, card_vals, pos_vals, trick_base, score_mask)``, see ``declare``.
_CONTRACT_CONSTS: dict[tuple[int, int], tuple[Contract, tuple[int, ...], tuple[int, ...], tuple[int, ...], int]] = {}


def _contract_consts(
    c: Contract, num_tricks: int
) -> tuple[Contract, tuple[int, ...], tuple[int, ...], tuple[int, ...], int]:
    e = _CONTRACT_CONSTS.get((id(c), num_tricks))
    if e is None or e[0] is not c:
        if len(_CONTRACT_CONSTS) >= 256:
            _CONTRACT_CONSTS.clear()
        vals = c.card_values()
        pos = c.position_values(num_tricks)
        base = tuple(c.per_trick + v for v in pos)
        score_mask = sum(1 << card for card, v in enumerate(vals) if v)
        e = _CONTRACT_CONSTS[id(c), num_tricks] = (c, vals, pos, base, score_mask)
    return e


def _rule_consts(rules: Rules) -> _RuleConsts:
    e = _RULE_CONSTS.get(id(rules))
    if e is None or e[0] is not rules:
        if len(_RULE_CONSTS) >= 64:
            _RULE_CONSTS.clear()
        # the rule options read during play, as plain flags instead of ``rules.x == "..."`` string compares
        flags = (
            rules.hearts_lead == "until_broken",  # R4.1
            rules.trump_lead == "must_if_able",  # R5.4
            rules.overtrump == "yes",  # R5.5
            rules.fantan_pass == "forced",  # R7.3
            rules.fantan_pass == "free",  # R7.3
            rules.ace_plays_again,  # R7.5
        )
        n = rules.players
        # (*range(1, n), 0): the next seat of each seat (no generator: that would make a cell of n on every call)
        e = _RULE_CONSTS[id(rules)] = (
            rules, rules.deck, n, rules.hand_size, contract_table(rules), flags, (*range(1, n), 0)
        )  # fmt: skip
    return e


#: ``_DOUBLE_TARGETS[n][seat][action - DOUBLE_BASE]``: the seats a ``double:*`` action of ``seat`` doubles at
#: ``n`` seats (R6, R12.6)
_DOUBLE_TARGETS: dict[int, tuple[tuple[int, ...], ...]] = {n: double_targets(n) for n in (3, 4, 5)}
#: ``(rules.doubling, positive, declarer, must_double, n)`` -> each defender seat's legal doubling actions.
_DEFENDER_DOUBLES: dict[tuple[str, bool, int, int, int], tuple[tuple[int, ...], ...]] = {}


def _defender_doubles(rules: Rules, positive: bool, decl: int, must: int, n: int) -> tuple[tuple[int, ...], ...]:
    """Each seat's legal doubles as a defender (``()`` for the declarer), cached in ``_DEFENDER_DOUBLES``."""
    key = (rules.doubling, positive, decl, must, n)
    row = _DEFENDER_DOUBLES.get(key)
    if row is None:
        if len(_DEFENDER_DOUBLES) >= 1024:
            _DEFENDER_DOUBLES.clear()
        row = _DEFENDER_DOUBLES[key] = tuple(
            legal_double_ids(rules, s, decl, positive, [0] * n, bool(must >> s & 1)) if s != decl else ()
            for s in range(n)
        )
    return row


#: ``RANK_MASK[r]``: the four cards of rank ``r``.
RANK_MASK: tuple[int, ...] = tuple(sum(1 << (13 * s + r) for s in range(4)) for r in range(13))


def contract_text(name: str, trump: int, fantan_rank: int) -> str:
    """A declared contract as text: ``"trumps:S"`` (a trump suit >= 0), ``"fantan:5"`` (a Fantan starting rank
    >= 0) or the contract's name (R3.3)."""
    if trump >= 0:
        return "trumps:" + "CDHS"[trump]
    if fantan_rank >= 0:
        return "fantan:" + "23456789TJQKA"[fantan_rank]
    return name


class Deal:
    """The state of one deal. Build with :meth:`from_hands` or :meth:`random`."""

    __slots__ = (  # noqa: RUF023 - grouped by meaning, not sorted
        "_rules", "table", "available", "must_double", "num_tricks", "deck", "hands", "declarer",
        "phase", "to_move", "contract", "trump", "fantan_rank", "doubles", "double_step", "trick",
        "leader", "led", "best", "winner", "top_trump", "trick_no", "captured",
        "tricks_won", "points", "played_by", "excluded", "hearts_broken", "card_vals",
        "pos_vals", "force_king", "lead_hearts_rule", "fantan_lo", "fantan_hi", "playable",
        "finished", "passes", "last_trick", "history", "contract_scores", "settlement", "scores",
        "reneged", "split", "n", "_next_seat", "_mask", "_cards", "_legal_doubles",
        # the defenders' legal doubles by seat (fixed for the doubling phase), once the first one was asked
        "_double_row",
        # rule options read during play, as plain flags (set with ``rules``, see its setter)
        "_until_broken", "_trump_must", "_overtrump", "_forced_pass", "_free_pass", "_ace_again",
        # set by ``declare``: following is R5.1 only (no trumps, no R4.4 forcing); per trick index, the points
        # of winning it before its cards; the cards that score; the R4.2/R4.3 early-end cards
        "_plain_follow", "_trick_base", "_score_mask", "_end",
        # phase == PLAY and _plain_follow: the fast path of apply / legal_actions
        "_plain",
    )  # fmt: skip
    _rules: Rules
    table: dict[str, Contract]
    available: tuple[str, ...]
    must_double: int
    num_tricks: int
    deck: int
    hands: list[int]
    declarer: int
    phase: int
    to_move: int
    contract: Contract | None
    trump: int
    fantan_rank: int
    doubles: list[int]
    double_step: int
    trick: list[int]
    leader: int
    led: int
    best: int
    winner: int
    top_trump: int
    trick_no: int
    captured: list[int]
    tricks_won: list[int]
    points: list[int]
    played_by: list[int]
    excluded: list[int]
    hearts_broken: bool
    card_vals: tuple[int, ...]
    pos_vals: tuple[int, ...]
    force_king: bool
    lead_hearts_rule: bool
    fantan_lo: list[int]
    fantan_hi: list[int]
    playable: int
    finished: list[int]
    passes: list[int]
    last_trick: tuple[int, list[int], int] | None
    history: list[tuple[int, int]]
    contract_scores: list[int] | None
    settlement: list[int] | None
    scores: list[int] | None
    reneged: int
    split: bool
    n: int
    _next_seat: tuple[int, ...]
    _mask: int | None
    _cards: tuple[int, ...] | None
    _legal_doubles: tuple[int, ...] | None
    _double_row: tuple[tuple[int, ...], ...] | None
    _until_broken: bool
    _trump_must: bool
    _overtrump: bool
    _forced_pass: bool
    _free_pass: bool
    _ace_again: bool
    _plain_follow: bool
    _trick_base: tuple[int, ...]
    _score_mask: int
    _end: int
    _plain: bool
    #: The slots :meth:`clone` copies (a subclass adds its own).
    _state: ClassVar[tuple[str, ...]]

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_hands(
        cls,
        hands: Sequence[Sequence[str | int] | str] | Sequence[int],
        declarer: int = 0,
        contract: str | int | Contract | None = None,
        rules: Rules | None = None,
        available: Sequence[str] | None = None,
        must_double: int = 0,
        table: dict[str, Contract] | None = None,
    ) -> Deal:
        """A deal from explicit hands (a card list or a bitmask per seat); ``contract`` skips the declaration.

        ``available`` limits the declarer's choice (a match passes the unused contracts, R3.1);
        ``must_double`` is a seat mask of players whose R6.4 obligation is due in this deal.
        """
        consts = _rule_consts(rules if rules is not None else _DEFAULT_RULES)
        rules, deck, n, hand_size, _, _, _ = consts
        declarer = seat_index(declarer, "declarer", n)
        if n != 6 and type(hands) in (list, tuple) and len(hands) == n and all(type(h) is int for h in hands):
            masks = cast("list[int]", list(hands))  # bitmasks: checked as a whole below
            union = 0
            for h in masks:
                union |= h
            if union != deck or any(h.bit_count() != hand_size for h in masks):
                validate_hands(masks, rules)  # raises with the reason
                raise ValueError(f"hand masks must partition the {rules.deck_size}-card deck")
        else:
            masks = validate_hands(hands, rules)
        return cls._build(masks, declarer, contract, consts, available, must_double, table)

    @classmethod
    def random(cls, rng: np.random.Generator, declarer: int = 0, contract: str | int | None = None,
               rules: Rules | None = None, available: Sequence[str] | None = None, must_double: int = 0,
               table: dict[str, Contract] | None = None) -> Deal:  # fmt: skip
        """A deal with hands shuffled by ``rng`` (R1.4)."""
        consts = _rule_consts(rules if rules is not None else _DEFAULT_RULES)
        n = consts[2]
        declarer = seat_index(declarer, "declarer", n)
        # a partition of the deck by construction: no checks
        masks = _deal_masks(rng, consts[1], n) if n != 6 else deal_hands(rng, consts[0])
        return cls._build(masks, declarer, contract, consts, available, must_double, table)

    @classmethod
    def _build(
        cls,
        masks: list[int],
        declarer: int,
        contract: str | int | Contract | None,
        consts: _RuleConsts,
        available: Sequence[str] | None,
        must_double: int,
        table: dict[str, Contract] | None,
    ) -> Deal:
        """A new deal of the valid hand ``masks`` (the part of :meth:`from_hands` after the checks)."""
        rules, deck, n, hand_size, base_table, flags, next_seat = consts
        if n == 6:  # R11.5: two packs
            from .two_packs import TwoPackDeal

            cls = TwoPackDeal
        d = cls.__new__(cls)
        d._rules = rules  # the ``rules`` setter's work, with the flags computed once per Rules
        d._until_broken, d._trump_must, d._overtrump, d._forced_pass, d._free_pass, d._ace_again = flags
        d.table = tab = table if table is not None else dict(base_table)  # a fresh dict per deal, as before
        if available is None:
            d.available = tuple(tab)
        else:
            names = tuple(available)
            for name in names:
                if name not in tab:
                    raise ValueError(f"unknown contract {name!r} under these rules: valid are {list(tab)}")
            d.available = names
        d.must_double = must_double
        d.num_tricks = hand_size
        d.deck = deck
        d.n = n
        d._next_seat = next_seat
        d.hands = masks
        d.declarer = declarer
        d.phase = DECLARE
        d.to_move = declarer
        d.doubles = [0] * n
        d.double_step = 0
        d.trick = []
        d.leader = declarer
        d.led = d.best = d.winner = d.top_trump = -1
        d.trick_no = 0
        d.captured = [0] * n
        d.tricks_won = [0] * n
        d.points = [0] * n
        d.played_by = [0] * n
        d.excluded = [0] * n
        d.hearts_broken = False
        d._plain = False
        d.fantan_lo = [-1] * 4
        d.fantan_hi = [-1] * 4
        d.playable = 0
        d.finished = []
        d.passes = [0] * n
        d.last_trick = None
        d.history = []
        d.contract_scores = d.settlement = d.scores = None
        d.reneged = -1
        d.split = False
        d._mask = d._cards = d._legal_doubles = d._double_row = None
        if n == 6:
            d._init_copies(masks, rules.deck2)  # type: ignore[attr-defined]  # a TwoPackDeal
        if contract is not None:
            d.declare(contract)  # sets the contract's attributes (a bad contract raises: no deal is returned)
        else:
            d.contract = None
            d.trump = d.fantan_rank = -1
            d.card_vals = d.pos_vals = d._trick_base = ()
            d.force_king = d.lead_hearts_rule = d._plain_follow = False
            d._score_mask = d._end = 0
        return d

    @property
    def rules(self) -> Rules:
        """The rule options of this deal (assigning new ones also refreshes the flags read during play)."""
        return self._rules

    @rules.setter
    def rules(self, rules: Rules) -> None:
        self._rules = rules
        self._legal_doubles = self._double_row = None  # legal doubles depend on rules.doubling
        (self._until_broken, self._trump_must, self._overtrump, self._forced_pass, self._free_pass,
         self._ace_again) = _rule_consts(rules)[5]  # fmt: skip

    @property
    def _legal(self) -> int | None:
        """The cached legal card mask (``None`` when not computed); assigning ``None`` drops every cached
        legality answer (callers that change ``hands`` do so)."""
        return self._mask

    @_legal.setter
    def _legal(self, value: int | None) -> None:
        self._mask = value
        self._cards = None

    def clone(self) -> Deal:
        """An independent copy (cheap: ints are shared, the short lists are copied)."""
        cls = type(self)
        d = cls.__new__(cls)
        for name in cls._state:
            v = getattr(self, name)
            setattr(d, name, v[:] if type(v) is list else v)
        return d

    # ----------------------------------------------------------------- hands as copies masks (R11.5)
    def held(self, seat: int) -> int:
        """The cards of ``seat``'s hand as a copies mask (:mod:`barbu_env.cards`; one pack: ``hands[seat]``)."""
        return self.hands[seat]

    def set_hands(self, held: list[int]) -> None:
        """Replace every hand by the copies masks ``held`` (a sampler's deal of the hidden cards)."""
        self.hands = list(held)
        self._legal = None

    def played_copies(self) -> int:
        """Copies mask of every card played so far (one pack: :attr:`played`)."""
        return self.played

    def unseen(self, seat: int) -> int:
        """Copies mask of the cards ``seat`` has not seen: neither in its hand nor played."""
        return self.deck & ~self.hands[seat] & ~self.played

    # ----------------------------------------------------------------- queries
    @property
    def played(self) -> int:
        """Mask of every card played so far: the union of ``played_by`` (the seats' masks are disjoint, so
        their union is their sum)."""
        return sum(self.played_by)

    @property
    def trick_mask(self) -> int:
        """Mask of the cards of the current trick (derived from ``trick``)."""
        m = 0
        for c in self.trick:
            m |= 1 << c
        return m

    @property
    def current_player(self) -> int:
        """Seat on move, or -1 once the deal is over."""
        return -1 if self.phase == OVER else self.to_move

    @property
    def is_over(self) -> bool:
        """True once the deal is scored."""
        return self.phase == OVER

    @property
    def contract_text(self) -> str | None:
        """The declared contract as ``"no_queens"``, ``"trumps:S"`` or ``"fantan:5"``."""
        if self.contract is None:
            return None
        return contract_text(self.contract.name, self.trump, self.fantan_rank)

    def legal_card_mask(self) -> int:
        """Mask of the cards the player on move may play (trick play, R4.1, R4.4, R5.1, R5.4, R5.5;
        Fantan, R7.2). Cached until the next action."""
        m = self._mask
        if m is not None:
            return m
        hand = self.hands[self.to_move]
        phase = self.phase
        if phase == PLAY:
            m = self._play_mask(hand)
        elif phase == FANTAN_PLAY:
            m = hand & self.playable
        else:
            m = 0
        self._mask = m
        self._cards = None  # at most one of the two caches is set (apply clears only the one it used)
        return m

    def _play_mask(self, hand: int) -> int:
        """The legal cards of ``hand`` in trick play (not cached)."""
        led = self.led
        if led >= 0:
            if self._plain_follow:  # R5.1 only
                return hand & SUIT_MASK[led] or hand
            return self._follow_mask(hand)
        m = hand  # leading
        if self.lead_hearts_rule and not (self.hearts_broken and self._until_broken):
            nh = hand & _NON_HEARTS
            if nh:  # R4.1: a heart may be led only when holding only hearts
                m = nh
        trump = self.trump
        if trump >= 0 and self._trump_must:
            t = m & SUIT_MASK[trump]
            if t:  # R5.4: a player who can lead a trump must
                m = t
        return m

    def _follow_mask(self, hand: int) -> int:
        led, trump = self.led, self.trump
        f = hand & SUIT_MASK[led]
        if f:  # R5.1: follow suit
            if led == trump and self.top_trump >= 0 and self._overtrump:
                hi = f & above(self.top_trump)
                if hi:  # R5.5 option overtrump
                    return hi
            if self.force_king and led == HEARTS and hand & _KH and ACE_OF_HEARTS in self.trick:
                return _KH  # R4.4 forced: K♥ must fall under the A♥
            return f
        if trump >= 0:
            t = hand & SUIT_MASK[trump]
            if t:
                if self.top_trump < 0:
                    return t  # R5.5: must trump
                hi = t & above(self.top_trump)
                if hi:  # must trump; with overtrump=yes, must beat the trick's trumps
                    return hi if self._overtrump else t
                return hand  # R5.5: every trump held is below a trump in the trick: free
        if self.force_king and hand & _KH:
            return _KH  # R4.4 forced: a void holder of the K♥ must discard it
        return hand

    def _trump_cards(self, hand: int) -> tuple[int, ...] | None:
        """The legal cards of ``hand`` in a trumps contract without the R4.1 lead rule, as a one-suit tuple, or
        ``None`` when the whole hand is legal (``_play_mask`` / ``_follow_mask`` in 13-bit rank masks)."""
        trump = self.trump
        led = self.led
        if led < 0:  # lead: R5.4, a player who can lead a trump must
            if self._trump_must:
                r = hand >> _SHIFT[trump] & 8191
                if r:
                    return _SUIT_CARDS[trump][r]
            return None
        r = hand >> _SHIFT[led] & 8191
        if r:  # R5.1: follow suit
            if led == trump and self._overtrump:
                top = self.top_trump
                if top >= 0:
                    hi = r & _RANKS_ABOVE[top]
                    if hi:  # R5.5 option overtrump
                        r = hi
            return _SUIT_CARDS[led][r]
        r = hand >> _SHIFT[trump] & 8191
        if r:
            top = self.top_trump
            if top < 0:
                return _SUIT_CARDS[trump][r]  # R5.5: must trump
            hi = r & _RANKS_ABOVE[top]
            if hi:  # must trump; with overtrump=yes, must beat the trick's trumps
                return _SUIT_CARDS[trump][hi if self._overtrump else r]
        return None  # void in both (or every trump held is below the trick's): free

    def legal_actions(self) -> list[int]:
        """The legal action ids of the player on move, ascending (the one legality function)."""
        if self._plain:  # phase PLAY, following is R5.1 only: the hottest call of random play
            m = self._mask
            if m is None:  # the cache fill of legal_card_mask, inlined (a cached _cards is simply refilled)
                hand = self.hands[self.to_move]
                led = self.led
                if led >= 0:
                    t: tuple[int, ...] | None = _SUIT_CARDS[led][hand >> _SHIFT[led] & 8191]
                    if t:  # R5.1: follow suit; the tuple of one suit's cards, cached for apply's check
                        self._cards = t
                        return [*t]
                    m = hand
                elif self.lead_hearts_rule and not (self.hearts_broken and self._until_broken):
                    m = hand & _NON_HEARTS or hand  # R4.1: a heart may be led only when holding only hearts
                else:
                    m = hand
                self._mask = m
            lo = m & 67108863  # clubs and diamonds; split first so that the suit masks are taken of small ints
            m >>= 26
            return [*_C0[lo & 8191], *_C1[lo >> 13], *_C2[m & 8191], *_C3[m >> 13]]
        p = self.phase
        if p == PLAY:  # trumps or R4.4 forced K♥
            m = self._mask
            if m is None:
                hand = self.hands[self.to_move]
                if self.trump >= 0 and not self.lead_hearts_rule:
                    t = self._trump_cards(hand)
                    if t is not None:  # the legal cards lie in one suit: cached for apply's check
                        self._cards = t
                        return [*t]
                    m = hand
                else:
                    m = self._follow_mask(hand) if self.led >= 0 else self._play_mask(hand)
                self._mask = m
            lo = m & 67108863  # (as above)
            m >>= 26
            return [*_C0[lo & 8191], *_C1[lo >> 13], *_C2[m & 8191], *_C3[m >> 13]]
        if p == FANTAN_PLAY:
            m = self._mask
            if m is None:
                m = self._mask = self.hands[self.to_move] & self.playable
            if not m:
                return [PASS]  # R7.3
            lo = m & 67108863  # (as above)
            m >>= 26
            out = [*_C0[lo & 8191], *_C1[lo >> 13], *_C2[m & 8191], *_C3[m >> 13]]
            if self._free_pass:
                out.append(PASS)
            return out
        if p == DOUBLE:
            t = self._legal_doubles
            if t is None:
                t = self._legal_doubles = self._double_ids()
            return [*t]
        if p == DECLARE:
            return self._legal_declarations()
        return []

    def _declared(self) -> Contract:
        """The declared contract (for the phases after the declaration, R2.3)."""
        c = self.contract
        if c is None:
            raise ValueError(f"no contract is declared yet (phase {self.phase})")
        return c

    def _double_ids(self) -> tuple[int, ...]:
        """The legal doubling actions of the player on move (R6), as a shared tuple (cached by the callers in
        ``_legal_doubles`` until the next action)."""
        seat = self.to_move
        decl = self.declarer
        rules = self._rules
        positive = self._declared().positive
        if seat == decl:  # depends on who doubled the declarer; no R6.4 duty
            return legal_double_ids(rules, seat, decl, positive, self.doubles, False)
        # a defender's choice is fixed for the whole doubling phase: one row of tuples per set-up
        row = _defender_doubles(rules, positive, decl, self.must_double, self.n)
        self._double_row = row  # apply reads the next defenders' tuples from it
        return row[seat]

    def _legal_declarations(self) -> list[int]:
        out: list[int] = []
        for name in self.available:
            if name == "trumps":
                out.extend(range(TRUMPS_BASE, TRUMPS_BASE + 4))
            elif name == "fantan":
                out.extend(FANTAN_BASE + r for r in range(13) if self.deck & RANK_MASK[r])
            elif name == ANTI_SALAD_NAME:
                out.append(anti_salad_id(self.n))
            else:
                out.append(DECLARE_BASE + PLAIN_CONTRACTS.index(name))
        return sorted(out)

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal for the player on move."""
        if self.phase in (PLAY, FANTAN_PLAY) and 0 <= action < NUM_CARDS:
            return bool(self.legal_card_mask() >> action & 1)
        return action in self.legal_actions()

    def illegal(self, action: object) -> ValueError:
        """The error for an illegal ``action``: names it and lists the legal actions."""
        try:
            what = f"{action_name(int(action), self.n)!r} ({int(action)})"  # type: ignore[call-overload]
        except (TypeError, ValueError):
            what = repr(action)
        if self.phase == OVER:
            return ValueError(f"illegal action {what}: the deal is over")
        legal = ", ".join(f"{action_name(a, self.n)} ({a})" for a in self.legal_actions())
        return ValueError(
            f"illegal action {what} for seat {self.to_move} in phase {Phase(self.phase).name}: "
            f"legal actions are {legal}"
        )

    # ----------------------------------------------------------------- transitions
    def apply(self, action: int) -> None:
        """Apply the action of the player on move; ``ValueError`` naming the legal ones if illegal."""
        if type(action) is not int:
            try:
                action = int(operator.index(action))  # numpy integers of any dtype -> int (bit shifts on masks)
            except TypeError:
                raise self.illegal(action) from None
        if self._plain or self.phase == PLAY:  # trick play (R5); _plain: the hot path, inlined
            t = self._cards
            if t is not None:  # the one-suit cards legal_actions listed: a tuple test beats mask arithmetic
                if action not in t:
                    raise self.illegal(action)
                bit = _BIT[action]
                self._cards = None  # (_mask is None: at most one of the two caches is set)
            else:
                m = self._mask
                if m is None:
                    m = self.legal_card_mask()
                bit = _CARD_BIT.get(action, 0)  # a prebuilt int (no new one per card); 0 if not a card id
                if not m & bit:
                    raise self.illegal(action)
                self._mask = None
            p = self.to_move
            self.hands[p] -= bit  # (the interpreter specialises int + and -; the card is in the hand,
            self.played_by[p] += bit  # not yet played: the same as ^= and |=)
            self.history.append(_MOVE[p][action])
            trick = self.trick
            suit = _SUIT[action]
            if self._plain:  # following is R5.1 only: no trumps, no forced K♥
                if trick:
                    led = self.led
                    if suit == led:  # the best card is the highest of the led suit (R5.2; R11.5: of two
                        if action >= self.best:  # identical cards the later one)
                            self.best = action
                            self.winner = p
                    else:  # a discard shows a void in the led suit (R5.1)
                        self.excluded[p] |= SUIT_MASK[led]
                        if suit == HEARTS:
                            self.hearts_broken = True
                else:  # lead; with no trumps only R4.1 tells something
                    self.leader = self.winner = p
                    self.led = suit
                    self.best = action
                    if suit == HEARTS and self.lead_hearts_rule and not (self.hearts_broken and self._until_broken):
                        self.excluded[p] |= _NON_HEARTS
            elif not trick:  # trumps (R5.4, R5.5) or R4.4 forced K♥; a lead: what the lead rules reveal (R4.1, R5.4)
                self.leader = self.winner = p
                self.led = suit
                self.best = action
                if suit == HEARTS and self.lead_hearts_rule and not (self.hearts_broken and self._until_broken):
                    self.excluded[p] |= _NON_HEARTS
                trump = self.trump
                if trump >= 0:
                    if suit == trump:
                        self.top_trump = action
                    elif self._trump_must:
                        self.excluded[p] |= SUIT_MASK[trump]
            else:  # a follow: what it proves (R5.1, R5.5, R4.4) and the best card so far (R5.2)
                led = self.led
                trump = self.trump
                if suit != led or self.force_king or (suit == trump and self.top_trump > action):
                    self._infer_follow(p, action, suit)
                best = self.best
                if (suit == _SUIT[best] and action >= best) or (suit == trump and _SUIT[best] != trump):
                    self.best = action
                    self.winner = p
                if suit == trump and action > self.top_trump:
                    self.top_trump = action
                if suit == HEARTS and led != HEARTS:
                    self.hearts_broken = True
            trick.append(action)
            q = self._next_seat[p]
            if q != self.leader:
                self.to_move = q
            else:  # play came back round to the leader: the trick is complete
                self._end_trick(trick)
            return
        phase = self.phase
        if phase == FANTAN_PLAY:
            m = self._mask
            if m is None:
                m = self.legal_card_mask()
            bit = _CARD_BIT.get(action, 0)
            if m & bit:
                self._fantan_card(action, bit)
            elif action == PASS:
                if m and self._forced_pass:
                    raise self.illegal(action)
                self._fantan_pass()
            else:
                raise self.illegal(action)
        elif phase == DOUBLE:
            t = self._legal_doubles
            if t is None:
                t = self._legal_doubles = self._double_ids()
            if action not in t:
                raise self.illegal(action)
            p = self.to_move  # the doubling step, inlined (one call less per decision)
            self.history.append(_MOVE[p][action])
            n = self.n
            self.doubles[p] = _DOUBLE_TARGETS[n][p][action - DOUBLE_BASE]
            q = self.double_step = self.double_step + 1
            self._mask = None
            if q < n - 1:  # the next defender: their legal doubles do not change during the phase
                p = self.to_move = (self.declarer + 1 + q) % n  # doubling_order(declarer)[step]
                row = self._double_row
                self._legal_doubles = row[p] if row is not None else None
            else:
                self._legal_doubles = None
                if q == n - 1:
                    self.to_move = self.declarer  # doubling_order(declarer)[n - 1]
                else:
                    self._end_doubling()
        elif phase == DECLARE:
            if action not in self._legal_declarations():
                raise self.illegal(action)
            self.history.append((self.to_move, action))
            self.declare(action)
        else:
            raise self.illegal(action)

    def declare(self, contract: str | int | Contract) -> None:
        """Fix the contract (R3): ``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``, a declare id, or a
        :class:`Contract` row played without parameter (the R2.4 tie-break deal)."""
        if self.phase != DECLARE:
            raise ValueError("the contract is already declared")
        if type(contract) is int and contract == anti_salad_id(self.n):  # R10.3, after the n-seat doubling ids
            contract = ANTI_SALAD_NAME
        parsed = _PARSED.get(contract) if type(contract) is str else None  # parse_contract's cache hit, inlined
        if parsed is not None:
            name, trump, rank = parsed
        elif isinstance(contract, Contract):
            name, trump, rank = contract.name, -1, -1
            self.table = {name: contract}
        else:
            name, trump, rank = parse_contract(contract)
        c = self.table.get(name)
        if c is None:
            raise ValueError(f"contract {name!r} is not played under these rules: valid are {list(self.table)}")
        if rank >= 0 and not self.deck & RANK_MASK[rank]:
            raise ValueError(f"Fantan rank {'23456789TJQKA'[rank]} is not in the {self.rules.deck_size}-card deck")
        rules = self._rules
        self.contract, self.trump, self.fantan_rank = c, trump, rank
        nt = self.num_tricks
        e = _CONTRACT_CONSTS.get((id(c), nt))  # _contract_consts, its cache hit inlined
        if e is None or e[0] is not c:
            e = _contract_consts(c, nt)
        _, self.card_vals, self.pos_vals, self._trick_base, self._score_mask = e
        self.force_king = rules.king_discard == "forced" and name == "no_king"
        self.lead_hearts_rule = c.hearts_lead and rules.hearts_lead != "free"
        self._plain_follow = trump < 0 and not self.force_king
        self._end = c.end_when_captured
        self._mask = self._legal_doubles = None
        if rules.doubling == "off":
            self._start_play()
        else:
            self.phase = DOUBLE
            self.double_step = 0
            self.to_move = (self.declarer + 1) % self.n  # doubling_order(declarer)[0]

    def _end_doubling(self) -> None:
        """All four have doubled (R6.1): play starts, or the R6.6 split ends an undoubled negative deal."""
        c = self._declared()
        if self._rules.undoubled_negative == "split" and not c.positive and not any(self.doubles):
            self.split = True  # R6.6: the deal is not played
            self.contract_scores = split_scores(c.total(self.rules), self.declarer, self.n)
            self.settlement = [0] * self.n
            self.scores = list(self.contract_scores)
            self.phase = OVER
            return
        self._start_play()

    def _start_play(self) -> None:
        self.to_move = self.leader = self.declarer  # R2.3: the declarer leads / plays first
        self._mask = None
        if self._declared().play == FANTAN:
            self.phase = FANTAN_PLAY
            r = self.fantan_rank
            self.playable = RANK_MASK[r] & self.deck
            for s in range(4):
                if not self.deck >> (13 * s + r) & 1 and self.deck & SUIT_MASK[s]:
                    # R11.4 Decision: a start card taken out of the pack (2♣ / 2♦ with 3 or 5 players)
                    # counts as already on the table, so its suit opens from the next card
                    self.fantan_lo[s] = self.fantan_hi[s] = r
                    c = 13 * s + r
                    if r > 0:
                        self.playable |= (1 << (c - 1)) & self.deck
                    if r < ACE:
                        self.playable |= (1 << (c + 1)) & self.deck
        else:
            self.phase = PLAY
            self._plain = self._plain_follow

    def _end_trick(self, trick: list[int]) -> None:
        """The trick is complete: score it, start the next one or finish the deal (R5.2, R5.3)."""
        w = self.winner
        # the trick's cards (distinct bits: the sum is their union); four unpacked beat sum() calls
        if self.n == 4:
            a, b, c, d = trick
            tm = _BIT[a] + _BIT[b] + _BIT[c] + _BIT[d]
        else:
            tm = sum(map(_BIT.__getitem__, trick))
        k = self.trick_no
        pts = self._trick_base[k]
        sm = self._score_mask
        if sm and tm & sm:  # only tricks holding a scoring card need the per-card sum
            vals = self.card_vals
            for c in trick:
                pts += vals[c]
        if pts:
            self.points[w] += pts
        self.captured[w] += tm  # (no card is captured twice: the same as |=)
        self.tricks_won[w] += 1
        k += 1
        self.trick_no = k
        self.last_trick = (self.leader, trick, w)
        self.trick = []
        self.led = self.best = self.winner = self.top_trump = -1
        self.leader = self.to_move = w
        end = self._end
        # R4.2 / R4.3 early ends: only a trick holding one of the cards can complete them; after this trick
        # every played card has been captured
        if k == self.num_tricks or (end and tm & end and sum(self.played_by) & end == end):
            self._finish()

    def _infer_follow(self, p: int, c: int, suit: int) -> None:
        """Record what a follower's card proves they do not hold (R5.1, R5.5, R4.4)."""
        led, trump, top = self.led, self.trump, self.top_trump
        ex = 0
        if suit != led:
            ex = SUIT_MASK[led]
            if trump >= 0 and suit != trump:
                ex |= SUIT_MASK[trump] if top < 0 else above(top)
            if self.force_king and c != KING_OF_HEARTS:
                ex |= _KH
        elif self.force_king and led == HEARTS and ACE_OF_HEARTS in self.trick and c != KING_OF_HEARTS:
            ex = _KH
        if suit == trump and top >= 0 and c < top and self._overtrump:
            ex |= above(top)
        if ex:
            self.excluded[p] |= ex

    def _fantan_card(self, c: int, bit: int) -> None:
        """Seat on move plays the legal card ``c`` (bit ``bit``) in Fantan (R7.2, R7.4, R7.5)."""
        p = self.to_move
        hands = self.hands
        hands[p] -= bit  # (see apply)
        self.played_by[p] += bit
        self.history.append(_MOVE[p][c])
        self._mask = None
        s = _SUIT[c]
        r = _RANK[c]
        pl = self.playable ^ bit  # a legal card is playable: XOR clears it
        lo = self.fantan_lo
        if lo[s] < 0:  # R7.2: the starting card opens its suit both ways
            lo[s] = self.fantan_hi[s] = r
            down = _BELOW[c]
            if down & self.deck:
                pl |= down
            if r < ACE:
                pl |= bit << 1
        elif r < lo[s]:
            lo[s] = r
            down = _BELOW[c]
            if down & self.deck:
                pl |= down
        else:
            self.fantan_hi[s] = r
            if r < ACE:
                pl |= bit << 1
        self.playable = pl
        self._fantan_next(p, r)

    def _fantan_next(self, p: int, r: int) -> None:
        """After seat ``p`` played a Fantan card of rank ``r``: ``p`` goes out when its hand is empty and the deal
        ends when all but one are out (R7.4), an ace lets ``p`` play again under ``ace_again`` (R7.5), else the
        next seat still holding cards is on move."""
        hands = self.hands
        if not hands[p]:
            finished = self.finished
            finished.append(p)
            n = self.n
            if len(finished) == n - 1:  # R7.4: all but one out; the last one is last
                # the seat not out: 0 + 1 + ... + (n - 1) minus the others (a generator would make a cell per call)
                finished.append(n * (n - 1) // 2 - sum(finished))
                self._finish()
                return
        elif r == ACE and self._ace_again:
            return  # R7.5: the same player goes again
        # the next seat still holding cards plays
        q = self._next_seat[p]
        while not hands[q]:  # R7.4: players out are skipped
            q = self._next_seat[q]
        self.to_move = q

    def _fantan_pass(self) -> None:
        p = self.to_move
        self.history.append(_MOVE[p][PASS])
        self.passes[p] += 1
        if self._forced_pass:  # R7.3: a pass proves no playable card
            self.excluded[p] |= self.playable
        self._mask = None
        nxt = self._next_seat
        hands = self.hands
        q = nxt[p]
        while not hands[q]:  # R7.4: players out are skipped
            q = nxt[q]
        self.to_move = q

    def _finish(self) -> None:
        c = self._declared()
        if c.play == FANTAN:
            scores = [0] * self.n
            for place, seat in enumerate(self.finished):
                scores[seat] = c.fantan_points[place]
        else:
            scores = list(self.points)
            if c.ravage:
                for s, v in enumerate(ravage_scores(self.captured, c.ravage)):
                    scores[s] += v
        self.contract_scores = scores
        self.settlement = st = settlement(scores, self.doubles)
        self.scores = list(map(operator.add, scores, st))  # element-wise sum, in C
        self.phase = OVER
        self._mask = self._cards = None
        self._plain = False

    def renege(self, seat: int) -> None:
        """R8.2 penalty: ``seat`` loses the absolute contract total, no one else scores, doubles are
        not settled and the deal ends (the contract counts as played). In Barbu King, where points are
        bad (R11), "losing" means scoring ``+|total|``."""
        if self.contract is None or self.phase == OVER:
            raise ValueError("a renege penalty applies only to a declared deal in play")
        n = self.n
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            raise ValueError(f"bad renege seat {seat!r}: expected a seat 0..{n - 1}")
        penalty = -self.rules.score_sign * abs(self.contract.total(self.rules))
        self.contract_scores = [penalty if s == seat else 0 for s in range(n)]
        self.settlement = [0] * n
        self.scores = list(self.contract_scores)
        self.reneged = seat
        self.phase = OVER
        self._mask = self._cards = None
        self._plain = False

    # ----------------------------------------------------------------- display
    def __repr__(self) -> str:
        return (
            f"Deal(contract={self.contract_text!r}, declarer={self.declarer}, phase={Phase(self.phase).name}, "
            f"to_move={self.current_player}, trick={[format_card(c) for c in self.trick]})"
        )


Deal._state = Deal.__slots__

__all__ = [
    "RANK_MASK", "Deal", "Phase", "contract_name", "contract_text", "deal_hands", "mask_to_list", "parse_contract",
    "seat_index", "validate_hands",
]  # fmt: skip
