"""Batched numpy engine for self-play (deal mode of classic Barbu): :class:`VectorDeals`.

Layout: ``tables`` (rules and contracts as constant arrays), ``core`` (state arrays, legality,
transitions), ``encode`` (observations and masks, identical to ``observation.encode`` and
``Deal.legal_actions``), ``deals`` (the API). Array code goes through ``tables.xp`` so that a torch
backend can replace numpy without a redesign.
"""

from .deals import VectorDeals, random_actions
from .encode import unpack_observations
from .tables import SUPPORTED, check_rules

__all__ = ["SUPPORTED", "VectorDeals", "check_rules", "random_actions", "unpack_observations"]
