"""One learner seat per game on the compiled batched engine, as a Gymnasium vector env: :class:`BarbuVectorEnv`.

Sub-env i is one deal after another of classic Barbu (deal mode, R3-R8) on :class:`~barbu_env.vector.VectorDeals`,
the learner in one seat and the three other seats played by compiled opponents; every step is one decision of the
learner in every sub-env, as :class:`~barbu_env.wrappers.sb3.BarbuSingleAgentEnv` gives it one game at a time:
the same observations, masks and rewards (the learner's deal score when its deal ends, R8.1), thousands of games
per call. ``gymnasium.make_vec(barbu_env.GYM_ID, num_envs=N, vectorization_mode="vector_entry_point", ...)`` builds
it; :func:`barbu_env.wrappers.sb3_vec.sb3_vec_env` puts it under Stable-Baselines3's ``VecEnv`` API.

    import barbu_env, gymnasium

    envs = gymnasium.make_vec(barbu_env.GYM_ID, num_envs=1024, vectorization_mode="vector_entry_point",
                              opponents="heuristic", contracts=["no_queens"], doubling="off")
    obs, info = envs.reset(seed=0)            # info["action_mask"]: the learner's legal actions
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from ..actions import NUM_ACTIONS
from ..agents import make
from ..contracts import CONTRACT_NAMES, contract_scale
from ..observation import OBS_SIZE, layout
from ..rules import load_rules
from ..vector import VectorDeals, check_rules, random_actions
from ..vector.tables import FANTAN_PLAY, PLAY

#: The autoreset modes :class:`BarbuVectorEnv` plays (Gymnasium's ``AutoresetMode`` values).
AUTORESET_MODES = (AutoresetMode.NEXT_STEP.value, AutoresetMode.SAME_STEP.value)
#: Opponent specs with a batched form, besides greedy checkpoint agents.
NAMED_OPPONENTS = ("heuristic", "random")


class _Opponent:
    """A seat's player on the batched engine: ``"heuristic"`` (compiled), ``"random"`` (uniform over the legal
    actions, the env's generator), a greedy checkpoint agent (its card decisions from one ``card_actions`` call
    per contract, its other decisions by its heuristic or random fallback) or a greedy SB3 model (every decision from
    its ``card_actions``, the contract's name ``""`` before the declaration, R3)."""

    def __init__(self, spec: str, seed: int | None, doubling: bool, declaring: bool) -> None:
        from ..evaluation.batched import seat_player

        agent = make(spec, seed=seed)
        player = seat_player(agent, doubling, declaring)
        if player is None:
            raise ValueError(
                f"opponent {spec!r} has no batched form: BarbuVectorEnv seats {list(NAMED_OPPONENTS)} and greedy "
                "checkpoint agents whose fallback is one of those and whose declarations (contracts=None) and doubles "
                "(doubling on) are the fallback's (e.g. 'checkpoints:bidding=heuristic'), and greedy SB3 models "
                "('sb3:source=model.zip'); BarbuSingleAgentEnv seats any agent"
            )
        self.policy = None if isinstance(player, str) else player
        #: Who takes the decisions the policy does not: "heuristic", "random", or None (the policy takes them all).
        self.kind = player if isinstance(player, str) else player.fallback_spec
        #: The contracts the policy has no network for (their card play is the fallback's, as through the env).
        self.uncovered = set(getattr(agent, "fallback_contracts", lambda names: [])(CONTRACT_NAMES))

    def actions(self, deals: VectorDeals, games: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The actions (int64 [B]) of this player in ``games`` (bool [B], its seat on move); the others -1."""
        out = np.full(deals.batch, -1, np.int64)
        rest = games
        if self.policy is not None:
            st = deals.state
            mine = games if self.kind is None else games & ((st.phase == PLAY) | (st.phase == FANTAN_PLAY))
            rest = games.copy()
            for k in np.unique(st.contract[mine]):
                name = deals.tables.names[k] if k >= 0 else ""  # no contract before the declaration (R3)
                if name in self.uncovered:
                    continue
                idx = np.flatnonzero(mine & (st.contract == k))
                obs, mask = deals.observe_games(idx)
                out[idx] = self.policy.card_actions(name, obs, mask)
                rest[idx] = False
        if rest.any():
            if self.kind == "heuristic":
                out[rest] = deals.heuristic_actions(rest)[rest]
            else:
                out[rest] = random_actions(deals.action_masks(), rng)[rest]
        return out


class BarbuVectorEnv(gym.vector.VectorEnv):
    """``num_envs`` games of classic Barbu in deal mode, one learner seat each, on the batched engine.

    Args:
        num_envs: games played at once.
        opponents: one spec for the three other seats, or three (left, across, right of the learner, R1.3):
            ``"heuristic"``, ``"random"``, a greedy checkpoint agent (``"checkpoints:bidding=heuristic"``) or a
            greedy SB3 model (``"sb3:source=model.zip"``, every decision its own: a frozen copy of the learner for
            self-play); see :class:`_Opponent` for what has a batched form.
        seat: the learner's seat 0..3, or ``"random"`` (default): drawn per episode.
        contracts: ``None`` (default): the declarer chooses the contract (R3), the learner too when it declares;
            else sub-env i plays ``contracts[i % len(contracts)]`` in every deal (``"no_queens"``, ``"trumps:S"``,
            ``"fantan:7"``, or ``"trumps"`` / ``"fantan"``, whose trump suit / first rank the declarer names, R3.2).
        declarer: a seat 0..3, or ``"random"`` (default): drawn per deal.
        normalize: divide the rewards by the deal's ``|contract total|`` (``contracts.contract_scale``).
        seed: seeds the deals, the seat draws and random opponents (``reset(seed=...)`` re-seeds).
        autoreset_mode: ``"NextStep"`` (default, Gymnasium's): the step after a deal ends ignores that sub-env's
            action and starts its next deal; ``"SameStep"``: the next deal starts in the step that ends one, its
            first observation returned, the last one in ``info["final_obs"]``.
        state: also give ``info["state"]`` (float32 [N, 4 * OBS_SIZE], :attr:`state_space` a row): the observations
            of the learner's seat and of the seats on its left, across and right, in that order, so every hand (a
            centralised critic's input, as ``barbu_env.env``'s ``state()`` in absolute seat order); never a
            playing policy's input.
        rules, rule options: the rules (``rules="classic"``, ``doubling="off"`` ...), those of the batched engine.

    Each step takes one action per sub-env (the learner's), then plays the opponents up to the learner's next
    decision. Rewards are the learner's deal score, on the step that ends the deal, 0 before. ``info``:
    ``action_mask`` (int8 [N, 87], also :meth:`action_masks` as bool), ``seat`` (the learner's), and on the steps
    that end a deal ``points`` (the learner's raw deal score) with its ``_points`` mask. An illegal action raises
    ``ValueError`` naming the sub-envs and their legal actions; nothing moves then.
    """

    def __init__(self, num_envs: int = 256, opponents: str | Sequence[str] = "heuristic", seat: int | str = "random",
                 contracts: Sequence[str] | str | None = None, declarer: int | str = "random",
                 normalize: bool = False, seed: int | None = None, autoreset_mode: str | AutoresetMode = "NextStep",
                 state: bool = False, rules: Any = None, **rule_options: Any) -> None:  # fmt: skip
        super().__init__()
        mode = autoreset_mode.value if isinstance(autoreset_mode, AutoresetMode) else autoreset_mode
        if mode not in AUTORESET_MODES:
            raise ValueError(f"bad autoreset_mode {autoreset_mode!r}: expected one of {list(AUTORESET_MODES)}")
        self.autoreset_mode = AutoresetMode(mode)
        self.metadata = {"autoreset_mode": self.autoreset_mode}
        self.rules = load_rules(rules, **rule_options)
        check_rules(self.rules)
        if seat != "random" and not (isinstance(seat, (int, np.integer)) and 0 <= int(seat) < 4):
            raise ValueError(f"bad seat {seat!r}: expected 0..3 or 'random'")
        self.seat_choice = seat
        specs = [opponents] * 3 if isinstance(opponents, str) else list(opponents)
        if len(specs) != 3 or not all(isinstance(s, str) for s in specs):
            raise ValueError(f"bad opponents {opponents!r}: expected one agent spec or three (left, across, right)")
        texts = [contracts] if isinstance(contracts, str) else contracts
        if texts is not None and not 1 <= len(texts) <= int(num_envs):
            raise ValueError(f"bad contracts {contracts!r}: expected 1 to num_envs={num_envs} contract texts")
        self.deals = VectorDeals(None if texts is None else list(texts), self.rules, batch=num_envs, seed=seed,
                                 declarer=declarer, auto_reset=False)  # fmt: skip
        self.num_envs = self.deals.batch
        doubling = self.rules.doubling != "off"
        self.opponents = [_Opponent(s, None if seed is None else seed + i, doubling, texts is None)
                          for i, s in enumerate(specs)]  # fmt: skip
        #: The three seats are the same compiled player (no policy): one call plays them all.
        self._one_player = len(set(specs)) == 1 and self.opponents[0].policy is None
        self.normalize = bool(normalize)
        self._scale = np.array([contract_scale(n, self.rules) for n in self.deals.tables.names], np.float32)
        low, high = layout(self.rules).bounds()  # the env's observation space
        self.single_observation_space = spaces.Box(low, high, (OBS_SIZE,), np.float32)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.with_state = bool(state)
        self.state_space = spaces.Box(np.tile(low, 4), np.tile(high, 4), (4 * OBS_SIZE,), np.float32)
        self._rng = np.random.default_rng(seed)
        self.seat = np.zeros(self.num_envs, np.int64)
        self._ended = np.zeros(self.num_envs, bool)  # the deals that ended in the last step (NEXT_STEP restarts them)
        self._mask = np.zeros((self.num_envs, NUM_ACTIONS), np.int8)

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """New deals in every sub-env, played up to the learner's first decision; ``seed`` (an int) re-seeds."""
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"bad seed {seed!r}: BarbuVectorEnv takes one int (it seeds every sub-env's deals)")
        if options:
            raise ValueError(f"BarbuVectorEnv.reset takes no options, got {sorted(options)}")
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.deals.reset(None if seed is None else int(seed))
        self._ended[:] = False
        self._draw_seats(np.ones(self.num_envs, bool))
        self._play_opponents(np.zeros(self.num_envs, np.float32), {})
        obs = self._observe()
        return obs, self._info(obs)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """The learner's action in every sub-env (ignored where its deal ended in the last step, NextStep), then
        the opponents up to its next decision."""
        a = np.asarray(actions)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} ints (one per sub-env), got {a.dtype} {a.shape}")
        restart, self._ended = self._ended, np.zeros(self.num_envs, bool)
        rewards = np.zeros(self.num_envs, np.float32)
        info: dict[str, Any] = {}
        try:
            r, done = self.deals.step(a.astype(np.int64, copy=False), ~restart)
        except ValueError:
            self._ended = restart
            raise
        self._credit(r, done, rewards, info)
        if restart.any():  # NextStep: these sub-envs start their next deal instead
            self._restart(restart)
        self._play_opponents(rewards, info)
        obs, terminated = self._observe(), self._ended.copy()
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            final = np.full(self.num_envs, None, dtype=object)
            for g in np.flatnonzero(terminated):
                final[g] = obs[g]
            info["final_obs"], info["_final_obs"] = final, terminated.copy()
            info["final_info"] = {k: info[k] for k in ("points", "_points")}
            if self.with_state:
                info["final_info"]["state"] = self._state(obs)
            self._restart(terminated)
            self._ended[:] = False
            self._play_opponents(np.zeros(self.num_envs, np.float32), {})
            obs = self._observe()
        info.update(self._info(obs))
        return obs, rewards, terminated, np.zeros(self.num_envs, bool), info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now (bool [N, 87]); all false where its deal is over (NextStep)."""
        return self._mask.astype(bool)

    # ------------------------------------------------------------------ internals
    def _draw_seats(self, games: np.ndarray) -> None:
        n = int(games.sum())
        self.seat[games] = self._rng.integers(4, size=n) if self.seat_choice == "random" else int(self.seat_choice)

    def _restart(self, games: np.ndarray) -> None:
        """Next deals in ``games`` (bool [N]) with fresh learner seats (the opponents' first moves are the next
        :meth:`_play_opponents`')."""
        self.deals.reset_games(np.flatnonzero(games))
        self._draw_seats(games)

    def _credit(self, r: np.ndarray, done: np.ndarray, rewards: np.ndarray, info: dict[str, Any]) -> None:
        """Add the learner's share of the step's deal scores ``r`` (float32 [N, 4]) to ``rewards``; mark the
        deals that ``done`` ends."""
        if not done.any():
            return
        g = np.flatnonzero(done)
        points = r[g, self.seat[g]]
        if "points" not in info:
            info["points"], info["_points"] = np.zeros(self.num_envs, np.float32), np.zeros(self.num_envs, bool)
        info["points"][g], info["_points"][g] = points, True
        if self.normalize:
            points = points / self._scale[self.deals.state.contract[g]]
        rewards[g] += points
        self._ended[g] = True

    def _play_opponents(self, rewards: np.ndarray, info: dict[str, Any]) -> None:
        """Opponents move in every game until the learner is on move or its deal is over."""
        deals = self.deals
        while True:
            on_move = deals.seat
            theirs = (on_move >= 0) & (on_move != self.seat)
            if not theirs.any():
                return
            if self._one_player:  # the three seats play alike: one call
                a = self.opponents[0].actions(deals, theirs, self._rng)
            else:
                rel = (on_move - self.seat) % 4
                a = np.full(self.num_envs, -1, np.int64)
                for i, opponent in enumerate(self.opponents):
                    games = theirs & (rel == i + 1)
                    if games.any():
                        a[games] = opponent.actions(deals, games, self._rng)[games]
            r, done = deals.step(a, theirs)
            self._credit(r, done, rewards, info)

    def _observe(self) -> np.ndarray:
        """The learner's observations (a new float32 [N, OBS_SIZE]); its masks kept for :meth:`action_masks`."""
        obs, mask, _ = self.deals.observe(self.seat, over=True)
        self._mask[:] = mask
        return obs.copy()

    def _state(self, obs: np.ndarray) -> np.ndarray:
        """Every seat's observation, the learner's first (``obs``, :meth:`_observe`'s) (float32 [N, 4 * OBS_SIZE])."""
        out = np.empty((self.num_envs, 4 * OBS_SIZE), np.float32)
        out[:, :OBS_SIZE] = obs
        for r in range(1, 4):
            out[:, r * OBS_SIZE : (r + 1) * OBS_SIZE] = self.deals.observe((self.seat + r) % 4, over=True)[0]
        return out

    def _info(self, obs: np.ndarray) -> dict[str, Any]:
        """The step's info of the learner's observations ``obs``."""
        info = {"action_mask": self._mask.copy(), "seat": self.seat.copy()}
        if self.with_state:
            info["state"] = self._state(obs)
        return info
