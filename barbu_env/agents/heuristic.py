"""A rule-based Barbu player for every decision: contract, doubling, trick play and Fantan.

Every rule reads only the seat's own hand and public facts (cards played, the current trick, the
cards each seat has shown it cannot hold, ``Deal.excluded``), so the same functions run on an
information-state view (:attr:`InfoState.view`) and, fast, on full ``Deal`` clones inside PIMC
rollouts, where they never look at another seat's cards. The rules, one line each:

Contract choice (R3)
  - estimate the declarer's score in each contract still available from the hand (exposed high
    cards ≈ tricks taken, penalty cards held and their escorts, trump length and top cards, Fantan
    rank distance) and declare the one whose estimate is furthest above that contract's table mean.
  - Trumps: name the longest/strongest suit; Fantan: the rank that leaves the least distance to
    travel from the start card to the hand's cards.
Doubling (R6)
  - double a player when the hand's estimate for the declared contract beats the table mean by a
    margin (the declarer is assumed to hold a good hand for the contract it chose); the declarer
    redoubles when its own estimate is well above the mean; when the R6.4 obligation is due the mask
    forces the declarer into the choice, and the legal choice closest to the wish is taken.
Negative trick contracts (No tricks, No hearts, No queens, No King, No last two, Salad, Ravage)
  - each legal card is scored by P(win the trick) × (points the trick would cost) minus the value of
    getting rid of it (penalty card held, high card exposed to future tricks);
  - following suit: duck with the highest card that still loses the trick;
  - forced to win: win with the highest card, never with a penalty card of one's own if avoidable;
  - void: dump penalty cards first (queens, K♥, A♥ and high hearts), then the most exposed high card,
    preferring to empty short suits;
  - leading: lead low in suits where the others still hold higher cards; avoid suits the others are
    known void in (they would dump penalty cards on the trick);
  - card counting: every estimate uses the unseen cards (not held, not played) and the known voids;
  - No last two: early tricks are free, so shed high cards then and duck in the last two tricks.
Trumps (R5.4, R5.5)
  - lead the master trump to draw trumps, otherwise lead the lowest trump; with no trumps lead
    masters (highest unseen card of a suit), otherwise a low card;
  - second/third hand: win only with a card no later player can beat (master and no possible ruff);
    otherwise play low; last hand: win with the cheapest winning card;
  - ruff with the lowest trump that wins; when the trick cannot be won, discard the lowest side card.
Fantan (R7)
  - play the card that opens the most of one's own cards and the fewest unseen cards (cards held by
    others) on the far side; hold cards that block the opponents' runs; with ``fantan_pass=free``,
    pass instead of opening a run that only helps the others (unless the last three actions were
    passes, so that heuristic players never stall the deal).
Barbu King (R11)
  - the same rules, with the objective following the sign: King's points are bad, so every point
    value is negated (``rules.score_sign``) before the rules above read it; Take tricks plays as a
    positive contract (win tricks), Domino as Fantan (going out first is best in both games); seat
    loops run over ``rules.players`` seats.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from ..actions import (
    DECLARE_BASE,
    DOUBLE_BASE,
    FANTAN_BASE,
    PASS,
    PLAIN_CONTRACTS,
    TRUMPS_BASE,
)
from ..cards import FULL_DECK, SUIT_MASK
from ..contracts import ANTI_SALAD, FANTAN, Contract
from ..engine import InfoState
from ..engine.deal import RANK_MASK, Deal, Phase, mask_to_list
from ..engine.doubling import double_targets
from .base import Agent

if TYPE_CHECKING:
    import numpy as np

    from ..vector import VectorDeals

_DECLARE, _DOUBLE, _PLAY, _FANTAN, _OVER = (int(p) for p in Phase)
_RANK = tuple(c % 13 for c in range(52))
_SUIT = tuple(c // 13 for c in range(52))
_LOWER = tuple(SUIT_MASK[c // 13] & ((1 << c) - 1) for c in range(52))
_HIGHER = tuple(SUIT_MASK[c // 13] & ~((2 << c) - 1) for c in range(52))
_ZERO52 = (0,) * 52


def _low(m: int) -> int:
    """Lowest card id of a non-empty mask."""
    return (m & -m).bit_length() - 1


def _high(m: int) -> int:
    """Highest card id of a non-empty mask."""
    return m.bit_length() - 1


# ================================================================================= card play
def choose_card(d: Deal, seat: int) -> int:
    """The heuristic's card (or pass) for ``seat`` on move in trick play or Fantan."""
    m = d.legal_card_mask()
    if d.phase == _FANTAN:
        return _fantan_card(d, seat, m)
    if m & (m - 1) == 0:
        return _low(m)
    contract = d.contract
    if contract is None:
        raise ValueError("choose_card: no contract is declared yet (play follows the declaration and doubling, R2.3)")
    if contract.positive:
        return _positive_card(d, seat, m)
    return _negative_card(d, seat, m, contract)


@cache
def _negated(values: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-v for v in values)


def _negative_card(d: Deal, seat: int, m: int, contract: Contract) -> int:
    hand = d.hands[seat]
    unseen = d.unseen(seat) & FULL_DECK  # (two packs, R11.5: a copy of a held card may be unseen)
    vals = d.card_vals or _ZERO52
    tno = d.trick_no
    remaining = d.num_tricks - tno
    ravage = contract.ravage / d.num_tricks if contract.ravage else 0.0
    pos = d.pos_vals
    per_trick = contract.per_trick
    if d.rules.score_sign < 0:  # R11: King's points are bad: the objective is their negation
        pos, per_trick = _negated(pos), -per_trick
        if vals is not _ZERO52:
            vals = _negated(vals)
    # cost of taking a trick (positive numbers = points lost), now and on average later
    base_now = -(per_trick + pos[tno] + ravage)
    future_pos = -sum(pos[tno + 1 :]) - (per_trick + ravage) * (remaining - 1)
    pen_left = 0
    if vals is not _ZERO52:
        for c in mask_to_list(unseen | hand):
            pen_left -= vals[c]
    avg_cost = (future_pos + pen_left) / remaining if remaining else 0.0
    excluded = d.excluded
    trick = d.trick
    n_in = len(trick)
    n = d.n
    after = [(seat + k) % n for k in range(1, n - n_in)]
    if n_in:
        led = d.led
        best = d.best
        trick_cost = base_now - sum(vals[c] for c in trick)
        add = _expected_dumps(unseen, excluded, after, led, vals)
        can_hold_later = 0
        for p in after:
            can_hold_later |= unseen & ~excluded[p]
    best_c, best_score = -1, 1e18
    hand_counts = [(hand & SUIT_MASK[s]).bit_count() for s in range(4)]
    for c in mask_to_list(m):
        s = _SUIT[c]
        pen = -vals[c]
        su = unseen & SUIT_MASK[s]
        if not n_in:  # leading
            h = (su & _HIGHER[c]).bit_count()
            lo = (su & _LOWER[c]).bit_count()
            p_win = 1.0 if h == 0 else (lo / (lo + h)) ** 1.5
            cost_win = base_now + pen + _expected_dumps(unseen, excluded, after, s, vals)
        elif s == led:
            if c < best:
                p_win = 0.0
            elif not after:
                p_win = 1.0
            else:
                h = (can_hold_later & SUIT_MASK[s] & _HIGHER[c]).bit_count()
                lo = (can_hold_later & SUIT_MASK[s] & _LOWER[c]).bit_count()
                p_win = 1.0 if h == 0 else (lo + 1) / (lo + h + 1)
            cost_win = trick_cost + pen + add
        else:
            p_win = 0.0  # a discard cannot win a trick without trumps
            cost_win = 0.0
        # value of getting rid of c: own penalty card, exposure of a high card to later tricks
        hi_unseen = (su & _HIGHER[c]).bit_count()
        lo_unseen = (su & _LOWER[c]).bit_count()
        exposure = lo_unseen / (lo_unseen + hi_unseen) if lo_unseen + hi_unseen else 1.0  # (R11.5: su may be c's twin)
        lower_pen: float = 0
        if vals is not _ZERO52 and lo_unseen:
            for x in mask_to_list(su & _LOWER[c]):
                lower_pen -= vals[x]
            lower_pen = min(lower_pen, 3 * lower_pen / lo_unseen)
        shed = 0.45 * pen + exposure * (0.6 * avg_cost + 0.35 * lower_pen)
        if hand_counts[s] == 1 and remaining > 2:
            shed += 0.15 * avg_cost  # emptying a suit gives later chances to dump
        score = p_win * cost_win - shed - 0.001 * _RANK[c]
        if score < best_score:
            best_c, best_score = c, score
    return best_c


def _expected_dumps(unseen: int, excluded: list[int], after: list[int], led: int, vals: tuple[int, ...]) -> float:
    """Expected penalty points the players in ``after`` add to a trick of suit ``led``: a player known
    void dumps the worst penalty card they may hold; otherwise they follow with an average card."""
    if vals is _ZERO52:
        return 0.0
    out = 0.0
    suit_cards = unseen & SUIT_MASK[led]
    n_suit = suit_cards.bit_count()
    avg_suit = -sum(vals[c] for c in mask_to_list(suit_cards)) / n_suit if n_suit else 0.0
    for p in after:
        could = unseen & ~excluded[p]
        if could & SUIT_MASK[led]:
            out += avg_suit
        else:
            worst = 0
            for c in mask_to_list(could):
                if -vals[c] > worst:
                    worst = -vals[c]
            out += 0.8 * worst
    return out


def _positive_card(d: Deal, seat: int, m: int) -> int:
    hand = d.hands[seat]
    unseen = d.unseen(seat) & FULL_DECK
    trump = d.trump
    tmask = SUIT_MASK[trump] if trump >= 0 else 0
    excluded = d.excluded
    trick = d.trick
    n_in = len(trick)
    n = d.n
    after = [(seat + k) % n for k in range(1, n - n_in)]
    can_hold = 0
    for p in after:
        can_hold |= unseen & ~excluded[p]
    if not n_in:  # leading
        tm = m & tmask
        if tm:
            top = _high(tm)
            if not unseen & _HIGHER[top] or not unseen & tmask:
                return top  # master trump, or trumps already drawn: cash it
            return _low(tm)
        best_c, best_key = -1, None
        for c in mask_to_list(m):
            s = _SUIT[c]
            master = not (unseen & _HIGHER[c])
            ruff_risk = bool(unseen & tmask) and any(
                not (unseen & SUIT_MASK[s] & ~excluded[p]) and unseen & tmask & ~excluded[p] for p in after
            )
            key = (master and not ruff_risk, _RANK[c] if master else -_RANK[c], (unseen & SUIT_MASK[s]).bit_count())
            if best_key is None or key > best_key:
                best_c, best_key = c, key
        return best_c
    led, best = d.led, d.best
    best_is_trump = trump >= 0 and _SUIT[best] == trump
    winners = 0
    for c in mask_to_list(m):
        s = _SUIT[c]
        if (s == _SUIT[best] and c >= best) or (s == trump and not best_is_trump):  # R11.5: a later twin wins
            winners |= 1 << c
    if winners:
        if not after:
            return _cheapest(winners, tmask)
        safe = 0
        for c in mask_to_list(winners):
            s = _SUIT[c]
            beaten = can_hold & _HIGHER[c]
            ruff = 0
            if s != trump and trump >= 0:
                for p in after:
                    could = unseen & ~excluded[p]
                    if not could & SUIT_MASK[led] and could & tmask:
                        ruff = 1
            if not beaten and not ruff:
                safe |= 1 << c
        if safe:
            return _cheapest(safe, tmask)
        tw = winners & tmask
        if tw and _SUIT[best] != trump and led != trump:
            return _low(tw)  # ruff low and hope it holds
    return _discard_positive(hand, m, tmask)


def _cheapest(m: int, tmask: int) -> int:
    """The lowest card of ``m``, preferring a side card to a trump."""
    side = m & ~tmask
    return _low(side) if side else _low(m)


def _discard_positive(hand: int, m: int, tmask: int) -> int:
    """Lowest side card, from the shortest side suit (to ruff later); a trump only if nothing else."""
    side = m & ~tmask
    pool = side or m
    best_c, best_key = -1, None
    for c in mask_to_list(pool):
        key = (_RANK[c], (hand & SUIT_MASK[_SUIT[c]]).bit_count())
        if best_key is None or key < best_key:
            best_c, best_key = c, key
    return best_c


def _fantan_card(d: Deal, seat: int, m: int) -> int:
    if not m:
        return PASS
    hand = d.hands[seat]
    unseen = d.unseen(seat) & FULL_DECK
    deck = d.deck
    best_c, best_score = -1, -1e18
    for c in mask_to_list(m):
        s, r = _SUIT[c], _RANK[c]
        suit = SUIT_MASK[s]
        if d.fantan_lo[s] < 0:  # the start card opens both directions
            opened = ((1 << c) >> 1 if r > 0 else 0) | ((1 << c) << 1 if r < 12 else 0)
            beyond = suit & ~(1 << c)
        elif r < d.fantan_lo[s]:
            opened = (1 << c) >> 1 if r > 0 else 0
            beyond = _LOWER[c]
        else:
            opened = (1 << c) << 1 if r < 12 else 0
            beyond = _HIGHER[c]
        opened &= suit & deck
        mine_beyond = (hand & beyond).bit_count()
        theirs_beyond = (unseen & beyond).bit_count()
        score = (
            1.5 * (opened & hand).bit_count()
            - 1.5 * (opened & unseen).bit_count()
            + 0.8 * mine_beyond
            - 0.3 * theirs_beyond
        )
        if score > best_score:
            best_c, best_score = c, score
    if d.rules.fantan_pass == "free" and best_score < -1.5 and hand.bit_count() > 2:
        recent = d.history[-(d.n - 1) :]
        if len(recent) < d.n - 1 or any(a != PASS for _, a in recent):  # never stall the table
            return PASS
    return best_c


# ================================================================================= hand evaluation
def _suit_ranks(hand: int, s: int) -> list[int]:
    return [_RANK[c] for c in mask_to_list(hand & SUIT_MASK[s])]


def _exposure(hand: int) -> list[float]:
    """Per card id of ``hand``: how likely it is to be forced to win a trick at no trumps
    (the i-th lowest card of a suit has i lower escorts)."""
    out = [0.0] * 52
    for s in range(4):
        for i, c in enumerate(mask_to_list(hand & SUIT_MASK[s])):
            out[c] = max(0.0, min(1.0, (_RANK[c] - 2 * i - 4) / 8))
    return out


def _estimate_negative(hand: int, contract: Contract, num_tricks: int, declarer: bool) -> float:
    """Estimated score of ``hand`` in a negative trick contract (R4, R9, R10.2)."""
    exp = _exposure(hand)
    tricks = min(num_tricks, 0.95 * sum(exp) + (0.6 if declarer else 0.3))
    share = tricks / num_tricks
    score = contract.per_trick * tricks
    vals = contract.card_values()
    if vals:
        for c in range(52):
            v = vals[c]
            if not v:
                continue
            if hand >> c & 1:
                p = 0.15 + 0.75 * exp[c]
            else:
                above_mine = sum(exp[x] for x in mask_to_list(hand & _HIGHER[c]))
                p = share * 0.8 + 0.25 * above_mine
            score += v * min(1.0, p)
    pos = contract.position_values(num_tricks)
    if any(pos):
        long_high = sum(1 for s in range(4) for r in _suit_ranks(hand, s)[4:] if r >= 8)
        p_end = min(1.0, share + 0.08 * long_high)
        score += sum(pos) * p_end
    if contract.ravage:
        longest = max(len(_suit_ranks(hand, s)) for s in range(4))
        score += contract.ravage * min(1.0, share + 0.05 * max(0, longest - 4))
    return score


def _trump_tricks(hand: int, trump: int) -> float:
    """Estimated tricks of ``hand`` with ``trump`` as trumps (top cards, trump length, short side suits)."""
    t = 0.0
    trumps = _suit_ranks(hand, trump)
    for s in range(4):
        ranks = sorted(_suit_ranks(hand, s), reverse=True)
        if s == trump:
            t += sum(max(0.0, (r - 7) / 5) for r in ranks[:3])
            t += max(0, len(ranks) - 3) * 0.9
        else:
            if ranks and ranks[0] == 12:
                t += 0.9
            if len(ranks) >= 2 and 11 in ranks:
                t += 0.5
            if len(trumps) >= 3 and len(ranks) <= 1:
                t += 0.6 * (2 - len(ranks))
    return t


def _fantan_cost(hand: int, rank: int, deck: int) -> float:
    """Rank distance the hand has to travel from ``rank`` (small = goes out early)."""
    return sum(abs(_RANK[c] - rank) for c in mask_to_list(hand & deck))


def _fantan_mean_cost(rank: int, deck: int) -> float:
    ranks = [r for r in range(13) if deck & RANK_MASK[r]]
    return sum(abs(r - rank) for r in ranks) / len(ranks)


def best_trump(hand: int) -> int:
    """The trump suit the heuristic names: most estimated tricks, then longest (R3.2)."""
    return max(range(4), key=lambda s: (_trump_tricks(hand, s), (hand & SUIT_MASK[s]).bit_count(), s))


def best_fantan_rank(hand: int, deck: int) -> int:
    """The Fantan start rank the heuristic names: least travel relative to an average hand (R3.2)."""
    n = (hand & deck).bit_count()
    ranks = [r for r in range(13) if deck & RANK_MASK[r]]
    return min(ranks, key=lambda r: (_fantan_cost(hand, r, deck) - n * _fantan_mean_cost(r, deck), abs(r - 6)))


def estimate(hand: int, contract: Contract, num_tricks: int, deck: int, declarer: bool,
             trump: int = -1, fantan_rank: int = -1, players: int = 4) -> float:  # fmt: skip
    """Estimated score of ``hand`` in ``contract`` (with its parameter), from the hand alone, in the
    game's points (positive = bad in Barbu King)."""
    if contract.play == FANTAN:
        n = (hand & deck).bit_count()
        rel = n * _fantan_mean_cost(fantan_rank, deck) - _fantan_cost(hand, fantan_rank, deck)
        fp = contract.fantan_points
        mean = sum(fp) / len(fp)
        k = (fp[0] - fp[-1]) / 50  # 1 for the classic table; negative in King (first out scores lowest)
        est = mean + k * (0.8 * rel + (3.0 if declarer else 0.0))
        if k >= 0:
            return min(0.8 * max(fp), max(min(fp), est))
        return max(0.8 * min(fp), min(max(fp), est))
    if contract.positive:
        if trump >= 0:
            tricks = _trump_tricks(hand, trump)
        else:
            tricks = sum(0.9 for s in range(4) if 12 in _suit_ranks(hand, s))
        return contract.per_trick * (0.5 * tricks + 0.5 * num_tricks / players + (0.3 if declarer else 0.0))
    return _estimate_negative(hand, contract, num_tricks, declarer)


def choose_declaration(d: Deal, seat: int) -> int:
    """The declare action: the available contract whose estimate is furthest above its table mean
    (below it in Barbu King, where points are bad: the comparison follows ``rules.score_sign``)."""
    hand, deck, n = d.hands[seat], d.deck, d.num_tricks
    sign, players = d.rules.score_sign, d.n
    best_a, best_v = -1, -1e18
    for a in d.legal_actions():
        if a >= DOUBLE_BASE:  # declare:anti_salad, after the doubling ids (R10.3)
            name, trump, rank = ANTI_SALAD, -1, -1
        elif a >= FANTAN_BASE:
            name, trump, rank = "fantan", -1, a - FANTAN_BASE
            if rank != best_fantan_rank(hand, deck):
                continue
        elif a >= TRUMPS_BASE:
            name, trump, rank = "trumps", a - TRUMPS_BASE, -1
            if trump != best_trump(hand):
                continue
        else:
            name, trump, rank = PLAIN_CONTRACTS[a - DECLARE_BASE], -1, -1
        c = d.table[name]
        v = sign * (estimate(hand, c, n, deck, True, trump, rank, players) - c.total(d.rules) / players)
        if v > best_v:
            best_a, best_v = a, v
    return best_a


def choose_double(d: Deal, seat: int) -> int:
    """The doubling action (R6): double when the hand beats the table mean by a margin."""
    legal = d.legal_actions()
    if len(legal) == 1:
        return legal[0]
    c = d.contract
    if c is None:
        raise ValueError("choose_double: no contract is declared yet (doubling follows the declaration, R2.3)")
    mean = c.total(d.rules) / d.n
    adv = estimate(d.hands[seat], c, d.num_tricks, d.deck, seat == d.declarer, d.trump, d.fantan_rank) - mean
    scale = max(4.0, abs(c.total(d.rules)) / 6)
    want = 0
    for t in range(d.n):
        if t == seat:
            continue
        if seat == d.declarer:
            wish = adv > 0.5 * scale  # redouble those who doubled me when my hand is good
        elif t == d.declarer:
            wish = adv > (0.9 if c.positive else 0.6) * scale  # the declarer chose this contract
        else:
            wish = adv > 0.6 * scale
        if wish:
            want |= 1 << t
    best_a, best_v = legal[0], -1e18
    targets_of = double_targets(d.n)[seat]
    for a in legal:
        targets = targets_of[a - DOUBLE_BASE]
        v = -((targets ^ want).bit_count())
        if v > best_v:
            best_a, best_v = a, v
    return best_a


def heuristic_action(d: Deal, seat: int) -> int:
    """The heuristic's action for ``seat`` on move in ``d`` (a full deal or an information view)."""
    p = d.phase
    if p == _PLAY or p == _FANTAN:
        return choose_card(d, seat)
    if p == _DECLARE:
        return choose_declaration(d, seat)
    if p == _DOUBLE:
        return choose_double(d, seat)
    raise ValueError("the deal is over: no action to choose")


def rollout(d: Deal) -> Deal:
    """Play ``d`` to its end in place with the heuristic in every seat (the PIMC playout)."""
    while d.phase != _OVER:
        d.apply(heuristic_action(d, d.to_move))
    return d


class HeuristicAgent(Agent):
    """The rule-based player of this module (deterministic; the seed is kept for the protocol). Its compiled
    form (:meth:`vector_actions`, ``barbu_env.vector.heuristic``) makes the same choices on a batch."""

    name = "heuristic"
    compiled = True

    def choose(self, env: Any, agent_name: str) -> int:
        """Where the env plays the deal on its compiled copy, the compiled heuristic's action on it (the same
        action, without building the ``Deal``); else :meth:`act_info`."""
        mirror = getattr(env.unwrapped, "compiled_deal", None)
        if mirror is not None:
            return mirror.heuristic()
        return super().choose(env, agent_name)

    def act_info(self, info: InfoState) -> int:
        return heuristic_action(info.view, info.seat)

    def vector_actions(self, deals: VectorDeals, games: np.ndarray | None = None) -> np.ndarray:
        return deals.heuristic_actions(games)

    def options(self) -> dict[str, Any]:
        return {}
