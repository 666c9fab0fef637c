"""Deep Monte-Carlo self-play (DouZero-style) of each contract's card play on the batched engine.

    python -m training.dmc_selfplay --config configs/dmc_selfplay.yaml            # all seven contracts
    python -m training.dmc_selfplay --config configs/dmc_selfplay.yaml --resume   # continue an interrupted run

The measured alternative to ``training/rollout_q.py`` (what ``make train`` runs; docs/TRAINING.md compares them).

For each contract, one network (:class:`barbu_env.nn.PolicyNet`, its policy head read as Q-values over the
87 actions, illegal ones masked; the neural agent's greedy move is the argmax):

1. warm start: the compiled heuristic (``VectorDeals.heuristic_actions``) plays all four seats of
   ``num_games`` concurrent deals; the network fits Q(observation, heuristic's move) to the acting seat's
   final deal score / |contract total| (MSE) plus ``bc_coef`` x the cross-entropy of softmax(``bc_temp`` x
   logits) over the legal actions towards the heuristic's move, so that its greedy play starts near the
   heuristic's (``init`` starts from a checkpoint instead);
2. self-play: ``num_games`` deals stepped at once on :class:`barbu_env.vector.VectorDeals`; each seat of
   each deal is, per deal, the learner (greedy on Q, a uniformly random legal move with probability
   ``epsilon``; its decisions are recorded), a frozen snapshot of it, or the compiled heuristic. All
   learner (and snapshot) seats of a step share one batched forward pass. When a deal ends, each learner
   decision of it gets the acting seat's final score / |contract total| as its target (Monte-Carlo, no
   bootstrapping); every ``rollout`` recorded decisions, the network is fit by MSE on Q(s, a taken), with
   Q(s, a) = V(s) + logit(s, a) (``baseline``: the value head, fit to the same returns, held fixed in Q's loss,
   so the logits learn the return relative to the state's value), plus ``prior_coef`` x the warm start's
   cross-entropy towards the heuristic's move in those states, one pass, with a random suit permutation per
   minibatch (training/augment.py: an exact symmetry of the deal);
3. every ``eval_every`` decisions, barbu-eval's duplicate boards (``barbu_env.evaluation.deal_board``, seed
   ``seed + 10000``) played on the batched engine, 1 greedy policy vs 3 compiled heuristic, seats rotated,
   doubling off (the numbers of ``barbu-eval --agents <policy> heuristic``), measure the margin over the
   heuristic; the best network is kept (``best.pt``) and the resume state saved.

Why Deep Monte-Carlo rather than PPO (``training/ppo.py``): PPO self-play on the batched engine ended about
0.3 points per deal behind the heuristic after 2.5M decisions; DMC's targets need no critic or advantage
estimate, every learner decision is trained once, and the greedy argmax on Q is what the neural agent plays.

Declarations (R3.2) are the heuristic's; doubling decisions (R6) are the heuristic's, or with probability
``double_prob`` a uniformly random legal double (varied doubling situations); neither is recorded.

Outputs under ``out_dir/<contract>/``: ``best.pt`` (the agent checkpoint: its config, sizes and env version),
``state.pt`` (resume), ``metrics.csv``, TensorBoard events in ``tb/``, ``curve.png``; ``export_dir/<contract>.pt``
if set, then the evaluation table against the random and heuristic agents (``barbu_env.evaluation``).
"""

from __future__ import annotations

import copy
import dataclasses
import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

# numba's OpenMP pool busy-waits beside torch's OpenMP runtime; the workqueue layer does not (set before numba loads)
os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")

from barbu_env.actions import DECLARE_BASE, DOUBLE_BASE
from barbu_env.contracts import contract_scale
from barbu_env.nn import PolicyNet, save_checkpoint
from barbu_env.observation import BLOCKS
from barbu_env.rules import Rules, load_rules
from barbu_env.vector.encode import unpack_observations

from .common import (
    SEVEN,
    CommonConfig,
    Logger,
    finish_run,
    init_weights,
    load_resume,
    run_cli,
    save_resume,
    suit_gathers,
)
from .selfplay import HEURISTIC, LEARNER, SNAPSHOT, draw_roles


@dataclass
class SelfPlayConfig(CommonConfig):
    """Training settings; every field can be set in the YAML config or with ``--set key=value``."""

    num_games: int = 1024
    """Deals stepped concurrently (one batched forward pass per role and step)."""
    bc_decisions: int = 300_000
    """Heuristic decisions (all four seats) of the imitation warm start (0 skips it)."""
    bc_epochs: int = 2
    """Passes over the imitation data."""
    bc_coef: float = 1.0
    """Weight of the cross-entropy towards the heuristic's move in the warm start."""
    bc_temp: float = 30.0
    """Inverse temperature turning Q-values into the warm start's logits: the warm start leaves the heuristic's
    move about 3-5 / ``bc_temp`` (units of the contract total) above the others, the margin self-play must
    overcome to change it."""
    bc_lr: float = 1e-3
    """Adam learning rate of the warm start."""
    init: str = ""
    """If set, a checkpoint file, or a folder holding ``<contract>.pt``, whose weights start the network instead of
    the imitation warm start (of the same sizes, or narrower: ``training.common.init_weights`` widens them)."""
    decisions: int = 2_000_000
    """Learner decisions trained by self-play per contract."""
    rollout: int = 16_384
    """Recorded learner decisions (of finished deals) per update."""
    update_epochs: int = 1
    """Passes over each rollout."""
    minibatch: int = 1_024
    """Minibatch size."""
    lr: float = 3e-4
    """Adam learning rate."""
    epsilon: float = 0.03
    """Probability that a learner decision is a uniformly random legal move (exploration)."""
    prior_coef: float = 0.1
    """Weight, in self-play updates, of the cross-entropy of softmax(``bc_temp`` x Q) towards the compiled
    heuristic's move in the learner's own states: a prior that keeps actions the learner has not tried below
    the heuristic's (without it, Q-values of untried actions drift up and greedy play falls behind for a while,
    measured on Trumps), while Monte-Carlo returns move the actions it did try (0 = pure Q regression)."""
    p_heuristic: float = 0.6
    """Probability that a seat of a self-play deal is the compiled heuristic."""
    p_snapshot: float = 0.1
    """Probability that a seat is a frozen snapshot of the learner (once the pool has one); the other seats
    are the learner (one seat at least)."""
    snapshot_every: int = 250_000
    """Learner decisions between snapshots added to the pool."""
    pool_size: int = 5
    """Snapshots kept in the pool (oldest dropped); one is drawn per update round."""
    augment: bool = True
    """Relabel the suits of each minibatch at random (an exact symmetry: 24 relabellings, 6 with hearts fixed)."""
    eval_every: int = 250_000
    """Learner decisions between duplicate evaluations against the heuristic (model selection, resume state)."""
    baseline: bool = True
    """Q(s, a) = V(s) + logit(s, a): the value head, fit to the returns, is a baseline held fixed in the Q loss,
    so the logits (what the agent plays) learn the return relative to the state's value (less variance); the
    greedy move is the same argmax of the logits."""
    value_warmup: int = 0
    """With ``baseline`` and ``init``: learner decisions at the start of self-play that train the value head
    alone (the logits of an initial checkpoint stay as they are until V is fit)."""
    bc_eval: bool = True
    """Also evaluate (and possibly keep) the network right after the warm start."""
    overlap: bool = True
    """Fit each rollout on a second thread while the next one is played (both cores busy): the acting network is
    then one update round behind the learner's. False plays and fits in turn on one thread."""
    doubling: str = "off"
    """Doubling rule (R6.7) of the training deals: ``off`` (targets without the doubling settlement's noise,
    as the evaluation plays), or ``classic`` / ``declarer_only`` (doubles by the heuristic, random with
    probability ``double_prob``). Evaluation deals are always played without doubling."""


#: Contracts whose trump suit / start rank the declarer names (R3.2).
FAMILIES = ("trumps", "fantan")


@torch.no_grad()
def greedy(net: PolicyNet, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The legal action of highest Q per row (the neural agent's greedy move)."""
    logits, _ = net(torch.from_numpy(obs), torch.from_numpy(mask))
    return logits.argmax(-1).numpy()


def eval_rules(rules: Rules) -> Rules:
    """The rules of evaluation deals: no doubling (R6 off), undoubled negative contracts played."""
    return rules.replace(doubling="off", undoubled_negative="play")


def fixed_contract_patch(contract: str, rules: Rules) -> tuple[np.ndarray, np.ndarray] | None:
    """For the contracts whose parameter the declarer names (Trumps, Fantan: R3.2), ``(byte mask, bits)`` over
    packed observations: the ``available`` block of a deal played with its contract fixed. Training deals go
    through the heuristic's declaration (its choice of suit / rank for the hand); evaluation deals (barbu-eval)
    have that choice fixed as the contract, and the two observations differ in that block only (tested).
    ``None`` for the other contracts."""
    if contract not in FAMILIES:
        return None
    from barbu_env.vector import VectorDeals

    probe = VectorDeals(contract + (":S" if contract == "trumps" else ":7"), rules, batch=1, seed=0)
    probe.reset()
    bits = probe.observe_packed()[0][0]
    off, size = BLOCKS["available"]
    entries = np.zeros(bits.shape[0] * 8, np.uint8)
    entries[off : off + size] = 1
    m = np.packbits(entries, bitorder="little")
    return m, bits & m


def apply_patch(bits: np.ndarray, rows: np.ndarray, patch: tuple[np.ndarray, np.ndarray] | None) -> None:
    """Give packed observations ``bits[rows]`` the fixed-contract ``available`` block (in place)."""
    if patch is not None and rows.any():
        m, value = patch
        bits[rows] = (bits[rows] & ~m) | value


# ---------------------------------------------------------------------------- batched self-play
class Collector:
    """``num_games`` deals of one contract stepped at once, seats played by role; records learner decisions.

    A recorded decision is keyed by ``game + B * deal_no[game]``; when that deal ends its target (the seat's
    score / scale) is known, and :meth:`take` hands out every recorded decision whose deal has ended."""

    def __init__(self, contract: str, rules: Rules, num_games: int, rng: np.random.Generator,
                 p_heuristic: float, p_snapshot: float, double_prob: float) -> None:  # fmt: skip
        from barbu_env.vector import VectorDeals, random_actions

        self.random_actions = random_actions
        self.rng, self.B = rng, num_games
        self.p_heuristic, self.p_snapshot, self.double_prob = p_heuristic, p_snapshot, double_prob
        self.scale = contract_scale(contract, rules)
        self.env = VectorDeals(contract, rules, batch=num_games, seed=int(rng.integers(2**63)))
        self.patch = fixed_contract_patch(contract, rules)
        self.env.reset()
        self.deal_no = np.zeros(num_games, np.int64)
        self.roles = np.zeros((num_games, 4), np.int64)
        self.snapshots_on = False
        self._draw_roles(np.arange(num_games))
        self.pending: list[tuple[np.ndarray, ...]] = []  # (bits, numeric, mask, action, key, seat, teacher)
        self.ended_keys: list[np.ndarray] = []
        self.ended_scores: list[np.ndarray] = []
        self.learner_scores: list[float] = []
        self.decisions = 0  # decisions of every seat taken so far
        self.open = np.zeros(num_games, np.int64)  # decisions recorded in each game's running deal
        self.complete = 0  # recorded decisions of ended deals (what :meth:`take` hands out)

    def _draw_roles(self, games: np.ndarray) -> None:
        p_snap = self.p_snapshot if self.snapshots_on else 0.0  # the imitation phase (p_heuristic 1): no learner
        self.roles[games] = draw_roles(self.rng, games.shape[0], self.p_heuristic, p_snap, self.p_heuristic < 1)

    def all_heuristic(self) -> None:
        """Every seat of every deal (now and after) is the heuristic, whose decisions are recorded (warm start)."""
        self.p_heuristic, self.p_snapshot = 1.0, 0.0
        self.roles[:] = HEURISTIC

    def step(self, net: PolicyNet | None, snapshot: PolicyNet | None, epsilon: float, record_heuristic: bool) -> None:
        """One decision in every game; learner rows are recorded (heuristic rows too if ``record_heuristic``)."""
        env = self.env
        bits, numeric, mask, seat = env.observe_packed()  # observations packed: 207 bytes a row to keep
        B = self.B
        role = self.roles[np.arange(B), seat]
        actions = np.zeros(B, np.int64)
        other = mask[:, DECLARE_BASE:].any(1)  # declarations and doubles: the heuristic's (or random doubles)
        apply_patch(bits, ~other, self.patch)
        use_heur = other | (role == HEURISTIC)
        need_teacher = use_heur | (role == LEARNER)  # the heuristic's move: the prior of the learner's updates
        teacher = env.heuristic_actions(need_teacher)
        actions[use_heur] = teacher[use_heur]
        rand_double = mask[:, DOUBLE_BASE:].any(1) & (self.rng.random(B) < self.double_prob)
        if rand_double.any():
            actions[rand_double] = self.random_actions(mask[rand_double], self.rng)
        for r, model in ((LEARNER, net), (SNAPSHOT, snapshot)):
            idx = np.flatnonzero((role == r) & ~other)
            if idx.size and model is not None:
                a = greedy(model, unpack_observations(bits[idx], numeric[idx]), mask[idx])
                if r == LEARNER and epsilon > 0:
                    explore = self.rng.random(idx.size) < epsilon
                    if explore.any():
                        a[explore] = self.random_actions(mask[idx[explore]], self.rng)
                actions[idx] = a
        rec = ((role == LEARNER) | ((role == HEURISTIC) & record_heuristic)) & ~other
        rec &= mask.sum(1) > 1  # forced moves teach nothing
        idx = np.flatnonzero(rec)
        if idx.size:
            key = idx + B * self.deal_no[idx]
            self.pending.append((bits[idx], numeric[idx], mask[idx], actions[idx], key, seat[idx], teacher[idx]))
            self.open[idx] += 1
        self.decisions += B
        rewards, done = env.step(actions)
        ended = np.flatnonzero(done)
        if ended.size:
            self.ended_keys.append(ended + B * self.deal_no[ended])
            self.ended_scores.append(rewards[ended].astype(np.float32))
            learner = self.roles[ended] == LEARNER
            self.learner_scores.extend(rewards[ended][learner].tolist())
            self.deal_no[ended] += 1
            self.complete += int(self.open[ended].sum())
            self.open[ended] = 0
            self._draw_roles(ended)

    def take(self) -> dict[str, np.ndarray]:
        """The recorded decisions whose deal has ended: packed observation (bits, numeric), mask, action,
        target (score / scale), the compiled heuristic's move in that state (the warm start's label, the
        self-play prior), game key and seat; the others stay pending."""
        names = ("bits", "numeric", "mask", "action", "key", "seat", "teacher")
        if not self.pending:
            return {k: np.zeros(0) for k in names}
        cols = dict(zip(names, (np.concatenate(x) for x in zip(*self.pending))))
        key, seat = cols["key"], cols["seat"]
        ended = np.concatenate(self.ended_keys) if self.ended_keys else np.zeros(0, np.int64)
        scores = np.concatenate(self.ended_scores) if self.ended_scores else np.zeros((0, 4), np.float32)
        order = np.argsort(ended)
        ended, scores = ended[order], scores[order]
        pos = np.searchsorted(ended, key)
        hit = pos < ended.shape[0]
        hit[hit] = ended[pos[hit]] == key[hit]
        keep = ~hit
        self.pending = [tuple(cols[k][keep] for k in names)] if keep.any() else []
        self.ended_keys, self.ended_scores = [], []  # a deal's decisions all end with it: every ended key is used
        self.complete = 0
        out = {k: cols[k][hit] for k in ("bits", "numeric", "mask", "action", "teacher", "key", "seat")}
        out["target"] = (scores[pos[hit], seat[hit]] / self.scale).astype(np.float32)
        return out


# ---------------------------------------------------------------------------- evaluation on the batched engine
def duplicate_boards(contract: str, rules: Rules, boards: int, seed: int) -> tuple[list, np.ndarray, list[str]]:
    """The boards ``barbu-eval --seed seed`` plays (``barbu_env.evaluation.deal_board``: the declarer is seat
    ``board % 4``; Trumps / Fantan fixed to the heuristic's choice for the declarer's hand), each queued 4 times,
    the learner in seat ``k % 4`` of queue entry ``k``: ``(hands, declarers, contract texts)``."""
    from barbu_env.evaluation import deal_board

    dealt = [deal_board(seed, b, contract, rules) for b in range(boards)]
    hands = [h for h, _, _ in dealt for _ in range(4)]
    return hands, np.repeat([d for _, d, _ in dealt], 4), [t for _, _, t in dealt for _ in range(4)]


@torch.no_grad()
def vector_margin(net: PolicyNet, contract: str, rules: Rules, boards: int, seed: int) -> tuple[float, float, int]:
    """``barbu-eval --agents <net> heuristic --lineup 1v3 --doubling off --seed seed`` on the batched engine:
    mean over boards of (greedy policy's score - table mean), its 95% half-width (normal), boards. Raw points.
    All ``4 * boards`` games run at once (each game's contract is its board's)."""
    from barbu_env.vector import VectorDeals

    r = eval_rules(rules)
    hands, declarer, texts = duplicate_boards(contract, r, boards, seed)
    env = VectorDeals(texts, r, batch=len(hands), boards=(hands, declarer), auto_reset=False)
    env.reset()
    learner_seat = np.arange(len(hands)) % 4
    rel = np.zeros(len(hands))
    while True:
        obs, mask, seat = env.observe()
        live = seat >= 0
        if not live.any():
            break
        learner = live & (seat == learner_seat) & ~mask[:, DECLARE_BASE:].any(1)
        actions = env.heuristic_actions(live & ~learner)
        idx = np.flatnonzero(learner)
        if idx.size:
            actions[idx] = greedy(net, obs[idx], mask[idx])
        rewards, done = env.step(np.maximum(actions, 0))
        g = np.flatnonzero(done)
        rel[g] = rewards[g, learner_seat[g]] - rewards[g].mean(1)
    x = rel.reshape(boards, 4).mean(1)
    return float(x.mean()), float(1.96 * x.std(ddof=1) / np.sqrt(boards)), boards


# ---------------------------------------------------------------------------- training
class Run:
    """Training of one contract: warm start, self-play, model selection, logging, resume."""

    def __init__(self, cfg: SelfPlayConfig, contract: str, resume: bool) -> None:
        self.cfg, self.contract = cfg, contract
        self.rules = load_rules(cfg.rules)
        off = cfg.doubling == "off"
        self.train_rules = eval_rules(self.rules) if off else self.rules.replace(doubling=cfg.doubling)
        self.dir = Path(cfg.out_dir) / contract
        self.dir.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(cfg.seed)
        self.rng = np.random.default_rng([cfg.seed, SEVEN.index(contract)])
        self.net = PolicyNet(hidden=tuple(cfg.hidden))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=cfg.lr, fused=True)
        self.pool: list[dict[str, torch.Tensor]] = []
        self.decisions = self.updates = 0
        self.bc_done = False
        self.best, self.wall = -float("inf"), 0.0
        self.booked = time.time()  # when the last update round was booked (its rates count from there)
        self.next_eval, self.next_snapshot = cfg.eval_every, cfg.snapshot_every
        self.gathers = suit_gathers(contract, cfg.augment)
        state = self.dir / "state.pt"
        if resume and state.is_file():
            self._load_state(state)
        self.logger = Logger(self.dir, fresh=not (resume and state.is_file()))

    # -- persistence
    _KEYS = ("decisions", "updates", "bc_done", "best", "wall", "next_eval", "next_snapshot", "pool")

    def _load_state(self, path: Path) -> None:
        s = load_resume(path, self.contract, self.net, self.opt, self.rng)
        for k in self._KEYS:
            setattr(self, k, s[k])

    def save_state(self) -> None:
        save_resume(self.dir, self.contract, self.net, self.opt, self.rng, {k: getattr(self, k) for k in self._KEYS})

    def log(self, metrics: dict[str, float]) -> None:
        self.logger.log(self.decisions, self.updates, self.wall, metrics)

    def collector(self, heuristic_only: bool = False) -> Collector:
        cfg = self.cfg
        c = Collector(self.contract, self.train_rules, cfg.num_games, self.rng, cfg.p_heuristic, cfg.p_snapshot,
                      cfg.double_prob)  # fmt: skip
        if heuristic_only:
            c.all_heuristic()
        return c

    # -- learning
    def fit(self, data: dict[str, np.ndarray], epochs: int, bc_coef: float, lr: float,
            value_only: bool = False) -> dict[str, float]:  # fmt: skip
        """Minibatch MSE of Q(s, a) to the targets (+ ``bc_coef`` x cross-entropy of softmax(``bc_temp`` x logits)
        over the legal actions towards the teacher's move), a random suit relabelling per minibatch. With
        ``cfg.baseline`` Q(s, a) = V(s) + logit(s, a), V (the value head) fit to the targets and held fixed in
        Q's loss; ``value_only`` trains V's own layer alone (the trunk and the logits stay as they are)."""
        cfg = self.cfg
        action, target = torch.from_numpy(data["action"]), torch.from_numpy(data["target"])
        teacher, mask = torch.from_numpy(data["teacher"]), torch.from_numpy(data["mask"])
        n = action.shape[0]
        for group in self.opt.param_groups:
            group["lr"] = lr
        stats: dict[str, list[float]] = {}
        self.net.train()
        for _ in range(epochs):
            perm = torch.randperm(n)
            for i in range(0, n, cfg.minibatch):
                j = perm[i : i + cfg.minibatch]
                oi, ai, am = self.gathers[int(torch.randint(len(self.gathers), (1,)))]
                jn = j.numpy()
                obs = torch.from_numpy(unpack_observations(data["bits"][jn], data["numeric"][jn]))
                z = self.net.body(obs, oi)
                logits = self.net.policy(z)
                a, t = am[action[j]], target[j]
                loss = torch.zeros(())
                q = logits
                if cfg.baseline:
                    v = self.net.value(z.detach() if value_only else z).squeeze(-1)
                    vloss = ((v - t) ** 2).mean()
                    loss = loss + vloss
                    q = logits + v.detach()[:, None]
                    stats.setdefault("losses/value_mse", []).append(vloss.item())
                if not value_only:
                    mse = ((q.gather(1, a[:, None]).squeeze(1) - t) ** 2).mean()
                    loss = loss + mse
                    stats.setdefault("losses/q_mse", []).append(mse.item())
                    if bc_coef:
                        legal = torch.where(mask[j][:, ai].bool(), cfg.bc_temp * logits, -1e9)
                        ce = torch.nn.functional.cross_entropy(legal, am[teacher[j]])
                        loss = loss + bc_coef * ce
                        stats.setdefault("losses/cross_entropy", []).append(ce.item())
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()
                self.updates += 1
        self.net.eval()
        return {k: float(np.mean(v)) for k, v in stats.items()}

    def imitation(self) -> None:
        """Warm start: Q-regression on heuristic self-play with a cross-entropy pull towards its moves."""
        cfg = self.cfg
        t0 = time.time()
        col = self.collector(heuristic_only=True)
        with tqdm(total=cfg.bc_decisions, desc=f"{self.contract} imitation data", unit="dec", leave=False) as bar:
            got: list[dict[str, np.ndarray]] = []
            have = 0
            while have < cfg.bc_decisions:
                for _ in range(64):
                    col.step(None, None, 0.0, record_heuristic=True)
                part = col.take()
                got.append(part)
                have += part["action"].shape[0]
                bar.update(part["action"].shape[0])
        data = {k: np.concatenate([g[k] for g in got])[: cfg.bc_decisions] for k in got[0]}
        stats = self.fit(data, cfg.bc_epochs, cfg.bc_coef, cfg.bc_lr)
        with torch.no_grad():
            n = min(20_000, data["action"].shape[0])
            obs = unpack_observations(data["bits"][:n], data["numeric"][:n])
            agree = float((greedy(self.net, obs, data["mask"][:n]) == data["teacher"][:n]).mean())
        self.wall += time.time() - t0
        self.bc_done = True
        self.log({"imitation/" + k.split("/")[1]: v for k, v in stats.items()} | {"imitation/agreement": agree})
        if cfg.bc_eval:
            self.evaluate()
        self.save_state()

    def initialise(self, path: str) -> None:
        """Start from the weights of a checkpoint (``path``: the file, or a folder with ``<contract>.pt``)."""
        init_weights(self.net, path, self.contract)
        self.bc_done = True
        self.log({"init/from_checkpoint": 1.0})
        if self.cfg.bc_eval:
            self.evaluate()
        self.save_state()

    def evaluate(self) -> dict[str, float]:
        """Duplicate margin over the heuristic on the selection boards; keep the best network."""
        cfg = self.cfg
        mean, half, boards = vector_margin(self.net, self.contract, self.rules, cfg.eval_boards, cfg.seed + 10_000)
        if mean > self.best:
            self.best = mean
            meta = {"decisions": self.decisions, "updates": self.updates, "wall_s": round(self.wall, 1),
                    "selection_eval": {"vs": "heuristic", "boards": boards, "margin": mean, "ci95": half}}  # fmt: skip
            save_checkpoint(self.dir / "best.pt", self.net, self.contract, dataclasses.asdict(self.cfg), meta)
        row = {"eval/margin_vs_heuristic": mean, "eval/ci95": half, "eval/best": self.best}
        self.log(row)
        return row

    def selfplay(self, seconds: float | None = None) -> tuple[int, int, float]:
        """Self-play and updates until ``cfg.decisions`` learner decisions are trained (or, if given, ``seconds``
        have passed: the benchmark). Returns (learner decisions trained, decisions of every seat, seconds).
        With ``cfg.overlap`` a rollout is fit on a second thread while the next is played by a copy of the
        network taken before that fit (results do not depend on the threads' timing)."""
        cfg = self.cfg
        start, trained = time.perf_counter(), 0
        col = self.collector()
        col.snapshots_on = bool(self.pool)
        snap = PolicyNet(hidden=tuple(cfg.hidden)).eval()
        actor = copy.deepcopy(self.net).eval() if cfg.overlap else self.net
        bar = tqdm(total=cfg.decisions, initial=min(self.decisions, cfg.decisions), desc=f"{self.contract} self-play",
                   unit="dec", leave=False)  # fmt: skip
        fitting: tuple[Future[dict[str, float]], int, int] | None = None  # (fit, its decisions, every seat's)
        self.booked = time.time()
        with ThreadPoolExecutor(1, thread_name_prefix="fit") as pool:
            while self.decisions + (fitting[1] if fitting else 0) < cfg.decisions and (
                    seconds is None or time.perf_counter() - start < seconds):  # fmt: skip
                if self.pool:
                    snap.load_state_dict(self.pool[int(self.rng.integers(len(self.pool)))])
                played0 = col.decisions
                while col.complete < cfg.rollout:
                    col.step(actor, snap if self.pool else None, cfg.epsilon, record_heuristic=False)
                data = col.take()
                n = data["action"].shape[0]
                if fitting is not None:
                    self._fitted(col, bar, fitting[0].result(), *fitting[1:])
                    fitting = None
                if not n:
                    continue
                trained += n
                warm = cfg.baseline and self.decisions < cfg.value_warmup
                args = (data, cfg.update_epochs, cfg.prior_coef, cfg.lr, warm)
                if cfg.overlap:
                    actor.load_state_dict(self.net.state_dict())
                    fitting = (pool.submit(self.fit, *args), n, col.decisions - played0)
                else:
                    self._fitted(col, bar, self.fit(*args), n, col.decisions - played0)
            if fitting is not None:
                self._fitted(col, bar, fitting[0].result(), *fitting[1:])
        bar.close()
        return trained, col.decisions, time.perf_counter() - start

    def _fitted(self, col: Collector, bar: tqdm, stats: dict[str, float], n: int, played: int) -> None:
        """Book a finished update round of ``n`` learner decisions (``played``: every seat's; ``stats``: the fit's
        losses): counters, log row (rates over the time since the previous round was booked), snapshot pool,
        evaluation and resume state."""
        cfg = self.cfg
        self.decisions += n
        now = time.time()
        dt, self.booked = now - self.booked, now
        self.wall += dt
        bar.update(n)
        row = stats | {"charts/decisions_per_s": n / max(dt, 1e-9),
                       "charts/all_seat_decisions_per_s": played / max(dt, 1e-9)}  # fmt: skip
        if col.learner_scores:
            row["charts/points_per_deal"] = float(np.mean(col.learner_scores))
            col.learner_scores.clear()
        self.log(row)
        if self.decisions >= self.next_snapshot:
            self.pool = [*self.pool, {k: v.clone() for k, v in self.net.state_dict().items()}][-cfg.pool_size :]
            col.snapshots_on = True
            self.next_snapshot += cfg.snapshot_every
        if self.decisions >= self.next_eval or self.decisions >= cfg.decisions:
            self.evaluate()
            self.next_eval += cfg.eval_every
            self.save_state()
            self.booked = time.time()  # evaluation time is not training time

    def finish(self) -> Path:
        return finish_run(self.cfg, self.dir, self.contract, self.logger)


def train(cfg: SelfPlayConfig, resume: bool = False) -> dict[str, Path]:
    """Train every contract of ``cfg``; returns the best checkpoint path of each."""
    torch.set_num_threads(cfg.threads)
    out: dict[str, Path] = {}
    for contract in cfg.contracts:
        run = Run(cfg.for_contract(contract), contract, resume)
        if run.cfg.init and not run.bc_done:
            run.initialise(run.cfg.init)
        elif run.cfg.bc_decisions and not run.bc_done:
            run.imitation()
        run.selfplay()
        out[contract] = run.finish()
        print(f"{contract:12s} best duplicate margin vs heuristic during training: {run.best:+.2f} points/deal "
              f"({run.decisions} self-play decisions, {run.wall:.0f} s)")  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> None:
    resume = "continue from out_dir/<contract>/state.pt"
    run_cli("dmc_selfplay", __doc__, SelfPlayConfig, train, argv, resume_help=resume)


if __name__ == "__main__":
    main()
