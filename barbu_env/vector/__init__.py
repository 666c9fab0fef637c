"""Batched engine for self-play (deal mode of classic Barbu): :class:`VectorDeals`.

Layout: ``tables`` (rules and contracts as constant arrays), ``core`` (the state arrays), ``dealing`` (the stream of
random deals), ``encode`` (the packed observation layout, its unpacking), ``jit`` (the compiled numba kernels:
``jit.rules`` legality, transitions, scoring and new deals, ``jit.obs`` observations and masks, ``jit.mirror`` the
single-deal copy, ``jit.heuristic`` the heuristic agent's decisions and playouts, ``jit.policy`` a policy network's
greedy choices, ``jit.nprandom`` numpy's seeding and bounded integers, ``jit.players`` the seated players of a duplicate
batch, ``jit.common`` what they share; bit for bit ``engine.deal.Deal``, ``observation.encode`` and
``agents.heuristic``), ``backend`` (the kernels bound to a batch), ``deals`` (the API), ``single`` (one deal: the env's
compiled copy), ``heuristic`` (the compiled heuristic for a batch), ``rollout`` (a ``Deal`` copied into the state;
PIMC's playouts), ``policy_rollout`` (PIMC's playouts by a learned policy), ``pimc`` (PIMC's search for many game rows
at once), ``duplicate`` (explicit boards played by heuristic / random / policy seats). numba is imported when a
``VectorDeals``, ``single.Mirror`` or compiled heuristic is built.
"""

from .backend import BACKENDS
from .deals import VectorDeals, random_actions
from .encode import unpack_observations
from .tables import SUPPORTED, check_rules

__all__ = ["BACKENDS", "SUPPORTED", "VectorDeals", "check_rules", "random_actions", "unpack_observations"]
