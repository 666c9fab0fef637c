"""The rules engine: pure, deterministic, no numpy arrays in the hot path (RULES.md R1–R10)."""

from .deal import Deal, Phase
from .infostate import InfoState, sample_hidden
from .match import DealRecord, Match

__all__ = ["Deal", "DealRecord", "InfoState", "Match", "Phase", "sample_hidden"]
