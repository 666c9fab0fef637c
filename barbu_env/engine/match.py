"""A match of classic Barbu (RULES.md R2, R6.4, R8.3) or Barbu King (R11): the declarer schedule, each
declarer's unused contracts, the doubling obligation, running totals and the tie-breaks.

The schedule is data: :meth:`Match.declarer_of` maps a deal number to its declarer, and the
contracts each declarer owes are the rows of the contract table.

Barbu King (``rules.game == "king"``), reading of R11:

- fixed order (R11.1, R11.2): deal ``k`` plays the ``k``-th contract of the table. Its ``declarer`` is
  the player to the dealer's left, who leads the first trick and, in Domino, names the start rank (a
  declaration with only ``declare:fantan:*`` legal); the dealer is ``declarer - 1`` and moves one seat
  left each deal, so deal ``k`` is declared by ``(first_declarer + k) % n``. ``short`` stops after 5.
- ``choose`` (R11.3): the dealer is the declarer ("Declarante"): it chooses a contract it has not yet
  chosen (and the rank, for Domino) and leads the first trick, as seed 001 says ("será o responsável
  por abrir a primeira rodada da mão, e também por escolher qual será o contrato"); ``schedule``
  ``blocks`` or ``rotate`` as R2.2, ``n`` times 8 (or 5) deals.
- the lowest total wins (R11); ``tiebreak="first_declarer"`` breaks ties as in R2.4.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..contracts import EXTRA_DEAL, FANTAN, contract_table
from ..rules import Rules
from .deal import Deal, deal_hands, seat_index, validate_hands

#: R2.4 ``extra_deals``: most tie-break deals played before a tie is left standing.
MAX_EXTRA_DEALS = 10
#: R6.4: how many times each other player must double each declarer.
OBLIGATION = 2


@dataclass(frozen=True)
class DealRecord:
    """What a finished deal left in the score sheet."""

    number: int  # 0-based deal number in the match
    declarer: int
    contract: str  # as "no_queens", "trumps:S", "fantan:5" or "extra_deal"
    doubles: tuple[int, ...]  # per seat, mask of the seats it doubled
    contract_scores: tuple[int, ...]
    settlement: tuple[int, ...]
    scores: tuple[int, ...]


class Match:
    """A whole match. ``rng`` shuffles every deal; ``hands``/``contract`` may fix the first deal."""

    def __init__(
        self,
        rules: Rules | None = None,
        rng: np.random.Generator | int | None = None,
        first_declarer: int = 0,
        hands: Sequence[Sequence[str | int]] | None = None,
        contract: str | None = None,
    ) -> None:
        self.rules = rules or Rules()
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        n = self.n = self.rules.players
        self.first_declarer = seat_index(first_declarer, "first declarer", n)
        self.table = contract_table(self.rules)
        #: R11.1: Barbu King's fixed order (no declarer choice); False with ``choose`` and in Barbu.
        self.fixed_order = self.rules.king and not self.rules.choose
        self.per_declarer = len(self.table)
        # R2.1 / R9.2 / R10.2 / R11.3: every declarer declares every contract once; R11.1: 8 (5) deals
        self.num_deals = self.per_declarer if self.fixed_order else n * self.per_declarer
        #: ``schedule[k]``: the declarer of deal ``k`` (:meth:`declarer_of`).
        self.schedule = tuple(self.declarer_of(k) for k in range(self.num_deals))
        self.used: list[list[str]] = [[] for _ in range(n)]
        #: ``doubled[d][s]``: times seat s doubled declarer d in d's deals (R6.4).
        self.doubled = [[0] * n for _ in range(n)]
        self.totals = [0] * n
        self.records: list[DealRecord] = []
        self.deal_no = 0
        self.extra_deals = 0
        self.winners: list[int] | None = None
        first_hands = validate_hands(hands, self.rules) if hands is not None else None
        self.deal = self._new_deal(first_hands, contract)

    # ----------------------------------------------------------------- schedule
    def declarer_of(self, k: int) -> int:
        """Declarer of deal ``k`` (0-based), R2.2 ``blocks`` or ``rotate``; in King's fixed order the
        player to the dealer's left, one seat further left each deal (R11.1)."""
        if self.rules.schedule == "rotate" or self.fixed_order:
            return (self.first_declarer + k) % self.n
        return (self.first_declarer + k // self.per_declarer) % self.n

    def dealer_of(self, k: int) -> int:
        """Dealer of deal ``k``: the declarer, except in King's fixed order, where the declarer is the
        player to the dealer's left (R11.1)."""
        d = self.declarer_of(k)
        return (d - 1) % self.n if self.fixed_order else d

    def contract_of(self, k: int) -> str | None:
        """The contract of deal ``k`` in King's fixed order (R11.2), or None where the declarer chooses."""
        if not self.fixed_order or k >= self.num_deals:
            return None
        return list(self.table)[k]

    def deals_left_of(self, declarer: int, from_deal: int) -> int:
        """Deals of ``declarer`` from deal ``from_deal`` (included) to the end of the match."""
        return self.deals_left(from_deal)[declarer]

    def deals_left(self, from_deal: int) -> list[int]:
        """Each seat's deals as declarer from deal ``from_deal`` (included) to the end of the match."""
        left = [0] * self.n
        for d in self.schedule[from_deal:]:
            left[d] += 1
        return left

    def obligation_due(self, declarer: int, from_deal: int) -> int:
        """R6.4: seat mask of players who must double ``declarer`` in deal ``from_deal``."""
        if self.rules.doubling == "off":
            return 0
        left = self.deals_left_of(declarer, from_deal)
        due = 0
        for s in range(self.n):
            owed = OBLIGATION - self.doubled[declarer][s]
            if s != declarer and owed > 0 and owed >= left:
                due |= 1 << s
        return due

    def outstanding(self, declarer: int) -> list[int]:
        """Doubles each seat still owes ``declarer`` (0 for the declarer itself)."""
        if self.rules.doubling == "off":
            return [0] * self.n
        return [0 if s == declarer else max(0, OBLIGATION - self.doubled[declarer][s]) for s in range(self.n)]

    def remaining_contracts(self, seat: int) -> list[str]:
        """Contracts ``seat`` has not yet declared, in table order (R3.1); in King's fixed order the
        contracts of the deals still to come, the same for every seat (R11.2)."""
        if self.fixed_order:
            return list(self.table)[self.deal_no :]
        return [n for n in self.table if n not in self.used[seat]]

    def _new_deal(self, hands: list[int] | None = None, contract: str | None = None) -> Deal:
        k = self.deal_no
        if hands is None:
            hands = deal_hands(self.rng, self.rules)
        if k >= self.num_deals:  # R2.4 extra_deals: no declaration, no doubling
            declarer = min(range(self.n), key=lambda s: (self.totals[s], s))
            rules = self.rules.replace(doubling="off", undoubled_negative="play")
            return Deal.from_hands(hands, declarer, EXTRA_DEAL, rules, available=())
        d = self.declarer_of(k)
        fixed = self.contract_of(k)
        available = self.remaining_contracts(d) if fixed is None else [fixed]
        if contract is not None:
            name = contract.split(":")[0]
            if name not in available:
                raise ValueError(f"contract {contract!r} is not available to seat {d}: choose from {available}")
        elif fixed is not None and self.table[fixed].play != FANTAN:
            contract = fixed  # R11.1: no declaration; Domino's declarer still names the rank (R11.2)
        return Deal.from_hands(hands, d, contract, self.rules, available=available,
                               must_double=self.obligation_due(d, k), table=self.table)  # fmt: skip

    def redeal(self, hands: Sequence[Sequence[str | int]] | Sequence[int]) -> None:
        """Replace the current deal, before its first action, by one of ``hands`` (a card list or bitmask per
        seat; an outside dealer such as OpenSpiel's chance nodes). Schedule, contracts and R6.4 duties stay."""
        if self.is_over or self.deal.history:
            raise ValueError("redeal() replaces a deal before its first action: this deal has started")
        self.deal = self._new_deal(list(hands))  # type: ignore[arg-type]  # Deal.from_hands checks them

    # ----------------------------------------------------------------- play
    @property
    def is_over(self) -> bool:
        """True once the last deal (and any tie-break deal) is scored."""
        return self.winners is not None

    @property
    def current_player(self) -> int:
        """Seat on move, or -1 once the match is over."""
        return -1 if self.is_over else self.deal.current_player

    def legal_actions(self) -> list[int]:
        """Legal actions of the player on move (the deal's, with R3.1 and R6.4 built in)."""
        return [] if self.is_over else self.deal.legal_actions()

    def apply(self, action: int) -> DealRecord | None:
        """Apply an action; returns the deal's record when it ended that deal."""
        if self.is_over:
            raise ValueError("the match is over: no action is legal")
        self.deal.apply(action)
        return self.end_deal() if self.deal.is_over else None

    def end_deal(self) -> DealRecord:
        """Score the finished current deal into the totals and start the next one (or end the match).
        Called by :meth:`apply`; call it yourself after :meth:`Deal.renege`."""
        deal = self.deal
        if not deal.is_over:
            raise ValueError("the current deal is not over")
        contract, text, scores = deal.contract, deal.contract_text, deal.scores
        if (
            contract is None
            or text is None
            or scores is None
            or deal.contract_scores is None
            or deal.settlement is None
        ):
            raise ValueError("the current deal is over without a contract or scores")
        rec = DealRecord(
            self.deal_no,
            deal.declarer,
            text,
            tuple(deal.doubles),
            tuple(deal.contract_scores),
            tuple(deal.settlement),
            tuple(scores),
        )
        return self._score(rec)

    def score_deal(self, rec: DealRecord) -> DealRecord:
        """Score the current deal, played elsewhere, from its record (what :meth:`end_deal` reads off
        :attr:`deal`; the env's compiled copy of the deal gives it without playing the ``Deal``) and start the next
        deal; :attr:`deal` is not read. Only before the schedule's last deal (which :meth:`end_deal` scores from
        the finished ``Deal``, kept as :attr:`deal` once the match is over): a ``ValueError`` otherwise."""
        if rec.number != self.deal_no or self.deal_no + 1 >= self.num_deals:
            raise ValueError(
                f"score_deal() scores deal {self.deal_no} before the last of {self.num_deals} deals; got a record "
                f"of deal {rec.number} (score the last deal with end_deal())"
            )
        return self._score(rec)

    def _score(self, rec: DealRecord) -> DealRecord:
        """Add the finished current deal's record to the score sheet and start the next deal (or end the match)."""
        self.records.append(rec)
        if self.deal_no < self.num_deals:
            self.used[rec.declarer].append(rec.contract.split(":")[0])  # the contract's name (R3.1)
            for s in range(self.n):
                if s != rec.declarer and rec.doubles[s] >> rec.declarer & 1:
                    self.doubled[rec.declarer][s] += 1
        else:
            self.extra_deals += 1
        for s in range(self.n):
            self.totals[s] += rec.scores[s]
        self.deal_no += 1
        if self.deal_no >= self.num_deals and not self._needs_extra_deal():
            self.winners = self._decide_winners()
        else:
            self.deal = self._new_deal()
        return rec

    def _needs_extra_deal(self) -> bool:
        top = max(self.totals)
        tied = sum(1 for t in self.totals if t == top) > 1
        return self.rules.tiebreak == "extra_deals" and tied and self.extra_deals < MAX_EXTRA_DEALS

    def _decide_winners(self) -> list[int]:
        """R2.4: highest total wins (R11: lowest, in Barbu King); ``first_declarer`` breaks ties by
        declaring order."""
        top = min(self.totals) if self.rules.king else max(self.totals)
        tied = [s for s in range(self.n) if self.totals[s] == top]
        if len(tied) > 1 and self.rules.tiebreak == "first_declarer":
            first_deal = {s: next(k for k in range(self.num_deals) if self.declarer_of(k) == s) for s in tied}
            return [min(tied, key=first_deal.__getitem__)]
        return tied

    def clone(self) -> Match:
        """An independent copy (the RNG state is copied too)."""
        m = Match.__new__(Match)
        m.__dict__.update(self.__dict__)
        m.rng = np.random.Generator(type(self.rng.bit_generator)())
        m.rng.bit_generator.state = self.rng.bit_generator.state
        m.used = [u[:] for u in self.used]
        m.doubled = [d[:] for d in self.doubled]
        m.totals = self.totals[:]
        m.records = self.records[:]
        m.winners = None if self.winners is None else self.winners[:]
        m.deal = self.deal.clone()
        return m
