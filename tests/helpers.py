"""Shared test helpers: deals from card strings, scripted play, random play, and an independent
reference of the rules (RULES.md R4.1, R4.4, R5, R7, R4/R9/R10 scoring) to check the engine against.

The reference functions below are written from RULES.md, not from the engine: they use plain sets
and lists and recompute everything from the deal's public history.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from barbu_env.actions import PASS, action_id, action_name
from barbu_env.cards import SUITS, cards_of, deck_mask, parse_card, parse_cards
from barbu_env.engine.deal import Deal, Phase
from barbu_env.engine.match import Match
from barbu_env.rules import Rules

C, D, H, S = range(4)
KH = parse_card("KH")
AH = parse_card("AH")
QUEEN_IDS = {parse_card(q) for q in ("QC", "QD", "QH", "QS")}

#: Every seat holds one whole suit: seat 0 clubs, 1 diamonds, 2 hearts, 3 spades.
SUIT_HANDS = [" ".join(r + s for r in "23456789TJQKA") for s in SUITS]


def hands_of(spec: Mapping[int, str] | Iterable[str], rules: Rules | None = None) -> list[list[int]]:
    """Four hands of card ids from card strings. A mapping may give fewer than all cards of a seat
    (or omit seats): the missing places are filled with the unused cards of the deck in ascending id
    order, seat 0 first — only use that when the filled cards do not matter to the test."""
    rules = rules or Rules()
    if not isinstance(spec, Mapping):
        return [parse_cards(h) for h in spec]
    hands = [parse_cards(spec.get(s, "")) for s in range(4)]
    used = {c for h in hands for c in h}
    if len(used) != sum(len(h) for h in hands):
        raise ValueError("a card is given twice")
    rest = [c for c in cards_of(deck_mask(rules.deck_size)) if c not in used]
    for h in hands:
        while len(h) < rules.hand_size:
            h.append(rest.pop(0))
    return hands


def make_deal(spec, declarer: int = 0, contract: str | None = None, rules: Rules | None = None,
              doubles: str | Iterable[str] | None = None, **kwargs) -> Deal:  # fmt: skip
    """A Deal from card strings (see :func:`hands_of`); with ``contract`` and ``doubles`` (the four
    doubling actions, default all ``double:none``) it is returned ready for play."""
    rules = rules or Rules()
    d = Deal.from_hands(hands_of(spec, rules), declarer, contract, rules, **kwargs)
    if contract is not None and rules.doubling != "off" and d.phase == 1:
        acts = ["double:none"] * 4 if doubles is None else (doubles.split() if isinstance(doubles, str) else doubles)
        for a in acts:
            d.apply(action_id(a))
    return d


def play(deal: Deal, moves: str | Iterable[str]) -> None:
    """Apply actions written as text (``"AS KH 2C pass"``), each by the player on move."""
    for m in moves.split() if isinstance(moves, str) else moves:
        deal.apply(action_id(m))


def legal_names(deal: Deal) -> set[str]:
    """The legal actions of the player on move, as names."""
    return {action_name(a) for a in deal.legal_actions()}


def cards(text: str) -> set[str]:
    """A set of card names, normalised (``"10D"`` -> ``"TD"``)."""
    return {action_name(c) for c in parse_cards(text)}


def random_playout(deal: Deal, rng: np.random.Generator, check=None, max_steps: int = 10_000) -> int:
    """Play uniformly random legal actions to the end; ``check(deal)`` runs before every action.
    Returns the number of actions taken."""
    n = 0
    while not deal.is_over:
        if check is not None:
            check(deal)
        legal = deal.legal_actions()
        deal.apply(legal[int(rng.integers(len(legal)))])
        n += 1
        if n > max_steps:
            raise AssertionError(f"deal did not end within {max_steps} actions: {deal!r}")
    return n


def random_env_play(e, rng: np.random.Generator, max_steps: int | None = None, check=None) -> None:
    """Step the AEC env ``e`` with random legal actions from the mask (None for dead agents) until no agent is
    left, or for at most ``max_steps`` steps; ``check(e)`` runs before every step."""
    for _agent in e.agent_iter(max_steps if max_steps is not None else 2**63):
        if check is not None:
            check(e)
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"])
            e.step(int(legal[rng.integers(len(legal))]))


def agents_env_play(e, spec: str) -> dict[str, float]:
    """Step the reset AEC env ``e`` to the end with ``agents.make(spec, seed=i)`` playing seat i (the env raises on
    an illegal action); returns each agent's rewards summed."""
    from barbu_env import agents

    players = {a: agents.make(spec, seed=i) for i, a in enumerate(e.possible_agents)}
    total = dict.fromkeys(e.possible_agents, 0.0)
    for ag in e.agent_iter():
        _, r, term, trunc, _ = e.last()
        total[ag] += r
        e.step(None if term or trunc else players[ag].act(e, ag))
    return total


# --------------------------------------------------------------------------- reference rules
def tricks_of(deal: Deal) -> list[list[tuple[int, int]]]:
    """The tricks of a trick-play deal from its history: lists of (seat, card) in play order."""
    out: list[list[tuple[int, int]]] = [[]]
    for seat, a in deal.history:
        if 0 <= a < 52:
            if len(out[-1]) == deal.n:
                out.append([])
            out[-1].append((seat, a))
    return out if out[0] else []


def trick_winner(trick: list[tuple[int, int]], trump: int) -> int:
    """R5.2: highest trump, else highest card of the led suit."""
    led = trick[0][1] // 13
    trumps = [(c, s) for s, c in trick if trump >= 0 and c // 13 == trump]
    pool = trumps or [(c, s) for s, c in trick if c // 13 == led]
    return max(pool)[1]


def hearts_broken_before(tricks: list[list[tuple[int, int]]], n: int = 4) -> bool:
    """R4.1 until_broken: a heart was discarded (played on a non-heart lead) in a complete trick."""
    for t in tricks:
        if len(t) == n and t[0][1] // 13 != H and any(c // 13 == H for _, c in t):
            return True
    return False


def ref_legal_cards(deal: Deal) -> set[int]:
    """Legal cards of the player on move in trick play, from RULES.md R4.1, R4.4, R5.1, R5.4, R5.5."""
    rules = deal.rules
    hand = set(cards_of(deal.hands[deal.current_player]))
    name = deal.contract.name
    trump = deal.trump
    tricks = tricks_of(deal)
    current = tricks[-1] if tricks and len(tricks[-1]) < deal.n else []
    suit = lambda cs, s: {c for c in cs if c // 13 == s}  # noqa: E731
    if not current:  # leading
        cand = set(hand)
        if name in ("no_hearts", "no_king", "salad", "anti_salad") and rules.hearts_lead != "free":
            may_lead_heart = not (hand - suit(hand, H)) or (
                rules.hearts_lead == "until_broken" and hearts_broken_before(tricks, deal.n)
            )
            if not may_lead_heart:
                cand -= suit(hand, H)
        if trump >= 0 and rules.trump_lead == "must_if_able" and suit(cand, trump):
            cand = suit(cand, trump)
        return cand
    led = current[0][1] // 13
    in_trick = [c for _, c in current]
    trick_trumps = [c for c in in_trick if trump >= 0 and c // 13 == trump]
    forced_king = rules.king_discard == "forced" and name == "no_king"
    follow = suit(hand, led)
    if follow:
        if led == trump and rules.overtrump == "yes":
            higher = {c for c in follow if c > max(trick_trumps)}
            if higher:
                return higher
        if forced_king and led == H and KH in hand and AH in in_trick:
            return {KH}
        return follow
    if trump >= 0 and suit(hand, trump):
        mine = suit(hand, trump)
        if not trick_trumps:
            return mine
        higher = {c for c in mine if c > max(trick_trumps)}
        if not higher:
            return hand  # R5.5: every trump held is below a trump in the trick
        return higher if rules.overtrump == "yes" else mine
    if forced_king and KH in hand:
        return {KH}
    return hand


def ref_fantan_playable(deal: Deal) -> set[int]:
    """R7.2: the starting-rank cards of unopened suits, and the cards next to each suit's run; a starting
    card taken out of the pack counts as on the table (R12.5)."""
    deck = set(cards_of(deal.rules.deck))
    on_table = set(cards_of(deal.played))
    for s in range(4):
        start = 13 * s + deal.fantan_rank
        if start not in deck and any(c // 13 == s for c in deck):
            on_table.add(start)
    out = set()
    for s in range(4):
        ranks = sorted(c % 13 for c in on_table if c // 13 == s)
        if not ranks:
            out.add(13 * s + deal.fantan_rank)
        else:
            for r in (ranks[0] - 1, ranks[-1] + 1):
                if 0 <= r < 13:
                    out.add(13 * s + r)
    return out & deck


def ref_legal_actions(deal: Deal) -> set[int]:
    """Legal actions in trick play or Fantan according to the reference above."""
    hand = set(cards_of(deal.hands[deal.current_player]))
    if deal.contract.play == "fantan":
        mine = hand & ref_fantan_playable(deal)
        if not mine or deal.rules.fantan_pass == "free":
            return mine | {PASS}
        return mine
    return ref_legal_cards(deal)


#: R4 / R10.1 tables: tricks, heart, ace of hearts (total for it), queen, K♥, 12th, 13th, fantan, trumps.
TABLES = {
    "classic": dict(trick=-2, heart=-2, ace_h=-6, queen=-6, king=-20, pen=-10, last=-20, fantan=(45, 20, 5, -5),
                    trump=5),
    "basic52": dict(trick=-1, heart=-1, ace_h=-1, queen=-3, king=-12, pen=-4, last=-8, fantan=(25, 15, 5, 0), trump=3),
    "basic32": dict(trick=-1, heart=-1, ace_h=-1, queen=-2, king=-8, pen=-3, last=-5, fantan=(20, 10, 0, 0), trump=2),
}  # fmt: skip


def table_of(rules: Rules) -> dict:
    """The reference scoring table, with R9.2's changes under Ravage City."""
    t = dict(TABLES[rules.scoring])
    if rules.ravage_city and rules.scoring == "classic":
        t.update(king=-16, fantan=(55, 30, 10, -10))
    return t


def ref_contract_scores(deal: Deal) -> list[int]:
    """Contract scores of a finished deal recomputed from its history (R4, R7.4, R9.1, R10); a contract of
    option ``positive`` scores the negated points, ``anti_salad`` as the negative salad (R10.3)."""
    name = deal.contract.name
    sign = -1 if name in deal.rules.positive else 1
    return [sign * x for x in _ref_scores(deal, "salad" if name == "anti_salad" else name)]


def _ref_scores(deal: Deal, name: str) -> list[int]:
    t = table_of(deal.rules)
    if name == "fantan":
        n = deal.n
        order = []
        left = [deal.rules.hand_size] * n
        for seat, a in deal.history:
            if 0 <= a < 52:
                left[seat] -= 1
                if left[seat] == 0:
                    order.append(seat)
        order += [s for s in range(n) if s not in order]
        out = [0] * n
        for place, seat in enumerate(order):
            out[seat] = t["fantan"][min(place, 3)]  # R12.4: later places score the fourth place's value
        return out
    tricks = tricks_of(deal)
    n = deal.rules.hand_size
    out = [0] * deal.n
    taken: list[list[int]] = [[] for _ in range(deal.n)]
    for i, tr in enumerate(tricks):
        w = trick_winner(tr, deal.trump)
        cs = [c for _, c in tr]
        taken[w] += cs
        hearts = sum(1 for c in cs if c // 13 == H)
        queens = sum(1 for c in cs if c in QUEEN_IDS)
        king = KH in cs
        ace_extra = (t["ace_h"] - t["heart"]) if AH in cs else 0
        if name in ("no_tricks", "salad"):
            out[w] += t["trick"]
        if name in ("no_hearts", "salad"):
            out[w] += hearts * t["heart"] + ace_extra
        if name in ("no_queens", "salad"):
            out[w] += queens * t["queen"]
        if name in ("no_king", "salad") and king:
            out[w] += t["king"]
        if name == "no_last_two" and i == n - 2:
            out[w] += t["pen"]
        if name == "no_last_two" and i == n - 1:
            out[w] += t["last"]
        if name in ("trumps", "extra_deal"):
            out[w] += t["trump"] if name == "trumps" else 5
    if name == "ravage_city":
        counts = [max((sum(1 for c in tk if c // 13 == s) for s in range(4)), default=0) for tk in taken]
        losers = [s for s in range(4) if counts[s] == max(counts)]
        for s in losers:
            out[s] += -24 // len(losers)
    return out


def expected_total(name: str, rules: Rules) -> int:
    """The contract total of R4 / R9 / R10 tables (E5), written out per preset; R10.3 negates those of
    ``positive``, and ``anti_salad`` totals as the negative salad."""
    if name in rules.positive:
        return -expected_total(name, rules.replace(positive=()))
    if name == "anti_salad":
        name = "salad"
    t = table_of(rules)
    n = rules.hand_size
    hearts = sum(1 for c in cards_of(rules.deck) if c // 13 == H)  # hearts in the deck (A♥ always is)
    return {
        "no_tricks": t["trick"] * n,
        "no_hearts": t["heart"] * (hearts - 1) + t["ace_h"],
        "no_queens": 4 * t["queen"],
        "no_king": t["king"],
        "no_last_two": t["pen"] + t["last"],
        "ravage_city": -24,
        "salad": t["trick"] * n + t["heart"] * (hearts - 1) + t["ace_h"] + 4 * t["queen"] + t["king"],
        "trumps": t["trump"] * n,
        "fantan": sum(t["fantan"][min(place, 3)] for place in range(rules.players)),  # R12.4
    }[name]


def env_presets() -> list[str]:
    """The presets the env plays: every preset of ``rules.PRESETS``."""
    from barbu_env.rules import PRESETS

    return sorted(PRESETS)


#: The classic contracts, one parameter each for trumps and Fantan (mid-deal states for the rollout tests).
MID_CONTRACTS = ["no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps:H", "fantan:8"]


def mid_deals(rules: Rules, n: int, seed: int, contracts: list[str] | None = None) -> list[Deal]:
    """``n`` card-play states: deals of every contract (``contracts``, default :data:`MID_CONTRACTS` and the
    rules' optional ones) played some random / heuristic moves in."""
    from barbu_env.agents.heuristic import heuristic_action
    from barbu_env.engine.deal import FANTAN_PLAY, OVER, PLAY

    rng = np.random.default_rng(seed)
    if contracts is None:
        contracts = MID_CONTRACTS + [c for c in ("ravage_city", "salad") if getattr(rules, c)]
    out: list[Deal] = []
    while len(out) < n:
        d = Deal.random(rng, int(rng.integers(4)), contracts[len(out) % len(contracts)], rules)
        while d.phase not in (PLAY, FANTAN_PLAY):
            d.apply(heuristic_action(d, d.to_move))
        for _ in range(int(rng.integers(0, 40))):
            if d.phase == OVER:
                break
            legal = d.legal_actions()
            d.apply(heuristic_action(d, d.to_move) if rng.random() < 0.5 else legal[int(rng.integers(len(legal)))])
        if d.phase != OVER:
            out.append(d)
    return out


def finish_with_tie(rules: Rules, first: int = 0) -> Match:
    """A match played to its last deal, whose totals are then set so that the last deal (a renege by
    seat 3: -|total| for seat 3, 0 for the rest) leaves seats 0 and 1 tied on top."""
    m = Match(rules, np.random.default_rng(0), first_declarer=first)
    rng = np.random.default_rng(1)
    while m.deal_no < m.num_deals - 1:
        legal = m.legal_actions()
        m.apply(legal[int(rng.integers(len(legal)))])
    while m.deal.phase != Phase.PLAY and m.deal.phase != Phase.FANTAN:
        m.apply(m.legal_actions()[-1])
    m.totals = [10, 10, 5, 0]
    m.deal.renege(3)
    m.end_deal()
    return m
