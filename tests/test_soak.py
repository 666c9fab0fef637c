"""Soak: many deals through one env and many matches, memory stable and every module-level cache bounded.

Small by default (CI); the full run is ``BARBU_SOAK_DEALS=100000 BARBU_SOAK_MATCHES=10000 python -m pytest -q
tests/test_soak.py -s`` (or ``python tests/test_soak.py 100000 10000``), which prints what it measured.

Memory is counted in the interpreter's allocated blocks (``sys.getallocatedblocks``: every Python object,
numpy array headers included) and the process RSS, after a warm-up that fills the caches. Any module-level
dict, list or set of ``barbu_env`` that grows during a soak must be listed in :data:`BOUNDS` and stay within
its bound: a new cache without a bound fails here.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable
from types import ModuleType

import numpy as np
import pytest
from helpers import env_presets, random_env_play

import barbu_env
from barbu_env.rules import PRESETS

SOAK_DEALS = int(os.environ.get("BARBU_SOAK_DEALS", "2000"))
SOAK_MATCHES = int(os.environ.get("BARBU_SOAK_MATCHES", str(len(PRESETS))))  # one per preset
WARM_UP = 0.2  # the share of a soak run before the first memory reading
#: Blocks a soak may gain beyond its caches' growth (the interpreter's own bookkeeping), and per new cache entry
#: (an entry's key, value and array headers).
SLACK_BLOCKS = 2000
BLOCKS_PER_ENTRY = 4


def _all_decks() -> set[int]:
    """Every deck a deal can use: each preset at each player count it accepts (R1, R11.4, R12.1)."""
    decks = set()
    for name in PRESETS:
        for n in (3, 4, 5, 6):
            try:
                decks.add(barbu_env.load_rules(name, players=n).deck)
            except ValueError:
                pass
    return decks


def _bounds() -> dict[tuple[str, str], int]:
    """``(module, name)`` -> the most entries each growing module-level container may hold: the size at which
    the code clears it, or the size of the finite set of keys it is filled from."""
    import importlib

    from barbu_env import observation

    return {
        ("barbu_env.inplay", "_MASKS"): importlib.import_module("barbu_env.inplay")._MASKS_MAX,
        ("barbu_env.observation", "_RULES_BITS"): observation._RULES_BITS_MAX,
        ("barbu_env.observation", "_LAYOUTS"): observation._LAYOUTS_MAX,
        ("barbu_env.vector.king", "_CONSTANTS"): importlib.import_module("barbu_env.vector.king")._CONSTANTS_MAX,
        ("barbu_env.engine.deal", "_PARSED"): 1024,
        ("barbu_env.engine.deal", "_RULE_CONSTS"): 64,
        ("barbu_env.engine.deal", "_CONTRACT_CONSTS"): 256,
        ("barbu_env.engine.deal", "_DEFENDER_DOUBLES"): 1024,
        ("barbu_env.engine.deal", "_DECK_BITS"): len(_all_decks()),
        # (seat, declarer, positive, doubling, doubled_me, must_double): 5 * 5 * 2 * 3 * 32 * 2 combinations
        ("barbu_env.engine.doubling", "_LEGAL_DOUBLES"): 5 * 5 * 2 * 3 * 32 * 2,
    }


BOUNDS = _bounds()


def containers() -> dict[tuple[str, str], int]:
    """The size of every module-level dict, list and set of the imported ``barbu_env`` modules."""
    out: dict[tuple[str, str], int] = {}
    seen: set[int] = set()
    for name, module in sorted(sys.modules.items()):
        if not (name == "barbu_env" or name.startswith("barbu_env.")) or not isinstance(module, ModuleType):
            continue
        for attr, value in sorted(vars(module).items()):
            if isinstance(value, (dict, list, set)) and id(value) not in seen:
                seen.add(id(value))
                out[name, attr] = len(value)
    return out


def rss_bytes() -> int:
    """Resident set size of this process (0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def soak(episodes: int, run_one: Callable[[int], None], warm: int | None = None) -> dict[str, int]:
    """Run ``episodes`` episodes; memory and container sizes after the warm-up (``warm`` episodes, default
    :data:`WARM_UP` of them) and at the end."""
    warm = max(1, int(episodes * WARM_UP)) if warm is None else warm
    for i in range(warm):
        run_one(i)
    gc.collect()
    blocks0, rss0, sizes0 = sys.getallocatedblocks(), rss_bytes(), containers()
    for i in range(warm, episodes):
        run_one(i)
    gc.collect()
    blocks1, rss1, sizes1 = sys.getallocatedblocks(), rss_bytes(), containers()
    grown = {k: (sizes0.get(k, 0), n) for k, n in sizes1.items() if n > sizes0.get(k, 0)}
    unbounded = sorted(k for k in grown if k not in BOUNDS)
    assert not unbounded, f"module-level containers grew during the soak without a bound in BOUNDS: {unbounded}"
    over = {k: (n, BOUNDS[k]) for k, n in sizes1.items() if k in BOUNDS and n > BOUNDS[k]}
    assert not over, f"caches above their bounds (size, bound): {over}"
    entries = sum(n - sizes0.get(k, 0) for k, n in sizes1.items() if k in BOUNDS)
    allowed = SLACK_BLOCKS + BLOCKS_PER_ENTRY * max(0, entries)
    report = {"episodes": episodes, "blocks_growth": blocks1 - blocks0, "allowed_blocks": allowed,
              "cache_entries_growth": entries, "rss_growth_kib": (rss1 - rss0) // 1024}  # fmt: skip
    assert blocks1 - blocks0 <= allowed, f"memory grows: {report}"
    return report


@pytest.mark.slow
def test_soak_deals_through_one_env():
    """``SOAK_DEALS`` deals (deal mode, classic: the compiled copy) through one env, ``reset()`` between."""
    e = barbu_env.env(mode="deal")
    e.reset(seed=0)
    rng = np.random.default_rng(0)

    def one(_: int) -> None:
        e.reset()
        random_env_play(e, rng)

    report = soak(SOAK_DEALS, one)
    print("deals", report)


@pytest.mark.slow
def test_soak_matches_over_every_preset():
    """``SOAK_MATCHES`` whole matches, each in a fresh env of the next preset (match mode: the engine's
    observations and masks, each env's own ``Rules``); and deal mode of every preset between them. The warm-up
    plays every preset once, so the modules only some presets import are loaded before the first reading."""
    presets = env_presets()
    rng = np.random.default_rng(1)

    def one(i: int) -> None:
        preset = presets[i % len(presets)]
        e = barbu_env.env(rules=preset, mode="match")
        e.reset(seed=i)
        random_env_play(e, rng)
        d = barbu_env.env(rules=preset, mode="deal", illegal_action="renege")
        d.reset(seed=i)
        random_env_play(d, rng)

    report = soak(len(presets) + SOAK_MATCHES, one, warm=len(presets))
    print("matches", report)


if __name__ == "__main__":
    if len(sys.argv) > 1:
        os.environ["BARBU_SOAK_DEALS"], os.environ["BARBU_SOAK_MATCHES"] = sys.argv[1], sys.argv[2]
    sys.exit(pytest.main(["-q", "-s", __file__]))
