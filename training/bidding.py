"""Learned bidding: networks that estimate the deal score of every declaration (R3) or doubling choice (R6).

One file, CleanRL style. Labels come from the batched engine (``barbu_env.vector``): random deals are set up
at a bidding decision, every legal choice of the seat on move is played out to the end of the deal by the
compiled heuristic in every seat (``Rollouts.play_out``: the later doubles, the declarer's redoubles and the
card play; with ``card_play`` set to card-play checkpoints, their greedy networks play the cards:
``PolicyRollouts.play_out``), and the seat's deal score (contract + settlement, R8.1) is that choice's label.
The deals are the true ones, so a network fit to them by least squares estimates the score expected from what
the seat knows (its hand, and for doubling the contract, the declarer and the doubles already made, which hint
at the others' hands), averaged over the hands it cannot see.

- ``role: declare``: the declarer's decision, hand and R6.4 obligations in force (``must_double``); labels
  for the 22 classic declarations (5 plain contracts, Trumps x 4 suits, Fantan x 13 ranks) of each hand.
- ``role: double``: a doubling decision at a random step of the doubling round (R6.1), after a declaration
  that is the heuristic's (or, with ``random_declare``, a random one) and the heuristic's earlier doubles;
  labels for every legal ``double:*`` action (the mask holds R6.2-R6.4).

The network is :class:`barbu_env.nn.PolicyNet` on :func:`barbu_env.nn.bidding_input` (the observation blocks
of :data:`BLOCKS`); its policy head is read as the expected score of each action, in units of ``scale``
points. The checkpoint (:func:`barbu_env.nn.save_bidding`) carries the config, the sizes, the env version and,
for the declaration, ``meta["baseline"]``: each contract's mean best estimate over random hands (the agent
subtracts it, so a contract is kept for a hand that suits it: see ``barbu_env.agents.bidding``).

    python -m training.bidding --set role=declare out_dir=runs/bid_declare export_dir=checkpoints/bidding
    python -m training.bidding --set role=double out_dir=runs/bid_double export_dir=checkpoints/bidding

Seeded (deals, torch), resumable (``--resume``: the labelled data and the last epoch's state are kept in
``out_dir``), logged per epoch to TensorBoard and ``metrics.csv`` (its ``decisions`` column holds the epoch).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import torch
from tqdm import tqdm

from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE, NUM_ACTIONS
from barbu_env.agents.bidding import declared_contract
from barbu_env.agents.neural import NeuralAgent
from barbu_env.nn import BIDDING_ROLES, PolicyNet, bidding_input, load_bidding, save_bidding
from barbu_env.rules import Rules
from barbu_env.vector import VectorDeals, random_actions
from barbu_env.vector.policy_rollout import PolicyRollouts
from barbu_env.vector.rollout import Rollouts
from barbu_env.vector.tables import Tables, build_tables

from .common import Logger, load_config

#: Input blocks of each role's network (names of ``barbu_env.observation.BLOCKS``).
BLOCKS: dict[str, list[str]] = {
    "declare": ["hand", "must_double"],
    "double": ["hand", "contract", "trump", "fantan_rank", "declarer", "to_move", "doubles", "doubled_done",
               "must_double"],
}  # fmt: skip


@dataclass
class BiddingConfig:
    """Settings of a bidding network's training; each can be set in YAML or with ``--set key=value``."""

    role: str = "declare"
    """What the network decides: ``declare`` (R3) or ``double`` (R6)."""
    seed: int = 0
    """Seed of the deals and of torch."""
    states: int = 60000
    """Decisions labelled (each with every legal choice played out)."""
    chunk: int = 5000
    """Decisions labelled per batched-engine call."""
    must_double_prob: float = 0.15
    """Probability that each non-declarer's R6.4 obligation is due in a labelled deal (the mask then forces
    its double), so the networks see obligations in force."""
    random_declare: float = 0.3
    """Doubling role: probability that a deal's contract is a random legal declaration, not the heuristic's."""
    card_play: str = "heuristic"
    """Who plays the cards in the labels' playouts: ``heuristic`` (the compiled heuristic, as the bidding), or a
    folder (or file) of card-play checkpoints, e.g. ``checkpoints``: their greedy networks play every seat's card
    decisions (:meth:`barbu_env.vector.policy_rollout.PolicyRollouts.play_out`), the heuristic the later doubles
    and redoubles. Every contract of the rules needs a network there (else ``ValueError``)."""
    hidden: list[int] = field(default_factory=lambda: [128, 64])
    """Hidden layer sizes of the MLP."""
    scale: float = 50.0
    """Points per unit of the network's outputs."""
    epochs: int = 20
    """Passes over the training part of the data."""
    minibatch: int = 512
    """Decisions per gradient step."""
    lr: float = 1e-3
    """Adam learning rate."""
    holdout: float = 0.1
    """Share of the decisions kept out of training, to measure (loss and decision quality)."""
    threads: int = 1
    """Torch CPU threads."""
    out_dir: str = "runs/bidding"
    """Where the data, metrics, TensorBoard logs, resume state and ``best.pt`` are written."""
    export_dir: str = ""
    """If set, the best checkpoint is copied there as ``<role>.pt``."""


def _obligations(rng: np.random.Generator, declarer: np.ndarray, p: float) -> np.ndarray:
    """A random R6.4 ``must_double`` seat mask per deal: each non-declarer's bit with probability ``p``."""
    bits = rng.random((declarer.shape[0], 4)) < p
    bits[np.arange(declarer.shape[0]), declarer] = False
    return (bits * (1 << np.arange(4))).sum(axis=1)


class Playouts(Protocol):
    """Plays game rows to the end of the deal: ``Rollouts`` (heuristic) or ``PolicyRollouts`` (learned cards)."""

    def play_out(self, rows: np.ndarray, first: np.ndarray) -> np.ndarray:
        """``int64 [G, 4]``: every seat's deal score after ``first[g]`` from each game row."""
        ...


def card_policy(card_play: str, t: Tables) -> NeuralAgent | None:
    """The greedy card player of ``card_play`` (see :attr:`BiddingConfig.card_play`; ``None`` for ``heuristic``);
    ``ValueError`` naming the setting and what is wrong (no checkpoint there, not a card-play checkpoint, or a
    contract of the rules ``t`` without a network)."""
    if card_play == "heuristic":
        return None
    what = "expected 'heuristic' or a folder or file of card-play checkpoints (<contract>.pt), e.g. 'checkpoints'"
    try:
        agent = NeuralAgent(card_play, bidding="heuristic")
    except ValueError as e:
        raise ValueError(f"bad card_play {card_play!r}: {what}: {e}") from None
    missing = agent.fallback_contracts(t.names)
    if missing:
        raise ValueError(f"bad card_play {card_play!r}: no card-play network for {missing} (it has "
                         f"{sorted(agent.nets)}): every contract of the rules needs one")  # fmt: skip
    return agent


def playouts(card_play: str, t: Tables) -> Playouts:
    """The playouts of the labels: the compiled heuristic everywhere, or the networks of ``card_play`` for the
    card decisions (:func:`card_policy`)."""
    policy = card_policy(card_play, t)
    return Rollouts(t) if policy is None else PolicyRollouts(t, policy)


def _play_out(rows: np.ndarray, roll: Playouts, mask: np.ndarray, seat: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """``float32 [n, NUM_ACTIONS]``: the score of ``seat`` after each legal action of ``actions`` (then play to the
    end of the deal by ``roll``) from each of the n game ``rows`` (of ``State.data``); NaN for the others."""
    n, k = rows.shape[0], actions.shape[0]
    legal = mask[:, actions].astype(bool)
    first = np.where(legal, actions[None, :], actions[np.argmax(legal, axis=1)][:, None])  # illegal: a legal one
    scores = roll.play_out(np.repeat(rows, k, axis=0), first.reshape(-1)).reshape(n, k, 4)
    out = np.full((n, NUM_ACTIONS), np.nan, np.float32)
    out[:, actions] = np.where(legal, scores[np.arange(n), :, seat], np.nan)
    return out


def label_chunk(cfg: BiddingConfig, n: int, seed: int) -> tuple[np.ndarray, ...]:
    """``(observations float32 [n, OBS_SIZE], masks int8 [n, A], labels float32 [n, A], heuristic int64 [n])``
    of ``n`` decisions of ``cfg.role`` in random deals keyed by ``seed`` (labels: NaN for illegal actions;
    ``heuristic``: the heuristic's choice)."""
    rng = np.random.default_rng([seed, 1])
    v = VectorDeals(None, batch=n, seed=seed, auto_reset=False)
    v.reset()
    declarer = v.state.declarer.copy()
    hands = v.state.hands.astype(np.uint64)
    v.reset_games(np.arange(n), hands, declarer, _obligations(rng, declarer, cfg.must_double_prob))
    roll = playouts(cfg.card_play, v.tables)
    if cfg.role == "declare":
        obs, mask, seat = v.observe()
        obs, mask = obs.copy(), mask.copy()
        actions = np.flatnonzero(mask.any(axis=0))
        return obs, mask, _play_out(v.state.data, roll, mask, seat, actions), v.heuristic_actions().copy()
    mask = v.action_masks()
    heur = v.heuristic_actions()
    rand = random_actions(mask, rng)
    v.step(np.where(rng.random(n) < cfg.random_declare, rand, heur))
    step = rng.integers(0, 4, n)  # the decision labelled: the step-th of the round (R6.1)
    obs = np.zeros((n, v.obs.shape[1]), np.float32)
    masks = np.zeros((n, NUM_ACTIONS), np.int8)
    labels = np.full((n, NUM_ACTIONS), np.nan, np.float32)
    chosen = np.zeros(n, np.int64)
    actions = np.arange(DOUBLE_BASE, NUM_ACTIONS)
    for j in range(4):
        o, m, seat = v.observe()
        now = step == j
        heur = v.heuristic_actions()
        if now.any():
            obs[now], masks[now], chosen[now] = o[now], m[now], heur[now]
            labels[now] = _play_out(v.state.data[now], roll, m[now], seat[now], actions)
        if j < 3:
            v.step(heur)
    return obs, masks, labels, chosen


def make_data(cfg: BiddingConfig, path: Path) -> dict[str, np.ndarray]:
    """The labelled decisions of ``cfg`` (``cfg.states`` of them), made once and kept in ``path`` (npz)."""
    if path.is_file():
        with np.load(path) as z:
            return dict(z)
    parts = []
    with tqdm(total=cfg.states, desc=f"{cfg.role} labels", unit="dec") as bar:
        for i in range(0, cfg.states, cfg.chunk):
            n = min(cfg.chunk, cfg.states - i)
            parts.append(label_chunk(cfg, n, cfg.seed * 1_000_003 + i // cfg.chunk))
            bar.update(n)
    data = {k: np.concatenate([p[i] for p in parts]) for i, k in enumerate(("obs", "mask", "label", "heuristic"))}
    np.savez_compressed(path, **data)
    return data


def declaration_baseline(net: PolicyNet, x: torch.Tensor, actions: np.ndarray, scale: float) -> dict[str, float]:
    """Per contract, the mean over the hands ``x`` of the network's best estimate (points) among the declaration
    ``actions`` of that contract (its trump suits or Fantan ranks)."""
    with torch.no_grad():
        q = net.policy(net.body(x)).numpy() * scale
    best: dict[str, np.ndarray] = {}
    for a in actions:
        name = declared_contract(int(a))
        best[name] = np.maximum(best[name], q[:, a]) if name in best else q[:, a]
    return {name: float(v.mean()) for name, v in best.items()}


def quality(net: PolicyNet, x: torch.Tensor, mask: np.ndarray, label: np.ndarray, heuristic: np.ndarray,
            scale: float) -> dict[str, float]:  # fmt: skip
    """On held-out decisions: the mean label (points) of the network's best legal action, of the heuristic's
    choice, of the best and of the mean legal action (one deal's outcome each, the same deals for every choice:
    the gaps are what the choice is worth; ``picked_minus_heuristic_ci``: the 95% half-width of that gap)."""
    with torch.no_grad():
        q = net.policy(net.body(x)).numpy() * scale
    legal = mask.astype(bool) & ~np.isnan(label)
    pick = np.where(legal, q, -np.inf).argmax(axis=1)
    lab = np.where(legal, label, np.nan)
    rows = np.arange(len(pick))
    gap = lab[rows, pick] - lab[rows, heuristic]
    return {"picked": float(np.mean(lab[rows, pick])), "heuristic": float(np.mean(lab[rows, heuristic])),
            "picked_minus_heuristic_ci": 1.96 * float(gap.std(ddof=1)) / np.sqrt(len(gap)),
            "oracle": float(np.nanmax(lab, axis=1).mean()),
            "mean_legal": float(np.nanmean(lab, axis=1).mean())}  # fmt: skip


def declarer_sets(net: PolicyNet, x: torch.Tensor, obs: np.ndarray, label: np.ndarray, baseline: dict[str, float],
                  scale: float) -> dict[str, dict[str, float]]:  # fmt: skip
    """Declaration over a declarer's set of 7 deals (R2.1, each contract once), on held-out hands taken 7 at a
    time: the set's total label (points, the same deals for every rule) when the declarer picks by the heuristic
    (``choose_declaration`` among the contracts left), by the network's estimate minus ``baseline`` (the agent's
    rule) and by the network's estimate alone (greedy); mean and 95% half-width per set, and of the gaps to the
    heuristic."""
    from barbu_env.agents.heuristic import choose_declaration
    from barbu_env.engine.deal import Deal
    from barbu_env.evaluation import confidence_interval
    from barbu_env.observation import block

    with torch.no_grad():
        q = net.policy(net.body(x)).numpy() * scale
    names = ["no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps", "fantan"]
    deck = set(range(52))
    totals: dict[str, list[float]] = {"heuristic": [], "learned": [], "greedy": []}
    for start in range(0, len(x) - 6, 7):
        for rule in totals:
            left, total = list(names), 0.0
            for i in range(start, start + 7):
                legal = [a for a in range(DECLARE_BASE, DOUBLE_BASE) if not np.isnan(label[i, a])
                         and declared_contract(a) in left]  # fmt: skip
                if rule == "heuristic":
                    hand = [int(c) for c in np.flatnonzero(block(obs[i], "hand"))]
                    rest = sorted(deck - set(hand))
                    hands = [hand, rest[:13], rest[13:26], rest[26:]]
                    a = choose_declaration(Deal.from_hands(hands, 0, None, available=left), 0)
                else:
                    base = [baseline[declared_contract(a)] if rule == "learned" else 0.0 for a in legal]
                    a = legal[int(np.argmax(q[i, legal] - np.array(base)))]
                total += float(label[i, a])
                left.remove(declared_contract(a))
            totals[rule].append(total)
    h = np.array(totals["heuristic"])
    out = {rule: confidence_interval(v) for rule, v in totals.items()}
    out.update(
        {f"{rule}_minus_heuristic": confidence_interval(np.array(totals[rule]) - h) for rule in ("learned", "greedy")}
    )
    return {k: {"mean": v["mean"], "half_width": v["half_width"], "n": v["n"]} for k, v in out.items()}


def check(cfg: BiddingConfig) -> None:
    """``ValueError`` for a bad ``role`` or ``card_play`` (:func:`card_policy`), naming what is allowed."""
    if cfg.role not in BIDDING_ROLES:
        raise ValueError(f"bad role {cfg.role!r}: expected one of {list(BIDDING_ROLES)}")
    card_policy(cfg.card_play, build_tables(Rules()))


def train(cfg: BiddingConfig, resume: bool = False) -> Path:
    """Label the data, fit the network, write ``out_dir/best.pt`` (lowest held-out loss); returns its path."""
    check(cfg)
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(cfg.threads)
    t0 = time.time()
    data = make_data(cfg, out / "data.npz")
    label_s = time.time() - t0
    blocks = BLOCKS[cfg.role]
    x = torch.from_numpy(np.ascontiguousarray(bidding_input(data["obs"], blocks)))
    y = torch.from_numpy(np.nan_to_num(data["label"] / cfg.scale))
    w = torch.from_numpy((~np.isnan(data["label"])).astype(np.float32))
    n_test = max(1, int(cfg.holdout * len(x)))
    test, tr = slice(0, n_test), slice(n_test, None)
    net = PolicyNet(x.shape[1], NUM_ACTIONS, tuple(cfg.hidden))
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, fused=True)
    state_path = out / "state.pt"
    start, best = 0, float("inf")
    if resume and state_path.is_file():
        st = torch.load(state_path, weights_only=False)
        net.load_state_dict(st["net"])
        opt.load_state_dict(st["opt"])
        start, best = st["epoch"], st["best"]
        torch.set_rng_state(st["torch_rng"])
    logger = Logger(out, fresh=start == 0)
    gen = torch.Generator().manual_seed(cfg.seed)

    def loss_of(sl: slice | torch.Tensor) -> torch.Tensor:
        pred = net.policy(net.body(x[sl]))
        return ((pred - y[sl]) ** 2 * w[sl]).sum() / w[sl].sum()

    for epoch in range(start, cfg.epochs):
        net.train()
        for idx in torch.randperm(len(x) - n_test, generator=gen).split(cfg.minibatch):
            loss = loss_of(idx + n_test)
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            test_loss, train_loss = float(loss_of(test)), float(loss_of(slice(n_test, n_test + 20000)))
        q = quality(net, x[test], data["mask"][test], data["label"][test], data["heuristic"][test], cfg.scale)
        metrics = {"loss/test": test_loss, "loss/train": train_loss, **{f"choice/{k}": v for k, v in q.items()}}
        logger.log(epoch + 1, epoch + 1, time.time() - t0, metrics)
        print(f"epoch {epoch + 1}: " + " ".join(f"{k}={v:.4f}" for k, v in metrics.items()), flush=True)
        meta = {"scale": float(cfg.scale), "epoch": epoch + 1, "test_loss": test_loss, "states": len(x),
                "label_seconds": round(label_s), "holdout": q}  # fmt: skip
        if cfg.role == "declare":
            meta["baseline"] = declaration_baseline(net, x[tr], np.flatnonzero(data["mask"].any(axis=0)), cfg.scale)
        if test_loss < best:
            best = test_loss
            save_bidding(out / "best.pt", net, cfg.role, blocks, dataclasses.asdict(cfg), meta)
        torch.save({"net": net.state_dict(), "opt": opt.state_dict(), "epoch": epoch + 1, "best": best,
                    "torch_rng": torch.get_rng_state()}, state_path)  # fmt: skip
    if cfg.role == "declare":  # the declaration over whole declarer's sets, by the best network
        best_net, ckpt = load_bidding(out / "best.pt", cfg.role)
        sets = declarer_sets(best_net, x[test], data["obs"][test], data["label"][test], ckpt["meta"]["baseline"],
                             cfg.scale)  # fmt: skip
        print("declarer's sets (points per set of 7 deals): " + json.dumps(sets))
        save_bidding(out / "best.pt", best_net, cfg.role, blocks, ckpt["config"], {**ckpt["meta"], "sets": sets})
    logger.tb.close()
    if cfg.export_dir:
        Path(cfg.export_dir).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out / "best.pt", Path(cfg.export_dir) / f"{cfg.role}.pt")
    return out / "best.pt"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=None, help="YAML config (fields of BiddingConfig)")
    ap.add_argument("--set", nargs="*", default=[], metavar="KEY=VALUE", help="override config fields")
    ap.add_argument("--resume", action="store_true", help="continue the run in out_dir (its data and last epoch)")
    args = ap.parse_args(argv)
    try:
        cfg = load_config(BiddingConfig, args.config, args.set)
        check(cfg)
    except (ValueError, TypeError) as e:
        ap.exit(2, f"{ap.prog}: error: {e}\n")
    print(json.dumps(dataclasses.asdict(cfg)))
    print(f"wrote {train(cfg, args.resume)}")


if __name__ == "__main__":
    main()
