"""Speed, side by side: ``python -m barbu_env.benchmark [--seconds S] [--rows ROW ...] [--repeat N]``.

Every row plays uniformly random legal moves for ``--seconds`` and counts decisions (player moves;
chance nodes are not counted) per second:

- ``engine-off`` / ``engine-on``: the rules engine alone, ``Deal`` in a loop, no observations,
  doubling off / classic, the 7 classic contracts round-robin (fixed contract, so no declaration).
- ``raw_env`` / ``env``: ``barbu_env.raw_env(mode="deal")`` / ``barbu_env.env(mode="deal")``, contracts
  round-robin through ``reset(options={"contract": ...})``, classic doubling; the standard AEC loop,
  observing the acting agent every step (``env.last()``) and picking from ``obs["action_mask"]``.
- ``raw_env-match``: ``raw_env()`` in match mode (declaration and doubling included).
- ``env-king3`` / ``env-king`` / ``env-king5``: ``env(mode="deal")`` under Barbu King for 3, 4 and 5 players
  (``rules="king3"``, ``"king"``, ``"king5"``; the declarer chooses among all King contracts); ``env-king6``
  the same with six players and two packs (``rules="king6"``, R11.5).
- ``holdem``: PettingZoo ``texas_holdem_v4`` (needs ``rlcard``), same loop.
- ``shimmy-hearts``: OpenSpiel ``hearts`` through Shimmy's ``OpenSpielCompatibilityV0``, same loop.
- ``pyspiel-hearts``: OpenSpiel ``hearts`` driven directly (``legal_actions`` / ``apply_action``,
  no observation tensors), like the engine rows.
- ``vector-256`` / ``vector-1024`` / ``vector-4096``: ``barbu_env.vector.VectorDeals`` with B games, the 7
  classic contracts spread over the games, classic doubling; each batched step is ``observe()`` (float32
  observations and masks of every acting seat), a random legal action per game (``random_actions``),
  ``step()``; counts B decisions per step. The compiled kernels on one thread.
  ``vector-4096-2threads``: on 2 threads (OpenMP workers spin ``GOMP_SPINCOUNT=100000`` times before they
  sleep, unless ``GOMP_SPINCOUNT`` or ``OMP_WAIT_POLICY`` is set). ``vector-4096-packed``:
  ``observe_packed()`` instead (the same observations as bits + numeric part, for unpacking on the training
  device); ``vector-4096-noobs``: masks only (both one thread). Each vector row is preceded by a note line:
  batch, observation mode, threads, bytes per game.
- ``heuristic-python``: the heuristic agent in every seat on ``Deal`` objects (``agents.heuristic.heuristic_action``
  then ``Deal.apply``, as in PIMC's rollouts), the 7 classic contracts round-robin, classic doubling;
  ``heuristic-vector-4096``: the same on ``VectorDeals`` with 4096 games, each step the compiled heuristic's
  actions (``VectorDeals.heuristic_actions``) then ``step()``, one thread. Both count heuristic decisions.
  ``heuristic-env``: the ``env`` row's loop with ``agents.make("heuristic")`` acting in all four seats
  (``agent.act(env, agent)``: on the env's compiled copy, ``Mirror.heuristic``); counts every decision.
  ``sb3-heuristic``: ``wrappers.sb3.BarbuSingleAgentEnv`` (Gymnasium, one learner seat) against three heuristic
  opponents, the 7 classic contracts drawn per episode, ``normalize=True``, classic doubling, the learner's
  moves random from ``action_masks()``; counts the learner's steps (each plays the opponents up to its next turn).
  ``vector-env-heuristic``: the same on ``wrappers.vector_env.BarbuVectorEnv`` (the batched engine as a Gymnasium
  vector env), 1024 sub-envs, the 7 contracts over the sub-envs (``trumps`` and ``fantan`` with the declarer's
  choice of suit or rank), its NextStep autoreset; counts the learner's decisions.
- ``pimc-python-16`` / ``pimc-16`` / ``pimc-128``: ``agents.make("pimc:samples=S")`` with Python rollouts
  (``rollouts=python``) / compiled rollouts; seat 0's card decisions with a choice (more than one class of
  equivalent cards) in heuristic deals of the 7 contracts; counts those decisions per second of PIMC time
  (1000 / rate = ms per decision). ``pimc-nn-16``: ``pimc:rollout=checkpoints`` (16 samples), the rollouts
  played by the shipped ``checkpoints/`` networks (greedy, needs torch; one torch thread), the same decisions.
  ``pimc-16-batched``: the same search for many games at once (:mod:`barbu_env.vector.pimc`, 16 worlds, one
  thread; ``training.rollout_q``'s PIMC seats) on 256 ``VectorDeals`` games of each of the 7 contracts (doubling
  off) stepped by it; counts the card decisions with more than one legal move (equivalent cards included: the agent
  skips those) per second of ``pimc_actions``.
- ``nn-single``: the shipped ``checkpoints/`` networks (greedy, needs torch; one torch thread) one decision at a
  time as an env user asks for it: ``env(mode="deal")``, the 7 contracts round-robin, classic doubling,
  ``player_0`` the agent and the other seats the heuristic, each deal's hands drawn by the loop and passed to
  ``reset``; counts ``agent.act(env, "player_0")`` (the compiled greedy pass on the row and mask of the env's
  compiled copy, near ties redone in float64) per second of that call, for the decisions the PIMC rows count
  (card play with more than one class of equivalent cards, told by the loop's own ``Deal`` of the same actions,
  so that the env's deal stays on its compiled copy as in a user's loop of these agents: the env writes each
  observation in its step). ``nn-endgame-single``: the same loop and decisions with ``checkpoints:endgame=9`` (PIMC
  with 32 worlds in the last five tricks, the networks before).
  ``nn-env``: the ``env`` row's loop (``env(mode="deal")``, contracts round-robin, classic doubling) with that
  agent in all four seats (card play and doubling by its networks, so the deal stays on the env's compiled copy)
  instead of random moves; counts every decision per second of the whole loop.
  ``nn-batched``: the same networks over batches (``NeuralAgent.card_actions``, the compiled pass over the rows,
  near ties redone in float64) of ``VectorDeals`` states, 1024 games of each of the 7 contracts (doubling off)
  stepped by the compiled heuristic; counts the rows with more than one legal move per second of
  ``observe()`` plus ``card_actions``. The ratio rows ``nn-single / pimc-16`` and ``nn-batched / pimc-16``
  give how many times cheaper a network decision is than a PIMC-16 one (the issue's target: 100);
  ``nn-batched / pimc-16-batched`` compares the two batched forms.
- ``eval-python`` / ``eval-batched``: duplicate evaluation (``barbu_env.evaluation``), heuristic vs 3 heuristics
  (4 seatings a board), the 7 classic contracts' boards interleaved, doubling off (``barbu-eval``'s deal-mode
  default): through the env one game at a time (``engine=python``, one process) / on the batched engine
  (``engine=batched``, :mod:`barbu_env.evaluation.batched`); ``eval-nn-python`` / ``eval-nn-batched``: the same
  with the shipped ``checkpoints/`` folder (greedy, needs torch; one torch thread) as the first agent;
  ``eval-random-python`` / ``eval-random-batched``: heuristic vs 3 random agents (seeded per game as barbu-eval
  seeds them); ``eval-sb3-python`` / ``eval-sb3-batched``: an untrained sb3-contrib ``MaskablePPO`` model (SB3's
  default ``MlpPolicy``, seed 0, its logits spread as a trained model's: :func:`_sb3_spec`; needs the ``sb3`` extra;
  one torch thread) as ``sb3:source=...`` against 3 heuristics. These rows count **boards** (4 games each) per
  second, per-board numbers included.

- ``train-dmc-rollouts`` / ``train-ppo-selfplay`` / ``train-ppo-vector`` / ``train-dmc-selfplay``: the trainers
  of the repository's ``training`` package (run from its root; needs torch), No queens, default network
  (256, 128), one torch thread, each for about ``--seconds``: rollout-labelled states of ``training.dmc``
  (heuristic rollouts of every legal action on ``Deal`` objects, one process), PPO's learner decisions
  collected and trained (``training.ppo``, ``SelfPlay`` on ``Deal`` objects / ``VectorSelfPlay``), and the
  learner decisions of Deep Monte-Carlo self-play trained (``training.dmc_selfplay``: 1024 games on
  ``VectorDeals``, collection and updates, the learner in some seats and the compiled heuristic in the others:
  the config's defaults, so each rollout is fit on a second thread while the next is played: ``overlap``);
  ``train-dmc-selfplay-pure``: the same in pure self-play (``p_heuristic=0``,
  ``p_snapshot=0``: the learner in all four seats, so every decision played is the learner's and is trained);
  ``train-rollout-q``: states labelled and trained by
  ``training.rollout_q`` (1024 games on ``VectorDeals``, every legal move of a labelled state played out by the
  compiled heuristic, then the updates; a 64-unit card head, as ``make train``); ``train-rollout-q-learner``: the
  same with ``rollout=learner`` (the playouts by a frozen copy of the learner), as the shipped card play was last
  trained; its note line gives the card decisions that copy takes in the playouts per second too;
  the last four rows' note lines give every seat's decisions/s too.

Rows whose package is missing print "not installed". ``--repeat N`` runs the rows N rounds, each round every row in
turn, so that a row and the row it is divided by are measured close together whatever the machine's load does; the
table then gives each row's median reading, each ratio of medians and, beside it, the range of the ratio of each
round's two readings. Speed is only measured here, never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from pettingzoo import AECEnv

    from .agents.neural import NeuralAgent

CONTRACTS = ("no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps:S", "fantan:7")
ROWS = (
    "engine-off",
    "engine-on",
    "raw_env",
    "env",
    "raw_env-match",
    "env-king3",
    "env-king",
    "env-king5",
    "env-king6",
    "holdem",
    "shimmy-hearts",
    "pyspiel-hearts",
    "vector-256",
    "vector-1024",
    "vector-4096",
    "vector-4096-2threads",
    "vector-4096-packed",
    "vector-4096-noobs",
    "heuristic-python",
    "heuristic-vector-4096",
    "heuristic-env",
    "sb3-heuristic",
    "vector-env-heuristic",
    "pimc-python-16",
    "pimc-16",
    "pimc-128",
    "pimc-nn-16",
    "pimc-16-batched",
    "nn-single",
    "nn-endgame-single",
    "nn-env",
    "nn-batched",
    "eval-python",
    "eval-batched",
    "eval-nn-python",
    "eval-nn-batched",
    "eval-random-python",
    "eval-random-batched",
    "eval-sb3-python",
    "eval-sb3-batched",
    "train-dmc-rollouts",
    "train-ppo-selfplay",
    "train-ppo-vector",
    "train-dmc-selfplay",
    "train-dmc-selfplay-pure",
    "train-rollout-q",
    "train-rollout-q-learner",
)


class NotInstalled(Exception):
    """A reference system is not available."""


def _engine(doubling: str) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        from .engine.deal import Deal
        from .rules import Rules

        rules = Rules(doubling=doubling)
        rng = np.random.default_rng(0)
        rnd = random.Random(0)
        n, k = 0, 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            d = Deal.random(rng, k & 3, CONTRACTS[k % 7], rules)
            k += 1
            while d.phase != 4:
                la = d.legal_actions()
                d.apply(la[rnd.randrange(len(la))] if len(la) > 1 else la[0])
                n += 1
        return n / (time.perf_counter() - t0)

    return run


def _aec_loop(make_env: Callable[[], AECEnv], seconds: float, reset_options: Callable[[int], dict] | None,
              act: Callable[[AECEnv, str], int] | None = None) -> float:  # fmt: skip
    """The framework loop: ``for agent in env.agent_iter(): obs, ... = env.last(); env.step(...)``, each action
    random from the mask, or ``act(env, agent)`` (one decision taken before timing: its kernels load or compile)."""
    e = make_env()
    if act is not None:
        e.reset(seed=0, options=reset_options(0) if reset_options else None)
        act(e, e.agent_selection)
    rnd = random.Random(0)
    n, k = 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        e.reset(seed=k, options=reset_options(k) if reset_options else None)
        k += 1
        for agent in e.agent_iter():
            obs, _r, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            if act is not None:
                e.step(act(e, agent))
            else:
                mask = obs["action_mask"] if isinstance(obs, dict) and "action_mask" in obs else info["action_mask"]
                legal = np.flatnonzero(mask)
                e.step(int(legal[rnd.randrange(len(legal))]))
            n += 1
    return n / (time.perf_counter() - t0)


def _barbu_env(wrapped: bool, mode: str, rules: str | None = None) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        from . import env, raw_env

        make = env if wrapped else raw_env
        options = (lambda k: {"contract": CONTRACTS[k % 7]}) if mode == "deal" and rules is None else None
        return _aec_loop(lambda: make(mode=mode, rules=rules), seconds, options)

    return run


def _holdem(seconds: float) -> float:
    try:
        from pettingzoo.classic import texas_holdem_v4

        texas_holdem_v4.env()
    except Exception as e:  # rlcard missing raises DependencyNotInstalled / ImportError
        raise NotInstalled(str(e).splitlines()[0] if str(e) else type(e).__name__) from None
    return _aec_loop(texas_holdem_v4.env, seconds, None)


def _shimmy_hearts(seconds: float) -> float:
    try:
        from shimmy import OpenSpielCompatibilityV0
    except ImportError as e:
        raise NotInstalled(str(e)) from None
    return _aec_loop(lambda: OpenSpielCompatibilityV0(game_name="hearts"), seconds, None)


def _pyspiel_hearts(seconds: float) -> float:
    try:
        import pyspiel
    except ImportError as e:
        raise NotInstalled(str(e)) from None
    game = pyspiel.load_game("hearts")
    rnd = random.Random(0)
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s = game.new_initial_state()
        while not s.is_terminal():
            if s.is_chance_node():
                outcomes = s.chance_outcomes()
                s.apply_action(outcomes[rnd.randrange(len(outcomes))][0])
            else:
                la = s.legal_actions()
                s.apply_action(la[rnd.randrange(len(la))])
                n += 1
    return n / (time.perf_counter() - t0)


def _vector(batch: int, observe: str = "float", threads: int = 1) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        # numba's OpenMP workers wait between kernels by spinning (libgomp: 300k spins, or for ever with
        # OMP_WAIT_POLICY=active) or sleeping (passive). Spinning for ever stalls on busy cores; sleeping at
        # once makes each kernel wait for a wake-up (about 20% slower on 2 idle cores). A bounded spin is the
        # middle; read when the thread pool starts (the first numba row), so set for every vector row.
        if "OMP_WAIT_POLICY" not in os.environ:
            os.environ.setdefault("GOMP_SPINCOUNT", "100000")
        from .rules import Rules
        from .vector import VectorDeals, random_actions

        if threads > (os.cpu_count() or 1):
            raise NotInstalled(f"{threads} threads need {threads} cores, found {os.cpu_count()}")
        v = VectorDeals(list(CONTRACTS), Rules(), batch=batch, seed=0, threads=threads)
        v.reset()
        rng = np.random.default_rng(0)
        for get_mask in (lambda: v.observe()[1], lambda: v.observe_packed()[2], v.action_masks):
            v.step(random_actions(get_mask(), rng))  # load (or compile) the kernels before timing
        n = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            if observe == "float":
                mask = v.observe()[1]
            elif observe == "packed":
                mask = v.observe_packed()[2]
            else:
                mask = v.action_masks()
            v.step(random_actions(mask, rng))
            n += batch
        rate = n / (time.perf_counter() - t0)
        size = v.nbytes()
        used = v.backend.num_threads()
        wait = "".join(f", {k}={os.environ[k]}" for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT") if k in os.environ)
        wait = wait if used > 1 else ""
        print(f"{'':18s} (B={batch}, observe={observe}: {used} thread{'s' if used > 1 else ''}{wait}; "
              f"bytes per game: state {size['state']}, obs {size['obs']}, mask {size['mask']}, "
              f"scratch {size['scratch']})")  # fmt: skip
        return rate

    return run


def _heuristic_python(seconds: float) -> float:
    from .agents.heuristic import heuristic_action
    from .engine.deal import Deal
    from .rules import Rules

    rules = Rules()
    rng = np.random.default_rng(0)
    n, k = 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        d = Deal.random(rng, k & 3, CONTRACTS[k % 7], rules)
        k += 1
        while d.phase != 4:
            d.apply(heuristic_action(d, d.to_move))
            n += 1
    return n / (time.perf_counter() - t0)


def _heuristic_vector(batch: int) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        from .rules import Rules
        from .vector import VectorDeals

        v = VectorDeals(list(CONTRACTS), Rules(), batch=batch, seed=0)
        v.reset()
        v.step(v.heuristic_actions())  # load (or compile) the kernels before timing
        n = 0
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            v.step(v.heuristic_actions())
            n += batch
        return n / (time.perf_counter() - t0)

    return run


def _pimc(samples: int, rollouts: str, rollout: str = "heuristic") -> Callable[[float], float]:
    def run(seconds: float) -> float:
        from .agents import make
        from .agents.heuristic import heuristic_action
        from .agents.pimc import candidate_moves
        from .engine.deal import Deal
        from .rules import Rules

        try:
            if rollout != "heuristic":
                import torch

                torch.set_num_threads(1)
            agent = make(f"pimc:samples={samples},rollouts={rollouts},rollout={rollout}", seed=0)
        except (ImportError, ValueError) as e:
            raise NotInstalled(str(e)) from None
        rules = Rules()
        rng = np.random.default_rng(0)
        agent.act_deal(Deal.random(rng, 1, "no_hearts", rules))  # a bidding decision: its rng draws kept
        warm = np.random.default_rng(1)  # load (or compile) the kernels before timing: a card decision a contract
        for c in CONTRACTS:
            d = Deal.random(warm, 0, c, rules)
            while d.phase not in (2, 3):
                d.apply(heuristic_action(d, d.to_move))
            agent.act_deal(d)
        n, k, spent = 0, 0, 0.0
        while spent < seconds:
            d = Deal.random(rng, k & 3, CONTRACTS[k % 7], rules)
            k += 1
            while d.phase != 4:
                seat = d.to_move
                if seat == 0 and d.phase in (2, 3) and len(candidate_moves(d, 0, d.legal_actions())) > 1:
                    t0 = time.perf_counter()
                    a = agent.act_deal(d)
                    spent += time.perf_counter() - t0
                    n += 1
                else:
                    a = heuristic_action(d, seat)
                d.apply(a)
        return n / spent

    return run


def _checkpoints_agent(spec: str = "checkpoints") -> NeuralAgent:
    """The shipped ``checkpoints/`` agent of ``spec`` (greedy), torch on one thread, each network's compiled form built
    and the kernel loaded; :class:`NotInstalled` without torch or the folder."""
    from .actions import NUM_ACTIONS
    from .agents import make
    from .observation import OBS_SIZE

    try:
        import torch

        from .agents.neural import NeuralAgent

        torch.set_num_threads(1)
        agent = make(spec, seed=0)
    except (ImportError, ValueError) as e:
        raise NotInstalled(str(e)) from None
    if not isinstance(agent, NeuralAgent):
        raise NotInstalled(f"'checkpoints' made a {type(agent).__name__}, not a NeuralAgent")
    from .nn import compiled_greedy

    mask = np.zeros((1, NUM_ACTIONS), np.int8)
    mask[0, :2] = 1
    for contract in agent.nets:  # load (or compile) the kernel, in float32 and in float64 (near ties), before timing
        agent.card_actions(contract, np.zeros((1, OBS_SIZE), np.float32), mask)
        compiled_greedy(agent._flat[contract], np.zeros((1, OBS_SIZE)), mask, 0.0, np.float64)
    return agent


def _nn_single(seconds: float, spec: str = "checkpoints") -> float:
    from . import env
    from .agents import make
    from .agents.pimc import candidate_moves
    from .cards import cards_of
    from .engine.deal import FANTAN_PLAY, PLAY, Deal, deal_hands
    from .rules import Rules

    agent = _checkpoints_agent(spec)
    other = make("heuristic", seed=0)
    e = env(mode="deal")
    rules, rng = Rules(), np.random.default_rng(0)
    n, k, spent = 0, 0, 0.0
    while spent < seconds:
        hands, contract = deal_hands(rng, rules), CONTRACTS[k % 7]
        e.reset(seed=k, options={"hands": [cards_of(h) for h in hands], "contract": contract, "declarer": 0})
        d = Deal.from_hands(hands, 0, contract, rules)  # the loop's own copy: which decisions count, untimed
        k += 1
        for name in e.agent_iter():
            _obs, _r, term, trunc, _info = e.last()
            if term or trunc:
                e.step(None)
                continue
            if name == "player_0" and d.phase in (PLAY, FANTAN_PLAY) and len(
                    candidate_moves(d, 0, d.legal_actions())) > 1:  # fmt: skip
                t0 = time.perf_counter()
                a = agent.act(e, name)
                spent += time.perf_counter() - t0
                n += 1
            else:
                a = other.act(e, name)
            e.step(a)
            d.apply(a)
    return n / spent


def _agent_env(spec: str) -> Callable[[float], float]:
    """The ``env`` row's loop with the agent of ``spec`` (``"checkpoints"``: :func:`_checkpoints_agent`) in all four
    seats."""

    def run(seconds: float) -> float:
        from . import env
        from .agents import make

        agent = _checkpoints_agent() if spec == "checkpoints" else make(spec, seed=0)
        return _aec_loop(lambda: env(mode="deal"), seconds, lambda k: {"contract": CONTRACTS[k % 7]}, agent.act)

    return run


def _vector_env_heuristic(seconds: float) -> float:
    from .vector import random_actions
    from .wrappers.vector_env import BarbuVectorEnv

    names = [c.split(":")[0] for c in CONTRACTS]
    e = BarbuVectorEnv(1024, opponents="heuristic", contracts=names, normalize=True, seed=0)
    rng = np.random.default_rng(0)
    _, info = e.reset()  # compiles (or loads) the kernels before timing
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        mask = info["action_mask"]
        n += int(np.count_nonzero(mask.any(axis=1)))
        _, _, _, _, info = e.step(random_actions(mask, rng))
    return n / (time.perf_counter() - t0)


def _sb3_heuristic(seconds: float) -> float:
    from .wrappers.sb3 import BarbuSingleAgentEnv

    names = [c.split(":")[0] for c in CONTRACTS]
    e = BarbuSingleAgentEnv(opponents="heuristic", contracts=names, normalize=True, seed=0)
    rnd = random.Random(0)
    e.reset()  # the opponents' first moves load (or compile) the heuristic's kernel before timing
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        legal = np.flatnonzero(e.action_masks())
        _obs, _r, done, _trunc, _info = e.step(int(legal[rnd.randrange(len(legal))]))
        n += 1
        if done:
            e.reset()
    return n / (time.perf_counter() - t0)


def _nn_batched(batch: int) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        from .rules import Rules
        from .vector import VectorDeals

        agent = _checkpoints_agent()
        games = [(c.split(":")[0], VectorDeals(c, Rules(doubling="off"), batch=batch, seed=i))
                 for i, c in enumerate(CONTRACTS)]  # fmt: skip
        for _, v in games:
            v.reset()
        n, spent = 0, 0.0
        while spent < seconds:
            for contract, v in games:
                t0 = time.perf_counter()
                obs, mask, _ = v.observe()
                spent += time.perf_counter() - t0
                rows = mask.sum(1) > 1
                obs, mask = obs[rows], mask[rows]
                t0 = time.perf_counter()
                agent.card_actions(contract, obs, mask)
                spent += time.perf_counter() - t0
                n += len(obs)
                v.step(v.heuristic_actions())
        print(f"{'':18s} (B={batch} games of each of {len(games)} contracts, doubling off: decisions with a choice "
              f"per second of observe() and card_actions)")  # fmt: skip
        return n / spent

    return run


def _pimc_batched(samples: int, batch: int) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        from .actions import DECLARE_BASE
        from .rules import Rules
        from .vector import VectorDeals
        from .vector.pimc import pimc_actions
        from .vector.rollout import Rollouts

        games = [VectorDeals(c, Rules(doubling="off"), batch=batch, seed=i) for i, c in enumerate(CONTRACTS)]
        search = [Rollouts(v.tables) for v in games]
        rng = np.random.default_rng(0)
        n, spent = 0, 0.0
        for v in games:
            v.reset()
        while spent < seconds:
            for v, ro in zip(games, search, strict=True):
                mask = v.observe_packed()[2]
                actions = v.heuristic_actions()
                g = np.flatnonzero((mask.sum(1) > 1) & ~mask[:, DECLARE_BASE:].any(1))
                if g.size:
                    t0 = time.perf_counter()
                    actions[g] = pimc_actions(ro, v.state.data[g], mask[g], actions[g], samples, rng)
                    spent += time.perf_counter() - t0
                    n += g.size
                v.step(actions)
        print(f"{'':18s} (B={batch} games of each of {len(games)} contracts, doubling off: card decisions with more "
              f"than one legal move per second of vector.pimc)")  # fmt: skip
        return n / spent

    return run


#: The temporary folder of :func:`_sb3_spec`'s model (removed when the process ends).
_SB3_DIR: list[Any] = []


def _sb3_spec() -> str:
    """``sb3:source=...`` of an untrained ``MaskablePPO`` (SB3's default ``MlpPolicy``, seed 0, its action layer's
    weights times 100: an untrained model's logits lie so close that most rows would be near ties, which a trained
    model has on about 0.1% of its rows), saved once per process into a temporary folder; :class:`NotInstalled`
    without sb3-contrib."""
    if not _SB3_DIR:
        import tempfile

        try:
            import torch
            from sb3_contrib import MaskablePPO
        except ImportError as e:
            raise NotInstalled(f"needs sb3-contrib (pip install -e '.[sb3]'): {e}") from None
        from .wrappers import BarbuSingleAgentEnv

        folder = tempfile.TemporaryDirectory(prefix="barbu_bench_")
        env = BarbuSingleAgentEnv(contracts=["no_queens"], doubling="off", seed=0)
        model = MaskablePPO("MlpPolicy", env, seed=0, device="cpu")
        with torch.no_grad():  # logits as far apart as a trained model's: few near ties
            for name, weights in model.policy.action_net.named_parameters():
                if name == "weight":
                    weights.mul_(100.0)
        model.save(Path(folder.name) / "model")
        _SB3_DIR.append(folder)
    return f"sb3:source={Path(_SB3_DIR[0].name) / 'model.zip'}"


def _evaluation(engine: str, first: str, others: str = "heuristic") -> Callable[[float], float]:
    def run(seconds: float) -> float:
        from .evaluation import make_config
        from .evaluation.batched import batched_player
        from .evaluation.boards import duplicate, make_board, seatings
        from .evaluation.runner import TableRunner

        try:
            if first in ("checkpoints", "sb3"):
                import torch

                torch.set_num_threads(1)
            cfg, made = make_config([_sb3_spec() if first == "sb3" else first, others], contracts="all", boards=1)
        except (ImportError, ValueError) as e:
            raise NotInstalled(str(e)) from None
        rules = cfg.make_rules()
        seats = seatings((0, 1, 1, 1))
        if engine == "batched":
            play, per_call = batched_player(cfg, made), 500  # boards of each contract per call
        else:
            runner = TableRunner(cfg)  # one env and its agents, as env_player in one process
            play, per_call = (lambda bs, ss: ((b, runner.play_board(b, ss)) for b in bs)), 1
        k, n, spent = 0, 0, 0.0
        for _ in duplicate([make_board(0, ci, c, 0, rules) for ci, c in enumerate(cfg.contracts)], seats, play, 2):
            pass  # load (or compile) the kernels before timing
        while spent < seconds:
            boards = [make_board(0, ci, c, k + i, rules) for i in range(per_call) for ci, c in enumerate(cfg.contracts)]
            k += per_call
            t0 = time.perf_counter()
            n += sum(1 for _ in duplicate(boards, seats, play, 2))
            spent += time.perf_counter() - t0
        print(f"{'':18s} ({first} vs 3 {others}, {len(cfg.contracts)} contracts, doubling off: boards/s, "
              f"{len(seats)} games a board)")  # fmt: skip
        return n / spent

    return run


def _training(name: str) -> ModuleType:
    """``training.<name>`` with torch on one thread, or :class:`NotInstalled`."""
    import importlib

    try:
        module = importlib.import_module(f"training.{name}")
        import torch
    except ImportError as e:
        raise NotInstalled(f"needs torch and the repository's training package (run from its root): {e}") from None
    torch.set_num_threads(1)
    return module


def _train_dmc_rollouts(seconds: float) -> float:
    selfplay = _training("selfplay")
    from .rules import Rules

    n, k = 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        n += len(selfplay.rollout_targets("no_queens", Rules(), 50, k, 0.3, 0.3, 0)[0])
        k += 1
    return n / (time.perf_counter() - t0)


def _train_ppo(engine: str) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        import tempfile

        ppo = _training("ppo")
        per = 4096
        with tempfile.TemporaryDirectory() as d:
            cfg = ppo.TrainConfig(contracts=["no_queens"], out_dir=d, engine=engine, num_games=256,
                                  bc_decisions=0, rollout_decisions=per, ppo_decisions=per, eval_boards=1,
                                  eval_every=10**9)  # fmt: skip
            run = ppo.Run(cfg, "no_queens", resume=False)
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < seconds:
                run.ppo()
                run.cfg = dataclasses.replace(run.cfg, ppo_decisions=run.decisions + per)
            run.logger.tb.close()
            return run.decisions / (time.perf_counter() - t0)

    return run


def _train_dmc_selfplay(pure: bool) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        import tempfile

        dmc = _training("dmc_selfplay")
        seats = {"p_heuristic": 0.0, "p_snapshot": 0.0} if pure else {}
        with tempfile.TemporaryDirectory() as d:
            cfg = dmc.SelfPlayConfig(contracts=["no_queens"], out_dir=d, bc_decisions=0, decisions=10**12,
                                     eval_every=10**12, threads=1, **seats)  # fmt: skip
            trainer = dmc.Run(cfg, "no_queens", resume=False)
            trainer.selfplay(seconds=0.1)  # compile / load the kernels before timing
            trained, played, dt = trainer.selfplay(seconds=seconds)
            trainer.logger.tb.close()
        print(f"{'':18s} (B={cfg.num_games}, every seat's decisions: {played / dt:,.0f}/s; learner decisions trained "
              f"in updates of {cfg.rollout}, minibatch {cfg.minibatch})")  # fmt: skip
        return trained / dt

    return run


def _train_rollout_q(rollout: str, card_hidden: int, chunk: int) -> Callable[[float], float]:
    def run(seconds: float) -> float:
        import tempfile

        rq = _training("rollout_q")
        with tempfile.TemporaryDirectory() as d:
            cfg = rq.RolloutQConfig(contracts=["no_queens"], out_dir=d, states=10**12, eval_every=10**12, threads=1,
                                    rollout=rollout, card_hidden=card_hidden, chunk=chunk)  # fmt: skip
            run = rq.Run(cfg, "no_queens", resume=False)
            run.evaluate = lambda: {}  # no model selection inside the timed loop
            run.train(seconds=0.1)  # compile / load the kernels before timing
            out0 = run.played_out
            states, played, dt = run.train(seconds=seconds)
            out = run.played_out - out0
            run.close_logs()
        copy = f"; the learner copy's playout decisions: {out / dt:,.0f}/s" if out else ""
        print(f"{'':18s} (B={cfg.num_games}, every seat's decisions: {played / dt:,.0f}/s{copy}; states labelled with "
              f"every legal move's playout by the {rollout}, {cfg.replay:g} samples trained per state, minibatch "
              f"{cfg.minibatch}, card head {card_hidden})")  # fmt: skip
        return states / dt

    return run


RUNNERS: dict[str, Callable[[float], float]] = {
    "engine-off": _engine("off"),
    "engine-on": _engine("classic"),
    "raw_env": _barbu_env(False, "deal"),
    "env": _barbu_env(True, "deal"),
    "raw_env-match": _barbu_env(False, "match"),
    "env-king3": _barbu_env(True, "deal", "king3"),
    "env-king": _barbu_env(True, "deal", "king"),
    "env-king5": _barbu_env(True, "deal", "king5"),
    "env-king6": _barbu_env(True, "deal", "king6"),
    "holdem": _holdem,
    "shimmy-hearts": _shimmy_hearts,
    "pyspiel-hearts": _pyspiel_hearts,
    "vector-256": _vector(256),
    "vector-1024": _vector(1024),
    "vector-4096": _vector(4096),
    "vector-4096-2threads": _vector(4096, threads=2),
    "vector-4096-packed": _vector(4096, observe="packed"),
    "vector-4096-noobs": _vector(4096, observe="none"),
    "heuristic-python": _heuristic_python,
    "heuristic-vector-4096": _heuristic_vector(4096),
    "heuristic-env": _agent_env("heuristic"),
    "sb3-heuristic": _sb3_heuristic,
    "vector-env-heuristic": _vector_env_heuristic,
    "pimc-python-16": _pimc(16, "python"),
    "pimc-16": _pimc(16, "compiled"),
    "pimc-128": _pimc(128, "compiled"),
    "pimc-nn-16": _pimc(16, "compiled", "checkpoints"),
    "pimc-16-batched": _pimc_batched(16, 256),
    "nn-single": _nn_single,
    "nn-endgame-single": lambda seconds: _nn_single(seconds, "checkpoints:endgame=9"),
    "nn-env": _agent_env("checkpoints"),
    "nn-batched": _nn_batched(1024),
    "eval-python": _evaluation("python", "heuristic"),
    "eval-batched": _evaluation("batched", "heuristic"),
    "eval-nn-python": _evaluation("python", "checkpoints"),
    "eval-nn-batched": _evaluation("batched", "checkpoints"),
    "eval-random-python": _evaluation("python", "heuristic", "random"),
    "eval-random-batched": _evaluation("batched", "heuristic", "random"),
    "eval-sb3-python": _evaluation("python", "sb3"),
    "eval-sb3-batched": _evaluation("batched", "sb3"),
    "train-dmc-rollouts": _train_dmc_rollouts,
    "train-ppo-selfplay": _train_ppo("python"),
    "train-ppo-vector": _train_ppo("vector"),
    "train-dmc-selfplay": _train_dmc_selfplay(False),
    "train-dmc-selfplay-pure": _train_dmc_selfplay(True),
    "train-rollout-q": _train_rollout_q("heuristic", 64, 65_536),
    "train-rollout-q-learner": _train_rollout_q("learner", 64, 8_192),
}
#: (label, numerator row, denominator row, target ratio from the issue or None).
RATIOS = (
    ("env / shimmy-hearts", "env", "shimmy-hearts", 30.0),
    ("raw_env / pyspiel-hearts", "raw_env", "pyspiel-hearts", 0.4),
    ("raw_env-match / raw_env", "raw_env-match", "raw_env", 0.8),
    ("env-king3 / env", "env-king3", "env", 0.5),
    ("env-king / env", "env-king", "env", 0.5),
    ("env-king5 / env", "env-king5", "env", 0.5),
    ("env-king6 / env", "env-king6", "env", None),
    ("engine-off / pyspiel-hearts", "engine-off", "pyspiel-hearts", 1.5),
    ("engine-on / pyspiel-hearts", "engine-on", "pyspiel-hearts", 1.5),
    ("vector-256 / pyspiel-hearts", "vector-256", "pyspiel-hearts", 8.0),
    ("vector-1024 / pyspiel-hearts", "vector-1024", "pyspiel-hearts", 8.0),
    ("vector-4096 / pyspiel-hearts", "vector-4096", "pyspiel-hearts", 8.0),
    ("vector-4096-2threads / pyspiel", "vector-4096-2threads", "pyspiel-hearts", 8.0),
    ("vector-4096-packed / pyspiel", "vector-4096-packed", "pyspiel-hearts", 8.0),
    ("vector-4096-noobs / pyspiel", "vector-4096-noobs", "pyspiel-hearts", None),
    ("heuristic-vector / -python", "heuristic-vector-4096", "heuristic-python", None),
    ("heuristic-env / env", "heuristic-env", "env", None),
    ("vector-env / sb3-heuristic", "vector-env-heuristic", "sb3-heuristic", None),
    ("pimc-16 / pimc-python-16", "pimc-16", "pimc-python-16", None),
    ("pimc-16 / pimc-nn-16", "pimc-16", "pimc-nn-16", None),
    ("pimc-16-batched / pimc-16", "pimc-16-batched", "pimc-16", None),
    ("nn-single / pimc-16", "nn-single", "pimc-16", 100.0),
    ("nn-endgame-single / pimc-16", "nn-endgame-single", "pimc-16", None),
    ("nn-batched / pimc-16", "nn-batched", "pimc-16", 100.0),
    ("nn-env / env", "nn-env", "env", None),
    ("nn-batched / pimc-16-batched", "nn-batched", "pimc-16-batched", 100.0),
    ("eval-batched / eval-python", "eval-batched", "eval-python", 20.0),
    ("eval-nn-batched / -python", "eval-nn-batched", "eval-nn-python", 20.0),
    ("eval-random-batched / -python", "eval-random-batched", "eval-random-python", None),
    ("eval-sb3-batched / -python", "eval-sb3-batched", "eval-sb3-python", None),
    ("train-dmc-selfplay / ppo", "train-dmc-selfplay", "train-ppo-selfplay", None),
    ("dmc-selfplay-pure / ppo", "train-dmc-selfplay-pure", "train-ppo-selfplay", None),
    ("train-rollout-q / dmc-selfplay", "train-rollout-q", "train-dmc-selfplay", None),
    ("rollout-q-learner / -q", "train-rollout-q-learner", "train-rollout-q", None),
)


def _run(row: str, seconds: float) -> float | None:
    """One reading of ``row`` (decisions/s), printed; None (printed as "not installed") without its package."""
    try:
        if row.startswith("train-"):  # the trainers' progress bars go to stderr: keep the table readable
            with open(os.devnull, "w") as null, contextlib.redirect_stderr(null):
                rate = RUNNERS[row](seconds)
        else:
            rate = RUNNERS[row](seconds)
    except NotInstalled as e:
        print(f"{row:18s} {'not installed':>14s}   ({e})")
        return None
    print(f"{row:18s} {rate:14,.0f}", flush=True)
    return rate


def main(argv: list[str] | None = None) -> dict[str, float | None]:
    """Run the rows, print the table and the ratios; returns each row's decisions/s (the median of its readings
    with ``--repeat``), None for a row not installed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per row (default 3)")
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=list(ROWS), help="rows to run (default all)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds of the rows, interleaved (each round runs every row in turn); the table then "
                             "gives each row's median and each ratio's median with its range over the rounds "
                             "(default 1)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    readings: dict[str, list[float | None]] = {}
    print(f"{'row':18s} {'decisions/s':>14s}")
    for k in range(args.repeat):
        if args.repeat > 1:
            print(f"(round {k + 1} of {args.repeat})")
        for row in args.rows:
            readings.setdefault(row, []).append(_run(row, args.seconds))
    results: dict[str, float | None] = {}
    for row, rs in readings.items():
        got = [r for r in rs if r is not None]
        results[row] = float(np.median(got)) if len(got) == len(rs) else None
    if args.repeat > 1:
        print("\nmedian")
        for row, rate in results.items():
            if rate is not None:
                print(f"{row:18s} {rate:14,.0f}")
    print()
    print(f"{'ratio':30s} {'measured':>10s} {'target':>8s}  met{'   rounds' if args.repeat > 1 else ''}")
    for label, num, den, target in RATIOS:
        a, b = results.get(num), results.get(den)
        if a is None or b is None:
            continue
        ratio = a / b
        met = "-" if target is None else "yes" if ratio >= target else "no"
        line = f"{label:30s} {ratio:10.2f} {'-' if target is None else f'{target:.1f}':>8s}  {met:3s}"
        if args.repeat > 1:  # each round's readings divided: the spread the median hides
            per = [x / y for x, y in zip(readings[num], readings[den], strict=True) if x is not None and y]
            line += f"   {min(per):.2f}–{max(per):.2f}"
        print(line.rstrip())
    return results


if __name__ == "__main__":
    main()
