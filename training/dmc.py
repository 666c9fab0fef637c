"""Deep Monte-Carlo Q-learning of each contract's card play, with heuristic rollouts (DouZero-style).

    python -m training.dmc --config configs/dmc.yaml                # all seven contracts, 5.5 min
    python -m training.dmc --config configs/full.yaml               # the shipped checkpoints
    python -m training.dmc --config configs/dmc.yaml --resume       # reuse generated data / state

For each contract, one network (:class:`barbu_env.nn.PolicyNet`, its policy head read as Q-values):

1. data: heuristic players play deals of the contract (the declarer's heuristic names the trump
   suit / Fantan rank; random legal doubles with probability ``double_prob`` so the network sees
   varied doubling situations). At sampled decisions, *every* legal action is played out to the end
   of the real deal by heuristic players; the return (own final score incl. doubling settlement,
   divided by |contract total|) is the Monte-Carlo target of Q(observation, action). Generation runs
   in ``workers`` processes;
2. regression: masked MSE on the legal actions, values centred on their mean over the legal
   actions (:func:`dmc_loss`: the deal's luck, shared by all actions, is removed), with a small
   cross-entropy prior towards the heuristic's move. The
   network sees only the observation, so it learns the return expected over the hidden cards
   consistent with it; acting greedily on it is one
   step of policy improvement over the heuristic (a learned, exact-distribution PIMC);
   Each minibatch has its suits relabelled at random (training/augment.py), which multiplies the
   data by the contract's suit symmetries (24, or 6 with hearts fixed);
3. after each epoch, a fixed set of duplicate boards (1 greedy policy vs 3 heuristic, seats rotated,
   doubling off) measures the margin over the heuristic; the best epoch is kept.

Why not PPO (``training/ppo.py``, also here): measured on No queens with the same CPU budget, PPO
after imitation stayed below the heuristic (see the README's training section), while this method
evaluates all actions on the same cards (no credit-assignment noise).

Outputs under ``out_dir/<contract>/``: ``best.pt``, ``data.npz`` + ``state.pt`` (resume),
``metrics.csv``, TensorBoard events in ``tb/``, ``curve.png``; ``export_dir/<contract>.pt`` if set,
then the evaluation table against the random and heuristic agents (``barbu_env.evaluation``).
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from barbu_env.nn import PolicyNet, save_checkpoint
from barbu_env.rules import load_rules

from .augment import action_index, action_map, obs_index, suit_permutations
from .common import SEVEN, CommonConfig, Logger, duplicate_eval, finish_run, run_cli
from .selfplay import rollout_targets


@dataclass
class DMCConfig(CommonConfig):
    """Training settings; every field can be set in the YAML config or with ``--set key=value``."""

    states: int = 40_000
    """Labelled decisions (each with a rollout per legal action) per contract."""
    samples: int = 0
    """Extra deals sampled from each labelled player's information whose rollouts are averaged into
    the targets (0: the real deal only)."""
    label_prob: float = 0.3
    """Probability that a decision of a generated deal is labelled (decorrelates the states)."""
    workers: int = 2
    """Processes generating rollout data."""
    epochs: int = 8
    """Passes over the data."""
    minibatch: int = 512
    """Minibatch size."""
    lr: float = 1e-3
    """Adam learning rate (cosine-decayed to 5% over the epochs)."""
    weight_decay: float = 1e-5
    """Adam weight decay."""
    augment: bool = True
    """Relabel the suits of each minibatch at random (training/augment.py: up to 24x the data)."""
    bc_coef: float = 0.001
    """Weight of the cross-entropy prior towards the heuristic's move (0 = pure Q regression). Keep it
    small: the centred targets spread by ~0.05 (units of the contract total), so a weight of 0.05
    already turns the loss into imitation (measured on Trumps: 97% agreement with the heuristic and no
    held-out gain, against 66% agreement and a clear gain at 0.001 on No hearts)."""
    bc_temp: float = 10.0
    """Inverse temperature turning Q-values into the prior's logits."""
    holdout_states: int = 4_000
    """Rollout-labelled states kept apart (own seed) to measure, after each epoch, the greedy
    policy's gain over the heuristic's move in rollout return (0 = off)."""


def _generate(args: tuple) -> tuple[np.ndarray, ...]:
    return rollout_targets(*args)


CHUNK = 2_000
"""States per generation job; job ``i`` is seeded by (seed, contract, first state index), so data
generated in one go or extended later in several steps is the same."""


def generate(cfg: DMCConfig, contract: str, rules, start: int = 0) -> tuple[np.ndarray, ...]:
    """Rollout-labelled states ``start`` .. ``cfg.states`` in ``cfg.workers`` processes
    (deterministic for a given seed; ``start`` must be a multiple of :data:`CHUNK`)."""
    starts = range(start, cfg.states, CHUNK)
    seeds = [int(np.random.SeedSequence([cfg.seed, SEVEN.index(contract), i]).generate_state(1)[0]) for i in starts]
    jobs = [(contract, rules, min(CHUNK, cfg.states - i), seed, cfg.double_prob, cfg.label_prob, cfg.samples)
            for i, seed in zip(starts, seeds)]  # fmt: skip
    parts = []
    with tqdm(total=cfg.states - start, desc=f"{contract} rollouts", unit="state", leave=False) as bar:
        if cfg.workers > 1:
            with mp.get_context("spawn").Pool(cfg.workers) as pool:
                for part in pool.imap(_generate, jobs):
                    parts.append(part)
                    bar.update(len(part[0]))
        else:
            for job in jobs:
                parts.append(_generate(job))
                bar.update(len(parts[-1][0]))
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))


def holdout_gain(net: PolicyNet, holdout: tuple[np.ndarray, ...]) -> tuple[float, float, float]:
    """On held-out labelled states: mean and 95% half-width of return(greedy action) - return(the
    heuristic's action), in units of the contract total, and how often the two agree. An unbiased,
    paired estimate of the one-step improvement over the heuristic on the heuristic's own states."""
    obs, mask, target, teacher = holdout
    with torch.no_grad():
        q = net.policy(net.trunk(torch.from_numpy(obs).float())).numpy()
    best = np.where(mask.astype(bool), q, -np.inf).argmax(1)
    rows = np.arange(len(q))
    gain = target[rows, best] - target[rows, teacher]
    return float(gain.mean()), float(1.96 * gain.std() / np.sqrt(len(gain))), float(np.mean(best == teacher))


def dmc_loss(net: PolicyNet, obs: torch.Tensor, mask: torch.Tensor, target: torch.Tensor, teacher: torch.Tensor,
             cfg: DMCConfig) -> torch.Tensor:  # fmt: skip
    """MSE between predicted and rollout action values, both centred on their mean over the legal
    actions (what the cards of one deal add to every action alike is noise for choosing among them),
    plus ``bc_coef`` x the cross-entropy of softmax(``bc_temp`` x Q) towards the heuristic's choice:
    a prior that keeps the heuristic's move where the rollouts do not show a better one."""
    q = net.policy(net.trunk(obs))
    n = mask.sum(-1, keepdim=True)
    qc = q - torch.where(mask, q, 0.0).sum(-1, keepdim=True) / n
    tc = target - torch.where(mask, target, 0.0).sum(-1, keepdim=True) / n
    mse = torch.where(mask, (qc - tc) ** 2, 0.0).sum() / mask.sum()
    if cfg.bc_coef == 0:
        return mse
    logits = torch.where(mask, cfg.bc_temp * q, torch.finfo(q.dtype).min)
    return mse + cfg.bc_coef * torch.nn.functional.cross_entropy(logits, teacher)


class Run:
    """Training of one contract: data, regression epochs, model selection, logging, resume."""

    def __init__(self, cfg: DMCConfig, contract: str, resume: bool) -> None:
        self.cfg, self.contract = cfg, contract
        self.rules = load_rules(cfg.rules)
        self.dir = Path(cfg.out_dir) / contract
        self.dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(cfg.seed)
        self.net = PolicyNet(hidden=tuple(cfg.hidden))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        self.epoch, self.best, self.wall = 0, -float("inf"), 0.0
        state = self.dir / "state.pt"
        if resume and state.is_file():
            s = torch.load(state, map_location="cpu", weights_only=False)
            if s.get("contract") != contract or s.get("hidden") != list(cfg.hidden):
                raise ValueError(f"resume state {str(state)!r} belongs to another run (contract/sizes differ)")
            self.net.load_state_dict(s["net"])
            self.opt.load_state_dict(s["opt"])
            self.epoch, self.best, self.wall = s["epoch"], s["best"], s["wall"]
            torch.set_rng_state(s["torch_rng"])
        self.logger = Logger(self.dir, fresh=not resume)

    def recipe(self, *extra: str) -> dict:
        """The settings that decide generated data (stored with it; a mismatch means other data)."""
        return {k: getattr(self.cfg, k) for k in ("seed", "rules", "double_prob", "label_prob", "samples", *extra)}

    def data(self, resume: bool) -> tuple[torch.Tensor, ...]:
        """The rollout data: generated, or on resume read from ``data.npz`` and extended to
        ``cfg.states`` when the config asks for more states than the file holds."""
        cfg, path = self.cfg, self.dir / "data.npz"
        names = ("obs", "mask", "target", "teacher")
        recipe = self.recipe()
        arrays: tuple[np.ndarray, ...] = ()
        if resume and path.is_file():
            z = np.load(path)
            saved = json.loads(str(z["recipe"])) if "recipe" in z else recipe  # files before recipes: trusted
            if saved != recipe:
                raise ValueError(f"{str(path)!r} was generated with {saved}, the config asks for {recipe}; "
                                 "delete it or use another out_dir")  # fmt: skip
            arrays = tuple(z[k][: cfg.states] for k in names)
        have = len(arrays[0]) if arrays else 0
        if have < cfg.states:
            start = have - have % CHUNK
            t0 = time.time()
            new = generate(cfg, self.contract, self.rules, start)
            arrays = tuple(np.concatenate([a[:start], b]) for a, b in zip(arrays, new)) if start else new
            self.wall += time.time() - t0
            np.savez(path, recipe=json.dumps(recipe), **dict(zip(names, arrays)))
            self.log({"data/states": len(arrays[0]), "data/seconds": time.time() - t0})
        return tuple(torch.from_numpy(a) for a in arrays)

    def holdout(self) -> tuple[np.ndarray, ...] | None:
        """``cfg.holdout_states`` labelled states from a seed no training chunk uses (cached in holdout.npz)."""
        cfg, path = self.cfg, self.dir / "holdout.npz"
        if not cfg.holdout_states:
            return None
        recipe = json.dumps(self.recipe("holdout_states"))
        if path.is_file():
            z = np.load(path)
            if str(z["recipe"]) == recipe:
                return tuple(z[k] for k in ("obs", "mask", "target", "teacher"))
        seed = int(np.random.SeedSequence([cfg.seed, SEVEN.index(self.contract), 2**31]).generate_state(1)[0])
        arrays = rollout_targets(self.contract, self.rules, cfg.holdout_states, seed, cfg.double_prob,
                                 cfg.label_prob, cfg.samples)  # fmt: skip
        np.savez(path, recipe=recipe, **dict(zip(("obs", "mask", "target", "teacher"), arrays)))
        return arrays

    def log(self, metrics: dict[str, float]) -> None:
        self.logger.log(self.epoch * self.cfg.states, self.epoch, self.wall, metrics)

    def train(self, resume: bool) -> Path:
        cfg = self.cfg
        obs, mask, target, teacher = self.data(resume)
        holdout = self.holdout()
        n = len(obs)
        per_epoch = (n + cfg.minibatch - 1) // cfg.minibatch
        total, done = max(cfg.epochs * per_epoch, 1), self.epoch * per_epoch  # resume: continue the schedule
        sched = torch.optim.lr_scheduler.LambdaLR(
            self.opt, lambda k: 0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * min((k + done) / total, 1.0)))
        )
        gen = torch.Generator().manual_seed(cfg.seed + self.epoch)
        perms = suit_permutations(self.contract) if cfg.augment else [(0, 1, 2, 3)]
        gathers = [(torch.from_numpy(obs_index(p)), torch.from_numpy(action_index(p)),
                    torch.from_numpy(action_map(p))) for p in perms]  # fmt: skip
        while self.epoch < cfg.epochs:
            t0 = time.time()
            perm = torch.randperm(n, generator=gen)
            losses = []
            self.net.train()
            for i in tqdm(range(0, n, cfg.minibatch), desc=f"{self.contract} epoch {self.epoch + 1}", leave=False):
                j = perm[i : i + cfg.minibatch]
                oi, ai, am = gathers[int(torch.randint(len(gathers), (1,), generator=gen))]
                loss = dmc_loss(self.net, obs[j][:, oi].float(), mask[j][:, ai].bool(), target[j][:, ai],
                                am[teacher[j]], cfg)  # fmt: skip
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                sched.step()
                losses.append(loss.item())
            self.net.eval()
            self.epoch += 1
            self.wall += time.time() - t0
            mean, half, boards = duplicate_eval(self.net, self.contract, self.rules, cfg.eval_boards, cfg.seed + 10_000)
            if mean > self.best:
                self.best = mean
                selection = {"vs": "heuristic", "boards": boards, "margin": mean, "ci95": half}
                meta = {"states": n, "epochs": self.epoch, "wall_s": round(self.wall, 1), "selection_eval": selection}
                save_checkpoint(self.dir / "best.pt", self.net, self.contract, dataclasses.asdict(cfg), meta)
            metrics = {"losses/q_mse": float(np.mean(losses)), "charts/lr": sched.get_last_lr()[0],
                       "eval/margin_vs_heuristic": mean, "eval/ci95": half, "eval/best": self.best}  # fmt: skip
            if holdout is not None:
                gain, gain_half, agree = holdout_gain(self.net, holdout)
                metrics |= {"holdout/gain_vs_heuristic": gain, "holdout/gain_ci95": gain_half,
                            "holdout/agreement": agree}  # fmt: skip
            self.log(metrics)
            torch.save({"contract": self.contract, "hidden": list(cfg.hidden), "net": self.net.state_dict(),
                        "opt": self.opt.state_dict(), "epoch": self.epoch, "best": self.best, "wall": self.wall,
                        "torch_rng": torch.get_rng_state()}, self.dir / "state.pt")  # fmt: skip
        return finish_run(cfg, self.dir, self.contract, self.logger)


def train(cfg: DMCConfig, resume: bool = False) -> dict[str, Path]:
    """Train every contract of ``cfg``; returns the best checkpoint path of each."""
    torch.set_num_threads(cfg.threads)
    out: dict[str, Path] = {}
    for contract in cfg.contracts:
        run = Run(cfg.for_contract(contract), contract, resume)
        out[contract] = run.train(resume)
        print(f"{contract:12s} best duplicate margin vs heuristic during training: {run.best:+.2f} points/deal "
              f"({run.cfg.states} states, {run.wall:.0f} s)")  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> None:
    run_cli("dmc", __doc__, DMCConfig, train, argv, resume_help="reuse out_dir/<contract>/data.npz and state.pt")


if __name__ == "__main__":
    main()
