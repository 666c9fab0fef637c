"""Drop the hidden units a checkpoint's network never uses (structured pruning of dead ReLU units).

A ReLU unit whose input sum is never positive outputs zero wherever it was seen. Removing it (its row of its layer,
its column of the next layer and of the policy, value and card heads) leaves the network's output unchanged there.

``python -m training.prune OUT IN`` plays ``--games`` deals of ``IN``'s contract on the compiled engine
(``VectorDeals``), half with doubling off and half with classic doubling. Each card decision is taken by the network
itself (greedy), the compiled heuristic or a uniformly random legal card, drawn per decision, a third each; the
other decisions (the declarer's trump suit or Fantan rank, doubles) by the heuristic. It keeps the units positive on
at least one card decision of those deals. It then plays ``--check-games`` deals the same way from another seed and
compares the two networks' greedy choices on every card decision with a choice. It refuses to write ``OUT`` when any
differs (a dropped unit fires there: play more ``--games``). ``OUT``'s ``meta`` records the source file, its SHA-256
and meta, the units kept and the check.

With ``--hidden H1 H2 ...`` it keeps that many units per layer instead, those :func:`top_units` ranks first on the
same decisions (live units that contribute little are dropped too), and with ``--max-changed N`` it writes ``OUT``
when at most N check decisions change. The compiled pass (``barbu_env.vector.jit.policy``) skips zero inputs, so
the pruned network costs less per decision, roughly in proportion to the weights dropped.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import torch
from torch import nn

from barbu_env.nn import PolicyNet, flat_policy, greedy_choices, load_checkpoint, save_checkpoint
from barbu_env.rules import Rules
from barbu_env.vector import VectorDeals, random_actions


def _linears(net: PolicyNet) -> list[nn.Linear]:
    return [m for m in net.trunk if isinstance(m, nn.Linear)]


def _card_rows(mask: np.ndarray) -> np.ndarray:
    """The rows of ``mask`` that are card decisions with a choice (what the network decides)."""
    return mask[:, :52].any(1) & (mask.sum(1) > 1)


def share(games: int, n: int, k: int) -> int:
    """Part k of ``games`` split in n near-equal parts (the last ones take the remainder)."""
    return games // n + (k >= n - games % n)


def card_decisions(
    net: PolicyNet,
    contract: str,
    games: int,
    seed: int,
    batch: int = 1024,
    doublings: tuple[str, ...] = ("off", "classic"),
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(obs float32 [n, OBS_SIZE], mask int8 [n, A])`` of the card decisions with a choice, one step of
    ``batch`` games at a time, in ``games`` deals of ``contract`` (an equal share under each of ``doublings``, in
    turn: half doubling off, half classic by default), each card chosen by ``net`` (greedy), the compiled heuristic
    or at random, a third each per decision, the decisions that are not card plays by the heuristic."""
    rng = np.random.default_rng(seed)
    flat = flat_policy(net)
    n = len(doublings)
    for k, doubling in enumerate(doublings):
        want = share(games, n, k)
        seed_k = int(rng.integers(2**63))
        v = VectorDeals(contract, Rules(doubling=doubling), batch=min(batch, max(want, 1)), seed=seed_k)
        v.reset()
        dealt = 0
        while dealt < want:
            obs, mask, _ = v.observe()
            rows = _card_rows(mask)
            actions = v.heuristic_actions().copy()
            if rows.any():
                o, m = obs[rows].copy(), mask[rows].copy()
                yield o, m
                who = rng.integers(3, size=len(o))  # 0: the network, 1: the heuristic, 2: random
                chosen = np.where(who == 0, greedy_choices(flat, o, m)[0], actions[rows])
                actions[rows] = np.where(who == 2, random_actions(m, rng), chosen)
            _, done = v.step(actions)
            dealt += int(done.sum())


Decisions = Iterable[tuple[np.ndarray, np.ndarray]]


def _hidden_outputs(net: PolicyNet, decisions: Decisions) -> Iterator[tuple[int, list[torch.Tensor]]]:
    """Per chunk of ``decisions``: ``(how many observations, the outputs of each hidden layer of net's trunk on
    them)``."""
    layers = _linears(net)
    for obs, _ in decisions:
        outputs = []
        with torch.no_grad():
            x = torch.from_numpy(obs)
            for m in layers:
                x = torch.relu(m(x))
                outputs.append(x)
        yield len(obs), outputs


def active_units(net: PolicyNet, decisions: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[list[np.ndarray], int]:
    """``(per hidden layer of net's trunk whether each unit is positive on at least one observation of
    decisions, how many observations there were)``."""
    seen = [np.zeros(m.out_features, bool) for m in _linears(net)]
    n = 0
    for rows, outputs in _hidden_outputs(net, decisions):
        n += rows
        for k, x in enumerate(outputs):
            seen[k] |= (x > 0).any(0).numpy()
    return seen, n


def pruned(net: PolicyNet, keep: list[np.ndarray]) -> PolicyNet:
    """A copy of ``net`` with only the hidden units ``keep`` marks (one bool array per hidden layer), every weight
    that reads a kept unit's output carried over."""
    idx = [torch.from_numpy(np.flatnonzero(k)) for k in keep]
    if any(len(i) == 0 for i in idx):
        raise ValueError(f"pruning would leave a hidden layer empty (units kept per layer: {[len(i) for i in idx]})")
    out = PolicyNet(net.obs_size, net.num_actions, tuple(len(i) for i in idx), net.card_hidden)
    layer = {i: k for k, i in enumerate(i for i, m in enumerate(net.trunk) if isinstance(m, nn.Linear))}
    last = len(idx) - 1
    new: dict[str, torch.Tensor] = {}
    for name, w in net.state_dict().items():
        if name.startswith("trunk."):
            k = layer[int(name.split(".")[1])]
            w = w[idx[k]]
            if name.endswith("weight") and k > 0:
                w = w[:, idx[k - 1]]
        elif name in ("policy.weight", "value.weight", "card_head.state.weight"):
            w = w[:, idx[last]]
        new[name] = w.clone()
    out.load_state_dict(new)
    return out.eval()


def check_hidden(net: PolicyNet, hidden: tuple[int, ...]) -> None:
    """Raise ValueError unless ``hidden`` gives one size per hidden layer of ``net``, each from 1 to that layer's."""
    if len(hidden) != len(net.hidden) or not all(0 < h <= w for h, w in zip(hidden, net.hidden, strict=True)):
        raise ValueError(f"hidden sizes {list(hidden)}: give one per hidden layer of the network {list(net.hidden)}, "
                         "each from 1 to that layer's size")  # fmt: skip


def top_units(net: PolicyNet, hidden: tuple[int, ...],
              decisions: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[list[np.ndarray], int]:  # fmt: skip
    """``(per hidden layer k of net's trunk the hidden[k] units whose mean output over the observations of decisions
    times the norm of the weights reading it, the next layer's or for the last layer the policy, value and card
    heads', is largest; how many observations there were)``. Unlike dead units, dropping these can change the
    output."""
    check_hidden(net, hidden)
    layers = _linears(net)
    total = [torch.zeros(m.out_features, dtype=torch.float64) for m in layers]
    n = 0
    for rows, outputs in _hidden_outputs(net, decisions):
        n += rows
        for k, x in enumerate(outputs):
            total[k] += x.sum(0, dtype=torch.float64)
    with torch.no_grad():
        heads = [net.policy.weight, net.value.weight]
        if net.card_head is not None:
            heads.append(cast(nn.Linear, net.card_head["state"]).weight)
        readers = [m.weight for m in layers[1:]] + [torch.cat(heads)]
        keep = []
        for k, (t, w) in enumerate(zip(total, readers, strict=True)):
            mark = np.zeros(len(t), bool)
            mark[np.argsort(-(t * w.double().norm(dim=0)).numpy(), kind="stable")[: hidden[k]]] = True
            keep.append(mark)
    return keep, n


def greedy_changes(a: PolicyNet, b: PolicyNet,
                   decisions: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[int, int, float]:  # fmt: skip
    """``(decisions whose greedy choice differs, decisions, largest |logit difference| over the legal actions)``
    of two networks (torch passes)."""
    changed, n, diff = 0, 0, 0.0
    with torch.no_grad():
        for obs, mask in decisions:
            o, m = torch.from_numpy(obs), torch.from_numpy(mask)
            la, lb = a(o, m)[0], b(o, m)[0]
            changed += int((la.argmax(1) != lb.argmax(1)).sum())
            n += len(obs)
            diff = max(diff, torch.where(m.bool(), la - lb, 0.0).abs().max().item())
    return changed, n, diff


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m training.prune", description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the checkpoint to write")
    ap.add_argument("source", help="the checkpoint to prune")
    ap.add_argument("--games", type=int, default=20000, help="deals whose card decisions decide the units kept")
    ap.add_argument("--check-games", type=int, default=10000, help="deals of another seed the result is checked on")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals (the check uses seed + 1)")
    ap.add_argument("--hidden", type=int, nargs="+", metavar="UNITS",
                    help="units to keep per hidden layer, the most used (default: every live one)")  # fmt: skip
    ap.add_argument("--max-changed", type=int, default=0, help="check decisions whose greedy choice may change")
    args = ap.parse_args(argv)
    if args.games < 1 or args.check_games < 1 or args.max_changed < 0:
        ap.error(f"--games and --check-games must be at least 1 and --max-changed at least 0, got {args.games}, "
                 f"{args.check_games} and {args.max_changed}")  # fmt: skip
    try:
        net, ckpt = load_checkpoint(args.source)
        if args.hidden:
            check_hidden(net, tuple(args.hidden))
    except ValueError as e:
        ap.error(str(e))
    torch.set_num_threads(1)
    contract = ckpt["contract"]
    decisions = card_decisions(net, contract, args.games, args.seed)
    keep, seen = top_units(net, tuple(args.hidden), decisions) if args.hidden else active_units(net, decisions)
    small = pruned(net, keep)
    changed, checked, diff = greedy_changes(net, small, card_decisions(net, contract, args.check_games, args.seed + 1))
    sizes = f"hidden {list(net.hidden)} -> {list(small.hidden)}"
    if changed > args.max_changed:
        raise SystemExit(f"{args.source}: pruning ({sizes}, units seen on {seen} decisions of {args.games} "
                         f"deals) changes the greedy choice of {changed} of {checked} check decisions (at most "
                         f"{args.max_changed} allowed): {args.out} not written; play more --games or keep more "
                         "--hidden units")  # fmt: skip
    meta: dict[str, Any] = {"pruned": {
        "file": str(args.source), "sha256": hashlib.sha256(Path(args.source).read_bytes()).hexdigest(),
        "hidden": list(net.hidden), "kept": [int(k.sum()) for k in keep], "games": args.games, "decisions": seen,
        "check_games": args.check_games, "check_decisions": checked, "check_changed": changed,
        "check_max_logit_diff": diff, "max_changed": args.max_changed, "ranked": bool(args.hidden), "seed": args.seed,
        "meta": ckpt.get("meta", {})}}  # fmt: skip
    save_checkpoint(args.out, small, contract, ckpt["config"], meta)
    how = "ranked" if args.hidden else "positive"
    print(f"wrote {args.out}: {contract} {sizes} (units {how} on {seen} card decisions of {args.games} deals); the "
          f"greedy choice changed on {changed} of {checked} check decisions, logits within {diff:.2g}")  # fmt: skip


if __name__ == "__main__":
    main()
