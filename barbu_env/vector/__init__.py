"""Batched engine for self-play (deal mode of classic Barbu): :class:`VectorDeals`.

Layout: ``tables`` (rules and contracts as constant arrays), ``core`` (state arrays, legality,
transitions), ``encode`` (observations and masks, identical to ``observation.encode`` and
``Deal.legal_actions``), ``backend`` (the two backends behind one interface), ``jit`` (the numba
backend: per-game compiled kernels on the same state arrays; imported only when chosen), ``deals``
(the API). The numpy code of ``core`` / ``encode`` is the array-programming reference; it goes through
``tables.xp`` so that a torch backend can replace numpy without a redesign.
"""

from .backend import BACKENDS
from .deals import VectorDeals, random_actions
from .encode import unpack_observations
from .tables import SUPPORTED, check_rules

__all__ = ["BACKENDS", "SUPPORTED", "VectorDeals", "check_rules", "random_actions", "unpack_observations"]
