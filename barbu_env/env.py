"""Barbu as a PettingZoo AEC environment (``barbu_v0``): a thin adapter over the engine (RULES.md R1–R12).

``env(**kwargs)`` is ``raw_env(**kwargs)`` in PettingZoo's ``AssertOutOfBoundsWrapper`` and
``OrderEnforcingWrapper``. Agents ``player_0``..``player_{n-1}`` sit in seats 0..n-1, ``n = rules.players``
(R1.3; 3 or 5 for classic Barbu, R12, and Barbu King, R11.4; 6 for Barbu King, R11.5). docs/ENVIRONMENT.md
describes every option; in short:

- ``mode``: ``"match"`` (default, R2) or ``"deal"``; ``contract`` (deal mode): fixes the contract
  (``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``), else the declarer chooses (R3); ``declarer``: a seat or
  ``"random"`` (match mode: the first declarer, R2.2; King's fixed order: R11.1–R11.3).
- ``rules``: a preset name, YAML path, mapping or ``Rules``; every RULES.md option is also a keyword
  (``doubling="off"``) overriding it. Any other keyword is a ``ValueError`` listing the valid names.
- ``reward_scale`` (default 1.0, finite, > 0); ``illegal_action``: ``"raise"`` (default, ``ValueError``
  naming the legal actions), ``"renege"`` (R8.2, see :meth:`raw_env.step`) or ``"terminate"`` (the offender
  gets ``-illegal_penalty * reward_scale``, finite, >= 0, default 100; the episode ends). Only an action id
  can be illegal: a wrong type is a ``ValueError`` in every mode.
- ``render_mode``: ``None``, ``"ansi"``, ``"human"`` or ``"rgb_array"`` (an H×W×3 ``uint8`` picture,
  :mod:`barbu_env.render_image`); ``render_hands``: ``"current"``, ``"all"``, ``"none"``.

Rewards: when a deal ends each seat gets that deal's score (contract + settlement, R8.1), so rewards sum to the
match total (R8.3) or the deal score; under Barbu King the negated score (``rules.score_sign``, R11).
``reset(seed, options)``: ``seed`` None or an int >= 0 (``np.random.default_rng(seed)``; None keeps the
stream); options ``"hands"`` (a list of cards per seat), ``"contract"``, ``"declarer"``/``"first_declarer"``
(unknown keys warn: PettingZoo's ``api_test`` passes one). A reset that raises changes nothing. ``step`` and
``last`` before a reset or after the episode raise ``RuntimeError`` saying to call ``reset()``.

Observations ``{"observation": float32[layout(rules).size], "action_mask": int8[num_actions(rules)]}`` are
seat-relative (:mod:`barbu_env.observation`); the action space is ``Discrete(num_actions(rules))``: 87 ids for
four players, 83 / 95 for classic Barbu with 3 / 5 (R12.2), one more (``declare:anti_salad``) with a positive
salad (R10.3); :func:`barbu_env.actions.action_name` with ``players=n`` names them. The mask comes from
``Deal.legal_actions()`` and is all zeros for agents not on move; arrays handed out are copies. The deal in
play is a :class:`~barbu_env.inplay.DealInPlay`: the compiled copy (:class:`~barbu_env.inplay.CompiledPlay`)
where it follows the rules (four-player classic Barbu without ``positive``), else the engine
(:class:`~barbu_env.inplay.EnginePlay`), which takes over when something needs the ``Deal`` itself (``deal``,
``match``, ``render``, ``information_state``, an illegal action, the end of a match's deal).

Version policy: the name ``barbu_vN`` (and the registry id ``barbu/barbu-vN``) changes whenever observations,
actions, rewards or rules change; speed-ups and refactors do not change it. History: ``barbu_v0``, the first
release (CHANGELOG.md keeps the list). Checkpoints record the version they were trained on.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env import AECIterable
from pettingzoo.utils.env_logger import EnvLogger

from . import env_checks as checks
from . import inplay
from .actions import PASS, num_actions
from .engine.deal import Deal, Phase, deal_hands
from .engine.infostate import InfoState
from .engine.match import Match
from .env_checks import MODES, RENDER_MODES
from .inplay import CompiledPlay, DealInPlay, EnginePlay
from .observation import layout
from .render import render_text
from .rules import Rules, load_rules

if TYPE_CHECKING:
    from .vector.single import Mirror

AGENTS = tuple(f"player_{i}" for i in range(4))
__all__ = ["AGENTS", "MODES", "env", "raw_env"]


class _OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` for which only a reset that succeeds counts as one, and whose ``last``,
    ``agent_iter`` and ``step`` read the raw env's attributes directly (the same values and errors:
    ``tests/test_env.py`` compares them with PettingZoo's own wrappers, as for :class:`_AssertOutOfBoundsWrapper`)."""

    _has_reset: bool
    _has_updated: bool

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        before = self._has_reset, self._has_updated
        try:
            super().reset(seed=seed, options=options)
        except BaseException:
            self._has_reset, self._has_updated = before
            raise

    def step(self, action: Any) -> None:
        """PettingZoo's order-enforcing ``step`` (its error before a reset, its warning once no agent is left), the
        agents read on the raw env; then the inner wrapper's bounds check and the raw env's step."""
        if not self._has_reset or not self.env.unwrapped.agents:
            super().step(action)
            return
        self._has_updated = True
        self.env.step(action)

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` with its five reads made on the raw env (PettingZoo's forwards each through both
        wrappers, about half of a step's time); the same values, and PettingZoo's error before a reset."""
        if not self._has_reset:
            return super().last(observe)
        raw = self.env.unwrapped
        agent = raw.agent_selection
        obs = raw.observe(agent) if observe else None
        return obs, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent], raw.infos[agent]

    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]:
        """PettingZoo's order-enforcing ``agent_iter`` (its error before a reset; each agent but the first needs a
        ``step`` or ``reset`` first) as a generator reading the raw env."""
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return self._agents(max_iter)

    def _agents(self, max_iter: int) -> Iterator[str]:
        for agent in self.env.unwrapped.agent_iter(max_iter):  # the raw env's own loop, checked as PettingZoo's
            if not self._has_updated:
                raise AssertionError("need to call step() or reset() in a loop over `agent_iter`")
            self._has_updated = False
            yield agent


class _AssertOutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` whose ``step`` makes its check (an action in the agent's action space,
    or None for a terminated or truncated agent; PettingZoo's ``AssertionError`` otherwise) on the raw env's
    attributes directly."""

    def step(self, action: Any) -> None:
        raw = self.env.unwrapped
        agent = raw.agent_selection
        if not (
            (action is None and (raw.terminations[agent] or raw.truncations[agent]))
            or raw.action_space(agent).contains(action)
        ):
            raise AssertionError("action is not in action space")
        raw.step(action)


def env(**kwargs: Any) -> AECEnv:
    """The Barbu AEC environment with PettingZoo's standard wrappers (see the module docstring)."""
    return _OrderEnforcingWrapper(_AssertOutOfBoundsWrapper(raw_env(**kwargs)))


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
        scale, penalty = checks.check_options(
            mode, illegal_action, render_mode, render_hands, reward_scale, illegal_penalty, rule_options
        )
        self.rules: Rules = load_rules(rules, **rule_options)
        self.mode = mode
        if contract is not None and mode != "deal":
            raise ValueError(
                "contract= fixes the contract of a single deal: use it with mode='deal' (in match mode, "
                "fix the first deal's contract with reset(options={'contract': ...}))"
            )
        self._check_contract = checks.ContractCheck(self.rules)
        if contract is not None:
            self._check_contract(contract)
        self.contract = contract
        n = self.num_players = self.rules.players
        self.declarer = checks.check_seat(declarer, "declarer", n)
        self.reward_scale = scale
        self.illegal_action = illegal_action
        self.illegal_penalty = penalty
        self.render_mode = render_mode
        self.render_hands = render_hands
        agents = tuple(f"player_{i}" for i in range(n))
        self._names = agents
        self.possible_agents = list(agents)
        self.agent_name_mapping = {a: i for i, a in enumerate(agents)}
        lay = layout(self.rules)
        low, high = lay.bounds()
        k = self.num_actions = num_actions(self.rules)
        obs_space: dict[str, spaces.Space] = {"observation": spaces.Box(low, high, (lay.size,), np.float32),
                     "action_mask": spaces.Box(0, 1, (k,), np.int8)}  # fmt: skip
        self.observation_spaces = {a: spaces.Dict(obs_space) for a in agents}
        #: The space of :meth:`state`: every seat's observation, in seat order.
        self.state_space = spaces.Box(np.tile(low, n), np.tile(high, n), (n * lay.size,), np.float32)
        self.action_spaces = {a: checks.ActionSpace(k) for a in agents}
        self._no_mask = np.zeros(k, np.int8)  # the mask of agents not on move (copied: cheaper than zeros)
        self._rng: np.random.Generator | None = None
        self._match: Match | None = None
        self._play: DealInPlay = None  # type: ignore[assignment]  # set by reset
        self._credited = False  # the last step credited a deal's scores: the next one clears the rewards
        self._mirror = inplay.mirror_for(self.rules)  # the compiled copy's buffers (numba loaded now), or None

    # ----------------------------------------------------------------- PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[self._names[checks.agent_seat(self.agent_name_mapping, agent)]]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[self._names[checks.agent_seat(self.agent_name_mapping, agent)]]

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """PettingZoo's ``agent_iter``: ``agent_selection`` while agents are left, at most ``max_iter`` times."""
        return _AgentIterable(self, max_iter)

    @property
    def deal(self) -> Deal | None:
        """The current engine deal (in match mode, the match's current deal; None before reset); the engine takes
        over the deal in play."""
        return None if self._play is None else self._engine().deal()

    @property
    def compiled_deal(self) -> Mirror | None:
        """The compiled copy the deal in play is on (``vector.single.Mirror``: read it, never step it), or None where
        the engine plays the deal. An agent with a compiled form decides from it without building the ``Deal``
        (the heuristic: ``Mirror.heuristic``), so the deal stays on the copy."""
        play = self._play
        return play._mirror if isinstance(play, CompiledPlay) else None

    @property
    def contract_text(self) -> str | None:
        """The declared contract of the deal in play as ``Deal.contract_text`` gives it (``"no_queens"``,
        ``"trumps:S"``, ``"fantan:5"``; None before the declaration, R2.3, and before reset), read without
        building the ``Deal``."""
        return None if self._play is None else self._play.contract_text()

    @property
    def deal_scores(self) -> list[int] | None:
        """Each seat's score of the deal in play once it is over (contract + doubling settlement, R8.1), else None;
        read without building the ``Deal``."""
        play = self._play
        return None if play is None or play.seat >= 0 else play.scores()

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
            play = self._play = EnginePlay(deal, self._match, self.num_actions)
        return play

    def _play_for(self, deal: Deal, match: Match | None) -> DealInPlay:
        """The play of a match's fresh deal: compiled where the copy follows it."""
        if self._mirror is not None:
            play = CompiledPlay.load(self._mirror, deal, match)
            if play is not None:
                return play
        return EnginePlay(deal, match, self.num_actions)

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed, opts = checks.check_seed(seed), checks.check_reset_options(options)
        rng = self._rng if seed is None and self._rng is not None else np.random.default_rng(seed)
        saved = rng.bit_generator.state if rng is self._rng else None
        try:
            match, play = self._start(rng, opts)
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
        hands, contract, chosen = checks.reset_options(opts, self.mode, self.contract, self.declarer, self.num_players)
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
            return None, EnginePlay(Deal.from_hands(hands, seat, contract, self.rules), None, self.num_actions)
        return None, CompiledPlay.start(self._mirror, hands, seat, contract, drawn)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = checks.agent_seat(self.agent_name_mapping, agent)
        play = self._play
        if play is None:
            raise checks.not_running("observe()", started=False)
        obs = play.observe(seat).copy()
        if seat == play.seat and not self.terminations.get(agent, True):
            return {"observation": obs, "action_mask": play.mask().copy()}
        return {"observation": obs, "action_mask": self._no_mask.copy()}

    def state(self) -> np.ndarray:
        """The global state for centralised training (a critic that sees every hand, e.g. TorchRL's
        ``PettingZooWrapper(..., return_state=True)``): every seat's observation in seat order, concatenated
        (float32 [num_players * observation size], :attr:`state_space`). It holds every seat's hidden cards: never
        a playing policy's input."""
        play = self._play
        if play is None:
            raise checks.not_running("state()", started=False)
        size = self.state_space.shape[0] // self.num_players
        out = np.empty(self.state_space.shape, np.float32)
        for seat in range(self.num_players):
            out[seat * size : (seat + 1) * size] = play.observe(seat)
        return out

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last``: observation, cumulative reward, terminated, truncated and info of ``agent_selection``."""
        a = self._running("last()")
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
        agent = self._running("step()")
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = action if type(action) is int else checks.as_action(action)
        if a is None:  # a wrong type is refused in every mode: only an action id can be illegal
            raise checks.bad_action_type(action, self.num_actions)
        play = self._play
        k = self.num_actions
        legal = 0 <= a < k and play.apply(a)
        if not legal:
            deal = self._engine().deal()
            mode = self.illegal_action
            if mode == "raise" or not 0 <= a < k or (mode == "renege" and deal.phase == Phase.DECLARE):
                raise deal.illegal(a)  # names the legal actions, the state unchanged (a declaration has no R8.2)
        self._cumulative_rewards[agent] = 0.0  # (only once the action is accepted: a refused step changes nothing)
        if self._credited:
            rewards = self.rewards
            for ag in rewards:
                rewards[ag] = 0.0
            self._credited = False
        if not legal:
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

    def _illegal(self, a: int, action: Any) -> DealInPlay | None:
        """Handle an illegal action id under ``"terminate"`` or ``"renege"`` once the contract is declared; the play
        after it, None when the episode ended."""
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
        if deal.phase == Phase.FANTAN and 0 <= a < PASS:
            rules = deal.rules
            deal.rules = rules.replace(fantan_pass="free")  # a pass that proves nothing (R8.2)
            try:
                deal.apply(PASS)
            finally:
                deal.rules = rules
        else:
            deal.renege(seat)
        return play

    def _running(self, call: str) -> str:
        """``agent_selection`` of a reset env with agents left; else the ``RuntimeError`` saying to call reset()."""
        if self._play is None or not self.agents:
            raise checks.not_running(call, started=self._play is not None)
        return self.agent_selection

    def _end_deal(self) -> None:
        """Credit the finished deal's scores (R8.1); start the match's next deal or terminate the episode."""
        match = self._match
        if match is None:
            self._credit(self._play.scores())
            self._terminate_all()
            return
        play = self._play
        self._credit(play.scores())
        if isinstance(play, CompiledPlay) and play.fresh is match.deal and match.deal_no + 1 < match.num_deals:
            match.score_deal(play.record(match.deal_no))  # the match goes on: no Deal is built
        else:
            deal = self._engine().deal()  # the match scores (and keeps, if it was the last) the Deal
            if match.deal is deal:
                match.end_deal()
        if match.is_over:
            self._terminate_all()
            self._play = EnginePlay(match.deal, match, self.num_actions)
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

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            warnings.warn(
                "render() called with render_mode=None: pass render_mode='ansi', 'human' or 'rgb_array'", stacklevel=2
            )
            return None
        if self._play is None:
            raise checks.not_running("render()", started=False)
        deal = self._engine().deal()
        if self.render_mode == "rgb_array":  # a picture of the table (Pillow, imported on first use)
            from .render_image import render_image

            return render_image(deal, self.match, self.render_hands)
        text = render_text(deal, self.match, self.render_hands)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass

    # ----------------------------------------------------------------- for agents
    def information_state(self, agent: str) -> InfoState:
        """What ``agent`` knows: own hand and the public history (``engine.InfoState``)."""
        if self._play is None:
            raise checks.not_running("information_state()", started=False)
        return InfoState.of(self._engine().deal(), checks.agent_seat(self.agent_name_mapping, agent))

    def __str__(self) -> str:
        return self.metadata["name"]
