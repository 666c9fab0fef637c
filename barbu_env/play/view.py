"""What one seat may see of a game, as plain JSON-able data: the one source of every front end's display.

:func:`seat_view` reads the seat's own hand and the deal's public record (contract, doubles, every action,
the trick, tricks, points, the Fantan layout, scores) — never another seat's unplayed cards, so the browser
and the terminal get only what the seat may know (RULES.md R1.3). :func:`full_view` adds every
hand, for the replay of a finished game.
"""

from __future__ import annotations

from typing import Any

from ..actions import action_names
from ..cards import NUM_CARDS, format_card, format_mask
from ..engine import Deal, Match, Phase


def sorted_cards(mask: int) -> list[str]:
    """The cards of a mask by suit (spades, hearts, diamonds, clubs), high to low in each (as in records)."""
    return format_mask(mask).split() if mask else []


def legal_names(deal: Deal) -> list[str]:
    """The legal actions of the seat on move by name: its cards in hand order (:func:`sorted_cards`), then
    the other actions (pass, declarations, doubles) in id order."""
    legal = deal.legal_actions()
    cards = sorted_cards(sum(1 << a for a in legal if a < NUM_CARDS))
    names = action_names(deal.rules)
    return cards + [names[a] for a in legal if a >= NUM_CARDS]


def _run(deal: Deal, suit: int) -> list[str] | None:
    """The Fantan layout's run in ``suit`` as ``[lowest, highest]`` (R7.2), None before its first card."""
    lo, hi = deal.fantan_lo[suit], deal.fantan_hi[suit]
    return None if lo < 0 else [format_card(13 * suit + lo), format_card(13 * suit + hi)]


def _trick(leader: int, cards: list[int] | tuple[int, ...], n: int) -> list[list[Any]]:
    return [[(leader + k) % n, format_card(c)] for k, c in enumerate(cards)]


def public_view(deal: Deal, match: Match | None) -> dict[str, Any]:
    """The public part of the table: contract, declarer, doubles, trick, history and counters (R1.3, R5.3)."""
    n = deal.n
    last = deal.last_trick
    names = action_names(deal.rules)
    view: dict[str, Any] = {
        "players": n,
        "phase": Phase(deal.phase).name.lower(),
        "declarer": deal.declarer,
        "contract": deal.contract_text,
        "available": list(deal.available),
        "to_move": deal.current_player,
        "doubles": [[s, t] for s in range(n) for t in range(n) if deal.doubles[s] >> t & 1],
        "hand_sizes": [deal.held(s).bit_count() for s in range(deal.n)],
        "trick": _trick(deal.leader, deal.trick, n),
        "last_trick": None if last is None else {"cards": _trick(last[0], last[1], n), "winner": last[2]},
        "history": [[s, names[a]] for s, a in deal.history],
        "tricks_won": list(deal.tricks_won),
        "points": list(deal.points),
        "passes": list(deal.passes),
        "layout": [_run(deal, s) for s in range(4)],
        "finished": list(deal.finished),
        "scores": list(deal.scores) if deal.scores is not None else None,
        "king": deal.rules.king,
        "match": None,
    }
    if match is not None:
        view["match"] = {
            "deal_no": min(match.deal_no, match.num_deals - 1) if match.is_over else match.deal_no,
            "num_deals": match.num_deals,
            "totals": list(match.totals),
            "winners": match.winners,
            "deals": [
                {"declarer": r.declarer, "contract": r.contract, "scores": list(r.scores)} for r in match.records
            ],
        }
    return view


def seat_view(deal: Deal, match: Match | None, seat: int) -> dict[str, Any]:
    """What ``seat`` may see: the public view, its own hand and, on move, its legal actions."""
    view = public_view(deal, match)
    view["seat"] = seat
    view["hand"] = sorted_cards(deal.held(seat))
    view["legal"] = legal_names(deal) if deal.current_player == seat else []
    return view


def full_view(deal: Deal, match: Match | None) -> dict[str, Any]:
    """The public view with every seat's hand (``hands``) and the legal actions of the seat on move."""
    view = public_view(deal, match)
    view["hands"] = [sorted_cards(deal.held(s)) for s in range(deal.n)]
    view["legal"] = legal_names(deal) if not deal.is_over else []
    return view
