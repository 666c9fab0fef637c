"""The policy network and its checkpoint format (imports torch: load this module lazily).

A checkpoint is one ``torch.save`` dict, written by :func:`save_checkpoint` and read by
:func:`load_checkpoint`, which checks it before building the network:

``format``      ``"barbu_env.policy/1"``
``env_version`` the env id it was trained on (:data:`ENV_VERSION`, ``barbu_v0``)
``obs_layout``  :func:`layout_fingerprint` of the observation it was trained on
``obs_size``    observation length (:data:`barbu_env.observation.OBS_SIZE` at training time)
``num_actions`` action count (:data:`barbu_env.actions.NUM_ACTIONS`)
``contract``    the contract it plays (``"no_queens"``, ``"trumps"``, ``"fantan"`` …: a name of
                :data:`barbu_env.contracts.CONTRACT_NAMES`)
``hidden``      hidden layer sizes
``config``      the training config (a plain dict)
``state_dict``  weights (stored as float16 to keep checkpoints small; loaded as float32)
``meta``        free-form facts: steps, wall time, evaluation results

A bidding checkpoint (:func:`save_bidding`, :func:`load_bidding`: format ``"barbu_env.bidding/1"``) holds the
same keys except ``contract``, plus ``role`` (``"declare"`` or ``"double"``, :data:`BIDDING_ROLES`) and
``blocks`` (the observation blocks its input is made of, in order: :func:`bidding_input`); its network's
policy head is read as the expected deal score of every action, ``meta["scale"]`` points per unit.

Version policy: the env id ``barbu_vN`` changes whenever observations, actions, rewards or rules
change, so a checkpoint of another ``env_version`` is refused, as is one whose observation layout
(block names and sizes, in order) or action count differs from this env's. A missing or mistyped
key, an unknown contract, weights that do not fit the declared sizes and non-finite weights are
refused too; every refusal is a ``ValueError`` naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .actions import NUM_ACTIONS
from .contracts import CONTRACT_NAMES
from .env import raw_env
from .observation import BLOCKS, OBS_SIZE

FORMAT = "barbu_env.policy/1"
#: The env id checkpoints are trained on and checked against (see the version policy above).
ENV_VERSION: str = raw_env.metadata["name"]
#: Largest hidden layer a checkpoint may declare (a bound on what a corrupt file can make us allocate).
MAX_WIDTH = 1 << 16
#: Keys every checkpoint holds, with their types (``config`` and ``meta`` are dicts when present).
REQUIRED: dict[str, type | tuple[type, ...]] = {
    "format": str, "env_version": str, "obs_layout": str, "obs_size": int, "num_actions": int, "contract": str,
    "hidden": (list, tuple), "state_dict": dict,
}  # fmt: skip


def layout_fingerprint(blocks: dict[str, tuple[int, int]] = BLOCKS) -> str:
    """A short hash of the observation layout: its block names and sizes, in order."""
    text = ";".join(f"{name}:{size}" for name, (_, size) in blocks.items())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: The fingerprint of this env's observation layout.
OBS_LAYOUT = layout_fingerprint()


@contextmanager
def one_thread() -> Iterator[None]:
    """torch on one thread inside the block (the caller's count restored after): a pass over a few rows is
    faster without waking torch's thread pool (a one-row linear layer: 22 µs instead of 180 µs, measured on
    this 2-core machine with other jobs running)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


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


def flat_policy(net: PolicyNet) -> tuple[np.ndarray, np.ndarray]:
    """``(weights, layout)``: the trunk's linear layers then the policy head, as the kernel of
    :mod:`barbu_env.vector.jit.policy` reads them (per layer its transposed weight then its bias, float32;
    ``layout[k]`` = offset, inputs, outputs of layer k)."""
    layers = [m for m in net.trunk if isinstance(m, nn.Linear)] + [net.policy]
    parts: list[np.ndarray] = []
    layout, off = [], 0
    for m in layers:
        w = m.weight.detach().numpy().astype(np.float32).T.ravel()
        b = m.bias.detach().numpy().astype(np.float32)
        layout.append((off, m.in_features, m.out_features))
        parts += [w, b]
        off += w.size + b.size
    return np.concatenate(parts), np.array(layout, np.int64)


def save_checkpoint(path: str | Path, net: PolicyNet, contract: str, config: dict[str, Any],
                    meta: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Write ``net`` with everything needed to rebuild and check it (see the module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16) for k, v in net.state_dict().items()}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(
        {"format": FORMAT, "env_version": ENV_VERSION, "obs_layout": OBS_LAYOUT, "obs_size": net.obs_size,
         "num_actions": net.num_actions, "contract": contract, "hidden": list(net.hidden), "config": config,
         "state_dict": state, "meta": meta or {}},
        tmp,
    )  # fmt: skip
    tmp.replace(path)


def _read(path: Path, kind: str, fmt: str, what: str) -> dict[str, Any]:
    """The dict a checkpoint file ``path`` of format ``fmt`` holds; ``ValueError`` naming it (as ``kind``) when it
    is missing, unreadable or not a barbu_env ``what``."""
    name = repr(str(path))
    if not path.is_file():
        raise ValueError(f"{kind} {name} not found")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many types for truncated or foreign files
        raise ValueError(f"checkpoint {name} is corrupt or not a torch file: {e}") from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != fmt:
        raise ValueError(f"checkpoint {name} is not a barbu_env {what} (expected format {fmt!r})")
    return ckpt


def load_checkpoint(path: str | Path) -> tuple[PolicyNet, dict[str, Any]]:
    """``(network in eval mode, checkpoint dict)``; ``ValueError`` naming the file and the problem."""
    name = repr(str(path))
    ckpt = _read(Path(path), "checkpoint", FORMAT, "policy")
    check_header(ckpt, name)
    net = PolicyNet(ckpt["obs_size"], ckpt["num_actions"], tuple(ckpt["hidden"]))
    _load_weights(net, ckpt["state_dict"], name)
    return net, ckpt


def _load_weights(net: PolicyNet, weights: dict[str, Any], name: str) -> None:
    """Load checked float weights into ``net`` (eval mode); ``ValueError`` naming the file otherwise."""
    for key, value in weights.items():
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            raise ValueError(f"checkpoint {name}: weight {key!r} is not a float tensor")
        if not bool(torch.isfinite(value).all()):
            raise ValueError(f"checkpoint {name}: weight {key!r} holds NaN or infinite values")
    try:
        net.load_state_dict({k: v.float() for k, v in weights.items()})
    except (RuntimeError, KeyError, AttributeError, TypeError) as e:
        raise ValueError(f"checkpoint {name} has weights that do not fit its declared sizes: {e}") from None
    net.eval()


BIDDING_FORMAT = "barbu_env.bidding/1"
#: What a bidding network decides: the declaration (R3) or a doubling decision (R6).
BIDDING_ROLES = ("declare", "double")


def bidding_input(obs: Any, blocks: tuple[str, ...] | list[str]) -> Any:
    """The entries of ``blocks`` of observations ``obs`` (``[..., OBS_SIZE]``, numpy or torch), concatenated
    in order: a bidding network's input."""
    idx = [i for b in blocks for i in range(BLOCKS[b][0], BLOCKS[b][0] + BLOCKS[b][1])]
    return obs[..., idx]


def save_bidding(path: str | Path, net: PolicyNet, role: str, blocks: list[str], config: dict[str, Any],
                 meta: dict[str, Any]) -> None:  # fmt: skip
    """Write a bidding network (see the module docstring); ``config`` and ``meta`` are stored as plain JSON
    values (numpy numbers become floats), which a weights-only load reads."""
    import json

    config, meta = (json.loads(json.dumps(d, default=float)) for d in (config, meta))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16) for k, v in net.state_dict().items()}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(
        {"format": BIDDING_FORMAT, "env_version": ENV_VERSION, "obs_layout": OBS_LAYOUT, "obs_size": net.obs_size,
         "num_actions": net.num_actions, "role": role, "blocks": list(blocks), "hidden": list(net.hidden),
         "config": config, "state_dict": state, "meta": meta},
        tmp,
    )  # fmt: skip
    tmp.replace(path)


def load_bidding(path: str | Path, role: str) -> tuple[PolicyNet, dict[str, Any]]:
    """``(network in eval mode, checkpoint dict)`` of a ``role`` bidding checkpoint; ``ValueError`` naming the
    file and the problem (the checks of :func:`load_checkpoint`, the role and the input blocks)."""
    name = repr(str(path))
    ckpt = _read(Path(path), "bidding checkpoint", BIDDING_FORMAT, "bidding network")
    if ckpt.get("role") != role:
        raise ValueError(f"checkpoint {name} decides {ckpt.get('role')!r}, expected {role!r} (one of {BIDDING_ROLES})")
    blocks = ckpt.get("blocks")
    if not isinstance(blocks, list) or not blocks or any(b not in BLOCKS for b in blocks):
        raise ValueError(f"checkpoint {name}: bad input blocks {blocks!r}: expected names of {list(BLOCKS)}")
    if not isinstance(ckpt.get("meta"), dict) or not isinstance(ckpt["meta"].get("scale"), float):
        raise ValueError(f"checkpoint {name}: no meta['scale'] (points per unit of the network's outputs)")
    size = sum(BLOCKS[b][1] for b in blocks)
    check_header({**ckpt, "contract": CONTRACT_NAMES[0], "obs_size": OBS_SIZE}, name)  # its input: checked below
    if ckpt["obs_size"] != size:
        raise ValueError(f"checkpoint {name}: input size {ckpt['obs_size']} is not that of its blocks ({size})")
    net = PolicyNet(size, ckpt["num_actions"], tuple(ckpt["hidden"]))
    _load_weights(net, ckpt["state_dict"], name)
    return net, ckpt


def check_header(ckpt: dict[str, Any], name: str) -> None:
    """Every check of :func:`load_checkpoint` on the checkpoint's keys (``name``: the file, for messages)."""
    for key, kind in REQUIRED.items():
        if key not in ckpt:
            raise ValueError(f"checkpoint {name} has no {key!r} entry (a barbu_env policy holds {sorted(REQUIRED)})")
        value = ckpt[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ValueError(f"checkpoint {name}: {key!r} is {value!r}, expected {_kind_name(kind)}")
    for key in ("config", "meta"):
        if not isinstance(ckpt.get(key, {}), dict):
            raise ValueError(f"checkpoint {name}: {key!r} is not a mapping")
    if ckpt["env_version"] != ENV_VERSION:
        raise ValueError(
            f"checkpoint {name} was trained on env {ckpt['env_version']!r}; this is {ENV_VERSION!r}, whose "
            "observations, actions, rewards or rules differ: retrain it (or use the env it was trained on)"
        )
    if (ckpt["obs_size"], ckpt["num_actions"], ckpt["obs_layout"]) != (OBS_SIZE, NUM_ACTIONS, OBS_LAYOUT):
        raise ValueError(
            f"checkpoint {name} was trained for observations of {ckpt['obs_size']} (layout {ckpt['obs_layout']}) "
            f"and {ckpt['num_actions']} actions; this env has {OBS_SIZE} (layout {OBS_LAYOUT}) and "
            f"{NUM_ACTIONS}: retrain it"
        )
    if ckpt["contract"] not in CONTRACT_NAMES:
        raise ValueError(f"checkpoint {name} plays unknown contract {ckpt['contract']!r}: expected one of "
                         f"{list(CONTRACT_NAMES)}")  # fmt: skip
    hidden = list(ckpt["hidden"])
    if not all(isinstance(h, int) and not isinstance(h, bool) and 0 < h <= MAX_WIDTH for h in hidden):
        raise ValueError(f"checkpoint {name}: bad hidden sizes {hidden!r}: expected integers 1..{MAX_WIDTH}")


def _kind_name(kind: type | tuple[type, ...]) -> str:
    words = {str: "a text", int: "an integer", list: "a list", tuple: "a tuple", dict: "a mapping"}
    return " or ".join(words[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
