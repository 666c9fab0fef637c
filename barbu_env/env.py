"""Barbu as a PettingZoo AEC environment (``barbu_v0``): a thin adapter over the engine (RULES.md R1–R9).

``env(**kwargs)`` is ``raw_env(**kwargs)`` wrapped in PettingZoo's ``AssertOutOfBoundsWrapper`` and
``OrderEnforcingWrapper``. Agents ``player_0``..``player_3`` sit in seats 0..3 (R1.3); Barbu King
for 3 or 5 players (``rules="king3"``/``"king5"`` or ``players=3``/``5``, R11.4) has 3 or 5 agents.

Keyword arguments (anything else is a ``ValueError`` that lists the valid names):

- ``mode``: ``"match"`` (default, a whole match: R2) or ``"deal"`` (one deal per episode).
- ``contract``: deal mode only — fixes the contract (``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``)
  and skips the declaration; ``None`` (default) lets the declarer choose (R3).
- ``declarer``: deal mode: the declarer (seat 0..3 or ``"random"``, default 0); match mode: the first
  declarer (R2.2). In Barbu King's fixed order the declarer is the player to the dealer's left, who
  leads and names Domino's rank (R11.1, R11.2); with ``choose`` it is the dealer (R11.3). In deal mode
  under King without ``contract`` the declarer chooses among all King contracts.
- ``rules``: a preset name, YAML path, mapping or ``Rules``; every RULES.md option may also be given as
  a keyword (``doubling="off"``, ``ravage_city=True``) and overrides it (``rules.load_rules``).
- ``reward_scale`` (default 1.0): rewards are raw points times this.
- ``illegal_action``: ``"raise"`` (default, ``ValueError`` naming the legal actions), ``"renege"``
  (R8.2 penalty, see :meth:`raw_env.step`) or ``"terminate"`` (the offender gets
  ``-illegal_penalty * reward_scale``, the others 0, and the episode ends for all).
- ``illegal_penalty`` (default 100.0 points): the ``"terminate"`` penalty; larger than any usual deal
  loss so that an illegal move never pays.
- ``render_mode``: ``None``, ``"ansi"`` (``render()`` returns the text) or ``"human"`` (prints it);
  ``render_hands``: ``"current"`` (default, only the seat on move), ``"all"`` or ``"none"``.

Rewards: when a deal ends every seat is credited that deal's score (contract + settlement, R8.1), so an
agent's rewards over an episode sum to its match total (R8.3) or its deal score. All other steps give 0.
Barbu King (``rules="king"``, R11): points are bad and the lowest total wins, so the reward is the
**negated** score (``rules.score_sign * points``): rewards sum to minus the match total. Observations
keep the game's points (``points``/``totals`` blocks, positive = bad).

Reset options (``env.reset(seed, options)``) for the first deal of the episode:

- ``"hands"``: one list of card strings or ids per seat (seat order); ``"contract"``: as the ``contract``
  kwarg (in match mode it must be one the first declarer may choose; in King's fixed order, the first
  deal's contract, R11.2);
- ``"declarer"``: deal mode: the declarer; match mode: the first declarer (alias of
  ``"first_declarer"``; giving both with different values is an error). A seat 0..3 or ``"random"``
  (drawn from the env's RNG before the shuffle).
- Unknown keys are ignored with a warning (PettingZoo's ``api_test`` passes a dummy option).

The RNG is ``np.random.default_rng(seed)`` when ``seed`` is given; ``reset()`` without a seed keeps
drawing from the current stream (a fresh unseeded one on the first reset). A reset that raises changes
nothing: neither the RNG nor the episode in progress.

Observations are ``{"observation": float32[OBS_SIZE], "action_mask": int8[87]}`` seat-relative, laid
out by :mod:`barbu_env.observation` (Barbu King has its own size, ``layout(rules).size``); the mask is
all zeros for agents not on move and is built from ``Deal.legal_actions()``. Arrays handed out are copies.

The deal in play is a :class:`~barbu_env.inplay.DealInPlay`: the compiled copy
(:class:`~barbu_env.inplay.CompiledPlay`) where it follows the rules (classic Barbu, deal and match mode),
else the engine ``Deal`` (:class:`~barbu_env.inplay.EnginePlay`). The engine takes over the rest of a deal
when something needs the ``Deal`` itself: a read of ``deal`` or ``match``, ``render``, ``information_state``,
an illegal action, and the end of a match's deal (the match scores the ``Deal``).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env import AECIterable

from . import inplay
from .actions import NUM_ACTIONS, PASS
from .engine.deal import Deal, Phase, deal_hands
from .engine.infostate import InfoState
from .engine.match import Match
from .env_checks import MODES, RENDER_MODES, ContractCheck, as_action, check_options, check_seat, reset_options
from .inplay import CompiledPlay, DealInPlay, EnginePlay
from .observation import layout
from .render import render_text
from .rules import Rules, load_rules

AGENTS = tuple(f"player_{i}" for i in range(4))
__all__ = ["AGENTS", "MODES", "env", "raw_env"]

_NO_MASK = np.zeros(NUM_ACTIONS, np.int8)  # the mask of agents not on move (copied: a copy is cheaper than zeros)


class _OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` for which only a reset that succeeds counts as one."""

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        before = self._has_reset, self._has_updated
        try:
            super().reset(seed=seed, options=options)
        except BaseException:
            self._has_reset, self._has_updated = before
            raise


def env(**kwargs: Any) -> AECEnv:
    """The Barbu AEC environment with PettingZoo's standard wrappers (see the module docstring)."""
    return _OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(raw_env(**kwargs)))


class _ActionSpace(spaces.Discrete):
    """``Discrete(87)`` whose ``contains`` answers a plain in-range ``int`` without numpy (PettingZoo's
    ``AssertOutOfBoundsWrapper`` calls it on every step); anything else goes to ``Discrete.contains``."""

    def contains(self, x: Any) -> bool:
        if type(x) is int and 0 <= x < self.n:
            return True
        return super().contains(x)


class _AgentIterable(AECIterable):
    """PettingZoo's ``AECIterable`` whose iterator is a generator (its ``__next__`` is a Python call a step)."""

    def __iter__(self) -> Iterator[str]:
        """``agent_selection`` until no agent is left or ``max_iter`` runs out (as ``AECIterator``)."""
        env, left = self.env, self.max_iter
        while left > 0 and env.agents:
            left -= 1
            yield env.agent_selection


class raw_env(AECEnv):
    """Barbu, one match or one deal per episode (see the module docstring for every option)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "barbu_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False, "render_fps": 1,
    }  # fmt: skip

    def __init__(
        self,
        mode: str = "match",
        contract: str | None = None,
        declarer: int | str = 0,
        rules: str | dict | Rules | None = None,
        reward_scale: float = 1.0,
        illegal_action: str = "raise",
        illegal_penalty: float = 100.0,
        render_mode: str | None = None,
        render_hands: str = "current",
        **rule_options: Any,
    ) -> None:
        super().__init__()
        check_options(mode, illegal_action, render_mode, render_hands, reward_scale, illegal_penalty, rule_options)
        self.rules: Rules = load_rules(rules, **rule_options)
        self.mode = mode
        if contract is not None and mode != "deal":
            raise ValueError(
                "contract= fixes the contract of a single deal: use it with mode='deal' (in match mode, "
                "fix the first deal's contract with reset(options={'contract': ...}))"
            )
        self._check_contract = ContractCheck(self.rules)
        if contract is not None:
            self._check_contract(contract)
        self.contract = contract
        n = self.num_players = self.rules.players
        self.declarer = check_seat(declarer, "declarer", n)
        self.reward_scale = float(reward_scale)
        self.illegal_action = illegal_action
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        self.render_hands = render_hands
        agents = tuple(f"player_{i}" for i in range(n))
        self._names = agents
        self.possible_agents = list(agents)
        self.agent_name_mapping = {a: i for i, a in enumerate(agents)}
        lay = layout(self.rules)
        low, high = lay.bounds()
        obs_space: dict[str, spaces.Space] = {"observation": spaces.Box(low, high, (lay.size,), np.float32),
                     "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8)}  # fmt: skip
        self.observation_spaces = {a: spaces.Dict(obs_space) for a in agents}
        self.action_spaces = {a: _ActionSpace(NUM_ACTIONS) for a in agents}
        self._rng: np.random.Generator | None = None
        self._match: Match | None = None
        self._play: DealInPlay = None  # type: ignore[assignment]  # set by reset
        self._credited = False  # the last step credited a deal's scores: the next one clears the rewards
        self._mirror = inplay.mirror_for(self.rules)  # the compiled copy's buffers (numba loaded now), or None

    # ----------------------------------------------------------------- PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """PettingZoo's ``agent_iter``: ``agent_selection`` while agents are left, at most ``max_iter`` times."""
        return _AgentIterable(self, max_iter)

    @property
    def deal(self) -> Deal | None:
        """The current engine deal (in match mode, the match's current deal; None before reset); the engine takes
        over the deal in play."""
        return None if self._play is None else self._engine().deal()

    @property
    def match(self) -> Match | None:
        """The match (None in deal mode); its current deal is brought up to date (the engine takes over)."""
        if self._match is not None and isinstance(self._play, CompiledPlay) and self._play.actions:
            self._engine()
        return self._match

    def _engine(self) -> EnginePlay:
        """The engine takes over the deal in play (a compiled play is replaced by the ``Deal`` it reached)."""
        play = self._play
        if not isinstance(play, EnginePlay):
            deal = play.deal()
            if self._match is not None:
                self._match.deal = deal
            play = self._play = EnginePlay(deal, self._match)
        return play

    def _play_for(self, deal: Deal, match: Match | None) -> DealInPlay:
        """The play of a match's fresh deal: compiled where the copy follows it."""
        if self._mirror is not None:
            play = CompiledPlay.load(self._mirror, deal, match)
            if play is not None:
                return play
        return EnginePlay(deal, match)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        rng = self._rng if seed is None and self._rng is not None else np.random.default_rng(seed)
        saved = rng.bit_generator.state if rng is self._rng else None
        try:
            match, play = self._start(rng, dict(options or {}))
        except BaseException:  # a reset that fails changes nothing
            if saved is not None:
                rng.bit_generator.state = saved
            raise
        self._rng, self._match, self._play = rng, match, play
        agents = self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in agents}
        self._credited = False
        self.agent_selection = self._names[max(play.seat, 0)]

    def _start(self, rng: np.random.Generator, opts: dict[str, Any]) -> tuple[Match | None, DealInPlay]:
        """The match (None in deal mode) and the play of the first deal under the reset options."""
        hands, contract, chosen = reset_options(opts, self.mode, self.contract, self.declarer, self.num_players)
        seat = int(rng.integers(self.num_players)) if chosen == "random" else int(chosen)
        if contract is not None:
            self._check_contract(contract)
        if self.mode == "match":
            match = Match(self.rules, rng, seat, hands, contract)
            return match, self._play_for(match.deal, match)
        drawn = hands is None
        if drawn:
            hands = deal_hands(rng, self.rules)
        if self._mirror is None:
            return None, EnginePlay(Deal.from_hands(hands, seat, contract, self.rules))
        return None, CompiledPlay.start(self._mirror, hands, seat, contract, drawn)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self.agent_name_mapping[agent]
        play = self._play
        obs = play.observe(seat).copy()
        if seat == play.seat and not self.terminations.get(agent, True):
            return {"observation": obs, "action_mask": play.mask().copy()}
        return {"observation": obs, "action_mask": _NO_MASK.copy()}

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``: observation, cumulative reward, terminated, truncated and info of ``agent_selection``."""
        a = self.agent_selection
        obs = self.observe(a) if observe else None
        return obs, self._cumulative_rewards[a], self.terminations[a], self.truncations[a], self.infos[a]

    def step(self, action: Any) -> None:
        """Apply the action of ``agent_selection``. Illegal actions, by ``illegal_action``:
        ``"raise"``: ``ValueError`` naming the legal actions, the state unchanged;
        ``"renege"``: R8.2 — once the contract is declared, the offender loses the absolute contract
        total, no one else scores, doubles are not settled and the deal ends (in match mode the next
        deal starts); in Fantan an unplayable card is taken back and counts as a pass (R8.2, R7.3; the
        pass proves nothing). An illegal declaration has no R8.2 penalty and raises;
        ``"terminate"``: the offender gets ``-illegal_penalty * reward_scale``, the others 0, and the
        episode ends for every agent."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        if self._credited:
            rewards = self.rewards
            for ag in rewards:
                rewards[ag] = 0.0
            self._credited = False
        a = action if type(action) is int else as_action(action)
        play = self._play
        if a is None or not (0 <= a < NUM_ACTIONS and play.apply(a)):
            after = self._illegal(a, action)
            if after is None:
                return
            play = after
        s = play.seat
        if s >= 0:
            self.agent_selection = self._names[s]
        else:
            self._end_deal()
        if self.render_mode == "human":
            self.render()

    def _illegal(self, a: int | None, action: Any) -> DealInPlay | None:
        """Handle an action the play refused, by ``illegal_action``; the play after it, None when the episode ended."""
        if self.illegal_action == "raise":
            if a is None:
                raise ValueError(f"bad action {action!r}: expected an int action id in 0..{NUM_ACTIONS - 1}")
            play = self._engine()
            play.deal().apply(a)  # raises ValueError naming the legal actions; the state is unchanged then
            return play
        play = self._engine()
        deal = play.deal()
        seat = deal.current_player
        if self.illegal_action == "terminate":
            penalty = -self.illegal_penalty * self.reward_scale
            for s, ag in enumerate(self._names):
                r = penalty if s == seat else 0.0
                self.rewards[ag] = r
                self._cumulative_rewards[ag] += r
            self._terminate_all()
            self._credited = True
            self.infos[self._names[seat]] = {"illegal_action": action}
            return None
        if deal.phase == Phase.DECLARE:
            raise deal.illegal(action)  # no contract yet: R8.2 has no penalty to apply
        if deal.phase == Phase.FANTAN and a is not None and 0 <= a < PASS:
            rules = deal.rules
            deal.rules = rules.replace(fantan_pass="free")  # a pass that proves nothing (R8.2)
            try:
                deal.apply(PASS)
            finally:
                deal.rules = rules
        else:
            deal.renege(seat)
        return play

    def _end_deal(self) -> None:
        """Credit the finished deal's scores (R8.1); start the match's next deal or terminate the episode."""
        match = self._match
        if match is None:
            self._credit(self._play.scores())
            self._terminate_all()
            return
        play = self._engine()  # the match scores the Deal
        self._credit(play.scores())
        deal = play.deal()
        if match.deal is deal:
            match.end_deal()
        if match.is_over:
            self._terminate_all()
            self._play = EnginePlay(match.deal, match)
        else:
            self._play = self._play_for(match.deal, match)
            self.agent_selection = self._names[self._play.seat]

    def _terminate_all(self) -> None:
        for ag in self._names:
            self.terminations[ag] = True

    def _credit(self, scores: list[int]) -> None:
        """Each seat's reward (and cumulative reward): its deal score (R8.1) times ``reward_scale`` (R11: King's
        reward is the negated score)."""
        scale = self.reward_scale * self.rules.score_sign
        rewards, cum = self.rewards, self._cumulative_rewards
        for s, ag in enumerate(self._names):
            r = scores[s] * scale
            rewards[ag] = r
            cum[ag] += r
        self._credited = True

    def render(self) -> str | None:
        if self.render_mode is None:
            warnings.warn("render() called with render_mode=None: pass render_mode='ansi' or 'human'", stacklevel=2)
            return None
        text = render_text(self._engine().deal(), self.match, self.render_hands)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass

    # ----------------------------------------------------------------- for agents
    def information_state(self, agent: str) -> InfoState:
        """What ``agent`` knows: own hand and the public history (``engine.InfoState``)."""
        return InfoState.of(self._engine().deal(), self.agent_name_mapping[agent])

    def __str__(self) -> str:
        return self.metadata["name"]
