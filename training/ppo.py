"""Masked PPO self-play for the card play of each contract, after an imitation warm start (CleanRL style).

    python -m training.ppo --config configs/ppo.yaml                # PPO on all seven contracts
    python -m training.ppo --config configs/ppo.yaml --set ppo_decisions=2000000
    python -m training.ppo --config configs/ppo.yaml --resume       # continue an interrupted run
    python -m training.ppo --config configs/ppo_vector.yaml         # PPO self-play on the batched engine

For each contract of the config, one network (:class:`barbu_env.nn.PolicyNet`):

1. imitation: the heuristic agent plays all four seats; the network learns its card choices
   (cross-entropy) and the final deal scores (value regression);
2. PPO: the network plays against a mix of itself, frozen snapshots of itself and the heuristic,
   with invalid actions masked out of the softmax; reward = own deal score / |contract total|
   at the end of the deal (gamma = 1, GAE over each seat's decisions). ``engine: vector`` plays
   these deals on the batched engine (:class:`training.vector_selfplay.VectorSelfPlay`, the heuristic
   seats played by its compiled form);
3. every ``eval_every`` updates, a fixed set of duplicate boards (1 policy vs 3 heuristic, seats
   rotated, doubling off) measures the margin over the heuristic; the best checkpoint is kept.

Outputs under ``out_dir/<contract>/``: ``best.pt`` (the agent checkpoint), ``state.pt`` (resume),
``metrics.csv``, TensorBoard events in ``tb/``, ``curve.png``. With ``export_dir`` set, best.pt is
copied to ``export_dir/<contract>.pt``. After all contracts, the evaluation table against the random
and heuristic agents is printed (``barbu_env.evaluation``).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.distributions import Categorical
from tqdm import tqdm

from barbu_env.nn import PolicyNet, save_checkpoint
from barbu_env.rules import load_rules

from .common import SEVEN, CommonConfig, Logger, duplicate_eval, finish_run, make_policy, run_cli
from .selfplay import HEURISTIC, LEARNER, SNAPSHOT, Batch, SelfPlay
from .vector_selfplay import DECLARE_MODES, VectorSelfPlay

#: Self-play engines of the PPO phase (``TrainConfig.engine``).
ENGINES = ("python", "vector")


@dataclass
class TrainConfig(CommonConfig):
    """Training settings; every field can be set in the YAML config or with ``--set key=value``."""

    num_games: int = 128
    """Deals played concurrently (one batched forward pass per step)."""
    bc_decisions: int = 40_000
    """Heuristic decisions imitated before RL (0 skips imitation)."""
    bc_epochs: int = 4
    """Passes over the imitation data."""
    ppo_decisions: int = 200_000
    """Decisions of the learning policy collected by PPO per contract."""
    rollout_decisions: int = 8_192
    """Decisions per PPO update."""
    update_epochs: int = 3
    """Passes over each rollout."""
    minibatch: int = 1_024
    """Minibatch size of the updates."""
    lr: float = 3e-4
    """Adam learning rate."""
    gae_lambda: float = 0.95
    """GAE lambda (gamma is 1: the reward comes once, at the end of the deal)."""
    clip: float = 0.2
    """PPO clipping range."""
    ent_coef: float = 0.01
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    p_heuristic: float = 0.5
    """Probability that a non-learning seat is the heuristic agent."""
    p_snapshot: float = 0.2
    """Probability that a seat is a frozen snapshot (the remaining seats are the policy itself)."""
    snapshot_every: int = 5
    """Updates between snapshots added to the opponent pool."""
    pool_size: int = 5
    """Snapshots kept in the pool (oldest dropped)."""
    eval_every: int = 5
    """Updates between duplicate evaluations against the heuristic (model selection)."""
    engine: str = "python"
    """Engine of the PPO self-play: ``python`` (``Deal`` objects, every seat role) or ``vector`` (the batched
    ``barbu_env.vector.VectorDeals``: 2-3x the collection rate with the default network, which then dominates;
    heuristic seats play the compiled heuristic). The imitation warm start always uses the python engine
    (heuristic teacher)."""
    declare: str = "heuristic"
    """Who names the trump suit / Fantan rank (R3.2) in PPO deals: ``heuristic`` (from the declarer's hand,
    as at evaluation, not trained) or ``policy`` (the declarer's network, trained; needs engine ``vector``)."""

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"bad engine {self.engine!r}: choose from {list(ENGINES)}")
        if self.declare not in DECLARE_MODES:
            raise ValueError(f"bad declare {self.declare!r}: choose from {list(DECLARE_MODES)}")
        if self.declare == "policy" and self.engine != "vector":
            raise ValueError("declare='policy' needs engine='vector' (the python engine's declarer is the heuristic)")


# ---------------------------------------------------------------------------- policy helpers
def tensors(b: Batch, lam: float = 0.95) -> dict[str, torch.Tensor]:
    """A recorded batch as tensors, with GAE(lambda) advantages and Monte-Carlo returns (gamma = 1)."""
    value = np.asarray(b.value, dtype=np.float32)
    reward = np.asarray(b.reward, dtype=np.float32)
    adv = np.zeros_like(value)
    ret = np.zeros_like(value)
    for traj in b.trajectories:
        next_v, acc, mc = 0.0, 0.0, 0.0
        for i in reversed(traj):
            acc = reward[i] + next_v - value[i] + lam * acc
            adv[i] = acc
            next_v = value[i]
            mc += reward[i]
            ret[i] = mc
    return {
        "obs": torch.from_numpy(np.stack(b.obs)),
        "mask": torch.from_numpy(np.stack(b.mask)),
        "action": torch.as_tensor(b.action),
        "logp": torch.as_tensor(b.logp, dtype=torch.float32),
        "adv": torch.from_numpy(adv),
        "ret": torch.from_numpy(ret),
        "value": torch.from_numpy(value),
    }


# ---------------------------------------------------------------------------- training
class Run:
    """Training of one contract: state, logging, checkpoints, resume."""

    def __init__(self, cfg: TrainConfig, contract: str, resume: bool) -> None:
        self.cfg, self.contract = cfg, contract
        self.rules = load_rules(cfg.rules)
        self.dir = Path(cfg.out_dir) / contract
        self.dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng([cfg.seed, SEVEN.index(contract)])
        self.net = PolicyNet(hidden=tuple(cfg.hidden))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr, eps=1e-5, fused=True)
        self.pool: list[dict[str, torch.Tensor]] = []
        self.decisions = self.updates = 0
        self.bc_done = False
        self.best = -float("inf")
        self.wall = 0.0
        state_path = self.dir / "state.pt"
        if resume and state_path.is_file():
            self._load_state(state_path)
        self.logger = Logger(self.dir, fresh=not resume)

    # -- persistence
    def _load_state(self, path: Path) -> None:
        s = torch.load(path, map_location="cpu", weights_only=False)
        if s.get("contract") != self.contract or s.get("hidden") != list(self.cfg.hidden):
            raise ValueError(f"resume state {str(path)!r} belongs to another run (contract/sizes differ)")
        self.net.load_state_dict(s["net"])
        self.opt.load_state_dict(s["opt"])
        self.pool = s["pool"]
        self.decisions, self.updates, self.bc_done = s["decisions"], s["updates"], s["bc_done"]
        self.best, self.wall = s["best"], s["wall"]
        self.rng.bit_generator.state = s["rng"]
        torch.set_rng_state(s["torch_rng"])

    def save_state(self) -> None:
        torch.save({"contract": self.contract, "hidden": list(self.cfg.hidden), "net": self.net.state_dict(),
                    "opt": self.opt.state_dict(), "pool": self.pool, "decisions": self.decisions,
                    "updates": self.updates, "bc_done": self.bc_done, "best": self.best, "wall": self.wall,
                    "rng": self.rng.bit_generator.state, "torch_rng": torch.get_rng_state()},
                   self.dir / "state.pt")  # fmt: skip

    def log(self, metrics: dict[str, float]) -> None:
        self.logger.log(self.decisions, self.updates, self.wall, metrics)

    # -- phases
    def imitation(self) -> None:
        """Behaviour cloning of the heuristic's card play (and value regression on deal scores)."""
        cfg = self.cfg
        sp = SelfPlay(self.contract, self.rules, cfg.num_games, self.rng, lambda r: [LEARNER] * 4, cfg.double_prob)
        t0 = time.time()
        with tqdm(total=cfg.bc_decisions, desc=f"{self.contract} imitation", unit="dec", leave=False) as bar:
            while sp.batch.complete < cfg.bc_decisions:
                before = sp.batch.complete
                sp.step(None, teacher=True)
                bar.update(sp.batch.complete - before)
        data = tensors(sp.take_batch())
        n = len(data["action"])
        for epoch in range(cfg.bc_epochs):
            perm = torch.randperm(n)
            for i in range(0, n, cfg.minibatch):
                j = perm[i : i + cfg.minibatch]
                logits, value = self.net(data["obs"][j], data["mask"][j])
                ce = torch.nn.functional.cross_entropy(logits, data["action"][j])
                vloss = ((value - data["ret"][j]) ** 2).mean()
                loss = ce + cfg.vf_coef * vloss
                self.opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), cfg.max_grad_norm)
                self.opt.step()
            acc = (logits.argmax(-1) == data["action"][j]).float().mean().item()
            self.log({"imitation/cross_entropy": ce.item(), "imitation/value_loss": vloss.item(),
                      "imitation/accuracy": acc, "imitation/epoch": epoch})  # fmt: skip
        self.wall += time.time() - t0
        self.bc_done = True
        self.log(self.checkpoint_if_best())
        self.save_state()

    def roles(self, rng: np.random.Generator) -> list[int]:
        """Seat roles of a training deal: one learning seat at least; others mixed per the config."""
        cfg = self.cfg
        roles = []
        for _ in range(4):
            u = rng.random()
            if u < cfg.p_heuristic:
                roles.append(HEURISTIC)
            elif u < cfg.p_heuristic + cfg.p_snapshot and self.pool:
                roles.append(SNAPSHOT)
            else:
                roles.append(LEARNER)
        if LEARNER not in roles:
            roles[int(rng.integers(4))] = LEARNER
        return roles

    def ppo(self) -> None:
        cfg = self.cfg
        if cfg.engine == "vector":
            sp: SelfPlay | VectorSelfPlay = VectorSelfPlay(self.contract, self.rules, cfg.num_games, self.rng,
                                                           self.roles, cfg.double_prob, cfg.declare)  # fmt: skip
        else:
            sp = SelfPlay(self.contract, self.rules, cfg.num_games, self.rng, self.roles, cfg.double_prob)
        snap_net = PolicyNet(hidden=tuple(cfg.hidden))
        bar = tqdm(total=cfg.ppo_decisions, initial=min(self.decisions, cfg.ppo_decisions),
                   desc=f"{self.contract} ppo", unit="dec", leave=False)  # fmt: skip
        while self.decisions < cfg.ppo_decisions:
            t0 = time.time()
            if self.pool:
                snap_net.load_state_dict(self.pool[int(self.rng.integers(len(self.pool)))])
            policy, snapshot = make_policy(self.net), make_policy(snap_net)
            sp.results.clear()
            while sp.batch.complete < cfg.rollout_decisions:
                sp.step(policy, snapshot)
            batch = sp.take_batch()
            learner_scores = [sc[r.index(LEARNER)] for _, r, sc in sp.results if LEARNER in r]
            stats = self.update(tensors(batch, cfg.gae_lambda))
            steps = len(batch)
            self.decisions += steps
            self.updates += 1
            self.wall += time.time() - t0
            bar.update(steps)
            row = {**stats, "charts/points_per_deal": float(np.mean(learner_scores)) if learner_scores else 0.0,
                   "charts/steps_per_s": steps / max(time.time() - t0, 1e-9)}  # fmt: skip
            if self.updates % cfg.snapshot_every == 0:
                self.pool = ([*self.pool, {k: v.clone() for k, v in self.net.state_dict().items()}])[-cfg.pool_size :]
            if self.updates % cfg.eval_every == 0 or self.decisions >= cfg.ppo_decisions:
                row.update(self.checkpoint_if_best())
                self.save_state()
            self.log(row)
        bar.close()

    def update(self, d: dict[str, torch.Tensor]) -> dict[str, float]:
        """PPO-clip update over one rollout; returns the namespaced losses."""
        cfg = self.cfg
        n = len(d["action"])
        stats: dict[str, list[float]] = {}
        for _ in range(cfg.update_epochs):
            perm = torch.randperm(n)
            for i in range(0, n, cfg.minibatch):
                j = perm[i : i + cfg.minibatch]
                logits, value = self.net(d["obs"][j], d["mask"][j])
                dist = Categorical(logits=logits)
                logp = dist.log_prob(d["action"][j])
                ratio = (logp - d["logp"][j]).exp()
                adv = d["adv"][j]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                pg = torch.max(-adv * ratio, -adv * ratio.clamp(1 - cfg.clip, 1 + cfg.clip)).mean()
                vloss = 0.5 * ((value - d["ret"][j]) ** 2).mean()
                ent = _masked_entropy(logits, d["mask"][j])
                loss = pg + cfg.vf_coef * vloss - cfg.ent_coef * ent
                self.opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), cfg.max_grad_norm)
                self.opt.step()
                for k, v in (("losses/policy", pg), ("losses/value", vloss), ("losses/entropy", ent),
                             ("losses/approx_kl", ((ratio - 1) - (logp - d["logp"][j])).mean())):  # fmt: skip
                    stats.setdefault(k, []).append(float(v.detach()))
        return {k: float(np.mean(v)) for k, v in stats.items()}

    def checkpoint_if_best(self) -> dict[str, float]:
        """Evaluate on the fixed duplicate boards; keep the checkpoint if it is the best so far."""
        cfg = self.cfg
        mean, half, boards = duplicate_eval(self.net, self.contract, self.rules, cfg.eval_boards, cfg.seed + 10_000)
        if mean > self.best:
            self.best = mean
            meta = {"decisions": self.decisions, "updates": self.updates, "wall_s": round(self.wall, 1),
                    "selection_eval": {"vs": "heuristic", "boards": boards, "margin": mean, "ci95": half}}  # fmt: skip
            save_checkpoint(self.dir / "best.pt", self.net, self.contract, dataclasses.asdict(cfg), meta)
        return {"eval/margin_vs_heuristic": mean, "eval/ci95": half, "eval/best": self.best}

    def finish(self) -> Path:
        return finish_run(self.cfg, self.dir, self.contract, self.logger)


def _masked_entropy(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    p = torch.softmax(logits, -1)
    logp = torch.log_softmax(logits, -1)
    return -(torch.where(mask.bool(), p * logp, 0.0)).sum(-1).mean()


def train(cfg: TrainConfig, resume: bool = False) -> dict[str, Path]:
    """Train every contract of ``cfg``; returns the best checkpoint path of each."""
    torch.set_num_threads(cfg.threads)
    out: dict[str, Path] = {}
    for contract in cfg.contracts:
        run = Run(cfg.for_contract(contract), contract, resume)
        if cfg.bc_decisions and not run.bc_done:
            run.imitation()
        run.ppo()
        out[contract] = run.finish()
        print(f"{contract:12s} best duplicate margin vs heuristic during training: {run.best:+.2f} points/deal "
              f"({run.decisions} decisions, {run.wall:.0f} s)")  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> None:
    run_cli("ppo", __doc__, TrainConfig, train, argv, resume_help="continue from out_dir/<contract>/state.pt")


if __name__ == "__main__":
    main()
