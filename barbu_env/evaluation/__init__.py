"""Duplicate evaluation of agents, with paired confidence intervals; the ``barbu-eval`` CLI.

Duplicate format: every board is replayed once per seating of the line-up, the seatings being the
distinct rotations of the line-up round the table, so each agent holds each hand equally often
(``1v3`` = ``A B B B``: 4 seatings, A holds each hand once; ``2v2`` = ``A B A B``: 2 seatings, each
agent holds each hand once; 4 agents ``A B C D``: 4 seatings). Games are played through
``barbu_env.env`` with the agents' ``act(env, agent_name)`` protocol or, in deal mode where every agent has
a batched form, on the batched engine (:mod:`.batched`), with the same results.

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
game's agent seeds only on ``(seed, contract, i, seating)``, whatever the number of workers, so an
interrupted run resumed later (``finished=`` / ``barbu-eval --resume``) gives the same results.

Modules: :mod:`.stats` (t intervals), :mod:`.boards` (boards, seatings, per-board margins: the
duplicate core any player of boards plugs into), :mod:`.config` (what to evaluate, checked),
:mod:`.runner` (playing boards through the env, the process pool, :func:`evaluate`), :mod:`.batched`
(playing them on ``VectorDeals``, the choice of engine), :mod:`.report`
(summary, tables, files), :mod:`.cli` (``barbu-eval``), :mod:`.compare` (``barbu-compare``: two runs on the
same boards, their first agents' margins and the per-board difference's interval).
"""

from __future__ import annotations

from ..contracts import CLASSIC_CONTRACTS as SEVEN
from .boards import LINEUPS, MODES, Board, Game, PlayFn, board_result, deal_board, duplicate, make_boards, seatings
from .cli import build_parser, main
from .config import EvalConfig, fallback_notes, make_config
from .report import check_out_dir, markdown, plot, read_finished, summarise, write_csv, write_outputs
from .runner import EvaluationInterrupted, TableRunner, env_player, evaluate, run
from .stats import confidence_interval, t_quantile

__all__ = [
    "LINEUPS", "MODES", "SEVEN", "Board", "EvalConfig", "EvaluationInterrupted", "Game", "PlayFn", "TableRunner",
    "board_result", "build_parser", "check_out_dir", "confidence_interval", "deal_board", "duplicate", "env_player",
    "evaluate", "fallback_notes", "main", "make_boards", "make_config", "markdown", "plot", "read_finished", "run",
    "seatings", "summarise", "t_quantile", "write_csv", "write_outputs",
]  # fmt: skip
