"""Constant tables of the batched engine: card masks, the contract table and the rule switches as arrays.

Everything here is built once per :class:`~barbu_env.rules.Rules` from the same data the reference
engine reads (:func:`barbu_env.contracts.contract_table`, :mod:`barbu_env.actions`), so the batched
engine cannot drift from the contract rows. Only deal mode of classic Barbu (R1-R10) is covered:
:func:`check_rules` rejects anything else with a ``ValueError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..actions import DECLARE_BASE, DOUBLE_BASE, DOUBLE_SUBSETS, FANTAN_BASE, PLAIN_CONTRACTS, TRUMPS_BASE
from ..cards import ACE_OF_HEARTS, HEARTS, KING_OF_HEARTS, NUM_CARDS, SUIT_MASK, above, cards_of, deck_mask
from ..contracts import CONTRACT_NAMES, FANTAN, contract_table
from ..engine.doubling import REL_TO_ABS
from ..observation import RULES, rules_bits
from ..rules import Rules

U64 = np.uint64
ONE = np.uint64(1)
#: Decisions by phase, as in ``engine.deal.Phase``.
DECLARE, DOUBLE, PLAY, FANTAN_PLAY, OVER = range(5)
NUM_DECL = DOUBLE_BASE - DECLARE_BASE  # 26 declaration actions (53..78)
PASS_BIT = 52
#: The action that leaves a game as it is in a step (``VectorDeals.step(actions, games)``).
HOLD = -2

#: ``SUIT[s]`` for s in 0..3; ``SUIT[-1]`` (no suit) is 0.
SUIT = np.array([*SUIT_MASK, 0], U64)
#: ``ABOVE[c]``: the cards of c's suit ranked above c; ``ABOVE[-1]`` is 0.
ABOVE = np.array([above(c) for c in range(NUM_CARDS)] + [0], U64)
HEARTS_M = U64(SUIT_MASK[HEARTS])
NON_HEARTS = U64(((1 << NUM_CARDS) - 1) & ~SUIT_MASK[HEARTS])
KH = U64(1 << KING_OF_HEARTS)
AH = U64(1 << ACE_OF_HEARTS)
KH_ID, HEARTS_ID = KING_OF_HEARTS, HEARTS
TWOS = sum(1 << (13 * s) for s in range(4))
ACES = sum(1 << (13 * s + 12) for s in range(4))
#: ``RANK_CARDS[r]``: the four cards of rank r (Fantan's starting cards, R7.2).
RANK_CARDS = np.array([sum(1 << (13 * s + r) for s in range(4)) for r in range(13)], U64)
#: ``REL_TO_ABS_ARR[seat, i]``: absolute-seat mask of doubling subset ``DOUBLE_SUBSETS[i]`` (R6.1).
REL_TO_ABS_ARR = np.array([[REL_TO_ABS[s][m] for m in DOUBLE_SUBSETS] for s in range(4)], np.int64)
DOUBLE_SUBSETS_ARR = np.array(DOUBLE_SUBSETS, np.int64)

#: Rule options the batched engine implements, with the values it supports (all of them, for deal mode).
SUPPORTED: dict[str, tuple] = {
    "hearts_lead": ("only_hearts_left", "until_broken", "free"),
    "king_discard": ("free", "forced"),
    "trump_lead": ("must_if_able", "free"),
    "overtrump": ("no", "yes"),
    "doubling": ("classic", "declarer_only", "off"),
    "undoubled_negative": ("play", "split"),
    "fantan_pass": ("forced", "free"),
    "scoring": ("classic", "basic52", "basic32"),
    "ace_plays_again": (False, True),
    "ravage_city": (False, True),
    "salad": (False, True),
    "schedule": ("blocks", "rotate"),  # match options: no effect on a deal, only on the rules block
    "tiebreak": ("none", "first_declarer", "extra_deals"),
    "game": ("barbu",),  # Barbu King (R11) is not batched
    "players": (4,),
    "short": (False,),
    "choose": (False,),
    "positive": ((),),  # R10.3 is not batched
}


def check_rules(rules: Rules) -> None:
    """``ValueError`` unless every option of ``rules`` is one the batched engine supports."""
    for name, f in rules.__dataclass_fields__.items():
        value = getattr(rules, name)
        allowed = SUPPORTED.get(name, (f.default,))  # an option added later: only its default
        if value not in allowed:
            listing = ", ".join(f"{k}={list(v)}" for k, v in SUPPORTED.items())
            raise ValueError(
                f"rule option {name}={value!r} is not supported by the batched engine (deal mode of classic "
                f"Barbu, R1-R10); supported: {listing}"
            )


@dataclass(frozen=True)
class Tables:
    """Per-rules constant arrays; contract index ``k`` is the row of ``contract_table(rules)``."""

    rules: Rules
    names: tuple[str, ...]
    deck: np.uint64
    deck_ids: np.ndarray  # card ids of the deck, ascending
    hand_size: int
    name_idx: np.ndarray  # [K] index in CONTRACT_NAMES (the observation's contract block)
    positive: np.ndarray  # [K] bool
    fantan: np.ndarray  # [K] bool
    hearts_rule: np.ndarray  # [K] bool: the R4.1 lead restriction applies (contract and hearts_lead option)
    force_king: np.ndarray  # [K] bool: R4.4 forced discard of the K♥
    per_trick: np.ndarray  # [K] int
    cp_mask: np.ndarray  # [K, J] uint64 card masks that score per card
    cp_pts: np.ndarray  # [K, J] int points per card of the mask
    pos_vals: np.ndarray  # [K, n] points for winning trick i
    end_mask: np.ndarray  # [K] uint64: the deal ends once these are captured (R4.2, R4.3)
    ravage: np.ndarray  # [K] int (R9.1)
    fantan_pts: np.ndarray  # [K, 4] by finishing order (R7.4)
    total: np.ndarray  # [K] int (R6.6 split)
    decl_k: np.ndarray  # [26] contract index of each declaration action, -1 if not played
    decl_trump: np.ndarray  # [26]
    decl_rank: np.ndarray  # [26]
    rules_word: int  # the observation's rules block (27 bits)
    until_broken: bool
    must_lead_trump: bool
    overtrump: bool
    fantan_free_pass: bool
    ace_again: bool
    doubling_off: bool
    declarer_only: bool
    split: bool


def build_tables(rules: Rules) -> Tables:
    """The constant arrays of ``rules`` (checked with :func:`check_rules`)."""
    check_rules(rules)
    table = contract_table(rules)
    rows = list(table.values())
    n = rules.hand_size
    deck = deck_mask(rules.deck_size)
    j = max(1, max(len(c.card_points) for c in rows))
    cp_mask = np.zeros((len(rows), j), U64)
    cp_pts = np.zeros((len(rows), j), np.int64)
    for k, c in enumerate(rows):
        for i, (m, p) in enumerate(c.card_points):
            cp_mask[k, i] = m & deck
            cp_pts[k, i] = p
    decl_k = np.full(NUM_DECL, -1, np.int64)
    decl_trump = np.full(NUM_DECL, -1, np.int64)
    decl_rank = np.full(NUM_DECL, -1, np.int64)
    names = list(table)
    for i in range(NUM_DECL):
        a = DECLARE_BASE + i
        if a < TRUMPS_BASE:
            name = PLAIN_CONTRACTS[a - DECLARE_BASE]
        elif a < FANTAN_BASE:
            name, decl_trump[i] = "trumps", a - TRUMPS_BASE
        else:
            name, decl_rank[i] = "fantan", a - FANTAN_BASE
            if not deck >> int(decl_rank[i]) & 1:
                continue  # rank not in the 32-card deck (R10.1)
        if name in table:
            decl_k[i] = names.index(name)
    return Tables(
        rules=rules,
        names=tuple(names),
        deck=U64(deck),
        deck_ids=np.array(cards_of(deck), np.int64),
        hand_size=n,
        name_idx=np.array([CONTRACT_NAMES.index(c.name) for c in rows], np.int64),
        positive=np.array([c.positive for c in rows]),
        fantan=np.array([c.play == FANTAN for c in rows]),
        hearts_rule=np.array([c.hearts_lead and rules.hearts_lead != "free" for c in rows]),
        force_king=np.array([rules.king_discard == "forced" and c.name == "no_king" for c in rows]),
        per_trick=np.array([c.per_trick for c in rows], np.int64),
        cp_mask=cp_mask,
        cp_pts=cp_pts,
        pos_vals=np.array([c.position_values(n) for c in rows], np.int64).reshape(len(rows), n),
        end_mask=np.array([c.end_when_captured & deck for c in rows], U64),
        ravage=np.array([c.ravage for c in rows], np.int64),
        fantan_pts=np.array([c.fantan_points or (0, 0, 0, 0) for c in rows], np.int64),
        total=np.array([c.total(rules) for c in rows], np.int64),
        decl_k=decl_k,
        decl_trump=decl_trump,
        decl_rank=decl_rank,
        rules_word=rules_bits(rules) >> RULES,
        until_broken=rules.hearts_lead == "until_broken",
        must_lead_trump=rules.trump_lead == "must_if_able",
        overtrump=rules.overtrump == "yes",
        fantan_free_pass=rules.fantan_pass == "free",
        ace_again=bool(rules.ace_plays_again),
        doubling_off=rules.doubling == "off",
        declarer_only=rules.doubling == "declarer_only",
        split=rules.undoubled_negative == "split",
    )


#: Bit masks used by Fantan's neighbour step (R7.2): ``c - 1`` exists iff c is not a two, ``c + 1`` iff not an ace.
NOT_ACES = U64(((1 << NUM_CARDS) - 1) & ~ACES)
NOT_TWOS = U64(((1 << NUM_CARDS) - 1) & ~TWOS)
