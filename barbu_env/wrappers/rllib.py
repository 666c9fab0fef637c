"""Barbu for RLlib (Ray) on its current API stack: a multi-agent env with action masking, a PPO config
with one policy per contract shared by the four seats (deal mode) or one policy for every decision of a
match (match mode: declarations, doubling, cards, Fantan passes), the conversion of trained per-contract
modules to the project's checkpoint format (:mod:`barbu_env.nn`) and :class:`ModuleAgent`, any trained
module as a project agent. Imports ray: import this module explicitly.

    from barbu_env.wrappers.rllib import BarbuMultiAgentEnv, masked_ppo_config
    config = masked_ppo_config(["no_queens", "trumps"], {"doubling": "off"})   # or (None, {"mode": "match"})
    algo = config.build_algo(); algo.train()

:class:`BarbuMultiAgentEnv` is a thin equivalent of RLlib's ``PettingZooEnv`` over ``barbu_env.env``:

- observations are ``{"observations": float32[1228], "action_mask": float32[87]}`` for four-player Barbu (other
  rules: ``layout(rules).size`` and ``num_actions(rules)``, 3 to 5 seats, R10.3, R11.4, R12) — RLlib's
  action-masking module (``ActionMaskingTorchRLModule``) expects the key ``observations`` where
  PettingZoo has ``observation``;
- turn-based: each step returns the observation of the agent on move only; rewards are returned for
  every agent of the episode at every step (the env's per-step ``rewards``), so the deal scores that
  arrive when a deal ends (R8.1) reach all four seats — RLlib adds a reward given without an
  observation to that agent's pending step. At the end every agent gets a final observation and
  ``terminated``; the per-agent rewards of an episode sum to the deal scores / match totals.
- ``agent_ids="contract"`` (deal mode with ``contracts``) names the agents ``"<contract>:player_<i>"``,
  so :func:`policy_for_agent` maps every seat of a deal to its contract's policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv

from ..actions import NUM_ACTIONS
from ..agents.base import Agent
from ..agents.neural import masked_choice
from ..engine import InfoState
from ..env import env as make_env
from ..observation import OBS_SIZE
from ..options import as_bool
from .common import check_contracts, check_supported, contract_family, env_rules, reward_normaliser, sample_deal

#: Adapter options of :class:`BarbuMultiAgentEnv`; every other key of the config goes to ``barbu_env.env``.
ADAPTER_OPTIONS = ("contracts", "agent_ids", "normalize", "seed")
#: Module id used for every seat when agents are not named by contract.
SHARED_POLICY = "shared"


def policy_for_agent(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """RLlib ``policy_mapping_fn``: ``"no_queens:player_2"`` -> ``"no_queens"`` (seats share the contract's
    policy); plain seat ids (``"player_2"``) -> :data:`SHARED_POLICY`."""
    head, sep, _ = agent_id.rpartition(":")
    return head if sep else SHARED_POLICY


def agent_id(contract: str | None, seat: int) -> str:
    """The RLlib agent id of ``seat``: ``"player_<seat>"``, prefixed by the contract family if given."""
    return f"player_{seat}" if contract is None else f"{contract_family(contract)}:player_{seat}"


class BarbuMultiAgentEnv(MultiAgentEnv):
    """``barbu_env.env(**config)`` as an RLlib ``MultiAgentEnv`` (see the module docstring).

    Config keys besides the env's keyword arguments (``mode``, ``rules``, ``doubling`` ...):
    ``contracts`` (deal mode: each episode's contract is drawn from these, with fresh hands and a random
    declarer, see :func:`barbu_env.wrappers.common.sample_deal`), ``agent_ids`` (``"seat"``, default,
    or ``"contract"``), ``normalize`` (rewards divided by the deal's ``|contract total|`` in deal mode, by the
    rules' largest one in match mode: :func:`~barbu_env.wrappers.common.reward_normaliser`) and ``seed``.
    ``illegal_action`` defaults to ``"terminate"`` here (RLlib's env check steps an unmasked random action;
    the offender gets ``-illegal_penalty``); masked policies never pick an illegal action.
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        cfg = dict(config or {})
        contracts = cfg.pop("contracts", None)
        self.agent_ids = cfg.pop("agent_ids", "seat")
        self.normalize = bool(cfg.pop("normalize", False))
        seed = cfg.pop("seed", None)
        if self.agent_ids not in ("seat", "contract"):
            raise ValueError(f"bad agent_ids {self.agent_ids!r}: expected 'seat' or 'contract'")
        cfg.setdefault("illegal_action", "terminate")  # RLlib's env check steps a random, unmasked action
        self._declarer = cfg.get("declarer", "random")  # with contracts: a random declarer unless one is given
        check_supported(env_rules(cfg), "BarbuMultiAgentEnv")
        self.aec = make_env(**cfg)
        self.raw = self.aec.unwrapped
        n = self.n = self.raw.num_players
        self._names = list(self.raw.possible_agents)  # the env's agent of each seat
        deal_mode = self.raw.mode == "deal"
        if contracts is not None and not deal_mode:
            raise ValueError("contracts draws one contract per deal-mode episode: use it with mode='deal'")
        self.contracts = check_contracts(contracts, self.raw.rules)
        if self.agent_ids == "contract":
            if self.contracts is None and self.raw.contract is None:
                raise ValueError("agent_ids='contract' needs mode='deal' with contracts=[...] or contract=...")
            families = sorted({contract_family(c) for c in (self.contracts or (self.raw.contract,))})
            self.possible_agents = [agent_id(f, s) for f in families for s in range(n)]
        else:
            self.possible_agents = list(self._names)
        self.agents = self.possible_agents[:n]
        box = self.raw.observation_space(self._names[0])["observation"]  # layout(rules): n seats
        actions = int(self.raw.action_space(self._names[0]).n)  # the env's action ids under these rules
        space = gym.spaces.Dict(
            {
                "observations": box,
                "action_mask": gym.spaces.Box(0.0, 1.0, (actions,), np.float32),
            }
        )
        self.observation_spaces = {a: space for a in self.possible_agents}
        self.action_spaces = {a: gym.spaces.Discrete(actions) for a in self.possible_agents}
        self._rng = np.random.default_rng(seed)
        self._ids = list(self._names)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        opts: dict[str, Any] = {}
        if self.contracts is not None:
            opts = sample_deal(self._rng, self.raw.rules, self.contracts, self._declarer)
        opts.update(options or {})
        self.aec.reset(seed=int(self._rng.integers(2**63)), options=opts)
        if self.agent_ids == "contract":
            contract = opts.get("contract", self.raw.contract)
            self._ids = [agent_id(contract, s) for s in range(self.n)]
        self.agents = list(self._ids)
        aid = self._ids[self._seat_on_move()]
        return {aid: self._obs(aid)}, {aid: {}}

    # RLlib's MultiAgentEnv.step (dicts keyed by Hashable ids) overrides gymnasium.Env.step's one-agent tuple
    def step(self, action_dict: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:  # type: ignore[override]
        seat = self._seat_on_move()
        aid = self._ids[seat]
        if aid not in action_dict:
            raise ValueError(f"no action for {aid!r}, the agent on move (got actions for {sorted(action_dict)})")
        self.aec.step(int(action_dict[aid]))
        raw = self.raw
        scale = reward_normaliser(raw) if self.normalize else 1.0
        rewards = {self._ids[s]: float(raw.rewards[self._names[s]]) / scale for s in range(self.n)}
        if all(raw.terminations.values()) or all(raw.truncations.values()):
            truncated = not all(raw.terminations.values())
            obs = {a: self._obs(a) for a in self._ids}
            done = {a: True for a in self._ids}
            done["__all__"] = True
            flags = {a: False for a in self._ids}
            flags["__all__"] = False
            infos = {a: {"points": self._points(s)} for s, a in enumerate(self._ids)}
            return (obs, rewards, flags, done, infos) if truncated else (obs, rewards, done, flags, infos)
        nxt = self._ids[self._seat_on_move()]
        return {nxt: self._obs(nxt)}, rewards, {"__all__": False}, {"__all__": False}, {nxt: {}}

    # RLlib's MultiAgentEnv.render declares None, gymnasium's a free type variable; this one returns the env's
    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        return self.raw.render()

    def close(self) -> None:
        self.aec.close()

    # ------------------------------------------------------------------ internals
    def _seat_on_move(self) -> int:
        return self.raw.agent_name_mapping[self.aec.agent_selection]

    def _obs(self, aid: str) -> dict[str, np.ndarray]:
        o = self.aec.observe(self._names[self._ids.index(aid)])
        return {"observations": o["observation"], "action_mask": o["action_mask"].astype(np.float32)}

    def _points(self, seat: int) -> float:
        """Raw points of ``seat`` over the episode: deal score or match total (R8.1, R8.3); after an illegal
        action in ``"terminate"`` mode, ``-illegal_penalty`` for the offender and 0 for the others."""
        if any("illegal_action" in info for info in self.raw.infos.values()):
            return -self.raw.illegal_penalty if "illegal_action" in self.raw.infos[self._names[seat]] else 0.0
        match = self.raw.match
        return float(match.totals[seat] if match is not None else self.raw.deal_scores[seat])


# ================================================================================= PPO config
def masked_ppo_config(
    contracts: Sequence[str] | None,
    env_config: dict[str, Any] | None = None,
    hidden: Sequence[int] = (256, 128),
    num_env_runners: int = 0,
    seed: int | None = 0,
) -> Any:
    """An RLlib ``PPOConfig`` for :class:`BarbuMultiAgentEnv`, invalid actions masked by RLlib's
    ``ActionMaskingTorchRLModule`` over the whole action space.

    Deal mode (``env_config`` without ``mode``, or ``mode="deal"``): one policy per contract family of
    ``contracts`` (``None``: one shared policy, deals as the env's kwargs make them), every seat of a deal
    mapped to it, rewards divided by the contract's ``|total|``. Match mode (``env_config={"mode": "match"}``,
    ``contracts=None``): one policy, :data:`SHARED_POLICY`, plays every decision of every seat — declarations
    (R3), doubling (R6), cards and Fantan passes — on whole-match episodes, rewards divided by the rules'
    largest ``|contract total|`` (the policy maximises its match total, R8.3); play it with
    :class:`ModuleAgent`. The network is the :class:`barbu_env.nn.PolicyNet` shape (shared ReLU trunk
    ``hidden``, linear policy and value heads), so per-contract modules convert exactly
    (:func:`module_to_policynet`). Set training sizes on the returned config
    (``.training(train_batch_size_per_learner=...)``)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec

    cfg: dict[str, Any] = {"mode": "deal", **(env_config or {}), "normalize": True}
    if contracts is not None and cfg["mode"] == "match":
        raise ValueError(
            "contracts= trains one policy per contract on deal-mode episodes: in match mode one policy plays "
            "every decision (give contracts=None)"
        )
    if contracts is not None:
        cfg.update(contracts=list(contracts), agent_ids="contract")
        modules = sorted({contract_family(c) for c in contracts})
    else:
        modules = [SHARED_POLICY]
    if seed is not None:
        cfg.setdefault("seed", seed)
    spec = MultiRLModuleSpec(rl_module_specs={m: module_spec(hidden) for m in modules})
    config = (
        PPOConfig()
        .environment(BarbuMultiAgentEnv, env_config=cfg)
        .env_runners(num_env_runners=num_env_runners)
        .multi_agent(policies=set(modules), policy_mapping_fn=policy_for_agent)  # type: ignore[arg-type]  # ids: str
        .rl_module(rl_module_spec=spec)
        .training(gamma=1.0, lambda_=0.95)
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


def module_spec(hidden: Sequence[int] = (256, 128), env: BarbuMultiAgentEnv | None = None) -> Any:
    """The RLlib ``RLModuleSpec`` of each policy of :func:`masked_ppo_config`: RLlib's
    ``ActionMaskingTorchRLModule`` (PPO, logits of illegal actions pushed to the float minimum) with the
    :class:`barbu_env.nn.PolicyNet` shape. With ``env``, its spaces are set, so ``.build()`` makes an
    untrained module without Ray running."""
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    model = DefaultModelConfig(
        fcnet_hiddens=list(hidden), fcnet_activation="relu", vf_share_layers=True, head_fcnet_hiddens=[]
    )
    spec = RLModuleSpec(module_class=ActionMaskingTorchRLModule, model_config=model)
    if env is not None:
        first = env.possible_agents[0]
        spec.observation_space, spec.action_space = env.get_observation_space(first), env.get_action_space(first)
    return spec


# ================================================================================= conversion
def module_to_policynet(module: Any) -> Any:
    """A :class:`barbu_env.nn.PolicyNet` with the weights of an RLlib PPO module built by
    :func:`masked_ppo_config` (shared ReLU MLP encoder, one linear layer each for policy and value).
    ``ValueError`` if the module has another shape. Logits and value agree to float precision."""
    import torch
    from torch import nn

    from ..nn import PolicyNet

    def linears(part: Any, what: str) -> list[nn.Linear]:
        if part is None:
            raise ValueError(f"the RLlib module has no {what}: build it with masked_ppo_config (vf_share_layers=True)")
        layers = [m for m in part.modules() if isinstance(m, nn.Linear)]
        acts = [m for m in part.modules() if isinstance(m, (nn.Tanh, nn.Sigmoid, nn.SiLU, nn.ELU, nn.GELU))]
        if acts:
            raise ValueError(f"the RLlib module's {what} uses {type(acts[0]).__name__}: PolicyNet needs ReLU")
        return layers

    encoder = getattr(getattr(module, "encoder", None), "encoder", None)  # None when vf_share_layers=False
    trunk = linears(encoder, "shared encoder")
    pi, vf = linears(getattr(module, "pi", None), "policy head"), linears(getattr(module, "vf", None), "value head")
    if len(pi) != 1 or len(vf) != 1:
        raise ValueError("the RLlib module's heads have hidden layers: PolicyNet needs head_fcnet_hiddens=[]")
    hidden = tuple(layer.out_features for layer in trunk)
    if not trunk or trunk[0].in_features != OBS_SIZE or pi[0].out_features != NUM_ACTIONS:
        raise ValueError(
            f"the RLlib module does not map {OBS_SIZE} observations to {NUM_ACTIONS} actions: the checkpoint format "
            "holds networks of four-player Barbu's layout (rules with 3 or 5 players or option positive train "
            "modules of other sizes, which stay RLlib modules)"
        )
    net = PolicyNet(OBS_SIZE, NUM_ACTIONS, hidden)
    targets = [m for m in net.trunk if isinstance(m, nn.Linear)] + [net.policy, net.value]
    with torch.no_grad():
        for dst, src in zip(targets, [*trunk, pi[0], vf[0]]):
            dst.weight.copy_(src.weight)
            dst.bias.copy_(src.bias)
    net.eval()
    return net


def export_policies(source: Any, out_dir: str | Path, meta: dict[str, Any] | None = None) -> dict[str, Path]:
    """Write every contract module of ``source`` as ``out_dir/<contract>.pt`` in the project's checkpoint
    format (:func:`barbu_env.nn.save_checkpoint`), playable by ``barbu-eval`` as a checkpoint agent.
    ``source``: a built RLlib ``Algorithm``, the path of an RLlib algorithm checkpoint or a ``MultiRLModule``."""
    from ..nn import save_checkpoint

    modules = _modules_of(source)
    out: dict[str, Path] = {}
    for mid, module in sorted(modules.items()):
        net = module_to_policynet(module)
        path = Path(out_dir) / f"{mid}.pt"
        save_checkpoint(path, net, mid, {"trainer": "rllib", "module_id": mid}, meta)
        out[mid] = path
    return out


def _modules_of(source: Any) -> dict[str, Any]:
    """The RL modules of a checkpoint directory, an ``Algorithm`` (its learner's modules, via a
    temporary checkpoint, so remote learners work too) or a ``MultiRLModule``."""
    if isinstance(source, (str, Path)):
        from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
        from ray.rllib.core.rl_module.multi_rl_module import MultiRLModule

        path = Path(source) / COMPONENT_LEARNER_GROUP / COMPONENT_LEARNER / COMPONENT_RL_MODULE
        if not path.is_dir():
            raise ValueError(f"{str(source)!r} is not an RLlib algorithm checkpoint (no {path} directory)")
        source = MultiRLModule.from_checkpoint(path)
    elif hasattr(source, "save_to_path") and hasattr(source, "learner_group"):
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            source.save_to_path(tmp)
            return _modules_of(tmp)
    if not hasattr(source, "keys"):
        raise ValueError(
            f"cannot export {type(source).__name__}: expected an Algorithm, a checkpoint path or a MultiRLModule"
        )
    return {mid: source[mid] for mid in source.keys()}


# ================================================================================= playing
class ModuleAgent(Agent):
    """A trained RLlib module as a project agent (:mod:`barbu_env.agents`, spec ``"rllib:source=PATH"``):
    every decision — declaration (R3), doubling (R6), card, Fantan pass — is the module's choice on the env's
    observation and action mask, the most likely legal action (``greedy=True``) or one drawn from the masked
    policy with the agent's seeded generator. ``source``: an RLlib algorithm checkpoint path, an
    ``Algorithm`` or a ``MultiRLModule`` (its module ``module``, default :data:`SHARED_POLICY`, the
    match-mode policy of :func:`masked_ppo_config`), or one RLlib module."""

    name = "rllib"

    def __init__(self, source: Any, module: str = SHARED_POLICY, seed: int | None = None, greedy: Any = True):
        super().__init__(seed)
        import torch

        self._torch = torch
        self.source = str(source) if isinstance(source, (str, Path)) else None
        if hasattr(source, "forward_inference") and not hasattr(source, "keys"):  # one module, not a MultiRLModule
            self.module = source
        else:
            modules = _modules_of(source)
            if module not in modules:
                where = repr(self.source) if self.source else f"the {type(source).__name__}"
                raise ValueError(f"no RLlib module {module!r} in {where}: it has {sorted(modules)}")
            self.module = modules[module]
        self.module_id, self.greedy = module, as_bool(greedy, "greedy")
        self.obs_size = int(self.module.observation_space["observations"].shape[0])

    def options(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.source is None else {"source": self.source}
        if self.module_id != SHARED_POLICY:
            out["module"] = self.module_id
        return out if self.greedy else {**out, "greedy": False}

    def choose(self, env: Any, agent_name: str) -> int:
        o = env.observe(agent_name)
        obs, mask = o["observation"], o["action_mask"]
        if obs.shape[0] != self.obs_size:
            raise ValueError(
                f"RLlib module {self.module_id!r} reads observations of {self.obs_size} values, this env gives "
                f"{obs.shape[0]}: play it under the rules it was trained with"
            )
        torch = self._torch
        batch = {
            "obs": {
                "observations": torch.as_tensor(obs)[None],
                "action_mask": torch.as_tensor(mask, dtype=torch.float32)[None],
            }
        }
        with torch.no_grad():
            logits = self.module.forward_inference(batch)["action_dist_inputs"][0].double().numpy()
        return masked_choice(logits, mask, self.greedy, self.rng)

    def act_info(self, info: InfoState) -> int:
        """Refused: the module reads the env's observation, whose match blocks (R8.3) an ``InfoState`` does not
        hold; play it through ``barbu_env.env`` with :meth:`act`."""
        raise ValueError(
            "ModuleAgent plays through barbu_env.env (agent.act(env, agent_name)): an InfoState holds no match "
            "state, which its observation encodes"
        )
