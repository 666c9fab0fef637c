"""Batched engine for self-play (deal mode of classic Barbu): :class:`VectorDeals`.

Layout: ``tables`` (rules and contracts as constant arrays), ``core`` (the state arrays), ``dealing`` (the
stream of random deals), ``encode`` (the packed observation layout), ``jit`` (the compiled numba kernels:
legality, transitions, observations and masks, bit for bit those of ``engine.deal.Deal`` and
``observation.encode``), ``backend`` (the kernels bound to a batch), ``deals`` (the API), ``single`` (one
deal, the env's compiled copy). numba is imported when a ``VectorDeals`` or a ``single.Mirror`` is built.
"""

from .backend import BACKENDS
from .deals import VectorDeals, random_actions
from .encode import unpack_observations
from .tables import SUPPORTED, check_rules

__all__ = ["BACKENDS", "SUPPORTED", "VectorDeals", "check_rules", "random_actions", "unpack_observations"]
