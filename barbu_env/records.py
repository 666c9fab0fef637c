"""Game records: one JSON format for a played deal or match, written while playing and checked by replay.

A record holds the rule options, the seed, the seats' players, and per deal the declarer, the hands, the
contract the deal started with (``"set_contract"``: fixed by the caller or by Barbu King's order, R11.1;
``null`` when the declarer declares it as an action, R3), every action as ``[seat, name]`` (names of
:func:`barbu_env.action_name` at the rules' player count, R12.2), the contract played and the scores
(contract + settlement, R8.1); a match record adds the totals and the winners (R2.4, R8.3)::

    {"format": "barbu_env.record", "version": 1, "kind": "deal", "rules": {"ravage_city": true},
     "seed": 7, "first_declarer": 0, "players": ["human", "heuristic", "heuristic", "random"],
     "deals": [{"declarer": 0, "hands": ["AS KS ...", ...], "set_contract": "no_queens",
                "actions": [[1, "double:none"], ..., [3, "4C"]], "contract": "no_queens",
                "scores": [-6, 0, -12, 0]}],
     "totals": [-6, 0, -12, 0], "winners": null}

The last deal may be unfinished (``"scores": null``, and ``"totals"``/``"winners"`` null): a game saved
before its end. :func:`replay` plays a record through the engine and checks every action (the seat on move,
its legality) and every score; :func:`load` reads a file and replays it. A corrupt or inconsistent record
raises :class:`RecordError` naming the file, the deal, the step and the reason.

:class:`RecordingEnv` wraps a ``barbu_env.env(...)`` and writes the record of each episode as it is played.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np
from pettingzoo.utils import BaseWrapper

from .actions import action_id, action_names, naming_players
from .cards import format_mask
from .engine import Deal, Match
from .rules import Rules, rules_from_dict

FORMAT = "barbu_env.record"
VERSION = 1
KINDS = ("deal", "match")


class RecordError(ValueError):
    """A record that cannot be read or does not replay: says which file, deal and step, and why."""

    def __init__(self, reason: str, source: str | None = None, deal: int | None = None, step: int | None = None):
        self.reason, self.source, self.deal, self.step = reason, source, deal, step
        where = [source or "record"]
        if deal is not None:
            where.append(f"deal {deal}")
        if step is not None:
            where.append(f"step {step}")
        super().__init__(", ".join(where) + ": " + reason)


@dataclass
class DealLog:
    """One deal of a record (see the module docstring for the fields)."""

    declarer: int
    hands: list[str]
    set_contract: str | None = None
    actions: list[tuple[int, str]] = field(default_factory=list)
    contract: str | None = None
    scores: list[int] | None = None

    @property
    def finished(self) -> bool:
        """True once the deal's scores are recorded."""
        return self.scores is not None


@dataclass
class GameRecord:
    """A played deal (``kind="deal"``) or match (``kind="match"``)."""

    kind: str
    rules: Rules
    deals: list[DealLog] = field(default_factory=list)
    seed: int | None = None
    first_declarer: int = 0
    players: list[str] | None = None
    totals: list[int] | None = None
    winners: list[int] | None = None

    @property
    def finished(self) -> bool:
        """True when the game was played to its end (every deal scored; a match with its winners)."""
        if not self.deals or not self.deals[-1].finished:
            return False
        return self.kind == "deal" or self.winners is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (rule options that differ from ``Rules()`` only)."""
        default = Rules()
        rules = {f.name: getattr(self.rules, f.name) for f in dataclasses.fields(Rules)}
        return {
            "format": FORMAT, "version": VERSION, "kind": self.kind,
            "rules": {k: v for k, v in rules.items() if v != getattr(default, k)},
            "seed": self.seed, "first_declarer": self.first_declarer, "players": self.players,
            "deals": [
                {"declarer": d.declarer, "hands": list(d.hands), "set_contract": d.set_contract,
                 "actions": [[s, a] for s, a in d.actions], "contract": d.contract, "scores": d.scores}
                for d in self.deals
            ],
            "totals": self.totals, "winners": self.winners,
        }  # fmt: skip

    def to_json(self) -> str:
        """The record as JSON text: the game's fields on the first line, then one line per deal."""
        data = self.to_dict()
        deals = data.pop("deals")
        return json.dumps(data)[:-1] + ', "deals": [\n' + ",\n".join(json.dumps(d) for d in deals) + "\n]}"

    def save(self, path: str | Path) -> Path:
        """Write the record as JSON; returns the path."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(self.to_json() + "\n")
        return p

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> GameRecord:
        """Parse the JSON form (checks the shape, not the play: see :func:`replay`)."""
        return _parse(data, source)


# ----------------------------------------------------------------------------------------------- parsing
_TOP_KEYS = ("format", "version", "kind", "rules", "seed", "first_declarer", "players", "deals", "totals", "winners")
_DEAL_KEYS = ("declarer", "hands", "set_contract", "actions", "contract", "scores")


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _int_list(v: Any, what: str, source: str | None, deal: int | None = None) -> list[int] | None:
    if v is None:
        return None
    if not isinstance(v, list) or not all(_is_int(x) for x in v):
        raise RecordError(f"{what} must be a list of integers or null, got {v!r}", source, deal)
    return list(v)


def _parse(data: Any, source: str | None) -> GameRecord:
    if not isinstance(data, dict):
        raise RecordError(f"a record is a JSON object, got {type(data).__name__}", source)
    if data.get("format") != FORMAT:
        raise RecordError(f"not a game record: 'format' must be {FORMAT!r}, got {data.get('format')!r}", source)
    if data.get("version") != VERSION:
        raise RecordError(f"unsupported record version {data.get('version')!r}: this reader knows {VERSION}", source)
    unknown = sorted(set(data) - set(_TOP_KEYS))
    if unknown:
        raise RecordError(f"unknown key(s) {unknown}: valid keys are {list(_TOP_KEYS)}", source)
    kind = data.get("kind")
    if kind not in KINDS:
        raise RecordError(f"bad kind {kind!r}: expected one of {KINDS}", source)
    try:
        rules = rules_from_dict(data.get("rules") or {})
    except (TypeError, ValueError) as e:
        raise RecordError(f"bad rules: {e}", source) from None
    seed, first = data.get("seed"), data.get("first_declarer", 0)
    if seed is not None and not _is_int(seed):
        raise RecordError(f"bad seed {seed!r}: expected an integer or null", source)
    if not _is_int(first) or not 0 <= first < rules.players:
        raise RecordError(f"bad first_declarer {first!r}: expected a seat 0..{rules.players - 1}", source)
    players = data.get("players")
    if players is not None and (
        not isinstance(players, list) or len(players) != rules.players or not all(isinstance(p, str) for p in players)
    ):
        raise RecordError(f"bad players {players!r}: expected {rules.players} strings or null", source)
    raw_deals = data.get("deals")
    if not isinstance(raw_deals, list) or not raw_deals:
        raise RecordError("'deals' must be a non-empty list", source)
    if kind == "deal" and len(raw_deals) != 1:
        raise RecordError(f"a deal record holds one deal, this one {len(raw_deals)}", source)
    deals = [_parse_deal(d, k, source, rules) for k, d in enumerate(raw_deals)]
    for k, d in enumerate(deals[:-1]):
        if not d.finished:
            raise RecordError("only the last deal may be unfinished ('scores': null)", source, k)
    return GameRecord(
        kind, rules, deals, seed, first, players,
        _int_list(data.get("totals"), "totals", source), _int_list(data.get("winners"), "winners", source),
    )  # fmt: skip


def _parse_deal(d: Any, k: int, source: str | None, rules: Rules) -> DealLog:
    if not isinstance(d, dict):
        raise RecordError(f"a deal is a JSON object, got {type(d).__name__}", source, k)
    unknown = sorted(set(d) - set(_DEAL_KEYS))
    if unknown:
        raise RecordError(f"unknown key(s) {unknown}: valid keys are {list(_DEAL_KEYS)}", source, k)
    declarer, hands = d.get("declarer"), d.get("hands")
    if not _is_int(declarer) or not 0 <= declarer < rules.players:
        raise RecordError(f"bad declarer {declarer!r}: expected a seat 0..{rules.players - 1}", source, k)
    if not isinstance(hands, list) or len(hands) != rules.players or not all(isinstance(h, str) for h in hands):
        raise RecordError(f"'hands' must be {rules.players} card strings such as 'AS KH 2C'", source, k)
    actions = d.get("actions")
    if not isinstance(actions, list):
        raise RecordError("'actions' must be a list of [seat, action name] pairs", source, k)
    pairs = []
    for i, a in enumerate(actions):
        if not (isinstance(a, list) and len(a) == 2 and _is_int(a[0]) and isinstance(a[1], str)):
            raise RecordError(f"bad action entry {a!r}: expected [seat, action name]", source, k, i)
        pairs.append((a[0], a[1]))
    for key in ("set_contract", "contract"):
        if d.get(key) is not None and not isinstance(d[key], str):
            raise RecordError(f"bad {key} {d[key]!r}: expected a contract text or null", source, k)
    return DealLog(declarer, hands, d.get("set_contract"), pairs, d.get("contract"),
                   _int_list(d.get("scores"), "scores", source, k))  # fmt: skip


# ----------------------------------------------------------------------------------------------- replay
@dataclass(frozen=True)
class Step:
    """The state after one action of a replay (``step == -1``: a deal's start, before any action).

    ``deal`` is the engine's deal after the action (the finished deal when it ended it), ``match`` the
    match (None for a deal record); both belong to the replay and change as it goes on."""

    deal_no: int
    step: int
    seat: int
    action: int
    deal: Deal
    match: Match | None


def _fresh_deal(record: GameRecord, log: DealLog, k: int, match: Match | None, source: str | None) -> Deal:
    """The deal ``k`` of the record with its hands: built from the match's own next deal (its declarer,
    available contracts, R6.4 duty and set contract) in a match, from the record alone in a deal record."""
    try:
        if match is None:
            return Deal.from_hands([log.hands[s] for s in range(record.rules.players)], log.declarer,
                                   log.set_contract, record.rules)  # fmt: skip
        nxt = match.deal
        if nxt.declarer != log.declarer:
            raise RecordError(f"declarer is {log.declarer} but the match gives seat {nxt.declarer} (R2.2)", source, k)
        if nxt.contract_text != log.set_contract:
            raise RecordError(
                f"set_contract is {log.set_contract!r} but the match starts this deal with {nxt.contract_text!r}",
                source, k,
            )  # fmt: skip
        plain = nxt.contract is not None and nxt.trump < 0 and nxt.fantan_rank < 0
        contract = nxt.contract if plain else nxt.contract_text  # a Contract row: the R2.4 tie-break deal too
        return Deal.from_hands(log.hands, nxt.declarer, contract, nxt.rules, available=nxt.available,
                               must_double=nxt.must_double, table=nxt.table)  # fmt: skip
    except ValueError as e:
        if isinstance(e, RecordError):
            raise
        raise RecordError(f"bad deal set-up: {e}", source, k) from None


def _first_match(record: GameRecord, source: str | None) -> Match:
    log = record.deals[0]
    try:
        return Match(record.rules, np.random.default_rng(0), record.first_declarer, log.hands, log.set_contract)
    except ValueError as e:
        raise RecordError(f"bad deal set-up: {e}", source, 0) from None


def replay(record: GameRecord | dict[str, Any], source: str | None = None) -> Iterator[Step]:
    """Play the record through the engine, yielding a :class:`Step` at each deal's start and after each
    action; raises :class:`RecordError` at the first action or score that does not agree with the rules."""
    rec = record if isinstance(record, GameRecord) else GameRecord.from_dict(record, source)
    match = _first_match(rec, source) if rec.kind == "match" else None
    for k, log in enumerate(rec.deals):
        if match is not None and match.is_over:
            raise RecordError(f"the match is over after {k} deals but the record goes on", source, k)
        deal = _fresh_deal(rec, log, k, match, source)
        if match is not None:
            match.deal = deal
        yield Step(k, -1, -1, -1, deal, match)
        for i, (seat, name) in enumerate(log.actions):
            if deal.is_over:
                raise RecordError(f"the deal is over but the record has {len(log.actions) - i} more action(s)",
                                  source, k, i)  # fmt: skip
            try:
                a = action_id(name, naming_players(rec.rules))
            except ValueError as e:
                raise RecordError(str(e), source, k, i) from None
            if seat != deal.current_player:
                raise RecordError(f"seat {seat} plays {name!r} but seat {deal.current_player} is on move", source, k, i)
            if not deal.is_legal(a):
                names = action_names(rec.rules)
                legal = ", ".join(names[x] for x in deal.legal_actions())
                raise RecordError(f"illegal action {name!r} for seat {seat}: legal are {legal}", source, k, i)
            deal.apply(a)
            yield Step(k, i, seat, a, deal, match)
        _check_deal_end(log, deal, k, source)
        if match is not None and deal.is_over:
            match.end_deal()
    _check_totals(rec, match, source)


def _check_deal_end(log: DealLog, deal: Deal, k: int, source: str | None) -> None:
    if log.scores is None:
        if deal.is_over:
            raise RecordError(f"the deal is over (scores {deal.scores}) but the record gives no scores", source, k)
        return
    if not deal.is_over:
        raise RecordError(
            f"the record gives scores but the deal is not over after its {len(log.actions)} actions "
            f"(seat {deal.current_player} to move)", source, k,
        )  # fmt: skip
    if log.contract != deal.contract_text:
        raise RecordError(f"contract is {log.contract!r} but the actions play {deal.contract_text!r}", source, k)
    if log.scores != deal.scores:
        raise RecordError(f"scores are {log.scores} but the engine scores {deal.scores} (R8.1)", source, k)


def _check_totals(rec: GameRecord, match: Match | None, source: str | None) -> None:
    if match is None:
        totals = rec.deals[0].scores
        if rec.totals is not None and rec.totals != totals:
            raise RecordError(f"totals are {rec.totals} but the deal scores {totals}", source)
        if rec.winners is not None:
            raise RecordError("a deal record has no winners: 'winners' must be null", source)
        return
    if match.is_over:
        if rec.totals != match.totals or rec.winners != match.winners:
            raise RecordError(
                f"totals/winners are {rec.totals}/{rec.winners} but the match ends {match.totals}/{match.winners} "
                "(R2.4, R8.3)", source,
            )  # fmt: skip
    elif rec.winners is not None:
        raise RecordError(f"winners are {rec.winners} but the match is not over after {len(rec.deals)} deals", source)
    elif rec.totals is not None and rec.totals != match.totals:
        raise RecordError(f"totals are {rec.totals} but the deals add up to {match.totals}", source)


def verify(record: GameRecord | dict[str, Any], source: str | None = None) -> GameRecord:
    """Replay the whole record (raises :class:`RecordError` when it does not agree); returns it parsed."""
    rec = record if isinstance(record, GameRecord) else GameRecord.from_dict(record, source)
    for _ in replay(rec, source):
        pass
    return rec


def loads(text: str, source: str | None = None) -> GameRecord:
    """A verified record from JSON text."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise RecordError(f"not valid JSON: {e}", source) from None
    return verify(GameRecord.from_dict(data, source), source)


def load(path: str | Path) -> GameRecord:
    """A verified record from a JSON file (:class:`RecordError` names the file when it is refused)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise RecordError(f"cannot read the file: {e.strerror or e}", str(p)) from None
    return loads(text, str(p))


# ----------------------------------------------------------------------------------------------- recording
def hands_text(hands: Sequence[int]) -> list[str]:
    """Each seat's hand mask as card text, grouped by suit (``"AS KS 2H ..."``)."""
    return [format_mask(h) for h in hands]


class RecordingEnv(BaseWrapper):
    """A ``barbu_env.env(...)`` that writes the :class:`GameRecord` of each episode as it is played.

    ``record`` is the current episode's record (complete once the episode ends); ``save(path)`` writes it.
    ``players`` names the seats' players in the record. Illegal actions raise (the env's
    ``illegal_action="raise"``): an R8.2 renege is not a move a record can replay."""

    def __init__(self, env: Any, players: Sequence[str] | None = None) -> None:
        super().__init__(env)
        raw = self.env.unwrapped
        if raw.illegal_action != "raise":
            raise ValueError(
                f"RecordingEnv needs illegal_action='raise' (got {raw.illegal_action!r}): a renege or a terminated "
                "episode is not a move a record can replay"
            )
        if players is not None and len(players) != raw.num_players:
            raise ValueError(f"players must name {raw.num_players} seats, got {list(players)!r}")
        self.players = list(players) if players is not None else None
        self._record: GameRecord | None = None
        self._recorded: Deal | None = None  # the engine deal the last DealLog follows

    @property
    def record(self) -> GameRecord:
        """The current episode's record (ValueError before the first reset)."""
        if self._record is None:
            raise ValueError("no record yet: call reset() first")
        return self._record

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        raw = self.env.unwrapped
        first = raw.match.first_declarer if raw.match is not None else 0
        self._record = GameRecord(raw.mode, raw.rules, [], seed, first, self.players)
        self._start_deal()

    def _start_deal(self) -> None:
        deal = self._recorded = self.env.unwrapped.deal
        self.record.deals.append(DealLog(deal.declarer, hands_text([deal.held(s) for s in range(deal.n)]),
                                         deal.contract_text))  # fmt: skip

    def step(self, action: Any) -> None:
        raw = self.env.unwrapped
        agent = self.env.agent_selection
        deal = self._recorded
        if deal is None or self.env.terminations.get(agent, True) or self.env.truncations.get(agent, True):
            self.env.step(action)
            return
        seat = raw.agent_name_mapping[agent]
        self.env.step(action)  # raises on an illegal action (nothing recorded then)
        self.record.deals[-1].actions.append((seat, action_names(raw.rules)[int(action)]))
        if deal.is_over or raw.deal is not deal:
            self._end_deal(deal)

    def _end_deal(self, deal: Deal) -> None:
        rec, match = self.record, self.env.unwrapped.match
        log = rec.deals[-1]
        log.contract, log.scores = deal.contract_text, list(deal.scores or ())
        if match is None:
            rec.totals = list(log.scores)
        elif match.winners is not None:
            rec.totals, rec.winners = list(match.totals), list(match.winners)
        else:
            self._start_deal()

    def save(self, path: str | Path) -> Path:
        """Write the current episode's record."""
        return self.record.save(path)


__all__ = [
    "FORMAT", "VERSION", "DealLog", "GameRecord", "RecordError", "RecordingEnv", "Step", "load", "loads",
    "replay", "verify",
]  # fmt: skip
