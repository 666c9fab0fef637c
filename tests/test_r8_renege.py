"""Deal scores and reneges (RULES.md R8.1–R8.3)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SUIT_HANDS, make_deal

from barbu_env import Match, Rules
from barbu_env.engine.deal import Phase


@pytest.mark.parametrize(
    ("contract", "rules", "penalty"),
    [("no_tricks", Rules(), 26), ("no_hearts", Rules(), 30), ("no_queens", Rules(), 24), ("no_king", Rules(), 20),
     ("no_last_two", Rules(), 30), ("trumps:S", Rules(), 65), ("fantan:7", Rules(), 65),
     ("no_king", Rules(ravage_city=True), 16), ("ravage_city", Rules(ravage_city=True), 24),
     ("salad", Rules(salad=True), 100), ("no_queens", Rules(scoring="basic32"), 8)],
)  # fmt: skip
def test_renege_penalty(contract: str, rules: Rules, penalty: int) -> None:
    """R8.2 (illegal_action=renege, via Deal.renege): the offender loses the absolute contract total,
    no one else scores, doubles are not settled, and the deal ends."""
    hands = SUIT_HANDS if rules.deck_size == 52 else [[c for c in range(52) if c % 13 >= 5 and c % 4 == s]
                                                        for s in range(4)]  # fmt: skip
    deal = make_deal(hands, 1, contract, rules=rules, doubles="double:right double:across double:none double:left")
    assert any(deal.doubles)
    deal.apply(deal.legal_actions()[0])
    deal.renege(2)
    assert deal.is_over and deal.phase == Phase.OVER and deal.current_player == -1
    assert deal.contract_scores == [0, 0, -penalty, 0]
    assert deal.settlement == [0, 0, 0, 0] and deal.scores == [0, 0, -penalty, 0]
    assert deal.reneged == 2


def test_renege_errors() -> None:
    """A renege needs a declared deal in play and a seat 0..3."""
    deal = make_deal(SUIT_HANDS, 0, None)
    with pytest.raises(ValueError, match="declared"):
        deal.renege(1)
    deal = make_deal(SUIT_HANDS, 0, "no_tricks")
    with pytest.raises(ValueError, match="seat"):
        deal.renege(4)
    deal.renege(0)
    with pytest.raises(ValueError, match="declared deal in play"):
        deal.renege(1)


def test_renege_counts_as_played_in_a_match() -> None:
    """R8.2: after a renege the contract counts as played; R8.3: the match total adds the deal score."""
    m = Match(Rules(), np.random.default_rng(0), first_declarer=2)
    m.apply(m.legal_actions()[0])  # declare the first available contract
    name = m.deal.contract.name
    m.deal.renege(3)
    rec = m.end_deal()
    assert rec.contract_scores == rec.scores and rec.scores[3] == -abs(m.table[name].total(m.rules))
    assert name not in m.remaining_contracts(2)
    assert m.totals == list(rec.scores) and m.deal_no == 1


def test_r8_1_deal_score_is_contract_plus_settlement() -> None:
    """R8.1: deal score = contract score + doubling settlement; R8.3: match totals add deal scores."""
    m = Match(Rules(), np.random.default_rng(3))
    rng = np.random.default_rng(4)
    while m.deal_no < 6:
        legal = m.legal_actions()
        rec = m.apply(legal[int(rng.integers(len(legal)))])
        if rec:
            assert list(rec.scores) == [a + b for a, b in zip(rec.contract_scores, rec.settlement)]
    assert m.totals == [sum(r.scores[s] for r in m.records) for s in range(4)]
