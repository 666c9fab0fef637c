"""The compiled (numba) kernels of the batched engine and of the env's compiled copy of one deal.

Modules: ``common`` (decorators, state columns, table offsets, bit helpers), ``rules`` (legality,
transitions, scoring, new deals: RULES.md R3-R9), ``obs`` (observation rows, packed observations,
masks), ``mirror`` (the single-deal copy's buffer and kernels), ``heuristic`` (the heuristic agent's
decisions and its playouts), ``kingobs`` (Barbu King's observation rows from an engine deal), ``policy`` (a
policy network's greedy choices), ``linear`` (a linear layer over sparse input rows, for training),
``nprandom`` (numpy's seeding and bounded integers), ``players`` (the seated players of a duplicate batch).
Importing this package imports numba; ``barbu_env.vector`` does so when a
``VectorDeals`` or ``single.Mirror`` is built, the env when it plays Barbu King.

Kernels are compiled on first use and cached on disk (``cache=True``). numba checks a cached kernel only
against its own source file, while a kernel also freezes helpers of the other modules and constants of
the rest of the package (observation layout, state columns, card tables). :data:`FINGERPRINT` hashes the
source of every kernel module and the values of their module-level constants; when it differs from the
one stored beside the cache, the cached kernels are deleted (:func:`drop_stale_cache`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from . import common, heuristic, kingobs, linear, mirror, nprandom, obs, players, policy, rules
from .common import DISPATCHERS, jit_tables
from .heuristic import heuristic_actions, rollout_scores
from .mirror import mirror_load, mirror_observe, mirror_step
from .obs import masks, observe, observe_packed, observe_rows, random_actions
from .policy import greedy_actions
from .rules import legal_words, restart, start, step

MODULES = (common, rules, obs, mirror, heuristic, kingobs, policy, linear, nprandom, players)
#: The file beside the kernels' disk cache that holds the fingerprint the cache was built with.
STAMP = "barbu_kernels.fingerprint"


def _value_bytes(value: Any) -> bytes | None:
    """A stable byte form of a constant (numbers, strings, arrays, and tuples / dicts of them); None for
    anything else (modules, functions, classes, kernels)."""
    if isinstance(value, np.ndarray):
        return f"{value.dtype.str}{value.shape}".encode() + value.tobytes()
    if isinstance(value, (bool, int, float, str, np.generic)):
        return f"{type(value).__name__}:{value!r}".encode()
    if isinstance(value, (tuple, list)):
        parts = [_value_bytes(v) for v in value]
        return None if any(p is None for p in parts) else b"(" + b",".join(parts) + b")"  # type: ignore[arg-type]
    if isinstance(value, dict):
        return _value_bytes(sorted(value.items()))
    return None


def fingerprint(modules: tuple[ModuleType, ...] = MODULES) -> str:
    """A hash of the source files of ``modules`` and of their module-level constants (:func:`_value_bytes`)."""
    h = hashlib.sha256()
    for mod in modules:
        h.update(Path(mod.__file__ or "").read_bytes())
        for name, value in sorted(vars(mod).items()):
            b = None if name.startswith("__") else _value_bytes(value)
            if b is not None:
                h.update(name.encode() + b"=" + b + b";")
    return h.hexdigest()[:16]


def drop_stale_cache(cache_dirs: set[str], fp: str) -> list[Path]:
    """In each directory of ``cache_dirs`` whose :data:`STAMP` file does not hold ``fp``: delete numba's
    cache files (``*.nbi`` index, ``*.nbc`` code), then write ``fp``. Returns the files deleted."""
    gone = []
    for d in sorted(cache_dirs):
        stamp = Path(d) / STAMP
        if stamp.is_file() and stamp.read_text() == fp:
            continue
        for f in sorted(Path(d).glob("*.nb[ic]")):
            f.unlink(missing_ok=True)
            gone.append(f)
        stamp.write_text(fp)
    return gone


#: The fingerprint of the kernels as imported (see the module docstring).
FINGERPRINT = fingerprint()
drop_stale_cache({d.stats.cache_path for d in DISPATCHERS}, FINGERPRINT)

__all__ = ["FINGERPRINT", "greedy_actions", "heuristic_actions", "jit_tables", "legal_words", "masks", "mirror_load",
           "mirror_observe", "mirror_step", "observe", "observe_packed", "observe_rows", "random_actions",
           "restart", "rollout_scores", "start", "step"]  # fmt: skip
