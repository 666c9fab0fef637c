"""Distil a checkpoint's suit-symmetrised ensemble back into the checkpoint (self-distillation).

The suit relabellings that leave a contract unchanged (``training.augment.suit_permutations``: 6 with hearts fixed
in No hearts, No King and Salad, 24 otherwise) map each state to states of the same value. A network trained with
them as augmentation is close to equivariant but not exactly: the mean of its logits over the relabelled
observations, mapped back to the original cards (:func:`symmetrised_logits`), is an ensemble of 6 or 24 views that
plays better than the network alone (against the heuristic: No hearts +0.10 ± 0.05 a deal, 6000 boards; No queens
+0.08 ± 0.06, 2000 boards).

``python -m training.symmetrize OUT IN`` fine-tunes a copy of ``IN``'s network towards the ensemble of the frozen
``IN``, so that one pass plays close to the ensemble at the cost of one. With ``--ensemble A B ...`` (other networks of
``IN``'s contract, of any sizes, e.g. other training runs) the target is the mean of all their symmetrised logits,
``IN``'s included, each centred over the legal moves; the student keeps ``IN``'s sizes unless ``--hidden H1 H2`` gives
smaller ones: it then starts as ``IN`` keeping the units ``training.prune.top_units`` ranks first. (No King's file and
two ``[512, 256]`` runs: the mean of their logits played +0.12 ± 0.08 over the file against the heuristic, and the file
distilled towards their ensemble on 80,000 deals at ``--lr 2e-3`` +0.11 / +0.16 ± 0.08, 2000 boards of each of two
seeds; it is the shipped No King file.) The states are the card decisions with a choice of
``training.prune.card_decisions`` (``--games`` deals of ``IN``'s contract, doubling off, or half of them under classic
doubling with ``--doubled``, the two kinds' steps taken in turn; each card played by ``IN``'s network, the compiled
heuristic or at random, a third each). The games of a batch move in step, so one step's decisions all sit at the same
point of the deal: the decisions are pooled in runs of at least ``--buffer`` (default 100,000, about two deals of the
1024 games) and shuffled into minibatches of 1024 (``--buffer 0``: each step's decisions are one minibatch, which
docs/TRAINING.md measures as far worse in No last two). Each minibatch is relabelled by a relabelling drawn at random
(the ensemble's target relabelled alike). The loss is ``rollout_q``'s Q loss (``centred_mse``: the mean squared
difference of the centred logits over the legal moves), Adam at ``--lr`` (default 3e-4). A decision with doubles (its
observation's ``doubles`` block not all zero) has values about 36 times larger in mean square (No tricks), so with
``--doubled`` such decisions make almost all of the loss and the doubling-off play drifts (docs/TRAINING.md);
``--balance-doubles`` weighs each such decision's squared error by the ratio of the held-out targets' mean squares
without and with doubles, so that the two kinds weigh alike on average (the held-out loss likewise).

The training loss is taken on each minibatch before its step, but a run's minibatches share their deals, which the
student has been fitting since the run began: it can flatter the student. So the same loss is also measured on the
card decisions of ``--holdout`` deals of another seed (default 200, played as above), never trained on: at the
start, every ``--check-every`` minibatches and at the end. ``--keep best`` writes the student as it was at its
lowest held-out loss (as it started if no check beat the start), ``--keep last`` (default) the student at the
end. (At ``--lr 2e-3`` the ``[512, 256]`` Trumps file ended at a training loss of 1.2e-5 but a held-out one of
8.2e-5, 3.7 times the source's, and played 0.8-0.9 a deal worse than it against the heuristic: docs/TRAINING.md.)
``OUT``'s ``meta`` records the source file, its SHA-256 and meta, the settings, the states trained on, the training
loss at the start and at the end, and the held-out losses.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from barbu_env.nn import PolicyNet, load_checkpoint, save_checkpoint
from barbu_env.observation import block

from .augment import suit_permutations
from .common import Gathers, suit_gathers
from .prune import card_decisions, check_hidden, pruned, share, top_units
from .rollout_q import centred, centred_mse

#: What :func:`distil` may return: the student at the end, or at its lowest held-out loss.
KEEP = ("last", "best")
#: Deals whose card decisions rank the units a smaller student (``--hidden``) starts with.
SHRINK_GAMES = 500


def with_doubles(obs: torch.Tensor) -> torch.Tensor:
    """``[n]`` bool: whether each observation's ``doubles`` block is not all zero (a decision with doubles)."""
    return (block(obs, "doubles") != 0).any(1)


@torch.no_grad()
def symmetrised_logits(net: PolicyNet, obs: torch.Tensor, mask: torch.Tensor, views: Gathers) -> torch.Tensor:
    """``[n, A]``: the mean over the relabellings ``views`` of ``net``'s logits on the relabelled observations and
    masks, each mapped back to the original actions."""
    total = torch.zeros(mask.shape, dtype=torch.float32)
    for oi, ai, back in views:
        total += net(obs[:, oi], mask[:, ai])[0][:, back]
    return total / len(views)


def ensemble_target(nets: list[PolicyNet], obs: torch.Tensor, mask: torch.Tensor, views: Gathers) -> torch.Tensor:
    """``[n, A]``: the mean over ``nets`` of their :func:`symmetrised_logits`, each centred over the legal moves
    (``mask``), so a network's offset does not weigh; the illegal entries are 0."""
    count = mask.sum(1, keepdim=True)
    return torch.stack([centred(symmetrised_logits(n, obs, mask, views), mask, count) for n in nets]).mean(0)


def shuffled(chunks: Iterable[tuple[np.ndarray, np.ndarray]], buffer: int, batch: int,
             rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """The rows of ``chunks`` (pairs of arrays of equal length) regrouped in minibatches of ``batch`` rows: each run
    of at least ``buffer`` rows is shuffled with ``rng`` and cut in turn (the last minibatch of a run may be
    shorter); ``buffer`` 0 yields the chunks as they come."""
    if buffer == 0:
        yield from chunks
        return
    held: list[tuple[np.ndarray, np.ndarray]] = []
    rows = 0
    for chunk in chunks:
        held.append(chunk)
        rows += len(chunk[0])
        if rows >= buffer:
            yield from _cut(held, batch, rng)
            held, rows = [], 0
    if held:
        yield from _cut(held, batch, rng)


def mixed_decisions(net: PolicyNet, contract: str, games: int, seed: int,
                    doublings: tuple[str, ...]) -> Iterator[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """``training.prune.card_decisions`` of ``games`` deals, an equal share under each of ``doublings``, the steps of
    the doublings' games taken in turn (so every run of decisions mixes them; ``card_decisions`` plays one doubling's
    deals after the other's), doubling k's from seed ``seed + 7919 k``. One doubling: exactly ``card_decisions(net,
    contract, games, seed, doublings)``."""
    if len(doublings) == 1:
        yield from card_decisions(net, contract, games, seed, doublings=doublings)
        return
    n = len(doublings)
    runs = [card_decisions(net, contract, share(games, n, k), seed + 7919 * k, doublings=(d,))
            for k, d in enumerate(doublings)]  # fmt: skip
    while runs:
        for run in list(runs):
            step = next(run, None)
            if step is None:
                runs.remove(run)
            else:
                yield step


def _cut(held: list[tuple[np.ndarray, np.ndarray]], batch: int,
         rng: np.random.Generator) -> Iterator[tuple[np.ndarray, np.ndarray]]:  # fmt: skip
    """The rows of ``held`` in one order drawn with ``rng``, ``batch`` at a time."""
    o, m = np.concatenate([h[0] for h in held]), np.concatenate([h[1] for h in held])
    order = rng.permutation(len(o))
    for k in range(0, len(o), batch):
        take = order[k : k + batch]
        yield o[take], m[take]


class Holdout:
    """Card decisions of deals the student never trains on and the ensemble's target there: :meth:`loss` is the
    distillation loss of a network on them."""

    def __init__(self, teachers: list[PolicyNet], contract: str, games: int, seed: int, doublings: tuple[str, ...],
                 views: Gathers) -> None:  # fmt: skip
        parts = list(card_decisions(teachers[0], contract, games, seed, doublings=doublings))
        self.obs = torch.from_numpy(np.concatenate([o for o, _ in parts]))
        self.mask = torch.from_numpy(np.concatenate([m for _, m in parts])).bool()
        self.count = self.mask.sum(1, keepdim=True)
        self.target = torch.cat([ensemble_target(teachers, self.obs[k : k + 4096], self.mask[k : k + 4096], views)
                                 for k in range(0, len(self.obs), 4096)])  # fmt: skip
        #: The weight of a decision with doubles (:meth:`balance` sets it; 1: every decision alike).
        self.doubled_weight = 1.0

    def balance(self) -> float:
        """Set and return :attr:`doubled_weight`: the mean square of the targets of the decisions without doubles over
        that of those with doubles; ``ValueError`` when either kind is missing."""
        doubled = with_doubles(self.obs)
        if doubled.all() or not doubled.any():
            raise ValueError(f"balancing needs held-out decisions with and without doubles, got "
                             f"{int(doubled.sum())} of {len(doubled)} with doubles (play some deals under classic "
                             "doubling: --doubled)")  # fmt: skip
        square = (self.target**2).sum(1) / self.count[:, 0]
        self.doubled_weight = float(square[~doubled].mean() / square[doubled].mean())
        return self.doubled_weight

    def weights(self, obs: torch.Tensor) -> torch.Tensor:
        """``[n]``: :attr:`doubled_weight` for the decisions of ``obs`` with doubles, 1 for the others."""
        return torch.where(with_doubles(obs), self.doubled_weight, 1.0)

    @torch.no_grad()
    def loss(self, net: PolicyNet) -> float:
        """``net``'s mean squared distance to the target (centred logits over the legal moves; decisions with
        doubles weighted by :attr:`doubled_weight`), in eval mode."""
        was = net.training
        net.eval()
        out = float(centred_mse(net(self.obs, self.mask)[0], self.target, self.mask, self.count,
                                self.weights(self.obs)))  # fmt: skip
        net.train(was)
        return out


def distil(net: PolicyNet, contract: str, games: int, lr: float, seed: int, doublings: tuple[str, ...] = ("off",),
           buffer: int = 100_000, others: tuple[PolicyNet, ...] = (), holdout: int = 200, check_every: int = 200,
           keep: str = "last", hidden: tuple[int, ...] | None = None,
           balance: bool = False) -> tuple[PolicyNet, dict[str, Any]]:  # fmt: skip
    """A copy of ``net`` fine-tuned towards the symmetrised logits of (frozen) ``net``, averaged with those of the
    networks ``others`` (:func:`ensemble_target`), on the card decisions of ``games`` deals played by ``net``, an equal
    share under each of ``doublings`` (see the module docstring); and its statistics: the training loss over the first
    and the last 100 minibatches, the states trained on, the minibatches, and the loss on the decisions of ``holdout``
    deals of seed ``seed + 1`` (:class:`Holdout`) at the start, every ``check_every`` minibatches and at the end
    (``holdout``: ``[minibatches, loss]`` pairs). ``keep``: ``"last"`` returns the student at the end, ``"best"`` as
    it was at its lowest held-out loss (the start if none was lower; ``kept`` says which minibatch); ``buffer`` as in
    :func:`shuffled`. ``hidden``: the student has these hidden sizes and starts as ``net`` keeping the units
    ``training.prune.top_units`` ranks first on the card decisions of :data:`SHRINK_GAMES` deals of seed
    ``seed + 2``; None: the student starts as a copy of ``net``. ``balance``: decisions with doubles weighted by
    :meth:`Holdout.balance` (``doubled_weight`` in the statistics)."""
    if keep not in KEEP:
        raise ValueError(f"keep must be one of {list(KEEP)}, got {keep!r}")
    if holdout < 1 or check_every < 1:
        raise ValueError(f"holdout and check_every must be at least 1, got {holdout} and {check_every}")
    teacher = net.eval()
    if hidden is None:
        student = copy.deepcopy(net).train()
    else:
        ranked = card_decisions(net, contract, SHRINK_GAMES, seed + 2, doublings=doublings)
        student = pruned(net, top_units(net, hidden, ranked)[0]).train()
    teachers = [teacher, *(o.eval() for o in others)]
    views = suit_gathers(contract)
    held = Holdout(teachers, contract, holdout, seed + 1, doublings, views)
    if balance:
        held.balance()
    checks: list[list[float]] = []
    best: tuple[float, int, dict[str, Any]] | None = None  # keep="best": the lowest check's loss, minibatch, weights
    losses: list[float] = []

    def check() -> None:
        nonlocal best
        checks.append([len(losses), held.loss(student)])
        if keep == "best" and (best is None or checks[-1][1] < best[0]):
            best = (checks[-1][1], len(losses), copy.deepcopy(student.state_dict()))

    check()
    opt = torch.optim.Adam(student.parameters(), lr=lr)
    rng = np.random.default_rng([seed, 1])
    states = 0
    bar = tqdm(desc=f"symmetrize {contract}", unit="state", mininterval=5)
    decisions = mixed_decisions(teacher, contract, games, seed, doublings)
    for o, m in shuffled(decisions, buffer, 1024, np.random.default_rng([seed, 2])):
        obs, mask = torch.from_numpy(o), torch.from_numpy(m).bool()
        target = ensemble_target(teachers, obs, mask, views)
        oi, ai, _ = views[int(rng.integers(len(views)))]
        x, legal, want = obs[:, oi], mask[:, ai], target[:, ai]
        count = legal.sum(1, keepdim=True)
        loss = centred_mse(student(x, legal)[0], want, legal, count, held.weights(obs))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        states += len(o)
        if len(losses) % check_every == 0:
            check()
        bar.update(len(o))
        bar.set_postfix(loss=f"{np.mean(losses[-100:]):.2e}", held_out=f"{checks[-1][1]:.2e}", refresh=False)
    bar.close()
    if checks[-1][0] != len(losses):
        check()
    kept = len(losses)
    if best is not None:
        student.load_state_dict(best[2])
        kept = best[1]
    stats = {"states": states, "minibatches": len(losses), "loss_first": float(np.mean(losses[:100])),
             "loss_last": float(np.mean(losses[-100:])), "holdout_games": holdout, "holdout_states": len(held.obs),
             "holdout": checks, "keep": keep, "kept": kept, "doubled_weight": held.doubled_weight}  # fmt: skip
    return student.eval(), stats


def _sha256(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m training.symmetrize", description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the checkpoint to write")
    ap.add_argument("source", help="the checkpoint to distil")
    ap.add_argument("--games", type=int, default=20000, help="deals whose card decisions it trains on")
    ap.add_argument("--lr", type=float, default=3e-4, help="Adam learning rate")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deals and of the relabellings drawn")
    ap.add_argument("--threads", type=int, default=1, help="torch threads")
    ap.add_argument("--buffer", type=int, default=100_000, help="shuffle the decisions in runs of at least this many")
    ap.add_argument("--doubled", action="store_true", help="play half of the deals under classic doubling")
    ap.add_argument("--ensemble", nargs="+", default=[], metavar="CHECKPOINT",
                    help="networks of the source's contract whose symmetrised logits join the target")  # fmt: skip
    ap.add_argument("--holdout", type=int, default=200, help="deals of seed + 1 whose decisions measure the student")
    ap.add_argument("--check-every", type=int, default=200, help="minibatches between two held-out measurements")
    ap.add_argument("--keep", choices=KEEP, default="last",
                    help="write the student at the end (last) or at its lowest held-out loss (best)")  # fmt: skip
    ap.add_argument("--hidden", type=int, nargs="+", metavar="UNITS",
                    help="a smaller student: its hidden sizes, one per layer of the source")  # fmt: skip
    ap.add_argument("--balance-doubles", action="store_true",
                    help="with --doubled: decisions with doubles weigh as those without on average")  # fmt: skip
    args = ap.parse_args(argv)
    if args.balance_doubles and not args.doubled:
        ap.error("--balance-doubles needs --doubled (without it no decision has doubles)")
    if min(args.games, args.threads, args.holdout, args.check_every) < 1 or not 0 < args.lr < 1 or args.buffer < 0:
        ap.error(f"--games, --threads, --holdout and --check-every must be at least 1, --buffer at least 0 and --lr in "
                 f"(0, 1), got {args.games}, {args.threads}, {args.holdout}, {args.check_every}, {args.buffer} and "
                 f"{args.lr}")  # fmt: skip
    hidden = tuple(args.hidden) if args.hidden else None
    try:
        net, ckpt = load_checkpoint(args.source)
        if hidden is not None:
            check_hidden(net, hidden)
    except ValueError as e:
        ap.error(str(e))
    contract = ckpt["contract"]
    others = []
    for path in args.ensemble:
        try:
            other, info = load_checkpoint(path)
        except ValueError as e:
            ap.error(str(e))
        if info["contract"] != contract:
            ap.error(f"--ensemble {path!r} plays {info['contract']!r}, the source plays {contract!r}: give networks "
                     "of one contract")  # fmt: skip
        others.append(other)
    torch.set_num_threads(args.threads)
    doublings = ("off", "classic") if args.doubled else ("off",)
    student, stats = distil(net, contract, args.games, args.lr, args.seed, doublings, args.buffer, tuple(others),
                            args.holdout, args.check_every, args.keep, hidden, args.balance_doubles)  # fmt: skip
    meta = {"symmetrized": {
        "file": str(args.source), "sha256": _sha256(args.source),
        "relabellings": len(suit_permutations(contract)), "games": args.games, "lr": args.lr, "seed": args.seed,
        "doublings": list(doublings), "balance_doubles": args.balance_doubles, "buffer": args.buffer,
        "hidden": list(student.hidden), "source_hidden": list(net.hidden),
        "ensemble": [{"file": str(p), "sha256": _sha256(p)} for p in args.ensemble],
        **stats, "meta": ckpt.get("meta", {})}}  # fmt: skip
    save_checkpoint(args.out, student, contract, ckpt["config"], meta)
    with_others = f" (with {len(others)} other network(s))" if others else ""
    print(f"wrote {args.out}: {contract} distilled towards its {meta['symmetrized']['relabellings']}-relabelling "
          f"ensemble{with_others} on {stats['states']} card decisions of {args.games} deals (training loss "
          f"{stats['loss_first']:.2e} -> {stats['loss_last']:.2e}; held out {stats['holdout'][0][1]:.2e} -> "
          f"{stats['holdout'][-1][1]:.2e}, kept: minibatch {stats['kept']} of {stats['minibatches']})")  # fmt: skip


if __name__ == "__main__":
    main()
