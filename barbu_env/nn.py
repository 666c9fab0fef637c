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
``card_hidden`` hidden units of the card head (0 or absent: none; :class:`PolicyNet`)
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
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from .actions import NUM_ACTIONS
from .agents.neural import TIE
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


# ---------------------------------------------------------------------------- card head
#: The per-card features of a state that a card head reads (:func:`card_features`), in order; counts are divided
#: by 13. The head also reads each card's :data:`CARD_IDENTITY`.
CARD_FEATURES: tuple[str, ...] = (
    "in_hand", "unseen", "legal", "fantan_playable", "trump", "lead_suit", "winning_suit", "higher_unseen",
    "lower_unseen", "higher_own", "lower_own", "suit_own", "suit_unseen", "beats_trick", "higher_in_trick",
    "trick_cards", "later_not_void",
)  # fmt: skip
_SUIT = torch.arange(52) // 13
_RANK = torch.arange(52) % 13
#: ``_HIGHER[c, d]`` = 1 where card d is of c's suit and ranks above it; ``_SAME_SUIT[c, s]`` = 1 where c is of suit s.
_HIGHER = ((_SUIT[:, None] == _SUIT[None, :]) & (_RANK[None, :] > _RANK[:, None])).float()
_LOWER = _HIGHER.T.contiguous()
_SAME_SUIT = torch.nn.functional.one_hot(_SUIT, 4).float()
#: The fixed features of each card (``[52, 14]``: one-hot rank, 2 … A, then whether it is a heart).
CARD_IDENTITY = torch.cat([torch.nn.functional.one_hot(_RANK, 13).float(), (_SUIT == 2).float()[:, None]], 1)


def _block(obs: torch.Tensor, name: str, rows: int = 1) -> torch.Tensor:
    off, size = BLOCKS[name]
    x = obs[:, off : off + size]
    return x.reshape(obs.shape[0], rows, size // rows) if rows > 1 else x


def card_features(obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``[n, len(CARD_FEATURES), 52]``: what each card is to the seat on move, from its observations ``obs``
    (``[n, OBS_SIZE]``, the classic four-player layout) and masks: where it lies, how many unseen and
    own cards of its suit rank above and below it, whether it would win the trick in progress as it stands (R4.2,
    R5.1: the highest trump, else the highest card of the suit led; 1 when leading), and how many seats still to
    play after it may hold its suit (not void, R4.4). A function of the observation alone."""
    n = obs.shape[0]
    same, higher, lower = (t.to(obs.dtype) for t in (_SAME_SUIT, _HIGHER, _LOWER))  # float64 for a .double() net
    hand, unseen = _block(obs, "hand"), _block(obs, "unseen")
    legal = mask[:, :52].to(obs.dtype)
    trick = _block(obs, "trick", 4)  # [n, r, 52]
    trick_any = trick.sum(1)
    lead_card = (trick * _block(obs, "leader")[:, :, None]).sum(1)  # the card the leader played
    lead = lead_card @ same  # [n, 4]
    trump = _block(obs, "trump")
    trump_card = trump @ same.T  # [n, 52]
    trumped = ((trick_any * trump_card).sum(1, keepdim=True) > 0).to(obs.dtype)
    win_suit = trumped * trump + (1 - trumped) * lead
    win_card = win_suit @ same.T
    higher_in_trick = ((trick_any @ higher.T) > 0).to(obs.dtype)
    in_trick = trick_any.sum(1, keepdim=True)
    empty = (in_trick == 0).to(obs.dtype)
    beats = torch.clamp(empty + win_card * (1 - higher_in_trick) + trump_card * (1 - trumped) * (1 - empty), max=1.0)
    # seats after the one on move this trick: relative seats 1 .. 3 - (cards in the trick)
    not_void = 1 - _block(obs, "void", 4)  # [n, r, suit]
    later = (torch.arange(1, 4, dtype=obs.dtype)[None, :] <= 3 - in_trick).to(obs.dtype)  # [n, 3]
    later_not_void = ((later[:, :, None] * not_void[:, 1:]).sum(1) / 3) @ same.T
    counts = [unseen @ higher.T, unseen @ lower.T, hand @ higher.T, hand @ lower.T,
              (hand @ same) @ same.T, (unseen @ same) @ same.T]  # fmt: skip
    return torch.stack(
        [hand, unseen, legal, _block(obs, "fantan_playable"), trump_card, lead @ same.T, win_card,
         *(x / 13 for x in counts), beats, higher_in_trick, (in_trick / 3).expand(n, 52), later_not_void], 1,
    )  # fmt: skip


# ---------------------------------------------------------------------------- sparse first layer
class _SparseLinear(torch.autograd.Function):
    """A linear layer whose input rows are mostly zeros (observations), input k read from column ``cols[k]``:
    forward and weight gradient by the kernels of :mod:`barbu_env.vector.jit.linear`, which visit the non-zero
    inputs only."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, cols: np.ndarray, weight: torch.Tensor, bias: torch.Tensor,
                wt: torch.Tensor) -> torch.Tensor:  # fmt: skip
        """``x[:, cols] @ weight.T + bias``; ``wt`` is ``weight.T`` contiguous (:func:`sparse_linear` makes it)."""
        from .vector.jit.linear import sparse_forward

        out = torch.empty(x.shape[0], weight.shape[0])
        sparse_forward(x.detach().numpy(), cols, wt.numpy(), bias.detach().numpy(), out.numpy())
        ctx.cols = cols
        ctx.save_for_backward(x, weight)
        return out

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor | None, ...]:
        from .vector.jit.linear import sparse_weight_grad

        x, weight = ctx.saved_tensors
        gx = None
        if ctx.needs_input_grad[0]:
            gx = torch.zeros_like(x).index_add_(1, torch.from_numpy(ctx.cols), g @ weight)
        gw = None
        if ctx.needs_input_grad[2]:
            gwt = torch.empty(weight.shape[1], weight.shape[0])
            sparse_weight_grad(x.detach().numpy(), ctx.cols, g.contiguous().numpy(), gwt.numpy())
            gw = gwt.t().contiguous()
        return gx, None, gw, g.sum(0) if ctx.needs_input_grad[3] else None, None


#: Rows from which :func:`sparse_linear` takes the kernels (fewer: torch's layer, cheaper than copying the weight).
SPARSE_ROWS = 32


def sparse_linear(layer: nn.Linear, x: torch.Tensor, cols: torch.Tensor | None = None) -> torch.Tensor:
    """``layer(x[:, cols])`` (``cols``: int64 column indices, one per input of ``layer``; None: ``x`` as it is), by
    :class:`_SparseLinear` where it applies (float32 CPU tensors, ``x`` 2-D with at least :data:`SPARSE_ROWS` rows;
    without making the gathered copy) and by ``layer`` itself otherwise; the two agree up to float32 rounding
    (``tests/test_policy_kernel.py``). On 1024 observation rows and a 256-unit layer, forward plus backward took
    28 ms against torch's 44-54 ms on this machine with two training runs beside it."""
    w = layer.weight
    idx = np.arange(w.shape[1]) if cols is None else np.ascontiguousarray(cols, np.int64)
    if idx.shape != (w.shape[1],) or ((idx < 0) | (idx >= x.shape[-1])).any():
        raise ValueError(f"sparse_linear: {w.shape[1]} column indices in [0, {x.shape[-1]}) expected, got "
                         f"{tuple(idx.shape)}")  # fmt: skip
    if x.dim() != 2 or x.shape[0] < SPARSE_ROWS or x.dtype != torch.float32 or w.dtype != torch.float32 \
            or x.device.type != "cpu" or w.device.type != "cpu" or layer.bias is None:  # fmt: skip
        return layer(x if cols is None else x[..., cols])
    # the transposed copy is made every call: fused optimizers update weights without bumping their version
    return _SparseLinear.apply(x.contiguous(), idx, w, layer.bias, w.detach().t().contiguous())


class PolicyNet(nn.Module):
    """MLP trunk with a masked policy head (logits over all actions) and a value head; with ``card_hidden`` > 0, a
    card head adds to each card's logit a score of the trunk's output, that card's :func:`card_features` and its
    :data:`CARD_IDENTITY`: one small MLP (one hidden layer of ``card_hidden`` units) shared by the 52 cards."""

    def __init__(self, obs_size: int = OBS_SIZE, num_actions: int = NUM_ACTIONS,
                 hidden: tuple[int, ...] = (256, 128), card_hidden: int = 0) -> None:  # fmt: skip
        super().__init__()
        layers: list[nn.Module] = []
        width = obs_size
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy = nn.Linear(width, num_actions)
        self.value = nn.Linear(width, 1)
        self.card_head = (
            nn.ModuleDict({"state": nn.Linear(width, card_hidden), "card": nn.Linear(len(CARD_FEATURES), card_hidden),
                           "identity": nn.Linear(CARD_IDENTITY.shape[1], card_hidden, bias=False),
                           "out": nn.Linear(card_hidden, 1)})
            if card_hidden else None
        )  # fmt: skip
        self.obs_size, self.num_actions, self.hidden = obs_size, num_actions, tuple(hidden)
        self.card_hidden = card_hidden

    def body(self, obs: torch.Tensor, cols: torch.Tensor | None = None) -> torch.Tensor:
        """The trunk's output for observations ``obs[:, cols]`` (``cols`` None: ``obs``), its first layer by
        :func:`sparse_linear`."""
        if not len(self.trunk):
            return obs if cols is None else obs[:, cols]
        return self.trunk[1:](sparse_linear(cast(nn.Linear, self.trunk[0]), obs, cols))

    def scores(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(logits of every action, value)``, unmasked (an illegal card's logit without the card head's score)."""
        return self.heads(self.body(obs), obs, mask)

    def heads(self, z: torch.Tensor, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """:meth:`scores` from the trunk's output ``z`` (:meth:`body` of ``obs``), for callers that read ``z`` too."""
        logits = self.policy(z)
        if self.card_head is not None:  # scored for the legal cards only, as the compiled pass does
            head = self.card_head
            rows, cards = (mask[:, :52] != 0).nonzero(as_tuple=True)
            features = card_features(obs, mask)[rows, :, cards]  # [legal pairs, features]
            h = head["state"](z)[rows] + head["card"](features) + head["identity"](CARD_IDENTITY.to(z.dtype))[cards]
            score = head["out"](torch.relu(h)).squeeze(-1)
            extra = torch.zeros(obs.shape[0], 52, dtype=logits.dtype).index_put((rows, cards), score)
            logits = torch.cat([logits[:, :52] + extra, logits[:, 52:]], 1)
        return logits, self.value(z).squeeze(-1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(masked logits, value)``; illegal actions get the dtype's minimum logit."""
        logits, value = self.scores(obs, mask)
        return torch.where(mask.bool(), logits, torch.finfo(logits.dtype).min), value


def flat_policy(net: PolicyNet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(weights, layout, card, card_sizes)``: the trunk's linear layers then the policy head, and the card head,
    as the kernel of :mod:`barbu_env.vector.jit.policy` reads them (per layer its transposed weight then its bias;
    ``layout[k]`` = offset, inputs, outputs of layer k; the card head's parts as that module says, empty without
    one). ``weights`` is float32, or the bits of float16 (uint16) where every entry is a float16 exactly, as in a
    network loaded from a checkpoint (:func:`save_checkpoint` stores float16): the same values, half the bytes the
    kernel reads."""
    layers = [m for m in net.trunk if isinstance(m, nn.Linear)] + [net.policy]
    parts: list[np.ndarray] = []
    layout, off = [], 0
    for m in layers:
        w = m.weight.detach().numpy().astype(np.float32).T.ravel()
        b = m.bias.detach().numpy().astype(np.float32)
        layout.append((off, m.in_features, m.out_features))
        parts += [w, b]
        off += w.size + b.size
    card, card_sizes = np.zeros(0, np.float32), np.zeros(3, np.int64)
    if net.card_head is not None:
        head = {k: cast(nn.Linear, m) for k, m in net.card_head.items()}
        with torch.no_grad():
            ident = head["identity"](CARD_IDENTITY)
            card = np.concatenate([t.detach().numpy().astype(np.float32).ravel() for t in (
                head["state"].weight.T, head["state"].bias, head["card"].weight.T, head["card"].bias, ident,
                head["out"].weight[0], head["out"].bias)])  # fmt: skip
        card_sizes = np.array([head["state"].in_features, net.card_hidden, len(CARD_FEATURES)], np.int64)
    weights = np.concatenate(parts)
    half = weights.astype(np.float16)
    if np.array_equal(half.astype(np.float32), weights):
        weights = half.view(np.uint16)
    return weights, np.array(layout, np.int64), card, card_sizes


def compiled_greedy(flat: tuple[np.ndarray, ...], obs: np.ndarray, mask: np.ndarray, tie: float,
                    dtype: type[np.floating[Any]] = np.float32) -> tuple[np.ndarray, ...]:  # fmt: skip
    """``(best int64 [n], near bool [n], logits [n, A])`` of the compiled greedy pass
    (:func:`barbu_env.vector.jit.policy.greedy_actions`) of a :func:`flat_policy` network over n observations
    (float32 [n, OBS_SIZE]) and masks (int8 [n, A]): the first legal action of the largest logit, whether the two
    largest legal logits lie within ``tie`` (relative), and the logits of the legal actions (-inf for the illegal
    ones). ``dtype`` (``np.float32`` or ``np.float64``) is the type the sums are
    taken in and the logits come in: float64 gives the network's logits within about 1e-15 (relative)."""
    from .vector.jit import greedy_actions

    if dtype not in (np.float32, np.float64):
        raise ValueError(f"bad dtype {dtype!r} for compiled_greedy: expected np.float32 or np.float64")
    obs, mask = np.ascontiguousarray(obs, dtype), np.ascontiguousarray(mask, np.int8)
    n = obs.shape[0]
    logits = np.empty((n, mask.shape[1]), dtype)
    best, near = np.empty(n, np.int64), np.empty(n, np.bool_)
    greedy_actions(obs, mask, *flat, tie, logits, best, near)
    return best, near, logits


def greedy_choices(flat: tuple[np.ndarray, ...], obs: np.ndarray, mask: np.ndarray,
                   tie: float = TIE) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """``(choices int64 [n], logits float32 [n, A])``: :func:`compiled_greedy`'s first legal argmax of each row, taken
    again from the float64 sums where its two best legal logits lie within ``tie`` (relative; default
    ``agents.neural.TIE``), and its float32 logits. So each choice is the float64 network's, whatever the float32
    pass's rounding (it fuses multiply-adds where the CPU can) and whatever else is in the batch."""
    best, near, logits = compiled_greedy(flat, obs, mask, tie)
    if near.any():
        rows = np.flatnonzero(near)
        best[rows] = compiled_greedy(flat, obs[rows], mask[rows], 0.0, np.float64)[0]
    return best, logits


def greedy_moves(flat: tuple[np.ndarray, ...], obs: np.ndarray, mask: np.ndarray, tie: float = TIE) -> np.ndarray:
    """:func:`greedy_choices`' choices (int64 [n]) without their logits: a row with one legal action (a forced move,
    which any policy must play) takes it without the network; the other rows go through the pass together."""
    legal = np.count_nonzero(mask, axis=1)
    forced = legal == 1
    if not forced.any():
        return greedy_choices(flat, obs, mask, tie)[0]
    out = mask.argmax(1).astype(np.int64)  # on a forced row, its one legal action
    rows = np.flatnonzero(~forced)
    if rows.size:
        out[rows] = greedy_choices(flat, obs[rows], mask[rows], tie)[0]
    return out


def save_checkpoint(path: str | Path, net: PolicyNet, contract: str, config: dict[str, Any],
                    meta: dict[str, Any] | None = None) -> None:  # fmt: skip
    """Write ``net`` with everything needed to rebuild and check it (see the module docstring)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().to(torch.float16) for k, v in net.state_dict().items()}
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(
        {"format": FORMAT, "env_version": ENV_VERSION, "obs_layout": OBS_LAYOUT, "obs_size": net.obs_size,
         "num_actions": net.num_actions, "contract": contract, "hidden": list(net.hidden),
         "card_hidden": net.card_hidden, "config": config,
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
    net = PolicyNet(ckpt["obs_size"], ckpt["num_actions"], tuple(ckpt["hidden"]), ckpt.get("card_hidden", 0))
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


def bidding_columns(blocks: tuple[str, ...] | list[str]) -> np.ndarray:
    """The observation entries (int64, in order) of ``blocks``: a bidding network's input columns."""
    return np.array([i for b in blocks for i in range(BLOCKS[b][0], BLOCKS[b][0] + BLOCKS[b][1])], np.int64)


def bidding_input(obs: Any, blocks: tuple[str, ...] | list[str]) -> Any:
    """The entries of ``blocks`` of observations ``obs`` (``[..., OBS_SIZE]``, numpy or torch), concatenated
    in order: a bidding network's input."""
    cols = bidding_columns(blocks)
    return obs[..., cols if isinstance(obs, np.ndarray) else torch.from_numpy(cols)]


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
    card = ckpt.get("card_hidden", 0)
    if not isinstance(card, int) or isinstance(card, bool) or not 0 <= card <= MAX_WIDTH:
        raise ValueError(f"checkpoint {name}: bad card_hidden {card!r}: expected an integer 0..{MAX_WIDTH}")


def _kind_name(kind: type | tuple[type, ...]) -> str:
    words = {str: "a text", int: "an integer", list: "a list", tuple: "a tuple", dict: "a mapping"}
    return " or ".join(words[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
