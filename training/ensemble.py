"""Duplicate evaluation of an ensemble of networks of one contract, played greedily by the mean of their centred logits
(:func:`training.symmetrize.ensemble_target`; with ``--symmetrised`` each network's logits are first averaged over the
contract's suit relabellings: the target ``training.symmetrize --ensemble`` distils).

``python -m training.ensemble OUT A.pt B.pt [C.pt ...] --against heuristic --deals 2000 --seed 5555`` plays the
ensemble on the boards and seeds ``barbu-eval --agents A.pt heuristic --contract <A's contract> --deals 2000 --seed
5555`` plays A on, in one process: on the batched engine against ``heuristic`` or ``random``, through the env against
other agents (e.g. ``pimc``). It writes ``barbu-eval``'s files to OUT, so ``barbu-compare OUT <A's --out folder>``
pairs the two. The logits are torch's float32 passes, so an ensemble of one network plays as the network except where
its two best moves lie within float32 rounding. With ``--doubling classic`` the doubles are those ``barbu-eval``'s
agent for A takes (the learned bidding beside A's file if there is one, else the heuristic's).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch

from barbu_env.agents.neural import NeuralAgent
from barbu_env.evaluation.batched import batched_player, select_engine
from barbu_env.evaluation.boards import Board, Game, PlayFn, Seating
from barbu_env.evaluation.config import EvalConfig, make_config
from barbu_env.evaluation.report import markdown, write_outputs
from barbu_env.evaluation.runner import TableRunner, run
from barbu_env.nn import load_checkpoint, one_thread

from .common import suit_gathers
from .symmetrize import ensemble_target


class EnsembleAgent(NeuralAgent):
    """A greedy checkpoint agent (the file ``path``, its fallback the heuristic) whose card play in the file's contract
    is the largest legal entry of the ensemble target of its network and the networks of ``others`` (files of the
    same contract and layout)."""

    def __init__(self, path: str, others: Sequence[str] = (), symmetrised: bool = False,
                 seed: int | None = None) -> None:  # fmt: skip
        super().__init__(path, seed=seed)
        if len(self.nets) != 1:
            raise ValueError(f"ensemble: {path!r} holds {len(self.nets)} networks: give one checkpoint file")
        ((self.contract, net),) = self.nets.items()
        self.members = [net]
        for p in others:
            other, ckpt = load_checkpoint(p)
            if ckpt["contract"] != self.contract:
                raise ValueError(f"ensemble: {p!r} plays {ckpt['contract']!r}, {path!r} plays {self.contract!r}: "
                                 "give networks of one contract")  # fmt: skip
            if (other.obs_size, other.num_actions) != (net.obs_size, net.num_actions):
                raise ValueError(f"ensemble: {p!r} reads {other.obs_size} observation entries and {other.num_actions} "
                                 f"actions, {path!r} {net.obs_size} and {net.num_actions}")  # fmt: skip
            self.members.append(other)
        self.views = suit_gathers(self.contract, symmetrised)

    def card_actions(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if contract != self.contract:
            return super().card_actions(contract, obs, mask)
        self._check(self.members[0], obs, mask)
        legal = torch.from_numpy(np.ascontiguousarray(self._as_trained(contract, mask)) != 0)
        with torch.no_grad(), one_thread():
            target = ensemble_target(self.members, torch.from_numpy(np.ascontiguousarray(obs, np.float32)), legal,
                                     self.views)  # fmt: skip
        return torch.where(legal, target, -torch.inf).argmax(1).numpy().astype(np.int64)

    def _decide_rows(self, contract: str, obs: np.ndarray, mask: np.ndarray) -> int:
        return int(self.card_actions(contract, obs, mask)[0])


def env_play(cfg: EvalConfig, first: Callable[[], NeuralAgent]) -> PlayFn:
    """A play function through the env in this process, ``cfg``'s first agent replaced by ``first()`` in every seat."""
    runner = TableRunner(cfg)
    runner.players[0] = [first() for _ in range(runner.n)]

    def play(boards: Sequence[Board], seats: Sequence[Seating]) -> Iterator[tuple[Board, list[Game]]]:
        for b in boards:
            yield b, runner.play_board(b, seats)

    return play


def evaluate(nets: Sequence[str], against: str = "heuristic", deals: int = 500, seed: int = 0,
             symmetrised: bool = False, **rule_options: Any) -> dict[str, Any]:  # fmt: skip
    """The summary of the ensemble of ``nets`` (checkpoint files, the first one's contract) against ``against`` on
    ``deals`` boards of ``seed``, as ``barbu-eval --agents <nets[0]> <against>`` summarises its run; the first agent is
    named ``ensemble(<files joined by +>)``, with ``:symmetrised`` when it is."""
    if not nets:
        raise ValueError("ensemble: give at least one checkpoint file")

    def first() -> EnsembleAgent:
        return EnsembleAgent(nets[0], nets[1:], symmetrised)

    agent = first()
    cfg, made = make_config([nets[0], against], "deal", [agent.contract], deals, seed, **rule_options)
    agents = [agent, made[1]]
    engine = select_engine(cfg, "auto", agents)[0]
    play = batched_player(cfg, agents) if engine == "batched" else env_play(cfg, first)
    name = f"ensemble({'+'.join(nets)}){':symmetrised' if symmetrised else ''}"
    return {**run(replace(cfg, agents=[name, against]), play=play), "engine": engine}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m training.ensemble", description=__doc__.splitlines()[0])
    ap.add_argument("out", help="folder for barbu-eval's result files")
    ap.add_argument("nets", nargs="+", help="checkpoint files of one contract")
    ap.add_argument("--against", default="heuristic", help="the agent in the other three seats (an agent spec)")
    ap.add_argument("--deals", type=int, default=500, help="boards")
    ap.add_argument("--seed", type=int, default=0, help="seed of the boards")
    ap.add_argument("--symmetrised", action="store_true", help="average each network over the suit relabellings")
    ap.add_argument("--doubling", default="off", help="the doubling rule (off, classic, ...)")
    args = ap.parse_args(argv)
    try:
        summary = evaluate(args.nets, args.against, args.deals, args.seed, args.symmetrised, doubling=args.doubling)
        write_outputs(summary, args.out)
    except ValueError as e:
        ap.error(str(e))
    print(markdown(summary))


if __name__ == "__main__":
    main()
