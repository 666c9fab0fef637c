"""The heuristic agent compiled: :mod:`barbu_env.agents.heuristic`'s decisions for a batch of games of the
batched engine (:class:`~.core.State`, RULES.md R3-R9), through the kernels of :mod:`.jit.heuristic`.

:class:`CompiledHeuristic` (``VectorDeals.heuristic_actions``) returns, for each game on move, exactly the action
``agents.heuristic.heuristic_action`` takes for the seat on move (declaration, doubling with the R6.4 obligation,
trick play, Fantan), under every rule option of classic Barbu the batched engine supports.
"""

from __future__ import annotations

import numpy as np

from ..cards import NUM_CARDS
from ..contracts import contract_table
from .core import State
from .tables import Tables

I64 = np.int64


def heuristic_tables(t: Tables) -> np.ndarray:
    """``int64 [K, 53]``: per contract row of ``t``, the points of capturing each card (``Contract.card_values``,
    over all 52 card ids as the Python rules read them), then 1 if any card scores (``card_values()`` not
    empty), else 0."""
    table = contract_table(t.rules)
    rows = [table[name] for name in t.names]
    out = np.zeros((len(rows), NUM_CARDS + 1), I64)
    for k, c in enumerate(rows):
        v = c.card_values()
        if v:
            out[k, :NUM_CARDS] = v
            out[k, NUM_CARDS] = 1
    return out


class CompiledHeuristic:
    """The compiled heuristic for the games of one rules' tables: ``h(state)`` is the heuristic agent's action
    for the seat on move of every game (-1 for games over), computed on ``threads`` threads."""

    def __init__(self, t: Tables, threads: int = 1) -> None:
        import numba

        from . import jit

        self.tb = jit.jit_tables(t)
        self.ht = heuristic_tables(t)
        self.threads = threads
        self._set_threads = numba.set_num_threads
        self._kernel = jit.heuristic_actions

    def __call__(self, st: State, want: np.ndarray | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """The actions (int64 [B]) of the games with ``want[g]`` (bool [B], default all), written into ``out``
        (default a new array of -1)."""
        b = st.phase.shape[0]
        if want is None:
            want = np.ones(b, np.bool_)
        if out is None:
            out = np.full(b, -1, I64)
        self._set_threads(self.threads)
        self._kernel(st.data, self.tb, self.ht, want, out)
        return out


__all__ = ["CompiledHeuristic", "heuristic_tables"]
