"""Shared pieces of the framework adapters: deal-mode contract sampling and reward normalisation.

Nothing here imports a framework; :mod:`.sb3` and :mod:`.rllib` build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..agents.heuristic import best_fantan_rank, best_trump
from ..cards import RANKS, SUITS, cards_of
from ..contracts import contract_table
from ..engine.deal import Deal, deal_hands
from ..rules import Rules

#: Contract names that need a parameter, resolved per deal the way ``barbu-eval`` does (R3.2).
FAMILIES_WITH_PARAMETER = ("trumps", "fantan")


#: The games and player counts the adapters are tested with: classic Barbu (R12.1) and Barbu King (R11.4).
SUPPORTED: dict[str, tuple[int, ...]] = {"barbu": (3, 4, 5), "king": (3, 4, 5)}


def check_supported(rules: Rules, adapter: str) -> None:
    """Refuse, with what is accepted, a game or player count the adapters are not tested with; the accepted
    ones take their seats, observation layout and action count from the env (``layout(rules)``,
    ``num_actions(rules)``: R10.3, R11.4, R12)."""
    counts = SUPPORTED.get(rules.game, ())
    if rules.players not in counts:
        accepted = "; ".join(f"game={g!r} with players in {c}" for g, c in SUPPORTED.items())
        raise ValueError(
            f"{adapter} does not support game={rules.game!r} with {rules.players} players: it accepts {accepted}"
        )


def contract_family(contract: str) -> str:
    """``"trumps:S"`` -> ``"trumps"``, ``"fantan:5"`` -> ``"fantan"``, ``"no_queens"`` -> ``"no_queens"``."""
    return contract.split(":", 1)[0]


def check_contracts(contracts: Sequence[str] | str | None, rules: Rules) -> tuple[str, ...] | None:
    """Validate a contract list (``ValueError`` naming the bad entry); a single name becomes a 1-tuple.

    Entries are contract texts (``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``) or the family names
    ``"trumps"`` / ``"fantan"``, whose parameter is chosen per deal (see :func:`sample_deal`)."""
    if contracts is None:
        return None
    if isinstance(contracts, str):
        contracts = (contracts,)
    out = tuple(contracts)
    if not out:
        raise ValueError("contracts is empty: give at least one contract name or None")
    table = contract_table(rules)
    probe = deal_hands(np.random.default_rng(0), rules)
    for c in out:
        if not isinstance(c, str):
            raise ValueError(f"bad contract {c!r}: expected a name such as 'no_queens', 'trumps' or 'fantan:5'")
        text = _resolve(c, probe, 0, rules)
        Deal.from_hands(probe, 0, text, rules, table=table)  # raises ValueError listing the valid names
    return out


def _resolve(contract: str, hands: list[int], declarer: int, rules: Rules) -> str:
    if contract == "trumps":
        return "trumps:" + SUITS[best_trump(hands[declarer])]
    if contract == "fantan":
        return "fantan:" + RANKS[best_fantan_rank(hands[declarer], rules.deck)]
    return contract


def sample_deal(
    rng: np.random.Generator, rules: Rules, contracts: Sequence[str], declarer: int | str = "random"
) -> dict[str, Any]:
    """Reset options for one deal-mode episode: fresh hands, a declarer (a seat, or uniform for
    ``"random"``) and a contract drawn uniformly from ``contracts``. ``"trumps"`` / ``"fantan"`` get the
    trump suit / start rank the heuristic names for the declarer's hand (as in ``barbu-eval``)."""
    contract = contracts[int(rng.integers(len(contracts)))]
    seat = int(rng.integers(rules.players)) if declarer == "random" else int(declarer)
    hands = deal_hands(rng, rules)
    return {"hands": [cards_of(h) for h in hands], "declarer": seat, "contract": _resolve(contract, hands, seat, rules)}


def contract_scale(deal: Deal) -> float:
    """``|contract total|`` of the deal's contract (E5), the per-contract reward normaliser; 1 if 0."""
    total = abs(deal.contract.total(deal.rules)) if deal.contract is not None else 0
    return float(total) if total else 1.0
