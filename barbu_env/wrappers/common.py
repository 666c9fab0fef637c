"""Shared pieces of the framework adapters: the variants they accept, deal-mode contract sampling and
reward normalisation.

Nothing here imports a framework; :mod:`.sb3` and :mod:`.rllib` build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from ..agents.heuristic import best_fantan_rank, best_trump
from ..cards import RANKS, SUITS, copies_cards
from ..contracts import contract_scale, contract_table
from ..engine.deal import Deal, deal_hands
from ..env import raw_env
from ..rules import GAMES, OPTION_NAMES, PLAYER_COUNTS, Rules, load_rules

#: Contract names that need a parameter, resolved per deal the way ``barbu-eval`` does (R3.2).
FAMILIES_WITH_PARAMETER = ("trumps", "fantan")


def env_rules(env_kwargs: dict[str, Any]) -> Rules:
    """The rules ``barbu_env.env(**env_kwargs)`` would play: its ``rules`` spec with the rule options among
    the kwargs (the other keys are the env's own, checked when the env is made)."""
    options = {k: v for k, v in env_kwargs.items() if k in OPTION_NAMES}
    return load_rules(env_kwargs.get("rules"), **options)


@cache
def supported_variants() -> dict[str, tuple[int, ...]]:
    """The games and player counts the adapters accept: those ``barbu_env.env`` plays (classic Barbu and Barbu
    King at 3 to 5 seats, R11.4, R12, and Barbu King at 6, R11.5), probed over every game and player count the
    rules define, so a variant the env learns to observe is accepted."""
    out: dict[str, tuple[int, ...]] = {}
    for game in GAMES:
        doubling = "off" if game == "king" else "classic"  # R11: King has no doubling
        counts = []
        for n in PLAYER_COUNTS:
            try:
                rules = Rules(game=game, players=n, doubling=doubling)
            except ValueError:  # not a player count of this game
                continue
            if env_refusal(rules) is None:
                counts.append(n)
        if counts:
            out[game] = tuple(counts)
    return out


def env_refusal(rules: Rules) -> str | None:
    """Why ``barbu_env.env`` refuses ``rules`` (its error, e.g. no observation layout yet), or None if it plays them."""
    try:
        raw_env(rules=rules)
    except ValueError as e:
        return str(e)
    return None


def check_supported(rules: Rules, adapter: str) -> None:
    """``ValueError`` for rules the env does not play, naming ``adapter``, the env's reason and the variants it
    accepts."""
    reason = env_refusal(rules)
    if reason is not None:
        accepted = "; ".join(f"game={g!r} with players in {c}" for g, c in supported_variants().items())
        raise ValueError(f"{adapter} cannot play these rules ({reason}): it accepts {accepted}")


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
    text = _resolve(contract, hands, seat, rules)
    return {"hands": [copies_cards(h) for h in hands], "declarer": seat, "contract": text}  # (R11.5: copies twice)


def reward_normaliser(raw: Any) -> float:
    """What ``normalize=True`` divides the rewards of ``raw`` (a ``barbu_env.env`` ``raw_env``) by: in deal mode
    the deal's ``|contract total|`` (``contracts.contract_scale``, one value scale for every contract); in match mode
    the largest ``|contract total|`` of the rules (:func:`match_scale`, a constant, so a policy still
    maximises the match total, R8.3). Reads ``raw.contract_text``, so the deal stays on the env's compiled copy."""
    return contract_scale(raw.contract_text, raw.rules) if raw.mode == "deal" else match_scale(raw.rules)


@cache
def match_scale(rules: Rules) -> float:
    """The largest ``|contract total|`` (E5) among the contracts of ``rules``: 65 for classic Barbu (Trumps)."""
    return float(max(abs(c.total(rules)) for c in contract_table(rules).values()) or 1)
