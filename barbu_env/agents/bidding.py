"""Learned bidding for the neural agent: the declaration (R3) and doubling (R6) from bidding networks.

The networks (``training/bidding.py``, checkpoints read by :func:`barbu_env.nn.load_bidding`) estimate the
deal score of every action from some blocks of the env's observation (:func:`barbu_env.nn.bidding_input`):
``declare.pt`` from the declarer's hand and the R6.4 obligations in force, ``double.pt`` from the seat's hand,
the contract, the declarer and the doubles made so far. The choice among the legal actions (the env's mask,
which holds R3.1's contracts left and R6.4's obligation):

- doubling: the legal ``double:*`` action of highest estimate;
- declaration, planning over the contracts left by one rule: the legal declaration whose estimate is furthest
  above its contract's ``baseline`` (the mean best estimate of that contract over random hands, kept in the
  checkpoint), so a contract the hand suits only as well as an average hand is kept for a later deal. The
  declarer's last contract is forced by the mask.

Imports torch (through :mod:`barbu_env.nn`): made only by :class:`~barbu_env.agents.neural.NeuralAgent`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..actions import DECLARE_BASE, FANTAN_BASE, PLAIN_CONTRACTS, TRUMPS_BASE

#: Values of the neural agent's ``bidding`` option: which bidding decisions the networks take (``auto``, the
#: default, is ``learned`` where the folder holds both networks and ``heuristic`` otherwise: :func:`resolve`).
BIDDING_OPTIONS: dict[str, tuple[str, ...]] = {
    "auto": (),
    "heuristic": (),
    "learned": ("declare", "double"),
    "declare": ("declare",),
    "double": ("double",),
}


def declared_contract(action: int) -> str:
    """The contract name of a declaration action id (``trumps`` / ``fantan`` for their parameters)."""
    if action >= FANTAN_BASE:
        return "fantan"
    if action >= TRUMPS_BASE:
        return "trumps"
    return PLAIN_CONTRACTS[action - DECLARE_BASE]


def resolve(option: str, folder: Path) -> str:
    """The ``bidding`` option ``option`` with ``auto`` made ``learned`` or ``heuristic`` by what ``folder`` holds."""
    if option != "auto":
        return option
    return "learned" if all((folder / f"{role}.pt").is_file() for role in BIDDING_OPTIONS["learned"]) else "heuristic"


class LearnedBidding:
    """The bidding networks of ``roles`` (names of :data:`barbu_env.nn.BIDDING_ROLES`), read from ``folder``
    (``<role>.pt`` each); ``ValueError`` naming the folder and the file when one is missing or bad."""

    def __init__(self, folder: str | Path, roles: tuple[str, ...]) -> None:
        import torch

        from ..nn import bidding_columns, load_bidding

        self.folder = Path(folder)
        self.nets = {}
        self.meta = {}
        #: Per role the input's observation entries and the layers (weight, bias: float64) of :meth:`estimates`.
        self._layers: dict[str, tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]] = {}
        for role in roles:
            path = self.folder / f"{role}.pt"
            if not path.is_file():
                how = f"training/bidding.py --set role={role} export_dir={str(self.folder)!r}"
                raise ValueError(f"no {role} network {str(path)!r}: train one ({how}) or use bidding=heuristic")
            net, ckpt = load_bidding(path, role)
            self.nets[role] = (net, ckpt["blocks"])
            self.meta[role] = ckpt["meta"]
            linears = [m for m in (*net.trunk, net.policy) if isinstance(m, torch.nn.Linear)]  # ReLU between them
            self._layers[role] = (
                bidding_columns(ckpt["blocks"]),
                [(m.weight.detach().double().numpy(), m.bias.detach().double().numpy()) for m in linears],
            )
        if "declare" in roles and not isinstance(self.meta["declare"].get("baseline"), dict):
            raise ValueError(f"{str(self.folder / 'declare.pt')!r}: no meta['baseline'] per contract")

    def estimates(self, role: str, obs: np.ndarray) -> np.ndarray:
        """The network's estimated deal score (points, float64 [A]) of every action for one observation: its
        layers (ReLU between them) in float64 with numpy, the stored float16 weights read exactly (the torch network
        of ``nets`` gives the same values up to float32 rounding; a torch call per decision cost 50 µs)."""
        cols, layers = self._layers[role]
        x = obs[cols].astype(np.float64)
        for k, (w, b) in enumerate(layers):
            x = w @ x + b
            if k < len(layers) - 1:
                np.maximum(x, 0.0, out=x)
        return x * self.meta[role]["scale"]

    def choose(self, role: str, obs: np.ndarray, mask: np.ndarray) -> int:
        """The ``role`` decision for one observation and its action mask (see the module docstring);
        ``ValueError`` for an observation or mask of another size than the classic four-player layout's."""
        from ..nn import NUM_ACTIONS, OBS_SIZE

        if obs.shape[-1] != OBS_SIZE or mask.shape[-1] != NUM_ACTIONS:
            raise ValueError(f"the bidding networks of {str(self.folder)!r} read the classic layout ({OBS_SIZE} "
                             f"observation entries, {NUM_ACTIONS} actions); these rules have {obs.shape[-1]} and "
                             f"{mask.shape[-1]}: use bidding=heuristic")  # fmt: skip
        legal = np.flatnonzero(mask)
        value = self.estimates(role, obs)[legal]
        if role == "declare":
            base = self.meta["declare"]["baseline"]
            names = [declared_contract(int(a)) for a in legal]
            unknown = sorted(set(names) - set(base))
            if unknown:
                raise ValueError(f"{str(self.folder / 'declare.pt')!r} was trained on the contracts {sorted(base)}, "
                                 f"not {unknown}: use bidding=heuristic under these rules")  # fmt: skip
            value = value - np.array([base[n] for n in names])
        return int(legal[np.argmax(value)])
