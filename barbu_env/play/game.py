"""A game between one human seat and agents, on a recorded ``barbu_env.env``: the agents move by their
``act``, the human's moves are checked by the engine, and the game's record is kept (:mod:`barbu_env.records`).
Used by the terminal (``barbu-play``) and the web table (``barbu-serve``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .. import agents as agent_lib
from ..actions import action_id, action_name, action_names, naming_players
from ..engine import Deal
from ..env import env as make_env
from ..records import GameRecord, RecordingEnv
from .view import legal_names, seat_view

#: The player name a record gives the human seat.
HUMAN = "human"


class IllegalMove(ValueError):
    """A move the human may not make now: ``reason`` says why, ``legal`` lists the legal action names."""

    def __init__(self, reason: str, legal: list[str]) -> None:
        super().__init__(f"{reason}; legal now: {', '.join(legal)}" if legal else reason)
        self.reason = reason
        self.legal = legal


@dataclass(frozen=True)
class Event:
    """One action of the game: who played what, and the human seat's view right after it."""

    seat: int
    action: str
    view: dict[str, Any]


def agent_specs(specs: Sequence[str], seat: int, players: int) -> list[str]:
    """The players of each seat: ``human`` at ``seat``, the others from ``specs`` (one spec for all, or one
    per other seat in seat order)."""
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < players:
        raise ValueError(f"bad seat {seat!r}: expected a seat 0..{players - 1}")
    specs = list(specs)
    if len(specs) == 1:
        specs = specs * (players - 1)
    if len(specs) != players - 1:
        raise ValueError(f"give one agent spec for all other seats or one per other seat ({players - 1}), got {specs}")
    return [*specs[:seat], HUMAN, *specs[seat:]]


class Game:
    """One deal (``mode="deal"``) or match against agents; the human sits at ``seat``.

    ``agents``: specs for the other seats (see :func:`agent_specs`); ``rules``: a preset name, YAML path or
    mapping; ``contract``: deal mode's fixed contract (None: the declarer declares); ``declarer``: the
    declarer (deal mode) or first declarer (match mode); ``hint``: a spec whose agent suggests the human's
    moves (:meth:`hint`)."""

    def __init__(
        self,
        seat: int = 0,
        agents: Sequence[str] = ("heuristic",),
        mode: str = "deal",
        rules: Any = "classic",
        contract: str | None = None,
        declarer: int = 0,
        seed: int | None = None,
        hint: str | None = None,
    ) -> None:
        env = make_env(mode=mode, rules=rules, contract=contract, declarer=declarer)
        n = env.unwrapped.num_players
        self.players = agent_specs(agents, seat, n)
        self.seat = seat
        self.human = env.possible_agents[seat]
        self.agents = {
            name: agent_lib.make(spec, seed=None if seed is None else seed + s)
            for s, (name, spec) in enumerate(zip(env.possible_agents, self.players))
            if s != seat
        }
        self.hinter = None if hint is None else agent_lib.make(hint, seed=None if seed is None else seed + 100)
        self.env = RecordingEnv(env, self.players)
        self.env.reset(seed=seed)

    # ------------------------------------------------------------------ state
    @property
    def raw(self) -> Any:
        return self.env.unwrapped

    @property
    def over(self) -> bool:
        """True once the deal (deal mode) or the match is over: every agent is terminated."""
        return all(self.env.terminations.values())

    @property
    def record(self) -> GameRecord:
        """The game's record so far (complete once :attr:`over`)."""
        return self.env.record

    def human_to_move(self) -> bool:
        return not self.over and self.env.agent_selection == self.human

    def view(self) -> dict[str, Any]:
        """What the human seat sees now."""
        return seat_view(self.raw.deal, self.raw.match, self.seat)

    def legal(self) -> list[str]:
        """The human's legal action names (empty when not on move)."""
        return legal_names(self.raw.deal) if self.human_to_move() else []

    # ------------------------------------------------------------------ moves
    def _step(self, action: int) -> Event:
        raw = self.raw
        seat = raw.agent_name_mapping[self.env.agent_selection]
        deal: Deal = raw.deal
        self.env.step(action)
        # the finished deal, not the match's next one, is what the seat sees right after its last card
        return Event(seat, action_names(raw.rules)[action], seat_view(deal, raw.match, self.seat))

    def advance(self) -> list[Event]:
        """Let the agents play until the human is on move or the game is over."""
        events = []
        while not self.over and self.env.agent_selection != self.human:
            agent = self.env.agent_selection
            events.append(self._step(int(self.agents[agent].act(self.env, agent))))
        return events

    def play(self, move: str | int) -> list[Event]:
        """The human's move (an action name such as ``"QS"``, ``"declare:no_queens"``, ``"double:left"``, or
        an action id), checked by the engine; then the agents' moves up to the human's next turn."""
        if not self.human_to_move():
            raise IllegalMove("it is not your turn" if not self.over else "the game is over", [])
        legal = self.legal()
        try:
            players = naming_players(self.raw.rules)
            a = move if isinstance(move, int) and not isinstance(move, bool) else action_id(str(move), players)
            name = action_name(a, players)
        except ValueError:
            raise IllegalMove(f"{move!r} is not an action (a card such as QS or 10D, or a name from the list)",
                              legal) from None  # fmt: skip
        if name not in legal:
            raise IllegalMove(f"{name} is not legal now", legal)
        return [self._step(a), *self.advance()]

    def hint(self) -> str | None:
        """The hint agent's choice for the human on move (None without ``hint`` or off move)."""
        if self.hinter is None or not self.human_to_move():
            return None
        return action_names(self.raw.rules)[int(self.hinter.act(self.env, self.human))]
