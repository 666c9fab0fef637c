"""Differential run of the AEC env: a digest of everything the env gives out, step by step, to compare two versions.

``python tests/tools/differential_env.py --steps N [--part K --parts P] [--out FILE]`` drives ``raw_env()`` and
``env()`` over every rules preset (``rules.PRESETS`` and the YAML files in ``configs/rules``), deal and match
mode, every ``illegal_action`` mode, with random legal actions, some illegal ones (ids off the mask, ``None``,
out of range, floats) and information reads interleaved (``deal``, ``match``, ``information_state``, ``render``,
other seats' observations). Each step feeds a SHA-256 with the observation bytes, masks, rewards, cumulative
rewards, terminations, truncations, infos and the type and message of any error. One line per configuration
(its digest and step count) goes to ``--out`` or stdout, then the total. Run it in two checkouts and ``diff``
the outputs; ``--part K --parts P`` runs every P-th configuration from K (to split over processes).

Uses only the public API, so it runs against any version of the env; ``barbu_env`` is imported from the current
directory (``cd`` into the checkout to test). The first output line names the package file.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, os.getcwd())  # the checkout to test is the current directory
from helpers import env_presets

import barbu_env
from barbu_env.rules import PRESETS

ROOT = Path(__file__).resolve().parents[2]
ILLEGAL = ("raise", "renege", "terminate")


def configs() -> list[tuple[str, dict[str, Any]]]:
    """(label, env kwargs and the maker) for every preset, mode, illegal-action mode and wrapper."""
    env_plays = set(env_presets())  # R10.3 positive, R12's 3 or 5 players: engine-only for now
    rules: list[Any] = sorted(p for p in PRESETS if p in env_plays) + sorted(
        str(p) for p in (ROOT / "configs" / "rules").glob("*.yaml") if p.stem in env_plays
    )
    out = []
    for r, mode, illegal, wrapped in itertools.product(rules, ("deal", "match"), ILLEGAL, (False, True)):
        label = f"{Path(r).name}|{mode}|{illegal}|{'env' if wrapped else 'raw_env'}"
        out.append((label, {"rules": r, "mode": mode, "illegal_action": illegal, "wrapped": wrapped}))
    for extra in (
        {"doubling": "off"},
        {"reward_scale": 0.25, "declarer": "random"},
        {"contract": "trumps:H"},
        {"contract": "fantan:9", "fantan_pass": "free"},
        {"contract": "no_queens", "illegal_penalty": 7},
    ):
        for illegal in ILLEGAL:
            out.append(
                (
                    f"classic+{sorted(extra.items())}|deal|{illegal}|raw_env",
                    {"rules": "classic", "mode": "deal", "illegal_action": illegal, "wrapped": False, **extra},
                )
            )
    return out


class Digest:
    """A running SHA-256 of the values fed to it (as bytes or their repr)."""

    def __init__(self, trace: Any = None) -> None:
        self.h = hashlib.sha256()
        self.trace = trace  # a text file: every value's repr, one line per add (to find where two runs part)

    def add(self, *values: Any) -> None:
        if self.trace is not None:
            self.trace.write(repr(values)[:300] + "\n")
        for v in values:
            if isinstance(v, np.ndarray):
                self.h.update(v.dtype.str.encode() + repr(v.shape).encode() + v.tobytes())
            else:
                self.h.update(repr(v).encode())
            self.h.update(b"|")


def _obs(dg: Digest, obs: Any) -> None:
    if obs is None:
        dg.add(None)
    else:
        dg.add(obs["observation"], obs["action_mask"])


def _error(dg: Digest, e: BaseException) -> None:
    dg.add("error", type(e).__name__, str(e))


def _read(dg: Digest, e: Any, rng: np.random.Generator) -> None:
    """One information read, chosen at random."""
    raw = e.unwrapped
    how = int(rng.integers(5))
    if how == 0:
        d = raw.deal
        dg.add("deal", d.history, d.scores, int(d.phase), d.hands, d.to_move)
    elif how == 1:
        m = raw.match
        dg.add("match", None if m is None else (m.totals, m.deal_no, len(m.records), m.deal.history))
    elif how == 2:
        agent = e.agent_selection
        s = raw.information_state(agent)
        dg.add("info", sorted((k, repr(v)) for k, v in vars(s).items() if k != "view"))
    elif how == 3:
        dg.add("render", raw.render())
    else:
        for agent in raw.possible_agents:
            if agent in e.agents:
                _obs(dg, e.observe(agent))


def run_config(kwargs: dict[str, Any], steps: int, seed: int, trace: Any = None) -> tuple[str, int]:
    """Episodes of one configuration until ``steps`` steps; its digest and the steps taken."""
    kwargs = dict(kwargs)
    make = barbu_env.env if kwargs.pop("wrapped") else barbu_env.raw_env
    e = make(render_mode="ansi", **kwargs)
    rng = np.random.default_rng(seed)
    dg = Digest(trace)
    n = 0
    for episode in itertools.count():
        if n >= steps:
            break
        e.reset() if episode % 3 == 2 else e.reset(seed=seed * 1000 + episode)  # also the running stream
        dg.add("reset", e.agent_selection, list(e.agents))
        read_rate = (0.0, 0.002, 0.05)[episode % 3]  # most episodes never read: the compiled path stays on
        bad_rate = (0.0, 0.01, 0.03)[episode % 3]
        for agent in e.agent_iter():
            if n >= steps:
                break
            n += 1
            obs, r, term, trunc, info = e.last()
            dg.add(agent, r, term, trunc, repr(info))
            _obs(dg, obs)
            if rng.random() < read_rate:
                _read(dg, e, rng)
            if term or trunc:
                action: Any = None
            else:
                legal = np.flatnonzero(obs["action_mask"])
                if rng.random() < bad_rate:
                    k = int(rng.integers(6))
                    off = np.flatnonzero(obs["action_mask"] == 0)
                    action = (int(off[rng.integers(len(off))]) if k < 3 and len(off) else
                              (None, -1, 87, 2.0)[k - 2 if k >= 2 else 0])  # fmt: skip
                else:
                    action = int(legal[rng.integers(len(legal))])
            try:
                e.step(action)
            except (ValueError, AssertionError, TypeError, KeyError) as err:
                _error(dg, err)
                if term or trunc:
                    break
                e.step(int(legal[rng.integers(len(legal))]))
            dg.add("after", e.rewards, e._cumulative_rewards if not hasattr(e, "env") else None,
                   e.terminations, e.truncations, repr(e.infos))  # fmt: skip
    return dg.h.hexdigest(), n


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=2000, help="steps per configuration")
    p.add_argument("--part", type=int, default=0)
    p.add_argument("--parts", type=int, default=1)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--trace", default=None, help="a configuration label: write its values' reprs to stdout")
    args = p.parse_args(argv)
    if args.trace is not None:
        i, kwargs = next((i, k) for i, (label, k) in enumerate(configs()) if label == args.trace)
        run_config(kwargs, args.steps, seed=i, trace=sys.stdout)
        return
    warnings.simplefilter("ignore")
    lines, total = [f"barbu_env\t{barbu_env.__file__}"], 0
    for i, (label, kwargs) in enumerate(configs()):
        if i % args.parts != args.part:
            continue
        digest, n = run_config(kwargs, args.steps, seed=i)
        total += n
        lines.append(f"{label}\t{n}\t{digest}")
    lines.append(f"total steps\t{total}")
    text = "\n".join(lines) + "\n"
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
