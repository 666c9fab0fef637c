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
- ``reward_scale`` (default 1.0, a finite number > 0, numpy numbers too): rewards are raw points times this.
- ``illegal_action``: ``"raise"`` (default, ``ValueError`` naming the legal actions), ``"renege"``
  (R8.2 penalty, see :meth:`raw_env.step`) or ``"terminate"`` (the offender gets
  ``-illegal_penalty * reward_scale``, the others 0, and the episode ends for all).
- ``illegal_penalty`` (default 100.0 points, a finite number >= 0): the ``"terminate"`` penalty; larger than
  any usual deal loss so that an illegal move never pays.
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

The RNG is ``np.random.default_rng(seed)`` when ``seed`` (a non-negative int) is given; ``reset()`` without a
seed keeps drawing from the current stream (a fresh unseeded one on the first reset). Once every agent is done,
``step`` and ``last`` raise a ``RuntimeError`` saying to call ``reset()``.

Observations are ``{"observation": float32[OBS_SIZE], "action_mask": int8[87]}`` seat-relative, laid
out by :mod:`barbu_env.observation` (``encode``; Barbu King has its own size, ``layout(rules).size``);
the mask is all zeros for agents not on move and is built from ``Deal.legal_actions()``. Arrays handed
out are never modified afterwards by the env.

Speed: in deal mode of classic Barbu (the rules :func:`barbu_env.vector.check_rules` accepts) with numba
installed (``pip install barbu_env[fast]``), a compiled copy of the deal (:class:`~barbu_env.vector.single.Mirror`)
is the state of record: ``reset`` loads it (without building a ``Deal`` once the set-up of that declarer and
contract is known), ``step`` applies the action to it alone and it writes the observation and mask of the seat
on move in the same call; observations are copies of its buffers and the rewards its scores (contract +
settlement, R8.1). The ``Deal`` is rebuilt from the actions when something reads it (``deal``, ``render``,
``information_state``, an illegal action or no action id, ``render_mode="human"``); from then to the end of that
deal it is the state of record again and the copy follows each action (dropped if the deal changes outside
``step`` or by an R8.2 renege). Otherwise the classic observations are the rows of one
:class:`~barbu_env.obs_state.SeatObservations`, kept in step with the engine by rewriting only the entries
that changed (each equals ``encode``; copies are handed out), and the mask is built once per decision
(cached by legal-action set, copies handed out). ``agent_iter`` is PettingZoo's, its iterator a generator.
:func:`env`'s wrappers find the AEC attributes in their
own dicts (see :func:`env`).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env import AECIterable

from .actions import NUM_ACTIONS, PASS
from .contracts import contract_table
from .engine.deal import Deal, Phase, deal_hands
from .engine.infostate import InfoState
from .engine.match import Match
from .obs_state import SeatObservations
from .observation import encode_any, layout
from .render import render_text
from .rules import OPTION_NAMES, Rules, load_rules
from .validation import (
    RENDER_MODES,
    bad_action_type,
    check_env_kwargs,
    check_reset_options,
    check_seed,
    not_running,
    unknown_agent,
)

ENV_OPTIONS = (
    "mode", "contract", "declarer", "rules", "reward_scale", "illegal_action", "illegal_penalty",
    "render_mode", "render_hands",
)  # fmt: skip
RESET_OPTIONS = ("hands", "contract", "declarer", "first_declarer")
AGENTS = tuple(f"player_{i}" for i in range(4))
_OVER = int(Phase.OVER)
_PLAY = int(Phase.PLAY)
_FANTAN = int(Phase.FANTAN)
_DECLARE = int(Phase.DECLARE)
#: Action masks by legal-action key (read-only arrays; cleared when full): in trick play the legal card
#: mask (an int: its bits are exactly the legal actions), otherwise the tuple of legal actions.
_MASKS: dict[int | tuple[int, ...], np.ndarray] = {}
_MASKS_MAX = 1 << 15
_NO_MASK = np.zeros(NUM_ACTIONS, np.int8)  # the mask of agents not on move (copied: a copy is cheaper than zeros)


def _mirror_step(*args: Any) -> int:
    """``vector.jit.mirror_step``: the first call imports it (numba) and puts it in this name's place, so an env
    unpickled in a fresh process steps too."""
    global _mirror_step
    from .vector.jit import mirror_step

    _mirror_step = mirror_step
    return mirror_step(*args)


def env(**kwargs: Any) -> AECEnv:
    """The Barbu AEC environment with PettingZoo's standard wrappers (see the module docstring).

    The wrappers are PettingZoo's own, unchanged. They forward attribute reads to the raw env through
    ``__getattr__`` (a Python call per wrapper on every ``agent_selection``, ``terminations``, ...);
    the raw env writes its :data:`MIRRORED` attributes into the wrappers' instance dicts as well whenever
    it sets them (into the ``OrderEnforcingWrapper`` once it has been reset, so its before-reset errors
    stay), so a read through a wrapper finds the same object directly."""
    raw = raw_env(**kwargs)
    inner = wrappers.AssertOutOfBoundsWrapper(raw)
    outer = wrappers.OrderEnforcingWrapper(inner)
    raw._wrappers = (inner, outer)
    return outer


#: The AEC attributes a raw env mirrors into the wrappers of :func:`env`.
MIRRORED = ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos")


def _mirrored(name: str) -> property:
    """An attribute stored as ``_m_<name>`` whose writes also go to the wrappers' dicts (see :func:`env`)."""
    private = "_m_" + name

    def fset(self: raw_env, value: Any) -> None:
        self.__dict__[private] = value
        for w in self._mirrors:
            w.__dict__[name] = value

    def fdel(self: raw_env) -> None:
        del self.__dict__[private]
        for w in self._mirrors:
            w.__dict__.pop(name, None)

    return property(operator.attrgetter(private), fset, fdel, f"``{name}`` (AEC API)")


class _ActionSpace(spaces.Discrete):
    """``Discrete(87)`` whose ``contains`` answers a plain in-range ``int`` without numpy (PettingZoo's
    ``AssertOutOfBoundsWrapper`` calls it on every step); anything else goes to ``Discrete.contains``."""

    def contains(self, x: Any) -> bool:
        if type(x) is int:
            return 0 <= x < NUM_ACTIONS  # (Discrete.contains converts to int64: an OverflowError beyond it)
        return super().contains(x)


def check_observable(rules: Rules) -> None:
    """``ValueError`` for rules the engine plays but the observation does not encode yet: classic Barbu for
    three or five players (R12) and option ``positive`` with its ``anti_salad`` (R10.3)."""
    if rules.game == "barbu" and rules.players != 4:
        raise ValueError(
            f"the env has no observation layout for classic Barbu with players={rules.players} (R12) yet: "
            "barbu_env.Match / Deal play it; the env supports players=4, or game='king' with 3 or 5"
        )
    if rules.positive:
        raise ValueError(
            f"the env has no observation of option positive={list(rules.positive)} (R10.3: which contracts are "
            "negated, the anti_salad contract) yet: barbu_env.Match / Deal play it; the env supports positive=[]"
        )


def _mirror(rules: Rules) -> Any:
    """A compiled :class:`~barbu_env.vector.single.Mirror` for deals under ``rules``, or None where it
    cannot follow them (numba missing; rules outside the batched engine's, e.g. Barbu King)."""
    from .vector.backend import numba_available
    from .vector.tables import check_rules

    if not numba_available():
        return None
    try:
        check_rules(rules)
    except ValueError:
        return None
    from .vector.single import Mirror  # imports numba

    return Mirror(rules)


class _AgentIterable(AECIterable):
    """PettingZoo's ``AECIterable`` whose iterator is a generator (its ``__next__`` is a Python call a step)."""

    def __iter__(self) -> Iterator[str]:
        return _agents(self.env, self.max_iter)


def _agents(env: raw_env, left: int) -> Iterator[str]:
    """``agent_selection`` until no agent is left or ``left`` runs out (as ``AECIterator``)."""
    while left > 0 and env.agents:
        left -= 1
        yield env.agent_selection


def _check_seat(value: Any, what: str, n: int = 4) -> int | str:
    if isinstance(value, str) and value == "random":
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= int(value) < n:
        return int(value)
    raise ValueError(f"bad {what} {value!r}: expected a seat 0..{n - 1} or 'random'")


class raw_env(AECEnv):
    """Barbu, one match or one deal per episode (see the module docstring for every option)."""

    metadata: ClassVar[dict[str, Any]] = {
        "name": "barbu_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False, "render_fps": 1,
    }  # fmt: skip
    agents = _mirrored("agents")
    agent_selection = _mirrored("agent_selection")
    rewards = _mirrored("rewards")
    _cumulative_rewards = _mirrored("_cumulative_rewards")
    terminations = _mirrored("terminations")
    truncations = _mirrored("truncations")
    infos = _mirrored("infos")
    _wrappers: tuple[AECEnv, ...] = ()  # the wrappers of env(), objects (not dicts: deepcopy/pickle stay right)
    _mirrors: tuple[AECEnv, ...] = ()

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
        unknown = sorted(k for k in rule_options if k not in OPTION_NAMES)
        if unknown:
            raise ValueError(
                f"unknown keyword argument(s) {unknown}: valid are the env options {list(ENV_OPTIONS)} "
                f"and the rule options {list(OPTION_NAMES)}"
            )
        scale, penalty = check_env_kwargs(
            mode, illegal_action, render_mode, render_hands, reward_scale, illegal_penalty
        )
        self.rules: Rules = load_rules(rules, **rule_options)
        check_observable(self.rules)
        self.mode = mode
        if contract is not None and mode != "deal":
            raise ValueError(
                "contract= fixes the contract of a single deal: use it with mode='deal' (in match mode, "
                "fix the first deal's contract with reset(options={'contract': ...}))"
            )
        self._good_contracts: tuple[Rules | None, set[str]] = (None, set())  # (rules, texts accepted under them)
        if contract is not None:
            self._check_contract(contract)
        self.contract = contract
        n = self.num_players = self.rules.players
        self.declarer = _check_seat(declarer, "declarer", n)
        self.reward_scale = scale
        self.illegal_action = illegal_action
        self.illegal_penalty = penalty
        self.render_mode = render_mode
        self.render_hands = render_hands

        agents = AGENTS if n == 4 else tuple(f"player_{i}" for i in range(n))
        self._agent_names = agents
        self.possible_agents = list(agents)
        self.agent_name_mapping = {a: i for i, a in enumerate(agents)}
        self._score_sign = self.rules.score_sign  # R11: King's reward is the negated score
        self._king = self.rules.king
        lay = layout(self.rules)
        low, high = lay.bounds()
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, (lay.size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
                }
            )
            for a in agents
        }
        self.action_spaces = {a: _ActionSpace(NUM_ACTIONS) for a in agents}
        self._rng: np.random.Generator | None = None
        self.match: Match | None = None
        self._lazy: tuple | None = None  # see _materialise
        self._deal: Deal | None = None
        # observations: classic Barbu keeps the seats' rows of SeatObservations in step with the engine; King
        # encodes each seat (internal arrays, copied when handed out, valid while their version is the
        # env's, bumped by every step and reset).
        self._views = None if self._king else SeatObservations()
        self._obs: list[np.ndarray | None] = [None] * n
        self._obs_version = [-1] * n
        self._version = 0
        self._mask: np.ndarray | None = None
        self._rewards_dirty = False
        # deal mode: the compiled copy of the deal (None where it cannot follow; numba's import and kernel
        # loading happen here, not at the first reset) and the deal it copies (None once dropped: then
        # SeatObservations serves the rest of that deal)
        self._fast: Any = _mirror(self.rules) if mode == "deal" else None
        self._fast_deal: Deal | None = None
        # while the copy is the state of record (_lazy set): its buffer, row and mask (looked up once, for the
        # hot path) and the actions since reset
        if self._fast is not None:
            self._mbuf, self._mrow, self._mmask = self._fast._buf, self._fast.row, self._fast.mask
        self._hist: list[int] = []

    # ----------------------------------------------------------------- PettingZoo API
    def observation_space(self, agent: str) -> spaces.Space:
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):
            raise unknown_agent(agent, self.possible_agents) from None

    def action_space(self, agent: str) -> spaces.Space:
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise unknown_agent(agent, self.possible_agents) from None

    @property
    def _deal(self) -> Deal | None:
        """Deal mode's ``Deal`` (None in match mode), rebuilt first while the compiled copy is the state of
        record (:meth:`_materialise`)."""
        if self._lazy is not None:
            self._materialise()
        return self._deal_obj

    @_deal.setter
    def _deal(self, deal: Deal | None) -> None:
        self._lazy = None
        self._deal_obj = deal

    def _materialise(self) -> None:
        """Make the ``Deal`` the state of record again. In deal mode of classic Barbu with numba, ``reset``
        and ``step`` move only the compiled copy (:class:`~barbu_env.vector.single.Mirror`: the same rules,
        R3-R9, and scores, R8.1) and record the actions; ``_lazy`` holds the fresh deal's ``(Deal or None,
        hands, declarer, contract)``. The first read of the deal (``deal``, ``render``, ``information_state``,
        an illegal action or no action id, ...) rebuilds it here by replaying the actions on the fresh deal; the
        copy then follows it as before (``_fast_deal``) until the next reset."""
        fresh, hands, declarer, contract = self._lazy
        self._lazy = None
        deal = fresh if fresh is not None else Deal.from_hands(hands, declarer, contract, self.rules)
        for a in self._hist:
            deal.apply(a)
        self._deal_obj = deal
        self._fast.steps = len(self._hist)
        self._fast_deal = deal
        self._version += 1
        self._mask = None

    def agent_iter(self, max_iter: int = 2**63) -> AECIterable:
        """PettingZoo's ``agent_iter``: ``agent_selection`` while agents are left, at most ``max_iter`` times."""
        return _AgentIterable(self, max_iter)

    @property
    def deal(self) -> Deal:
        """The current engine deal (in match mode, the match's current deal)."""
        return self.match.deal if self.match is not None else self._deal  # type: ignore[return-value]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed, opts = check_seed(seed), check_reset_options(options)
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        unknown = sorted(str(k) for k in opts if k not in RESET_OPTIONS)
        if unknown:
            warnings.warn(f"ignoring unknown reset option(s) {unknown}: valid are {list(RESET_OPTIONS)}", stacklevel=2)
        hands = opts.get("hands")
        contract = opts.get("contract", self.contract if self.mode == "deal" else None)
        seat: int | str = self.declarer
        if "declarer" in opts:
            seat = _check_seat(opts["declarer"], "declarer", self.num_players)
        if "first_declarer" in opts:
            if self.mode == "deal":
                raise ValueError("'first_declarer' is a match-mode reset option: use 'declarer' in deal mode")
            first = _check_seat(opts["first_declarer"], "first_declarer", self.num_players)
            if "declarer" in opts and first != seat:
                raise ValueError(f"reset options 'declarer' ({seat!r}) and 'first_declarer' ({first!r}) disagree")
            seat = first
        if seat == "random":
            seat = int(self._rng.integers(self.num_players))
        if contract is not None:
            self._check_contract(contract)
        # mirror into the wrappers of env(); into the OrderEnforcingWrapper only once it has been reset
        self._mirrors = tuple(w for w in self._wrappers if w.__dict__.get("_has_reset", True))
        fast = self._fast
        if self.mode == "deal":
            self.match = None
            drawn = hands is None
            if drawn:
                hands = deal_hands(self._rng, self.rules)
            if fast is None:
                self._deal = Deal.from_hands(hands, seat, contract, self.rules)
            else:  # the compiled copy is the state of record (_materialise)
                if drawn:  # valid hands: the set-up may come from an earlier deal
                    fresh = fast.start(hands, seat, contract)
                else:  # the user's hands: Deal.from_hands checks them
                    fresh = Deal.from_hands(hands, seat, contract, self.rules)
                    fast.load(fresh)
                self._deal_obj = self._fast_deal = None
                self._lazy = (fresh, hands, seat, contract)
                self._hist = []
        else:
            self.match = Match(self.rules, self._rng, seat, hands, contract)
            self._deal = None
        agents = self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(agents, 0.0)
        self.terminations = dict.fromkeys(agents, False)
        self.truncations = dict.fromkeys(agents, False)
        self.infos = {a: {} for a in agents}
        self._rewards_dirty = False
        if self._lazy is None:
            self._new_decision()
        elif self.render_mode == "human":
            self._materialise()  # rendered after every step: the Deal serves as before
            self._new_decision()
        else:
            self._version += 1
            self._mask = None
            self._select(self._agent_names[fast.seat])

    def _check_contract(self, contract: Any) -> None:
        """ValueError unless ``contract`` is a contract text played under the rules (R3, R4, R9, R10)."""
        if not isinstance(contract, str):
            raise ValueError(f"bad contract {contract!r}: expected text such as 'no_queens', 'trumps:S' or 'fantan:5'")
        good = self._good_contracts
        if good[0] is self.rules and type(contract) is str and contract in good[1]:
            return  # accepted before under the same rules
        probe = np.random.default_rng(0)
        Deal.from_hands(deal_hands(probe, self.rules), 0, contract, self.rules, table=contract_table(self.rules))
        if good[0] is not self.rules:
            good = self._good_contracts = (self.rules, set())
        if type(contract) is str:
            good[1].add(contract)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        try:
            seat = self.agent_name_mapping[agent]
        except (KeyError, TypeError):
            raise unknown_agent(agent, self.possible_agents) from None
        if self._lazy is not None:  # the compiled copy is the state of record
            return self._copied_observation(agent, seat)
        deal = self.match.deal if self.match is not None else self._deal
        if deal is None:
            raise not_running("observe()", started=False)
        if deal is self._fast_deal and len(deal.history) == self._fast.steps:  # the compiled copy follows this deal
            return self._copied_observation(agent, seat)
        views = self._views
        if views is not None:
            o = views.observe(deal, seat, self.match)  # a fresh array
        else:  # Barbu King: encoded per seat once per decision, copies handed out
            o = self._obs[seat]
            if self._obs_version[seat] != self._version:
                o = self._obs[seat] = encode_any(deal, seat, self.match)
                self._obs_version[seat] = self._version
            o = o.copy()
        if seat == deal.to_move and deal.phase != _OVER and not self._m_terminations.get(agent, True):
            m = self._mask
            if m is None:
                m = self._mask = self._build_mask(deal)
            return {"observation": o, "action_mask": m.copy()}  # the cached mask is never handed out
        return {"observation": o, "action_mask": _NO_MASK.copy()}

    def _copied_observation(self, agent: str, seat: int) -> dict[str, np.ndarray]:
        """:meth:`observe` from the compiled copy: copies of its row and mask for the seat on move, else the
        seat's row (written on demand) and a zero mask."""
        fast = self._fast
        if seat == fast.seat and not self._m_terminations.get(agent, True):
            return {"observation": fast.row.copy(), "action_mask": fast.mask.copy()}
        return {"observation": fast.observe(seat).copy(), "action_mask": _NO_MASK.copy()}

    def last(self, observe: bool = True) -> tuple[dict[str, np.ndarray] | None, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` without the property lookups (observation, cumulative reward, terminated,
        truncated, info of ``agent_selection``)."""
        try:
            agent = self._m_agent_selection
            term = self._m_terminations[agent]
        except (AttributeError, KeyError):
            raise not_running("last()", started=self._rng is not None) from None
        if not observe:
            obs = None
        elif self._lazy is not None and not term and self.agent_name_mapping[agent] == self._fast.seat:
            obs = {"observation": self._mrow.copy(), "action_mask": self._mmask.copy()}  # observe(), inlined
        else:
            obs = self.observe(agent)
        return obs, self._m__cumulative_rewards[agent], term, self._m_truncations[agent], self._m_infos[agent]

    @staticmethod
    def _build_mask(deal: Deal) -> np.ndarray:
        """The action mask of the player on move, from ``Deal.legal_actions()`` (read-only, shared: a
        cache keyed by the legal actions; observe() hands out copies)."""
        if deal.phase == _PLAY:  # the legal actions are the bits of the legal card mask (an int hashes fast)
            key: int | tuple[int, ...] = deal.legal_card_mask()
            m = _MASKS.get(key)
            if m is not None:
                return m
            la = deal.legal_actions()
        else:
            la = deal.legal_actions()
            key = tuple(la)
            m = _MASKS.get(key)
        if m is None:
            if len(_MASKS) >= _MASKS_MAX:
                _MASKS.clear()
            m = np.zeros(NUM_ACTIONS, np.int8)
            for a in la:
                m[a] = 1
            m.flags.writeable = False
            _MASKS[key] = m
        return m

    def _new_decision(self) -> None:
        self._version += 1  # every cached observation is stale
        self._mask = None
        deal = self.match.deal if self.match is not None else self._deal
        if deal.phase != _OVER:
            self._select(self._agent_names[deal.to_move])
        elif not hasattr(self, "agent_selection") or self.agent_selection not in self.agents:
            self.agent_selection = self._agent_names[0]

    def _select(self, agent: str) -> None:
        """``agent_selection = agent``."""
        if self._mirrors:
            self.agent_selection = agent
        else:  # nothing to mirror into: the property's setter (a Python call) is not needed
            self.__dict__["_m_agent_selection"] = agent

    def step(self, action: Any) -> None:
        """Apply the action of ``agent_selection``. Illegal actions, by ``illegal_action``:
        ``"raise"``: ``ValueError`` naming the legal actions, the state unchanged;
        ``"renege"``: R8.2 — once the contract is declared, the offender loses the absolute contract
        total, no one else scores, doubles are not settled and the deal ends (in match mode the next
        deal starts); in Fantan an unplayable card is taken back and counts as a pass (R8.2, R7.3; the
        pass proves nothing). An illegal declaration has no R8.2 penalty and raises;
        ``"terminate"``: the offender gets ``-illegal_penalty * reward_scale``, the others 0, and the
        episode ends for every agent. Only an action id 0..86 can be illegal: anything else (None while on
        move, a float, a string, an int out of range) is a ``ValueError`` in every mode, the state unchanged."""
        if self._lazy is not None:  # the compiled copy is the state of record (see _materialise)
            a = action if type(action) is int else self._as_action(action)
            if a is not None and 0 <= a < NUM_ACTIONS:
                # (no agent is dead and no reward is pending before the deal ends: deal mode credits the scores
                # at its end, which terminates every agent)
                s = _mirror_step(self._mbuf, self._mrow, self._mmask, a)
                if s != -2:  # legal: s is the seat now on move, -1 once the deal is over
                    self._hist.append(a)
                    self._fast.seat = s
                    if s >= 0:
                        self._select(self._agent_names[s])
                    else:
                        self._end_copied_deal()
                    return
            # an illegal action, a dead agent's step or no action id: below, with the Deal rebuilt where it is read
        try:
            agent = self._m_agent_selection
            dead = self._m_terminations[agent] or self._m_truncations[agent]
        except (AttributeError, KeyError):
            raise not_running("step()", started=self._rng is not None) from None
        if dead:
            self._was_dead_step(action)
            return
        deal = self.match.deal if self.match is not None else self._deal
        a = action if type(action) is int else self._as_action(action)
        if a is None:  # a wrong type is refused in every mode; only an action id can be illegal
            raise bad_action_type(action)
        legal = self.illegal_action == "raise" or deal.is_legal(a)
        if not legal and (not 0 <= a < NUM_ACTIONS or (deal.phase == _DECLARE and self.illegal_action == "renege")):
            raise deal.illegal(a)  # not in the action space; a bad declaration has no R8.2 penalty to apply
        if legal:
            deal.apply(a)  # "raise": ValueError naming the legal actions, the state unchanged
        self._m__cumulative_rewards[agent] = 0.0  # (only once the action is accepted: a refused step changes nothing)
        if self._rewards_dirty:
            rewards = self._m_rewards
            for ag in rewards:
                rewards[ag] = 0.0
            self._rewards_dirty = False
        if not legal:
            if not self._illegal(deal, a, action):
                return
            self._fast_deal = None  # R8.2 changed the deal: the compiled copy cannot follow it
        if deal is self._fast_deal and self._fast.step(a) == -2:  # (not expected: the engine took the action)
            self._fast_deal = None
        if deal.phase == _OVER:
            self._end_deal(deal)
        self._new_decision()
        if self.render_mode == "human":
            self.render()

    @staticmethod
    def _as_action(action: Any) -> int | None:
        if isinstance(action, (int, np.integer)) and not isinstance(action, bool):
            return int(action)
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and np.issubdtype(action.dtype, np.integer):
            return int(action.reshape(()))
        return None

    def _illegal(self, deal: Deal, a: int, action: Any) -> bool:
        """Handle an illegal action in ``renege`` / ``terminate`` mode; False when the episode ended."""
        seat = deal.current_player
        if self.illegal_action == "terminate":
            penalty = -self.illegal_penalty * self.reward_scale
            for s, ag in enumerate(self._agent_names):
                r = penalty if s == seat else 0.0
                self.rewards[ag] = r
                self._cumulative_rewards[ag] += r
                self.terminations[ag] = True
            self._rewards_dirty = True
            self.infos[self._agent_names[seat]] = {"illegal_action": action}
            self._version += 1
            self._mask = None
            return False
        # renege (not in the declaration: step refuses that, R8.2 has no penalty without a contract)
        if deal.phase == _FANTAN and 0 <= a < PASS:
            rules = deal.rules
            deal.rules = rules.replace(fantan_pass="free")  # a pass that proves nothing (R8.2)
            try:
                deal.apply(PASS)
            finally:
                deal.rules = rules
            return True
        deal.renege(seat)
        return True

    def _end_copied_deal(self) -> None:
        """:meth:`_end_deal` of deal mode for the compiled copy: its scores (contract + settlement, R8.1)."""
        self._credit(self._fast.scores.tolist())
        for ag in self._agent_names:
            self.terminations[ag] = True
        self._version += 1
        self._mask = None

    def _credit(self, scores: list[int]) -> None:
        """Each seat's reward (and cumulative reward): its deal score (R8.1) times ``reward_scale``."""
        scale = self.reward_scale * self._score_sign  # R11: King's reward is the negated score
        rewards, cum = self.rewards, self._cumulative_rewards
        for s, ag in enumerate(self._agent_names):
            r = scores[s] * scale
            rewards[ag] = r
            cum[ag] += r
        self._rewards_dirty = True

    def _end_deal(self, deal: Deal) -> None:
        """Credit the finished deal's scores; start the next deal or terminate the episode."""
        self._credit(deal.scores)
        match = self.match
        if match is not None:
            if match.deal is deal:  # Deal.renege leaves the match waiting for end_deal (R8.2)
                match.end_deal()
            if not match.is_over:
                return
        for ag in self._agent_names:
            self.terminations[ag] = True

    def render(self) -> str | None:
        if self.render_mode is None:
            warnings.warn("render() called with render_mode=None: pass render_mode='ansi' or 'human'", stacklevel=2)
            return None
        if self.deal is None:
            raise not_running("render()", started=False)
        text = render_text(self.deal, self.match, self.render_hands)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass

    # ----------------------------------------------------------------- for agents
    def information_state(self, agent: str) -> InfoState:
        """What ``agent`` knows: own hand and the public history (``engine.InfoState``)."""
        if self.deal is None:
            raise not_running("information_state()", started=False)
        try:
            seat = self.agent_name_mapping[agent]
        except (KeyError, TypeError):
            raise unknown_agent(agent, self.possible_agents) from None
        return InfoState.of(self.deal, seat)

    def __str__(self) -> str:
        return self.metadata["name"]
