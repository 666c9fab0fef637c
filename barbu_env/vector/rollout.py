"""Heuristic playouts of many deals at once on the batched engine: PIMC's rollouts compiled (RULES.md R4-R9).

:func:`state_of_deal` copies a ``Deal`` in any phase into a batch-1 :class:`~.core.State` (every field the
kernels read; :func:`row_of_deal`: its one row); :class:`Rollouts` plays, for each of B games, one first action
then the heuristic in every seat (``agents.heuristic.rollout``, compiled: :mod:`.jit.heuristic`) to the end of
the deal, and returns one seat's deal score per game (contract + settlement, R8.1). The tests check it against
``rollout`` on ``Deal`` clones.

The kernels (numba) are imported when a :class:`Rollouts` is built.
"""

from __future__ import annotations

import numpy as np

from ..actions import DECLARE_BASE, PASS
from ..contracts import CONTRACT_NAMES
from ..engine.deal import Deal
from .core import COLUMNS, START_ROW, State
from .heuristic import heuristic_tables
from .tables import DECLARE, Tables

I64 = np.int64
SCORES = COLUMNS["scores"]


def state_of_deal(deal: Deal, t: Tables) -> State:
    """A batch-1 state holding ``deal`` (classic Barbu under the rules of ``t``), mid-deal or fresh."""
    st = State.zeros(1)
    st.data[0] = row_of_deal(deal, t)
    return st


def row_of_deal(deal: Deal, t: Tables) -> np.ndarray:
    """The ``int64 [NUM_COLUMNS]`` row of :func:`state_of_deal` (filled as a list, one array conversion)."""
    row = START_ROW.tolist()
    n = 4
    for name in ("hands", "played_by", "captured", "excluded", "tricks_won", "points", "passes", "doubles"):
        c = COLUMNS[name]
        row[c : c + n] = getattr(deal, name)
    c, mask = COLUMNS["trick_by"], 0
    for i, card in enumerate(deal.trick):
        row[c + (deal.leader + i) % n] = 1 << card
        mask |= 1 << card
    c = COLUMNS["fin_place"]
    for place, q in enumerate(deal.finished):
        row[c + q] = place
    run = 0
    for _, a in reversed(deal.history):
        if a != PASS:
            break
        run += 1
    decl = 0  # read in the declaration only (R3.1)
    if deal.phase == DECLARE:
        for a in deal.legal_actions():
            decl |= 1 << (a - DECLARE_BASE)
    k = -1 if deal.contract is None else t.names.index(deal.contract.name)
    values = {
        "played": deal.played, "trick_mask": mask, "playable": deal.playable, "hearts_broken": int(deal.hearts_broken),
        "phase": deal.phase, "to_move": deal.to_move, "declarer": deal.declarer, "leader": deal.leader,
        "led": deal.led, "best": deal.best, "winner": deal.winner, "top_trump": deal.top_trump,
        "trick_len": len(deal.trick), "trick_no": deal.trick_no, "contract": k, "trump": deal.trump,
        "fantan_rank": deal.fantan_rank, "double_step": deal.double_step, "must_double": deal.must_double,
        "num_fin": len(deal.finished), "avail_decl": decl,
        "avail_names": sum(1 << CONTRACT_NAMES.index(name) for name in deal.available), "pass_run": run,
    }  # fmt: skip
    for name, v in values.items():
        row[COLUMNS[name]] = v
    return np.array(row, I64)


class Rollouts:
    """Compiled heuristic playouts under the rules of ``t`` (see the module docstring)."""

    def __init__(self, t: Tables) -> None:
        import numba

        from . import jit

        self.t = t
        self.tb = jit.jit_tables(t)
        self.ht = heuristic_tables(t)
        self._set_threads = numba.set_num_threads
        self._kernel = jit.rollout_scores

    def scores(self, view: Deal, worlds: list[list[int]], actions: list[int], seat: int) -> np.ndarray:
        """``int64 [len(worlds), len(actions)]``: ``seat``'s deal score after ``actions[j]`` then heuristic play
        in the deal ``view`` with its hands replaced by ``worlds[i]`` (a hand mask per seat)."""
        w, a = len(worlds), len(actions)
        st = State.zeros(w * a)  # every game a copy of the deal
        st.data[:] = row_of_deal(view, self.t)
        st.hands[:] = np.repeat(np.array(worlds, np.uint64), a, axis=0)
        out = np.empty(w * a, I64)
        self._set_threads(1)
        self._kernel(st.data, self.tb, self.ht, np.tile(np.array(actions, I64), w), seat, out)
        return out.reshape(w, a)

    def play_out(self, rows: np.ndarray, first: np.ndarray, threads: int = 1) -> np.ndarray:
        """``int64 [G, 4]``: every seat's deal score after ``first[g]`` (legal for the seat on move) then heuristic
        play in every seat, from the game rows ``rows`` (``int64 [G, NUM_COLUMNS]``, rows of ``State.data``: the
        true hands, perfect information), which are left unchanged."""
        x = np.array(rows, I64, order="C", copy=True)
        out = np.empty(x.shape[0], I64)
        self._set_threads(threads)
        self._kernel(x, self.tb, self.ht, np.ascontiguousarray(first, I64), 0, out)
        return x[:, SCORES : SCORES + 4].copy()


__all__ = ["Rollouts", "row_of_deal", "state_of_deal"]
