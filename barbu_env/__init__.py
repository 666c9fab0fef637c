"""barbu_env: the Barbu card game (RULES.md) as a fast rules engine and a PettingZoo environment."""

from .actions import NUM_ACTIONS, action_id, action_name
from .cards import format_card, parse_card, parse_cards
from .engine import Deal, InfoState, Match, Phase, sample_hidden
from .rules import Rules, load_rules

__version__ = "0.1.0"

__all__ = [
    "NUM_ACTIONS", "Deal", "InfoState", "Match", "Phase", "Rules", "__version__", "action_id",
    "action_name", "format_card", "load_rules", "parse_card", "parse_cards", "sample_hidden",
]  # fmt: skip
