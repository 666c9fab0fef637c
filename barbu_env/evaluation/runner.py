"""Playing boards through ``barbu_env.env`` with the agents' ``act(env, agent_name)`` protocol, in this
process or a pool of worker processes, and :func:`evaluate`, the duplicate evaluation of a line-up, on that
runner or on the batched engine (:mod:`.batched`: the same games, faster).

Agents are seeded per game from ``(seed, contract, board, seating, seat)`` only, so results do not
depend on the number of workers or the order boards finish in. An interrupt (Ctrl-C) stops the run
and raises :class:`EvaluationInterrupted` carrying the summary of the boards finished so far; passing
those boards back as ``finished`` resumes the run where it stopped.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

from ..agents import Agent, make
from ..rules import Rules
from .batched import batched_player, select_engine
from .boards import Board, Game, PlayFn, Seating, duplicate, game_seed, lineup_of, make_boards, seatings
from .config import EvalConfig, fallback_notes, make_config
from .pool import check_importable, in_processes
from .report import summarise


class EvaluationInterrupted(KeyboardInterrupt):
    """An evaluation stopped by an interrupt; ``summary`` holds the boards finished (marked partial)."""

    def __init__(self, summary: dict[str, Any]) -> None:
        super().__init__(f"interrupted after {summary['finished']} of {summary['total']} boards")
        self.summary = summary


class TableRunner:
    """Plays every seating of a board through one env (one per worker process; agents built once)."""

    def __init__(self, cfg: EvalConfig, save_games: str | None = None) -> None:
        from ..env import env as make_env

        self.cfg = cfg
        self.rules = cfg.make_rules()
        self.env = make_env(mode=cfg.mode, rules=self.rules)
        #: folder for one game record per game played (``barbu_env.records``), or None
        self.save_games = save_games
        if save_games is not None:
            from ..records import RecordingEnv

            self.env = RecordingEnv(self.env)
        self.n = self.rules.players
        #: one instance per (agent, seat), re-seeded before every game
        self.players: list[list[Agent]] = [[make(spec) for _ in range(self.n)] for spec in cfg.agents]

    def play_game(self, board: Board, seating: Seating, seeds: Sequence[int]) -> Game:
        env = self.env
        players = []
        for seat in range(self.n):
            p = self.players[seating[seat]][seat]
            p.reset(seeds[seat])
            players.append(p)
        env.reset(**board.reset_kwargs())
        raw = env.unwrapped
        while not all(env.terminations.values()):
            agent = env.agent_selection
            env.step(players[raw.agent_name_mapping[agent]].act(env, agent))
        if self.save_games is not None:
            self._save(self.save_games, board, seating)
        if board.seed is None:
            return Game(seating, raw.deal_scores)
        m = raw.match
        return Game(seating, list(m.totals), len(m.records), list(m.winners or []), list(m.records))

    def _save(self, folder: str, board: Board, seating: Seating) -> None:
        """Write the game's record to ``folder/<contract or match>-b<board>-s<seating>.json``."""
        env = self.env
        env.players = [self.cfg.agents[seating[s]] for s in range(self.n)]
        env.record.players = env.players
        name = "match" if board.seed is not None else board.contract.replace(":", "_")
        k = "".join(map(str, seating))
        env.save(os.path.join(folder, f"{name}-b{board.index:05d}-s{k}.json"))

    def play_board(self, board: Board, seats: Sequence[Seating]) -> list[Game]:
        b, seed = board, self.cfg.seed
        return [
            self.play_game(b, seating, [game_seed(seed, b.contract_idx, b.index, k, s) for s in range(self.n)])
            for k, seating in enumerate(seats)
        ]


def _play_board(runner: TableRunner, task: tuple[Board, Sequence[Seating]]) -> tuple[Board, list[Game]]:
    return task[0], runner.play_board(*task)


def env_player(cfg: EvalConfig, workers: int = 1, save_games: str | None = None) -> PlayFn:
    """A :data:`~.boards.PlayFn` playing boards through ``barbu_env.env`` in ``workers`` processes; with
    ``save_games``, every game's record is written to that folder (``barbu_env.records``)."""

    def play(boards: Sequence[Board], seats: Sequence[Seating]) -> Iterator[tuple[Board, list[Game]]]:
        n = min(workers, len(boards))  # no idle worker processes
        if n <= 1:
            runner = TableRunner(cfg, save_games)
            for b in boards:
                yield b, runner.play_board(b, seats)
            return
        check_importable(cfg.agents)
        chunk = max(1, min(8, len(boards) // (4 * n)))
        yield from in_processes(n, TableRunner, (cfg, save_games), _play_board, [(b, seats) for b in boards], chunk)

    return play


def evaluate(
    agents: Sequence[str],
    mode: str = "deal",
    contracts: Sequence[str] | str = "no_queens",
    boards: int = 100,
    seed: int = 0,
    lineup: str = "1v3",
    rules: str | dict | Rules | None = None,
    workers: int = 1,
    progress: bool = False,
    finished: Sequence[dict[str, Any]] = (),
    engine: str = "auto",
    **rule_options: Any,
) -> dict[str, Any]:
    """Duplicate evaluation (see :mod:`barbu_env.evaluation`); returns the JSON-ready results.

    ``agents``: specs (``make``); ``contracts``: deal mode: names, or ``"all"`` (every contract of the
    rules' table); ``boards``: boards per contract (deal mode) or matches (match mode); ``rules`` and
    ``rule_options``: as ``load_rules``; in deal mode ``doubling`` defaults to ``"off"``. ``finished``:
    board results of an earlier run of the same evaluation (its ``"boards"``), not played again.
    ``engine``: ``"auto"`` (the batched engine where every agent has a batched form, see
    :func:`.batched.select_engine`), ``"batched"`` or ``"python"`` (the env runner); the summary's ``engine``
    names the one that played (the numbers do not depend on it). Raises :class:`EvaluationInterrupted` (with
    the partial summary) on Ctrl-C. Decisions a checkpoint agent hands to its fallback are named in
    ``UserWarning`` s and in the summary's ``notes``."""
    cfg, made = make_config(agents, mode, contracts, boards, seed, lineup, rules, **rule_options)
    notes = fallback_notes(cfg, made)
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return run(cfg, workers, progress, finished, notes, engine=engine, agents=made)


def run(
    cfg: EvalConfig,
    workers: int = 1,
    progress: bool = False,
    finished: Sequence[dict[str, Any]] = (),
    notes: Sequence[str] = (),
    play: PlayFn | None = None,
    engine: str = "auto",
    agents: Sequence[Agent] | None = None,
    save_games: str | None = None,
) -> dict[str, Any]:
    """Play the boards of ``cfg`` (those not in ``finished``) and summarise them (see :func:`evaluate`);
    ``play``: who plays them (the summary's ``engine`` is then ``"custom"``), default per ``engine``: the
    batched engine (:func:`.batched.batched_player`) or :func:`env_player`, each with ``workers`` processes.
    ``agents``: ``cfg.agents`` built (default: built here). ``save_games``: a folder for every game's record (the
    python engine only: the batched one keeps no records)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"bad number of workers {workers!r}: expected an integer >= 1")
    if play is None:
        agents = [make(spec) for spec in cfg.agents] if agents is None else agents
        if save_games is not None:
            if engine == "batched":
                raise ValueError("save_games records games through the env: use engine 'python' or 'auto'")
            engine = "python"
        engine = select_engine(cfg, engine, agents)[0]
        if engine == "batched":
            play = batched_player(cfg, agents, workers=workers)
        else:
            play = env_player(cfg, workers, save_games)
    else:
        engine = "custom"
    the_rules = cfg.make_rules()
    seats = seatings(lineup_of(cfg.lineup, len(cfg.agents), the_rules.players))
    all_boards = make_boards(cfg.seed, cfg.contracts, cfg.boards, the_rules)
    wanted = {b.key: i for i, b in enumerate(all_boards)}
    done: dict[int, dict[str, Any]] = {}
    for r in finished:
        key = (_name_of(r, cfg), r.get("board"))
        if key in wanted:
            done[wanted[key]] = r
    todo = [b for i, b in enumerate(all_boards) if i not in done]
    from tqdm import tqdm

    bar = tqdm(total=len(todo), desc=f"barbu-eval {cfg.mode}", unit="board", disable=not progress, file=sys.stderr)
    try:
        for board, result in duplicate(todo, seats, play, len(cfg.agents), the_rules.score_sign):
            done[wanted[board.key]] = result
            bar.update()
    except KeyboardInterrupt:
        bar.close()
        summary = summarise(cfg, [done[i] for i in sorted(done)], len(all_boards), notes)
        raise EvaluationInterrupted({**summary, "engine": engine}) from None
    bar.close()
    return {**summarise(cfg, [done[i] for i in sorted(done)], len(all_boards), notes), "engine": engine}


def _name_of(result: dict[str, Any], cfg: EvalConfig) -> str:
    return "match" if cfg.mode == "match" else str(result.get("contract", "")).split(":")[0]
