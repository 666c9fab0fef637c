"""Barbu in OpenSpiel: importing this module registers the Python game ``python_barbu`` (imports ``pyspiel``).

    import pyspiel
    import barbu_env.openspiel
    game = pyspiel.load_game("python_barbu(contract=no_queens,doubling=off)")

:mod:`.game` holds the game (parameters, chance dealing, tensors, resampling for IS-MCTS); :mod:`.bots` the
project's agents as ``pyspiel.Bot`` (:func:`bot`).
"""

from __future__ import annotations

from typing import Any

import pyspiel

from .bots import AgentBot, bot
from .game import GAME_NAME, PARAMETERS, BarbuGame, BarbuState, _game_type

if GAME_NAME not in pyspiel.registered_names():
    pyspiel.register_game(_game_type(pyspiel.GameType.Utility.GENERAL_SUM), BarbuGame)


def load(**params: Any) -> BarbuGame:
    """``pyspiel.load_game("python_barbu", params)``: the game with these parameters (see :mod:`.game`)."""
    return pyspiel.load_game(GAME_NAME, params)


__all__ = ["GAME_NAME", "PARAMETERS", "AgentBot", "BarbuGame", "BarbuState", "bot", "load"]
