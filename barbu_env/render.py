"""Text view of a deal or a match for ``render_mode="ansi"`` / ``"human"`` (RULES.md R1.3, R5.3)."""

from __future__ import annotations

from .actions import action_names
from .cards import format_card, format_mask
from .engine.deal import Deal, Phase
from .engine.match import Match
from .rules import Rules

#: Accepted values of ``render_hands``: whose hands the view shows.
HAND_CHOICES = ("current", "all", "none")


def variant_title(rules: Rules) -> str | None:
    """The classic Barbu variant as the views head it, None for four players without ``positive``: the player
    count (R12) and the contracts played with negated points (R10.3), e.g. ``"Barbu, 3 players"``."""
    if rules.king or (rules.players == 4 and not rules.positive):
        return None
    parts = [f"{rules.players} players"] if rules.players != 4 else []
    if rules.positive:
        parts.append("positive " + ", ".join(rules.positive))
    return "Barbu, " + "; ".join(parts)


def positive_mark(deal: Deal) -> str:
    """``" (positive)"`` when the deal's contract is played with negated points (R10.3), else ``""``."""
    return " (positive)" if deal.contract is not None and deal.contract.name in deal.rules.positive else ""


def render_text(deal: Deal, match: Match | None = None, hands: str = "current", symbols: bool = True) -> str:
    """A readable table: contract, declarer, doubles, trick, per-seat counts and scores; the hand of
    the seat on move only (``hands="current"``), every hand (``"all"``) or none (``"none"``)."""
    lines = []
    n = deal.n
    if deal.rules.king:
        r = deal.rules
        opts = "".join(f", {o}" for o in ("short", "choose") if getattr(r, o))
        packs = ", two packs" if r.two_packs else ""  # R11.5
        lines.append(f"Barbu King ({n} players{packs}{opts}): points are bad, the lowest total wins")
    title = variant_title(deal.rules)
    if title is not None:
        lines.append(title)
    if match is not None:
        head = f"deal {match.deal_no + 1}/{match.num_deals}" if not match.is_over else "match over"
        lines.append(f"{head}   totals: " + "  ".join(f"P{s} {t:+d}" for s, t in enumerate(match.totals)))
        if match.winners is not None:
            lines.append("winners: " + ", ".join(f"P{s}" for s in match.winners))
    contract = (deal.contract_text or "(to be declared)") + positive_mark(deal)
    dealer = ""
    if match is not None and deal.rules.king and not match.is_over:
        dealer = f"dealer P{match.dealer_of(match.deal_no)}   "  # R11.1: the declarer is on its left
    lines.append(f"{dealer}declarer P{deal.declarer}   contract {contract}   phase {Phase(deal.phase).name.lower()}")
    doubled = [f"P{s}→P{t}" for s in range(n) for t in range(n) if deal.doubles[s] >> t & 1]
    if doubled:
        lines.append("doubles: " + " ".join(doubled))
    if deal.trick:
        trick = " ".join(f"P{(deal.leader + k) % n}:{format_card(c, symbols)}" for k, c in enumerate(deal.trick))
        lines.append(f"trick {deal.trick_no + 1}: {trick}")
    elif deal.last_trick is not None:
        leader, cards, winner = deal.last_trick
        trick = " ".join(f"P{(leader + k) % n}:{format_card(c, symbols)}" for k, c in enumerate(cards))
        lines.append(f"last trick: {trick}  → P{winner}")
    if deal.phase == Phase.FANTAN or (deal.contract is not None and deal.fantan_rank >= 0):
        runs = []
        for s in range(4):
            lo, hi = deal.fantan_lo[s], deal.fantan_hi[s]
            if lo >= 0:
                runs.append(f"{format_card(13 * s + lo, symbols)}..{format_card(13 * s + hi, symbols)}")
        lines.append("table: " + (" ".join(runs) if runs else "-"))
        if deal.finished:
            lines.append("out: " + " ".join(f"P{s}" for s in deal.finished))
    on_move = deal.current_player
    for s in range(n):
        mark = ">" if s == on_move else " "
        row = (
            f"{mark}P{s}  cards {deal.held(s).bit_count():2d}  tricks {deal.tricks_won[s]:2d}  "
            f"points {deal.points[s]:+4d}"
        )
        if deal.phase == Phase.FANTAN or deal.passes[s]:
            row += f"  passes {deal.passes[s]}"
        if hands == "all" or (hands == "current" and s == on_move):
            row += "   " + format_mask(deal.held(s), symbols)  # a card held twice (R11.5) shows twice
        lines.append(row)
    if deal.is_over and deal.scores is not None:
        lines.append("deal scores: " + "  ".join(f"P{s} {v:+d}" for s, v in enumerate(deal.scores)))
    elif on_move >= 0:
        legal = deal.legal_actions()
        names = action_names(deal.rules)
        lines.append(f"P{on_move} to move: " + " ".join(names[a] for a in legal))
    return "\n".join(lines)
