"""The policy network and its checkpoint format (imports torch: load this module lazily).

A checkpoint is one ``torch.save`` dict, written by :func:`save_checkpoint` and read by
:func:`load_checkpoint`, which checks it before building the network:

``format``      ``"barbu_env.policy/1"``
``env_version`` ``barbu_env.__version__`` of the env that trained it
``obs_size``    observation length (:data:`barbu_env.observation.OBS_SIZE` at training time)
``num_actions`` action count (:data:`barbu_env.actions.NUM_ACTIONS`)
``contract``    the contract it plays (``"no_queens"``, ``"trumps"``, ``"fantan"`` …)
``hidden``      hidden layer sizes
``config``      the training config (a plain dict)
``state_dict``  weights (stored as float16 to keep checkpoints small; loaded as float32)
``meta``        free-form facts: steps, wall time, evaluation results
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import nn

from . import __version__
from .actions import NUM_ACTIONS
from .observation import OBS_SIZE

FORMAT = "barbu_env.policy/1"


class PolicyNet(nn.Module):
    """MLP trunk with a masked policy head (logits over all actions) and a value head."""

    def __init__(self, obs_size: int = OBS_SIZE, num_actions: int = NUM_ACTIONS,
                 hidden: tuple[int, ...] = (256, 128)) -> None:  # fmt: skip
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_size
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, num_actions)
        self.value = nn.Linear(width, 1)
        self.obs_size, self.num_actions, self.hidden = obs_size, num_actions, tuple(hidden)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(masked logits, value)``; illegal actions get the dtype's minimum logit."""
        z = self.trunk(obs)
        logits = self.policy(z)
        logits = torch.where(mask.bool(), logits, torch.finfo(logits.dtype).min)
        return logits, self.value(z).squeeze(-1)


def save_checkpoint(path: str | Path, net: PolicyNet, contract: str, config: dict[str, Any],
                    meta: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Write ``net`` with everything needed to rebuild and check it (see the module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16) for k, v in net.state_dict().items()}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(
        {"format": FORMAT, "env_version": __version__, "obs_size": net.obs_size, "num_actions": net.num_actions,
         "contract": contract, "hidden": list(net.hidden), "config": config, "state_dict": state,
         "meta": meta or {}},
        tmp,
    )  # fmt: skip
    tmp.replace(path)


def load_checkpoint(path: str | Path) -> tuple[PolicyNet, dict[str, Any]]:
    """``(network in eval mode, checkpoint dict)``; ``ValueError`` naming the file and the problem."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"checkpoint {str(path)!r} not found")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for truncated or foreign files
        raise ValueError(f"checkpoint {str(path)!r} is corrupt or not a torch file: {e}") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise ValueError(f"checkpoint {str(path)!r} is not a barbu_env policy (expected format {FORMAT!r})")
    if ckpt["obs_size"] != OBS_SIZE or ckpt["num_actions"] != NUM_ACTIONS:
        raise ValueError(
            f"checkpoint {str(path)!r} was trained for observations of {ckpt['obs_size']} and "
            f"{ckpt['num_actions']} actions (env {ckpt.get('env_version')}); this env has {OBS_SIZE} and "
            f"{NUM_ACTIONS} (env {__version__}): retrain it"
        )
    net = PolicyNet(ckpt["obs_size"], ckpt["num_actions"], tuple(ckpt["hidden"]))
    try:
        net.load_state_dict({k: v.float() for k, v in ckpt["state_dict"].items()})
    except (RuntimeError, KeyError, AttributeError) as e:
        raise ValueError(f"checkpoint {str(path)!r} has weights that do not fit its declared sizes: {e}") from None
    net.eval()
    return net, ckpt
