"""barbu_env: the Barbu card game (RULES.md) as a fast rules engine and a PettingZoo environment."""

from .actions import NUM_ACTIONS, action_id, action_name
from .cards import format_card, parse_card, parse_cards
from .engine import Deal, InfoState, Match, Phase, sample_hidden
from .env import env, raw_env
from .rules import Rules, load_rules

__version__ = "0.1.0"

#: PettingZoo registry id: ``pettingzoo.make("aec", "barbu/barbu-v0", **kwargs)`` after ``import barbu_env``.
ENV_ID = "barbu/barbu-v0"
#: Gymnasium id of one seat against agents (``wrappers.sb3.BarbuSingleAgentEnv``):
#: ``gymnasium.make("barbu/BarbuSingleAgent-v0", opponents="heuristic", ...)`` after ``import barbu_env``, so tools
#: that take an env id (``stable_baselines3.common.env_util.make_vec_env``, RL Zoo) build it too;
#: ``gymnasium.make_vec(GYM_ID, num_envs=N, vectorization_mode="vector_entry_point", ...)`` builds its batched form
#: on the compiled engine (``wrappers.vector_env.BarbuVectorEnv``).
GYM_ID = "barbu/BarbuSingleAgent-v0"


def _register() -> None:
    import gymnasium
    import pettingzoo

    register = getattr(pettingzoo, "register", None)  # PettingZoo >= 1.27 has a registry
    if register is not None and ENV_ID not in getattr(pettingzoo, "aec_registry", {}):
        register("aec", ENV_ID, entry_point="barbu_env.env:env")
    if GYM_ID not in gymnasium.registry:
        gymnasium.register(id=GYM_ID, entry_point="barbu_env.wrappers.sb3:BarbuSingleAgentEnv",
                           vector_entry_point="barbu_env.wrappers.vector_env:BarbuVectorEnv")  # fmt: skip


_register()

__all__ = [
    "ENV_ID", "GYM_ID", "NUM_ACTIONS", "Deal", "InfoState", "Match", "Phase", "Rules", "__version__", "action_id",
    "action_name", "env", "format_card", "load_rules", "parse_card", "parse_cards", "raw_env", "sample_hidden",
]  # fmt: skip
