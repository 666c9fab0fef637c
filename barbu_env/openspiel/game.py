"""Barbu as an OpenSpiel Python game, ``python_barbu`` (RULES.md R1–R12): the engine behind OpenSpiel's API.

Parameters (``pyspiel.load_game("python_barbu(mode=deal,contract=no_queens,doubling=off)")``):

- ``mode``: ``"deal"`` (default, one deal per game) or ``"match"`` (a whole match, R2; R11 for King);
- ``contract``: deal mode: the contract (``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``), or ``""`` (default)
  for the declarer's choice (R3);
- ``declarer``: the declarer (deal mode) or first declarer (match mode), seat 0 by default;
- ``rules``: a preset name of :data:`barbu_env.rules.PRESETS` (default ``"classic"``);
- every option of :class:`barbu_env.rules.Rules` (``doubling``, ``ravage_city``, ``game``, ``players`` …) with
  the classic defaults; an option whose value differs from the classic default overrides the preset.

Chance nodes deal the cards: one chance node per card, each drawing uniformly from the cards not yet dealt, the
``k``-th card going to seat ``k % n``; in match mode every deal starts with its own chance nodes. Player ids are
the seats. Returns are the deal scores (contract + settlement, R8.1), summed over the deals in match mode (R8.3),
times ``rules.score_sign`` (Barbu King's points are bad, R11: returns are minus the points). ``rewards()`` are the
scores of the deal the last seat action ended, until the next seat action (the chance nodes dealing the next deal
carry no reward of their own: OpenSpiel's ``random_sim_test`` sums rewards at decision and terminal nodes).

Observation and information-state tensors are the env's observation of the seat (:func:`barbu_env.observation.encode`,
its blocks in the observer's ``dict``; zeros while cards are dealt). The information-state string is the seat's
perfect-recall record: per deal its dealt hand and every public action with its seat. ``resample_from_infostate``
deals the cards a seat has not seen consistently with its :class:`~barbu_env.engine.InfoState` (every publicly
shown void respected): :func:`barbu_env.agents.pimc.sample_world`, rejection sampling (exactly uniform) that falls
back on the engine's sampler :func:`barbu_env.engine.sample_hidden`; so OpenSpiel's IS-MCTS searches it.

With ``fantan_pass="free"`` a Fantan deal has no length bound (players may pass forever); ``max_game_length`` then
assumes at most four rounds of turns per card played (one round with forced passes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
import pyspiel

from ..actions import action_names, num_actions
from ..agents.pimc import sample_world
from ..cards import NUM_CARDS, cards_of, format_card, format_mask
from ..contracts import EXTRA_DEAL, FANTAN, Contract, contract_table
from ..engine.deal import Deal, Phase, deal_hands, parse_contract
from ..engine.infostate import InfoState
from ..engine.match import MAX_EXTRA_DEALS, Match
from ..observation import Layout, encode, layout
from ..render import render_text
from ..rules import CHOICES, OPTION_NAMES, PRESETS, Rules, load_rules

GAME_NAME = "python_barbu"
MODES = ("deal", "match")
_DEFAULTS = Rules()
#: Rule options offered as OpenSpiel parameters: the scalar ones (R10.3's list ``positive`` is no parameter type).
_PARAM_OPTIONS = tuple(name for name in OPTION_NAMES if name != "positive")
#: OpenSpiel's parameter specification: the names and default values ``load_game`` accepts.
PARAMETERS: dict[str, Any] = {
    "mode": "deal", "contract": "", "declarer": 0, "rules": "classic",
    **{name: getattr(_DEFAULTS, name) for name in _PARAM_OPTIONS},
}  # fmt: skip
_OVER = int(Phase.OVER)


def _game_type(utility: pyspiel.GameType.Utility, players: tuple[int, int] = (3, 5)) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAME,
        long_name="Python Barbu",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.REWARDS,
        max_num_players=players[1],
        min_num_players=players[0],
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=PARAMETERS,
    )


@dataclass(frozen=True)
class Config:
    """What a ``python_barbu`` game is: its rules, mode, fixed contract and (first) declarer."""

    rules: Rules
    mode: str
    contract: str | None
    declarer: int
    n: int = field(init=False)  # seats
    deck: int = field(init=False)  # mask of the cards in play
    deck_size: int = field(init=False)
    names: tuple[str, ...] = field(init=False)  # the action names by id (R12.2)

    def __post_init__(self) -> None:  # read on every chance node: kept as plain attributes
        object.__setattr__(self, "n", self.rules.players)
        object.__setattr__(self, "names", action_names(self.rules))
        object.__setattr__(self, "deck", self.rules.deck)
        object.__setattr__(self, "deck_size", self.rules.deck_size)

    @property
    def layout(self) -> Layout:
        return layout(self.rules)


def config_of(params: dict[str, Any]) -> Config:
    """The game's :class:`Config` from OpenSpiel parameters; ``ValueError`` naming a bad value."""
    mode, preset = params.get("mode", "deal"), params.get("rules", "classic")
    if mode not in MODES:
        raise ValueError(f"bad python_barbu parameter mode={mode!r}: expected one of {MODES}")
    if preset not in PRESETS:
        raise ValueError(f"bad python_barbu parameter rules={preset!r}: expected a preset of {sorted(PRESETS)}")
    changed = {k: params[k] for k in _PARAM_OPTIONS if k in params and params[k] != getattr(_DEFAULTS, k)}
    for k, v in changed.items():  # OpenSpiel passes strings for string options: check them here for a clear error
        if k in CHOICES and v not in CHOICES[k]:
            raise ValueError(f"bad python_barbu parameter {k}={v!r}: expected one of {CHOICES[k]}")
    rules = load_rules(preset, **changed)
    if rules.two_packs:  # its chance nodes deal one pack, card by card
        raise ValueError(
            "python_barbu does not deal two packs (six-player Barbu King, R11.5): it plays players=3, 4 or 5; "
            "play king6 with barbu_env.env(rules='king6')"
        )
    contract = params.get("contract", "") or None
    declarer = params.get("declarer", 0)
    if not 0 <= declarer < rules.players:
        raise ValueError(f"bad python_barbu parameter declarer={declarer!r}: expected a seat 0..{rules.players - 1}")
    if contract is not None:
        if mode != "deal":
            raise ValueError("python_barbu parameter contract= fixes one deal's contract: use it with mode=deal")
        probe = deal_hands(np.random.default_rng(0), rules)
        Deal.from_hands(probe, declarer, contract, rules)  # raises ValueError listing the valid contracts
    return Config(rules, mode, contract, declarer)


def _max_points(c: Contract, rules: Rules) -> int:
    """A bound on one seat's |contract points| in a deal of ``c`` (R4, R7, R9, R10, R11)."""
    if c.play == FANTAN:
        return max(abs(v) for v in c.fantan_points)
    n = rules.hand_size
    cards = sum(abs(p) * (m & rules.deck).bit_count() for m, p in c.card_points)
    return abs(c.per_trick) * n + cards + sum(abs(v) for v in c.position_values(n)) + abs(c.ravage)


def game_info(cfg: Config) -> tuple[pyspiel.GameInfo, pyspiel.GameType.Utility]:
    """OpenSpiel's ``GameInfo`` of the game and its utility kind: constant-sum where every game's scores sum to
    one total (a fixed contract, E5; a match without extra deals), general-sum otherwise."""
    rules, n = cfg.rules, cfg.n
    table = contract_table(rules)
    contracts = [table[parse_contract(cfg.contract)[0]]] if cfg.contract else list(table.values())
    if cfg.mode == "match" and rules.tiebreak == "extra_deals":
        contracts.append(EXTRA_DEAL)  # R2.4
    points = max(_max_points(c, rules) for c in contracts)
    doubled = rules.doubling != "off"
    per_deal = points * (1 + 4 * (n - 1)) if doubled else points  # R6.5: each pair settles at most twice
    fantan = any(c.play == FANTAN for c in contracts)
    passes = (n if rules.fantan_pass == "forced" else 4 * n) if fantan else 1
    length = rules.deck_size + (cfg.contract is None) + n * doubled + rules.deck_size * passes
    sign = rules.score_sign
    if cfg.mode == "deal":
        deals = 1
        total = sign * contracts[0].total(rules) if cfg.contract else None
    else:
        m = Match(rules, 0, cfg.declarer)
        extra = MAX_EXTRA_DEALS if rules.tiebreak == "extra_deals" else 0
        deals = m.num_deals + extra
        per_contract = m.num_deals // len(table)
        total = None if extra else sign * per_contract * sum(c.total(rules) for c in table.values())
    utility = pyspiel.GameType.Utility.GENERAL_SUM if total is None else pyspiel.GameType.Utility.CONSTANT_SUM
    info = pyspiel.GameInfo(
        num_distinct_actions=num_actions(rules),
        max_chance_outcomes=NUM_CARDS,  # chance outcomes are card ids
        num_players=n,
        min_utility=-float(per_deal * deals),
        max_utility=float(per_deal * deals),
        utility_sum=None if total is None else float(total),
        max_game_length=length * deals,
    )
    return info, utility


class BarbuGame(pyspiel.Game):
    """``python_barbu``: see the module docstring for the parameters."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        self.config = config_of(params)
        info, utility = game_info(self.config)
        super().__init__(_game_type(utility), info, params)

    def new_initial_state(self) -> BarbuState:
        return BarbuState(self)

    def make_py_observer(
        self, iig_obs_type: pyspiel.IIGObservationType | None = None, params: dict[str, Any] | None = None
    ) -> BarbuObserver:
        return BarbuObserver(self.config, iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class _Core:
    """The engine side of a state: the cards dealt so far, the deal or match, returns, and what the seats
    remember of earlier deals. ``copy.deepcopy`` (OpenSpiel's ``clone``) is the engine's cheap clone."""

    __slots__ = ("cfg", "deal", "dealt", "match", "past", "prefix", "returns", "rewards", "slot", "start")

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.slot = 0  # cards dealt in the current deal
        self.dealt = [0] * cfg.n  # per seat, the cards dealt to it in the current deal
        self.deal: Deal | None = None  # deal mode, once dealt
        self.match: Match | None = None  # match mode, once the first deal is dealt
        self.returns = [0.0] * cfg.n
        self.rewards = [0.0] * cfg.n
        self.past: tuple[tuple[str, ...], ...] = ((),) * cfg.n  # per seat, its record of each finished deal
        self.start = 0  # length of the game's history when the current deal's dealing began
        self.prefix: pyspiel.State | None = None  # the game's state at ``start``, built by resampling (shared)

    def __deepcopy__(self, memo: dict) -> _Core:
        c = _Core.__new__(_Core)
        c.cfg, c.slot, c.dealt, c.past = self.cfg, self.slot, self.dealt[:], self.past
        c.start, c.prefix = self.start, self.prefix
        c.deal = None if self.deal is None else self.deal.clone()
        c.match = None if self.match is None else self.match.clone()
        c.returns, c.rewards = self.returns[:], self.rewards[:]
        return c

    @property
    def current(self) -> Deal | None:
        """The deal in play (the match's current deal), None while its cards are dealt."""
        if self.slot < self.cfg.deck_size:
            return None
        return self.match.deal if self.match is not None else self.deal

    def over(self) -> bool:
        if self.match is not None:
            return self.match.is_over
        return self.deal is not None and self.deal.phase == _OVER

    def deal_card(self, card: int) -> None:
        """A chance outcome: the next card goes to seat ``slot % n``; the last one starts the deal."""
        bit = 1 << card
        if not self.cfg.deck & bit or sum(self.dealt) & bit:  # (the hands are disjoint: their sum is their union)
            raise ValueError(f"chance outcome {card} is not a card left to deal")
        self.dealt[self.slot % self.cfg.n] |= bit
        self.slot += 1
        if self.slot < self.cfg.deck_size:
            return
        cfg = self.cfg
        if cfg.mode == "deal":
            self.deal = Deal.from_hands(self.dealt, cfg.declarer, cfg.contract, cfg.rules)
        else:
            if self.match is None:
                self.match = Match(cfg.rules, 0, cfg.declarer)
            self.match.redeal(self.dealt)

    def play(self, action: int, history_len: int) -> None:
        """A seat's action (the engine rejects an illegal one, naming the legal actions)."""
        self.rewards = [0.0] * self.cfg.n
        if self.match is None:
            deal = cast(Deal, self.deal)  # set by the last chance node
            deal.apply(action)
            if deal.phase == _OVER:
                self._credit(cast(list[int], deal.scores))
            return
        deal = self.match.deal
        record = self.match.apply(action)
        if record is None:
            return
        self._credit(list(record.scores))
        self.past = tuple((*p, self.record(s, deal)) for s, p in enumerate(self.past))
        if not self.match.is_over:  # the next deal's cards are dealt by chance nodes
            self.slot, self.dealt, self.start, self.prefix = 0, [0] * self.cfg.n, history_len + 1, None

    def _credit(self, scores: list[int]) -> None:
        sign = self.cfg.rules.score_sign
        self.rewards = [float(sign * s) for s in scores]
        self.returns = [r + g for r, g in zip(self.returns, self.rewards)]

    def record(self, seat: int, deal: Deal | None) -> str:
        """What ``seat`` knows of the current deal: its dealt hand and every public action (perfect recall)."""
        head = f"hand {format_mask(self.dealt[seat])}"
        if deal is None:
            return f"{head} dealt {self.slot}"
        names = self.cfg.names
        return head + "".join(f" {s}:{names[a]}" for s, a in deal.history)

    def resampled_hands(self, seat: int, rng: np.random.Generator) -> list[int]:
        """Dealt hands of the current deal consistent with what ``seat`` knows (its own unchanged)."""
        deal = self.current
        n = self.cfg.n
        if deal is None:  # while dealing: the other seats' cards so far are any of those ``seat`` does not hold
            unseen = rng.permutation(cards_of(self.cfg.deck & ~self.dealt[seat])).tolist()
            hands, i = [0] * n, 0
            for s in range(n):
                if s == seat:
                    hands[s] = self.dealt[s]
                    continue
                for c in unseen[i : i + self.dealt[s].bit_count()]:
                    hands[s] |= 1 << c
                i += self.dealt[s].bit_count()
            return hands
        world = sample_world(InfoState.of(deal, seat), rng)
        return [world.hands[s] | deal.played_by[s] for s in range(n)]


class BarbuState(pyspiel.State):
    """A ``python_barbu`` state (see the module docstring)."""

    def __init__(self, game: BarbuGame) -> None:
        super().__init__(game)
        self._core = _Core(game.config)

    # ----------------------------------------------------------------- OpenSpiel API
    def current_player(self) -> int:
        core = self._core
        if core.over():
            return pyspiel.PlayerId.TERMINAL
        deal = core.current
        return pyspiel.PlayerId.CHANCE if deal is None else deal.to_move

    def _legal_actions(self, player: int) -> list[int]:
        deal = self._core.current
        if deal is None or deal.phase == _OVER or player != deal.to_move:
            return []
        return deal.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        core = self._core
        if core.current is not None:
            return []
        left = cards_of(core.cfg.deck & ~sum(core.dealt))
        p = 1.0 / len(left)
        return [(c, p) for c in left]

    def _apply_action(self, action: int) -> None:
        core = self._core
        if core.current is None:
            core.deal_card(int(action))
        else:
            core.play(int(action), len(self.history()))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {format_card(action)}"
        return self._core.cfg.names[action]

    def is_terminal(self) -> bool:
        return self._core.over()

    def returns(self) -> list[float]:
        return list(self._core.returns)

    def rewards(self) -> list[float]:
        return list(self._core.rewards)

    def __str__(self) -> str:
        core = self._core
        deal = core.current
        if deal is None:
            return f"dealing: {core.slot}/{core.cfg.deck_size} cards dealt"
        return render_text(deal, core.match, "all")

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> BarbuState:
        """A state with the same information state for ``player_id`` and the other seats' hidden cards
        re-dealt by the engine's sampler (seeded from ``probability_sampler``, e.g.
        ``pyspiel.UniformProbabilitySampler``); the history is rebuilt by replaying the actions."""
        core = self._core
        rng = np.random.default_rng(int(probability_sampler() * 2**53))
        hands = core.resampled_hands(player_id, rng)
        if core.prefix is None:  # the game's state when this deal's dealing began, built once and shared
            prefix = self.get_game().new_initial_state()
            for a in self.history()[: core.start]:
                prefix.apply_action(a)
            core.prefix = prefix
        state = core.prefix.clone()
        n = core.cfg.n
        order = [cards_of(h) for h in hands]
        for k in range(core.slot):
            state.apply_action(order[k % n][k // n])
        deal = core.current
        if deal is not None:
            for _, a in deal.history:
                state.apply_action(a)
        return state

    # ----------------------------------------------------------------- for the project's agents
    @property
    def deal(self) -> Deal | None:
        """The engine's deal in play (None while its cards are dealt)."""
        return self._core.current

    @property
    def match(self) -> Match | None:
        """Match mode: the engine's match (None before its first deal is dealt)."""
        return self._core.match


class BarbuObserver:
    """OpenSpiel's observer: the env's observation of a seat (tensor, blocks as ``dict``) and a string, the
    seat's perfect-recall record (``perfect_recall=True``) or its view of the table now."""

    def __init__(self, cfg: Config, iig_obs_type: pyspiel.IIGObservationType, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"python_barbu observers take no parameters, got {params}")
        if iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info:
            raise ValueError(
                "python_barbu observes one seat with public information only (the env's observation): "
                "use pyspiel.IIGObservationType(perfect_recall=...) with its default private and public info"
            )
        self.perfect_recall = iig_obs_type.perfect_recall
        lay = cfg.layout
        self.tensor = np.zeros(lay.size, np.float32)
        self.dict = {name: self.tensor[off : off + size] for name, (off, size) in lay.blocks.items()}

    def set_from(self, state: BarbuState, player: int) -> None:
        core = state._core
        deal = core.current
        if deal is None:
            self.tensor.fill(0.0)
        else:
            encode(deal, player, core.match, out=self.tensor)

    def string_from(self, state: BarbuState, player: int) -> str:
        core = state._core
        deal = core.current
        if self.perfect_recall:
            return f"p{player} | " + " | ".join((*core.past[player], core.record(player, deal)))
        if deal is None:
            return f"p{player} dealing, hand {format_mask(core.dealt[player])}"
        trick = " ".join(format_card(c) for c in deal.trick)
        played = " ".join(format_mask(m) for m in deal.played_by)
        totals = "" if core.match is None else f" totals {core.match.totals} deal {core.match.deal_no}"
        return (
            f"p{player} {Phase(deal.phase).name.lower()} contract {deal.contract_text} declarer {deal.declarer}"
            f" doubles {deal.doubles} hand {format_mask(deal.hands[player])} played [{played}] leader {deal.leader}"
            f" trick [{trick}] points {deal.points} passes {deal.passes}{totals}"
        )
