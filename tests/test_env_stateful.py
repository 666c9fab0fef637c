"""A hypothesis state machine drives ``barbu_env.env`` with random legal and illegal actions, dead steps,
resets, deep copies and pickles, and checks it after every call against an engine of its own.

The reference is a :class:`barbu_env.Match` (match mode) or :class:`barbu_env.Deal` (deal mode) dealt from
``np.random.default_rng(seed)`` like the env's (R1.4) and given the same actions; illegal actions follow
RULES.md R8.2 on it (``Deal.renege``; in Fantan an unplayable card is a pass). After each call: every live
agent's observation equals ``observation.encode`` of the reference, the mask of the agent on move is the
reference's legal actions (all zero for the others), and each agent's rewards so far sum to its match total
or deal score (R8.1, R8.3) times ``reward_scale`` (negated in Barbu King, R11), plus the ``terminate``
penalty.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from helpers import env_presets
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

import barbu_env
from barbu_env import Deal, Match, Phase
from barbu_env.actions import PASS
from barbu_env.engine.deal import deal_hands
from barbu_env.observation import encode

PENALTY = 40.0


class EnvMachine(RuleBasedStateMachine):
    """The env and its reference engine, kept in step."""

    @initialize(
        preset=st.sampled_from(env_presets()),
        mode=st.sampled_from(["deal", "match"]),
        illegal_action=st.sampled_from(["raise", "renege", "terminate"]),
        scale=st.sampled_from([1.0, 0.5]),
        seed=st.integers(0, 2**32),
    )
    def start(self, preset, mode, illegal_action, scale, seed):
        self.env = barbu_env.env(rules=preset, mode=mode, illegal_action=illegal_action, reward_scale=scale,
                                 illegal_penalty=PENALTY)  # fmt: skip
        self.rules = self.env.unwrapped.rules
        self.mode, self.illegal_action, self.scale = mode, illegal_action, scale
        self.ref_rng: np.random.Generator | None = None
        self.reset(seed)

    # ----------------------------------------------------------------- the reference
    def _deal(self) -> Deal:
        return self.ref.deal if self.mode == "match" else self.ref

    def _live(self) -> bool:
        e = self.env
        return bool(e.agents) and not e.terminations[e.agent_selection]

    # ----------------------------------------------------------------- rules
    @rule(seed=st.none() | st.integers(0, 2**32))
    def reset(self, seed):
        self.env.reset(seed=seed)
        if seed is not None or self.ref_rng is None:
            self.ref_rng = np.random.default_rng(seed)
        if self.mode == "match":
            self.ref = Match(self.rules, self.ref_rng, 0)
        else:
            self.ref = Deal.from_hands(deal_hands(self.ref_rng, self.rules), 0, None, self.rules)
        self.sums = dict.fromkeys(self.env.possible_agents, 0.0)
        self.penalties = dict.fromkeys(self.env.possible_agents, 0.0)

    @precondition(_live)
    @rule(data=st.data())
    def legal_step(self, data):
        legal = self._deal().legal_actions()
        a = data.draw(st.sampled_from(legal))
        self._step(a)
        self.ref.apply(a)  # Match.apply also ends a finished deal

    @precondition(_live)
    @rule(n=st.integers(1, 80), pick=st.randoms(use_true_random=False))
    def legal_steps(self, n, pick):
        """Up to ``n`` legal steps (to reach the ends of deals), checked after each."""
        for _ in range(n):
            if not self._live():
                return
            a = pick.choice(self._deal().legal_actions())
            self._step(a)
            self.ref.apply(a)  # Match.apply also ends a finished deal
            self.check_against_the_engine()

    @precondition(_live)
    @rule(data=st.data())
    def illegal_step(self, data):
        deal = self._deal()
        legal = set(deal.legal_actions())
        a = data.draw(st.sampled_from([x for x in range(self.env.unwrapped.num_actions) if x not in legal]))
        agent, seat = self.env.agent_selection, deal.current_player
        refused = self.illegal_action == "raise" or (self.illegal_action == "renege" and deal.phase == Phase.DECLARE)
        if refused:
            before = self._snapshot()
            with pytest.raises(ValueError, match="legal actions are"):
                self.env.step(a)
            assert self._snapshot() == before
            return
        self._step(a)
        if self.illegal_action == "terminate":
            self.penalties[agent] -= PENALTY * self.scale
            assert all(self.env.terminations.values())
        elif deal.phase == Phase.FANTAN and a < PASS:  # R8.2: an unplayable card in Fantan is a pass
            rules = deal.rules
            deal.rules = rules.replace(fantan_pass="free")
            deal.apply(PASS)
            deal.rules = rules
        else:  # R8.2: the offender loses the absolute contract total, the deal ends
            deal.renege(seat)
            if self.mode == "match":
                self.ref.end_deal()

    @precondition(lambda self: self.env.agents and not self._live())
    @rule()
    def dead_step(self):
        self._step(None)

    @rule()
    def deep_copy(self):
        before = self._snapshot()
        twin = copy.deepcopy(self.env)
        assert self._snapshot(twin) == before
        if self._live():  # the copy is independent: stepping the original leaves it as it was
            self.env.step(self._deal().legal_actions()[0])
            assert self._snapshot(twin) == before
        self.env = twin

    @rule()
    def pickle_round_trip(self):
        before = self._snapshot()
        self.env = pickle.loads(pickle.dumps(self.env))
        assert self._snapshot() == before

    # ----------------------------------------------------------------- checks
    def _step(self, action) -> None:
        self.env.step(action)
        for agent, r in self.env.unwrapped.rewards.items():
            self.sums[agent] += r

    def _snapshot(self, e=None) -> tuple:
        e = e or self.env
        obs = {a: e.observe(a) for a in e.agents}
        last = e.last() if e.agents else None
        return (
            list(e.agents), e.agent_selection, dict(e.unwrapped.rewards), dict(e.unwrapped.terminations),
            {a: (o["observation"].tobytes(), o["action_mask"].tobytes()) for a, o in obs.items()},
            None if last is None else (last[0]["observation"].tobytes(), last[0]["action_mask"].tobytes(), *last[1:4]),
        )  # fmt: skip

    @invariant()
    def check_against_the_engine(self):
        e = self.env
        deal, match = self._deal(), self.ref if self.mode == "match" else None
        for agent in e.agents:
            seat = e.unwrapped.agent_name_mapping[agent]
            obs = e.observe(agent)
            assert np.array_equal(obs["observation"], encode(deal, seat, match)), f"observation of {agent}"
            if agent == e.agent_selection and not e.terminations[agent]:
                assert np.flatnonzero(obs["action_mask"]).tolist() == sorted(deal.legal_actions())
                assert seat == deal.current_player
            else:
                assert not obs["action_mask"].any()
        if match is not None:
            points = match.totals
        else:
            points = deal.scores if deal.phase == Phase.OVER else [0] * deal.n
        sign = self.rules.score_sign
        expected = {a: sign * self.scale * p + self.penalties[a] for a, p in zip(e.possible_agents, points)}
        assert self.sums == pytest.approx(expected), (self.sums, expected)


EnvMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_env_against_the_engine = EnvMachine.TestCase
