"""Duplicate evaluation of agents, with paired confidence intervals; the ``barbu-eval`` CLI.

Duplicate format: every board is replayed once per seating of the line-up, the seatings being the
distinct rotations of the line-up round the table, so each agent holds each hand equally often
(``1v3`` = ``A B B B``: 4 seatings, A holds each hand once; ``2v2`` = ``A B A B``: 2 seatings, each
agent holds each hand once; 4 agents ``A B C D``: 4 seatings). Games are played through
``barbu_env.env`` with the agents' ``act(env, agent_name)`` protocol.

- Deal mode (``mode="deal"``): a board is a deal of one contract: hands from the board's seed, the
  declarer rotating over boards (board ``i`` is declared by seat ``i % 4``). Board ``i`` has the same
  hands for every contract. For Trumps and Fantan the parameter is fixed per board: the trump suit /
  start rank the heuristic would name for the declarer's hand (so every seating plays the same
  contract and only card play is compared). Default rules: doubling ``"off"`` (card play only);
  pass ``rules``/``doubling`` to change it.
- Match mode (``mode="match"``): a board is a match seed; the match deals only from its RNG, so the
  same 28 deals come up in every seating (with the declarer's contract choices made by the agents).
  Full rules by default (classic doubling).

Per board, each agent gets one number: the mean over its seats and seatings of (its score − the table
mean of that game), per deal. The table mean is the contract total / 4 in deal mode, so this is the
agent's advantage over an average player at the table. Results are the mean over boards with a 95%
confidence interval from Student's t on the per-board numbers (boards are independent; the pairing
over seatings removes the luck of the cards). Match mode adds win rates per seat (ties shared), whose
even value is 0.25.

Barbu King (``--rules king``, ``king3``, ``king5``, …, R11): points are bad, so the per-board number
is negated (``rules.score_sign``: the table mean minus the agent's score) and higher is better in every
table, as in Barbu; ``raw_mean`` keeps the game's points. Line-ups follow the number of seats
(``1v3`` = ``A B B`` with 3 players, ``A B B B B`` with 5; ``2v2`` alternates; ``4`` needs one agent
per seat) and the table mean is the total over the number of players.

Everything is deterministic for a given ``seed``: board ``i`` depends only on ``(seed, i)`` and each
game's agent seeds only on ``(seed, contract, i, seating)``, whatever the number of workers.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .agents import Agent, make
from .agents.heuristic import best_fantan_rank, best_trump
from .cards import RANKS, SUITS, cards_of
from .contracts import contract_table
from .engine.deal import deal_hands
from .rules import Rules, load_rules

#: The classic seven contracts, in table order (``--contract all`` under the default rules).
SEVEN = ("no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps", "fantan")
#: Line-ups: which agent (by index in the ``agents`` list) sits in seats 0..3 before rotation.
LINEUPS: dict[str, tuple[int, ...]] = {"1v3": (0, 1, 1, 1), "2v2": (0, 1, 0, 1), "4": (0, 1, 2, 3)}
MODES = ("deal", "match")


# ================================================================================= statistics
def t_quantile(p: float, df: int) -> float:
    """Quantile ``p`` (0.5 < p < 1) of Student's t with ``df`` degrees of freedom: exact for df 1, 2;
    otherwise Newton steps on the CDF (Simpson integration of the density) from the Cornish-Fisher
    expansion; accurate to about 1e-8."""
    if not 0.5 < p < 1:
        raise ValueError(f"bad probability {p!r}: expected 0.5 < p < 1")
    if isinstance(df, bool) or df < 1:
        raise ValueError(f"bad degrees of freedom {df!r}: expected >= 1")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return 2 * (p - 0.5) * math.sqrt(2 / (4 * p * (1 - p)))
    z = _normal_quantile(p)
    v = float(df)
    t = (
        z
        + (z**3 + z) / (4 * v)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3)
    )
    for _ in range(8):
        step = (_t_cdf(t, v) - p) / _t_density(np.array([t]), v)[0]
        t -= step
        if abs(step) < 1e-12:
            break
    return float(t)


def _t_density(x: np.ndarray, v: float) -> np.ndarray:
    log_c = math.lgamma((v + 1) / 2) - math.lgamma(v / 2) - 0.5 * math.log(v * math.pi)
    return np.exp(log_c - (v + 1) / 2 * np.log1p(x * x / v))


def _t_cdf(t: float, v: float, n: int = 2048) -> float:
    """P(T <= t) for t >= 0 by Simpson's rule on the density over [0, t]."""
    xs = np.linspace(0.0, t, n + 1)
    f = _t_density(xs, v)
    return 0.5 + (t / n) / 3 * float(f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())


def _normal_quantile(p: float) -> float:
    """Standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9)."""
    a = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
         -3.066479806614716e01, 2.506628277459239e00)
    b = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
         -1.328068155288572e01)
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
         4.374664141464968e00, 2.938163982698783e00)
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)  # fmt: skip
    if p < 0.02425:
        q = math.sqrt(-2 * math.log(p))
        return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
    if p > 1 - 0.02425:
        return -_normal_quantile(1 - p)
    q = p - 0.5
    r = q * q
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (
        ((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1
    )


def confidence_interval(values: Sequence[float], level: float = 0.95) -> dict[str, float]:
    """Mean of per-board values with a two-sided Student-t interval: ``mean ± t·sd/√n``.

    Returns ``n``, ``mean``, ``sd``, ``half_width``, ``low``, ``high`` (half-width NaN when n < 2)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n == 0:
        raise ValueError("no values: a confidence interval needs at least one board")
    mean = float(x.mean())
    if n < 2:
        sd = hw = float("nan")
    else:
        sd = float(x.std(ddof=1))
        hw = t_quantile(0.5 + level / 2, n - 1) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "half_width": hw, "low": mean - hw, "high": mean + hw}


# ================================================================================= seatings and boards
def seatings(lineup: Sequence[int]) -> list[tuple[int, ...]]:
    """The distinct rotations of a line-up: ``seating[seat]`` = index of the agent in that seat."""
    n = len(lineup)
    if n not in (3, 4, 5):
        raise ValueError(f"a line-up names the agent of each of the 4 seats (3 or 5 in King), got {lineup!r}")
    out: list[tuple[int, ...]] = []
    for r in range(n):
        s = tuple(lineup[(seat + r) % n] for seat in range(n))
        if s not in out:
            out.append(s)
    return out


def lineup_of(name: str, num_agents: int, players: int = 4) -> tuple[int, ...]:
    """The line-up for ``--lineup``, the number of agents given and the number of seats (R11.4)."""
    if name not in LINEUPS:
        raise ValueError(f"unknown line-up {name!r}: expected one of {list(LINEUPS)}")
    lineup = _lineup(name, players)
    need = max(lineup) + 1
    if num_agents != need:
        raise ValueError(f"line-up {name!r} needs {need} agents, got {num_agents}")
    return lineup


def _lineup(name: str, players: int) -> tuple[int, ...]:
    """``LINEUPS[name]`` for 4 seats; for 3 or 5 seats: one agent vs the rest, alternating, or one each."""
    if players == 4:
        return LINEUPS[name]
    if name == "1v3":
        return (0,) + (1,) * (players - 1)
    if name == "2v2":
        return tuple(i % 2 for i in range(players))
    return tuple(range(players))


def board_seed(seed: int, board: int) -> np.random.SeedSequence:
    """The seed sequence of board ``board`` (shared by every contract of a run)."""
    return np.random.SeedSequence([seed, board])


def game_seed(seed: int, contract_idx: int, board: int, seating: int, seat: int) -> int:
    """Seed of the agent in ``seat`` for one game (independent of workers and run order)."""
    return int(np.random.SeedSequence([seed, 1 + contract_idx, board, seating, seat]).generate_state(1)[0])


def deal_board(seed: int, board: int, contract: str, rules: Rules) -> tuple[list[list[int]], int, str]:
    """``(hands, declarer, contract text)`` of a deal-mode board. The declarer is seat ``board % n``;
    Trumps and Fantan get the trump suit / start rank the heuristic names for the declarer's hand."""
    hands = deal_hands(np.random.default_rng(board_seed(seed, board)), rules)
    declarer = board % rules.players
    text = contract
    if contract == "trumps":
        text = "trumps:" + SUITS[best_trump(hands[declarer])]
    elif contract == "fantan":
        text = "fantan:" + RANKS[best_fantan_rank(hands[declarer], rules.deck)]
    return [cards_of(h) for h in hands], declarer, text


# ================================================================================= playing
@dataclass
class EvalConfig:
    """What to evaluate (see :func:`evaluate`)."""

    agents: list[str]
    mode: str = "deal"
    contracts: list[str] = field(default_factory=lambda: ["no_queens"])
    boards: int = 100
    seed: int = 0
    lineup: str = "1v3"
    rules: dict[str, Any] = field(default_factory=dict)  # Rules fields (asdict), after defaults

    def make_rules(self) -> Rules:
        return Rules(**self.rules)


class _Runner:
    """Plays the games of one board (one per worker process; agents and env are built once)."""

    def __init__(self, cfg: EvalConfig) -> None:
        from .env import env as make_env

        self.cfg = cfg
        self.rules = cfg.make_rules()
        self.env = make_env(mode=cfg.mode, rules=self.rules)
        self.n = self.rules.players
        self.sign = self.rules.score_sign  # R11: in King lower points are better
        self.seatings = seatings(lineup_of(cfg.lineup, len(cfg.agents), self.n))
        #: one instance per (agent, seat), re-seeded before every game
        self.players: list[list[Agent]] = [[make(spec) for _ in range(self.n)] for spec in cfg.agents]

    def _play(self, seating: tuple[int, ...], seeds: list[int], seed: int | None, options: dict[str, Any]) -> Any:
        env = self.env
        players = []
        for seat in range(self.n):
            p = self.players[seating[seat]][seat]
            p.reset(seeds[seat])
            players.append(p)
        env.reset(seed=seed, options=options)
        raw = env.unwrapped
        while not all(env.terminations.values()):
            agent = env.agent_selection
            env.step(players[raw.agent_name_mapping[agent]].act(env, agent))
        return raw

    def run_board(self, task: tuple[int, int]) -> dict[str, Any]:
        """Play every seating of one board; returns per-agent numbers for the board."""
        contract_idx, board = task
        cfg = self.cfg
        n_agents = len(cfg.agents)
        n, sign = self.n, self.sign
        rel = np.zeros(n_agents)
        raw_pts = np.zeros(n_agents)
        seats_of = np.zeros(n_agents)
        wins = np.zeros(n_agents)
        by_contract: dict[str, list[float]] = {}
        if cfg.mode == "deal":
            contract = cfg.contracts[contract_idx]
            hands, declarer, text = deal_board(cfg.seed, board, contract, self.rules)
            options = {"hands": hands, "declarer": declarer, "contract": text}
        else:
            text = None
            options = {}
        games = []
        for k, seating in enumerate(self.seatings):
            seeds = [game_seed(cfg.seed, contract_idx, board, k, s) for s in range(n)]
            if cfg.mode == "deal":
                raw = self._play(seating, seeds, None, options)
                scores = list(raw.deal.scores)
                per_deal = 1
            else:
                match_seed = int(board_seed(cfg.seed, board).generate_state(1)[0])
                raw = self._play(seating, seeds, match_seed, options)
                scores = list(raw.match.totals)
                per_deal = len(raw.match.records)
                winners = raw.match.winners or []
                for s in winners:
                    wins[seating[s]] += 1 / len(winners)
                for rec in raw.match.records:
                    name = rec.contract.split(":")[0]
                    mean = sum(rec.scores) / n
                    row = by_contract.setdefault(name, [0.0] * (2 * n_agents))
                    for s in range(n):
                        row[seating[s]] += sign * (rec.scores[s] - mean)
                        row[n_agents + seating[s]] += 1
            mean = sum(scores) / n
            for s in range(n):
                a = seating[s]
                rel[a] += sign * (scores[s] - mean) / per_deal
                raw_pts[a] += scores[s] / per_deal
                seats_of[a] += 1
            games.append({"seating": list(seating), "scores": scores})
        out = {
            "contract": text if cfg.mode == "deal" else "match",
            "board": board,
            "rel": (rel / seats_of).tolist(),
            "raw": (raw_pts / seats_of).tolist(),
            "games": games,
        }
        if cfg.mode == "match":
            out["win"] = (wins / seats_of).tolist()
            out["by_contract"] = {
                name: [row[a] / row[n_agents + a] for a in range(n_agents)] for name, row in by_contract.items()
            }
        return out


_WORKER: _Runner | None = None


def _init_worker(cfg: EvalConfig) -> None:
    global _WORKER
    # one thread per worker process: neural agents' single-row forward passes gain nothing from more,
    # and several workers each spinning several threads on a small machine thrash (torch reads this at import)
    os.environ["OMP_NUM_THREADS"] = "1"
    _WORKER = _Runner(cfg)


def _run_task(task: tuple[int, int]) -> dict[str, Any]:
    if _WORKER is None:  # pragma: no cover - set by the pool initializer
        raise RuntimeError("worker not initialised")
    return _WORKER.run_board(task)


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
    **rule_options: Any,
) -> dict[str, Any]:
    """Duplicate evaluation (see the module docstring); returns the JSON-ready results.

    ``agents``: specs (``make``); ``contracts``: deal mode: names, or ``"all"`` (every contract of the
    rules' table); ``boards``: boards per contract (deal mode) or matches (match mode); ``rules`` and
    ``rule_options``: as ``load_rules``; in deal mode ``doubling`` defaults to ``"off"``."""
    if mode not in MODES:
        raise ValueError(f"bad mode {mode!r}: expected one of {MODES}")
    if isinstance(boards, bool) or not isinstance(boards, int) or boards < 1:
        raise ValueError(f"bad number of boards {boards!r}: expected an integer >= 1")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"bad number of workers {workers!r}: expected an integer >= 1")
    agents = list(agents)
    for spec in agents:
        make(spec)  # a bad spec fails here, before any worker starts
    if mode == "deal" and "doubling" not in rule_options and not (isinstance(rules, dict) and "doubling" in rules):
        base = load_rules(rules)
        rule_options = {"doubling": "off" if base.undoubled_negative == "play" else base.doubling, **rule_options}
    the_rules = load_rules(rules, **rule_options)
    lineup_of(lineup, len(agents), the_rules.players)
    table = contract_table(the_rules)
    if mode == "deal":
        names = list(table) if contracts == "all" else [contracts] if isinstance(contracts, str) else list(contracts)
        for c in names:
            if c not in table:
                raise ValueError(f"unknown contract {c!r} under these rules: expected 'all' or one of {list(table)}")
    else:
        names = ["match"]
    cfg = EvalConfig(agents, mode, names, boards, seed, lineup, asdict(the_rules))
    tasks = [(ci, b) for ci in range(len(names)) for b in range(boards)]
    results = _run_tasks(cfg, tasks, workers, progress)
    return summarise(cfg, results)


def _run_tasks(cfg: EvalConfig, tasks: list[tuple[int, int]], workers: int, progress: bool) -> list[dict[str, Any]]:
    from tqdm import tqdm

    bar = dict(total=len(tasks), desc=f"barbu-eval {cfg.mode}", unit="board", disable=not progress, file=sys.stderr)
    if workers == 1:
        runner = _Runner(cfg)
        return [runner.run_board(t) for t in tqdm(tasks, **bar)]
    ctx = mp.get_context("spawn")
    with ctx.Pool(workers, initializer=_init_worker, initargs=(cfg,)) as pool:
        chunk = max(1, min(8, len(tasks) // (4 * workers)))
        return list(tqdm(pool.imap(_run_task, tasks, chunksize=chunk), **bar))


# ================================================================================= summaries
def _labels(agents: Sequence[str]) -> list[str]:
    """Agent labels for tables: the spec, with ``#k`` added when the same spec appears twice."""
    out = []
    for i, a in enumerate(agents):
        out.append(a if agents.count(a) == 1 else f"{a}#{agents[: i + 1].count(a)}")
    return out


def summarise(cfg: EvalConfig, results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per-contract (and overall) means with CIs from the per-board numbers."""
    labels = _labels(cfg.agents)
    n_agents = len(labels)
    out: dict[str, Any] = {
        "config": {**asdict(cfg), "seatings": [list(s) for s in seatings(_lineup(cfg.lineup, cfg.rules["players"]))]},
        "agents": labels,
        "contracts": {},
    }
    by_name: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        name = cfg.contracts[0] if cfg.mode == "match" else r["contract"].split(":")[0]
        by_name.setdefault(name, []).append(r)
    for name in cfg.contracts:
        rows = by_name[name]
        entry: dict[str, Any] = {"boards": len(rows), "agents": {}}
        for a, label in enumerate(labels):
            ci = confidence_interval([r["rel"][a] for r in rows])
            ci["raw_mean"] = float(np.mean([r["raw"][a] for r in rows]))
            if cfg.mode == "match":
                ci["win_rate"] = confidence_interval([r["win"][a] for r in rows])
            entry["agents"][label] = ci
        out["contracts"][name] = entry
    if cfg.mode == "deal" and len(cfg.contracts) > 1:
        boards = sorted({r["board"] for r in results})
        per_board = {b: np.zeros(n_agents) for b in boards}
        for r in results:
            per_board[r["board"]] += np.asarray(r["rel"]) / len(cfg.contracts)
        out["overall"] = {
            label: confidence_interval([per_board[b][a] for b in boards]) for a, label in enumerate(labels)
        }
    if cfg.mode == "match":
        names = list(contract_table(cfg.make_rules()))
        out["by_contract"] = {
            n: {
                label: confidence_interval([r["by_contract"][n][a] for r in results if n in r["by_contract"]])
                for a, label in enumerate(labels)
            }
            for n in names
            if any(n in r["by_contract"] for r in results)
        }
    out["boards"] = results
    return out


def _fmt(ci: dict[str, float], digits: int = 2, sign: bool = True) -> str:
    hw = ci["half_width"]
    m = f"{ci['mean']:+.{digits}f}" if sign else f"{ci['mean']:.{digits}f}"
    return f"{m} ± {hw:.{digits}f}" if hw == hw else m


def markdown(summary: dict[str, Any]) -> str:
    """The results as Markdown tables (points per deal relative to the table mean, 95% CI)."""
    cfg = summary["config"]
    labels = summary["agents"]
    lines = [
        f"# barbu-eval: {' vs '.join(labels)} ({cfg['mode']} mode, line-up {cfg['lineup']}, seed {cfg['seed']})",
        "",
        "Points per deal relative to the table mean, mean over duplicate boards ± 95% CI half-width "
        "(Student t on per-board numbers).",
        "",
    ]
    if cfg["rules"].get("game") == "king":
        lines += ["Barbu King (R11): points are bad, so these numbers are the table mean minus the agent's "
                  "points (higher is better, as in Barbu).", ""]  # fmt: skip
    if cfg["mode"] == "match":
        head = "| | boards | " + " | ".join(f"{lab} pts/deal | {lab} win rate/seat" for lab in labels) + " |"
        lines += [head, "|" + "---|" * (2 + 2 * len(labels))]
        e = summary["contracts"]["match"]
        cells = [f"{_fmt(e['agents'][lab])} | {_fmt(e['agents'][lab]['win_rate'], 3, sign=False)}" for lab in labels]
        lines.append(f"| match | {e['boards']} | " + " | ".join(cells) + " |")
        lines += ["", "By contract (match deals, points per deal relative to the table mean):", ""]
        lines += ["| contract | " + " | ".join(labels) + " |", "|" + "---|" * (1 + len(labels))]
        for name, row in summary.get("by_contract", {}).items():
            lines.append(f"| {name} | " + " | ".join(_fmt(row[lab]) for lab in labels) + " |")
    else:
        lines += ["| contract | boards | " + " | ".join(labels) + " |", "|" + "---|" * (2 + len(labels))]
        for name, e in summary["contracts"].items():
            lines.append(f"| {name} | {e['boards']} | " + " | ".join(_fmt(e["agents"][lab]) for lab in labels) + " |")
        if "overall" in summary:
            n = next(iter(summary["overall"].values()))["n"]
            lines.append(f"| **all** | {n} | " + " | ".join(_fmt(summary["overall"][lab]) for lab in labels) + " |")
    if cfg["mode"] == "deal":
        lines += ["", f"Board i is declared by seat i % {cfg['rules']['players']}; Trumps and Fantan are played with "
                  "the trump suit / start rank the heuristic names for the declarer's hand "
                  "(fixed per board)."]  # fmt: skip
    rules = {k: v for k, v in cfg["rules"].items() if v != getattr(Rules(), k)}
    lines += ["", f"Rules (differences from classic): {rules or 'none'}. Agents: {', '.join(cfg['agents'])}."]
    return "\n".join(lines) + "\n"


def plot(summary: dict[str, Any], path: str | Path) -> None:
    """A bar chart with 95% CI error bars per contract and agent (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = summary["agents"]
    if summary["config"]["mode"] == "match":
        groups = {"match": summary["contracts"]["match"]["agents"], **summary.get("by_contract", {})}
    else:
        groups = {n: e["agents"] for n, e in summary["contracts"].items()}
        if "overall" in summary:
            groups["all"] = summary["overall"]
    names = list(groups)
    x = np.arange(len(names))
    width = 0.8 / len(labels)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.2 * len(names) + 2), 4.5))
    for a, lab in enumerate(labels):
        means = [groups[n][lab]["mean"] for n in names]
        errs = [np.nan_to_num(groups[n][lab]["half_width"]) for n in names]
        ax.bar(x + (a - (len(labels) - 1) / 2) * width, means, width, yerr=errs, capsize=3, label=lab)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(names, rotation=20)
    ax.set_ylabel("points per deal vs table mean (95% CI)")
    ax.set_title(f"barbu-eval, {summary['config']['mode']} mode, line-up {summary['config']['lineup']}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_outputs(summary: dict[str, Any], out_dir: str | Path) -> dict[str, Path]:
    """Write ``results.md``, ``results.json`` and ``results.png`` to ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"md": out / "results.md", "json": out / "results.json", "png": out / "results.png"}
    paths["md"].write_text(markdown(summary))
    paths["json"].write_text(json.dumps(summary, indent=1))
    plot(summary, paths["png"])
    return paths


# ================================================================================= CLI
def _rule_kv(text: str) -> tuple[str, Any]:
    key, eq, value = text.partition("=")
    if not eq:
        raise argparse.ArgumentTypeError(f"bad rule option {text!r}: expected key=value")
    low = value.strip().lower()
    if low in ("true", "false"):
        return key.strip(), low == "true"
    return key.strip(), int(low) if low.isdigit() else value.strip()  # e.g. players=3


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="barbu-eval",
        description="Duplicate evaluation of Barbu agents with 95%% confidence intervals.",
        epilog="Example: barbu-eval --agents heuristic random --contract no_queens --deals 1000 --seed 0 --out DIR",
    )
    p.add_argument("--agents", nargs="+", required=True,
                   help="agent specs: random, heuristic, pimc[:samples=N], or a checkpoint path")  # fmt: skip
    p.add_argument("--mode", choices=MODES, default="deal", help="one deal per board, or full matches")
    p.add_argument("--contract", nargs="+", default=["all"],
                   help="deal mode: contract name(s) or 'all' (every contract of the rules)")  # fmt: skip
    p.add_argument("--deals", type=int, default=200, help="boards per contract (deal mode)")
    p.add_argument("--matches", type=int, default=20, help="boards = matches (match mode)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lineup", choices=list(LINEUPS), default="1v3",
                   help="1v3: first agent vs three copies of the second; 2v2: alternating; 4: four agents")  # fmt: skip
    p.add_argument("--workers", type=int, default=1, help="processes (results do not depend on it)")
    p.add_argument("--rules", default=None, help="rules preset name or YAML file (default classic)")
    p.add_argument("--rule", type=_rule_kv, action="append", default=[], metavar="KEY=VALUE",
                   help="rule option override, repeatable (e.g. --rule overtrump=yes)")  # fmt: skip
    p.add_argument("--doubling", choices=("classic", "declarer_only", "off"), default=None,
                   help="doubling rule (default: off in deal mode, the rules' own in match mode)")  # fmt: skip
    p.add_argument("--out", default=None, help="directory for results.md / .json / .png")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _exit_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds the worker pool's context manager, which stops the workers


def main(argv: Sequence[str] | None = None) -> int:
    """The ``barbu-eval`` command (see ``barbu-eval --help``); returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.workers > 1 and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_on_sigterm)
    rule_options = dict(args.rule)
    if args.doubling is not None:
        rule_options["doubling"] = args.doubling
    contracts: str | list[str] = "all" if args.contract == ["all"] else args.contract
    try:
        summary = evaluate(
            args.agents, mode=args.mode, contracts=contracts,
            boards=args.deals if args.mode == "deal" else args.matches, seed=args.seed, lineup=args.lineup,
            rules=args.rules, workers=args.workers, progress=not args.no_progress, **rule_options,
        )  # fmt: skip
    except ValueError as e:
        print(f"barbu-eval: error: {e}", file=sys.stderr)
        return 2
    print(markdown(summary))
    if args.out:
        paths = write_outputs(summary, args.out)
        print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
