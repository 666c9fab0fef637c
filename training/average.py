"""Average the weights of several checkpoints of one network (weight averaging over a run's snapshots).

``python -m training.average OUT.pt A.pt B.pt [...]`` writes the checkpoint whose every weight is the mean of the
inputs' (``torch.optim.swa_utils.AveragedModel``), as stochastic weight averaging does with the snapshots of one
run; ``--weights 1 3`` weighs them (here ¼ A + ¾ B: a point on the line between two networks). The inputs must
play the same contract with the same sizes, and should come from one run (or from runs started from one
checkpoint), whose networks lie close enough in weight space for their mean to play well; the result is evaluated
like any checkpoint (``barbu-eval``). ``OUT`` carries the first input's config and, in its ``meta``, the inputs
(path, SHA-256, share of the weight and the meta of each).
"""

from __future__ import annotations

import argparse
import hashlib
import math
from pathlib import Path
from typing import Any, cast

from torch import Tensor
from torch.optim.swa_utils import AveragedModel

from barbu_env.nn import PolicyNet, load_checkpoint, save_checkpoint


def average(paths: list[str | Path],
            weights: list[float] | None = None) -> tuple[PolicyNet, list[dict[str, Any]], list[float]]:  # fmt: skip
    """``(network whose weights are the mean of the checkpoints at paths, their checkpoint dicts, each one's share
    of the weight)``, the mean weighted by ``weights`` (one positive finite number per path; None: equal);
    ``ValueError`` naming the file when fewer than two are given or one plays another contract or has other sizes
    than the first, or naming the weights when they are not one positive finite number per checkpoint."""
    if len(paths) < 2:
        raise ValueError(f"average needs at least two checkpoints, got {len(paths)}")
    w = [1.0] * len(paths) if weights is None else [float(x) for x in weights]
    if len(w) != len(paths) or not all(0 < x < math.inf for x in w):
        raise ValueError(
            f"weights {weights} for {len(paths)} checkpoints: give one positive finite number per checkpoint"
        )
    loaded = [load_checkpoint(p) for p in paths]
    net, first = loaded[0]
    sizes = (first["contract"], first["hidden"], first.get("card_hidden", 0))
    for p, (_, ckpt) in zip(paths[1:], loaded[1:], strict=True):
        other = (ckpt["contract"], ckpt["hidden"], ckpt.get("card_hidden", 0))
        if other != sizes:
            first_name = repr(str(paths[0]))
            raise ValueError(f"checkpoint {str(p)!r} is (contract, hidden, card_hidden) {other}, the first "
                             f"({first_name}) {sizes}: only networks of one contract and sizes average")  # fmt: skip

    def running_mean(avg: Tensor, new: Tensor, n: Tensor | int) -> Tensor:
        """The mean of the first n + 1 networks, weighted: the (n + 1)-th's share of their total weight."""
        k = int(n)
        return avg + (new - avg) * (w[k] / sum(w[: k + 1]))

    avg = AveragedModel(net, avg_fn=running_mean)
    for model, _ in loaded:
        avg.update_parameters(model)
    return cast(PolicyNet, avg.module), [ckpt for _, ckpt in loaded], [x / sum(w) for x in w]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m training.average", description=__doc__.splitlines()[0])
    ap.add_argument("out", help="the checkpoint to write")
    ap.add_argument("inputs", nargs="+", help="two or more checkpoints of one contract and sizes")
    ap.add_argument("--weights", nargs="+", type=float, help="one positive weight per input (default: equal)")
    args = ap.parse_args(argv)
    try:
        net, ckpts, shares = average(args.inputs, args.weights)
    except ValueError as e:
        ap.error(str(e))
    first = ckpts[0]
    sources = [{"file": str(p), "sha256": hashlib.sha256(Path(p).read_bytes()).hexdigest(), "weight": w,
                "meta": c.get("meta", {})} for p, c, w in zip(args.inputs, ckpts, shares, strict=True)]  # fmt: skip
    save_checkpoint(args.out, net, first["contract"], first["config"], {"averaged": sources})
    print(
        f"wrote {args.out}: the {'weighted ' if args.weights else ''}mean of {len(args.inputs)} "
        f"{first['contract']} networks"
    )


if __name__ == "__main__":
    main()
