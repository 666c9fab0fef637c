"""The compiled greedy pass (``vector.jit.policy.greedy_actions`` on ``nn.flat_policy``) against torch and against
its own definition: the legal actions' logits summed term by term with fused multiply-adds, the illegal ones -inf,
the first legal argmax and the near-tie flag."""

from __future__ import annotations

import copy
from fractions import Fraction

import numpy as np
import pytest
import torch

from barbu_env.nn import PolicyNet, flat_policy
from barbu_env.rules import Rules

TIE = 1e-4


def _states(contracts: list[str], steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of ``VectorDeals`` games (classic rules: doubling decisions too) played by the
    heuristic, every ``steps``-th step's rows of every contract."""
    from barbu_env.vector import VectorDeals

    obs, masks = [], []
    for i, contract in enumerate(contracts):
        v = VectorDeals(contract, Rules(), batch=16, seed=20 + i)
        v.reset()
        for step in range(56):
            o, m, _ = v.observe()
            if step % steps == 0:
                obs.append(o.copy())
                masks.append(m.copy())
            v.step(v.heuristic_actions())
    return np.concatenate(obs), np.concatenate(masks)


def _kernel(flat: tuple[np.ndarray, ...], obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, ...]:
    from barbu_env.vector.jit import greedy_actions

    n = len(obs)
    logits = np.full((n, mask.shape[1]), np.nan, np.float32)
    best, near = np.full(n, -2, np.int64), np.zeros(n, np.bool_)
    greedy_actions(obs, mask, *flat, TIE, logits, best, near)
    return logits, best, near


def _fma32(a: np.float32, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """float32 ``a * b + c`` rounded once (a fused multiply-add), elementwise. The product is exact in float64; the
    float64 sum's rounding error (TwoSum) settles the sums that float64 rounds onto a float32 midpoint."""
    p = np.float64(a) * b.astype(np.float64)
    c64 = c.astype(np.float64)
    s = p + c64
    t = s - p
    err = (p - (s - t)) + (c64 - t)
    r = s.astype(np.float32)
    d = s - r.astype(np.float64)  # from s's float32 rounding to s
    away = np.nextafter(r, np.where(d > 0, np.inf, -np.inf).astype(np.float32))
    midpoint = (d != 0) & (away.astype(np.float64) - s == d)
    return np.where(midpoint & (err != 0) & (np.sign(err) == np.sign(d)), away, r)


def _round32(q: Fraction) -> np.float32:
    """The float32 nearest the rational ``q``, ties to the even one."""
    r = np.float32(float(q))
    near = [np.nextafter(r, np.float32(-np.inf)), r, np.nextafter(r, np.float32(np.inf))]
    return min(near, key=lambda v: (abs(Fraction(float(v)) - q), int(np.array(v).view(np.int32)) & 1))


def _exact32(a: np.float32, b: np.float32, c: np.float32) -> np.float32:
    """The exact ``a * b + c`` rounded once to float32."""
    return _round32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def test_fma32_rounds_once() -> None:
    """The reference's fused multiply-add is the exact ``a * b + c`` rounded once to float32: on random values, and
    where float64 rounds the sum onto a float32 midpoint (rounding the product first, or the float64 sum, would
    give the other neighbour)."""
    a, b, c = np.float32(1 + 2**-18), np.float32(2**-24 * (1 - 2**-18)), np.float32(1 + 2**-23)
    assert _fma32(a, np.array([b]), np.array([c]))[0] == c
    assert np.float32(a * b) + c == np.float32(1 + 2**-22) == np.float32(np.float64(a) * np.float64(b) + np.float64(c))
    rng = np.random.default_rng(0)
    x, y, z = (rng.standard_normal(3000).astype(np.float32) for _ in range(3))
    got = _fma32(x[0], y, z)  # one multiplier over whole rows, as the layers use it
    assert got.dtype == np.float32
    for u, v, w, g in zip(x, y, z, got, strict=True):
        assert _fma32(u, np.array([v]), np.array([w]))[0] == _exact32(u, v, w)
        assert g == _exact32(x[0], v, w)


def _sequential(flat: tuple[np.ndarray, ...], obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The logits of the legal actions (-inf elsewhere) of a network without a card head, each layer's sums taken
    in float32 term by term: its bias, then ``x[c] * w[c]`` fused into the sum (:func:`_fma32`) for each non-zero
    input c, ascending."""
    weights, layout = flat[0], flat[1]
    out = np.full(mask.shape, -np.inf, np.float32)
    for i in range(len(obs)):
        x = obs[i]
        for k, (off, n_in, n_out) in enumerate(layout):
            w = weights[off : off + n_in * n_out].reshape(n_in, n_out)
            y = weights[off + n_in * n_out : off + n_in * n_out + n_out].copy()
            for c in np.flatnonzero(x):
                y = _fma32(x[c], w[c], y)
            x = np.maximum(y, np.float32(0.0)) if k < len(layout) - 1 else y
        legal = mask[i] != 0
        out[i, legal] = x[legal]
    return out


@pytest.fixture(scope="module")
def states() -> tuple[np.ndarray, np.ndarray]:
    return _states(["no_queens", "trumps:H", "fantan:J", "no_last_two"], 5)


@pytest.mark.parametrize("hidden", [(64, 32), (48,), ()])
def test_logits_are_the_sums_in_order(states, hidden: tuple[int, ...]) -> None:
    """Without a card head, the kernel's legal logits are exactly (bit for bit) the float32 sums taken in its
    documented order, with 0, 1 and 2 hidden layers; the illegal ones are -inf."""
    torch.manual_seed(3)
    flat = flat_policy(PolicyNet(hidden=hidden).eval())
    obs, mask = states
    logits, _, _ = _kernel(flat, obs, mask)
    want = _sequential(flat, obs, mask)
    np.testing.assert_array_equal(logits, want)


@pytest.mark.parametrize("card_hidden", [0, 16])
@pytest.mark.parametrize("hidden", [(64, 32), ()])
def test_kernel_is_the_torch_pass(states, hidden: tuple[int, ...], card_hidden: int) -> None:
    """Legal logits equal torch's to float32 rounding, illegal ones are -inf; ``best`` is the first legal action
    of the largest logit and torch's argmax wherever the row is not a near tie; ``near`` is the documented test on
    the two largest legal logits; a row alone gives what it gives in the batch."""
    torch.manual_seed(4)
    net = PolicyNet(hidden=hidden, card_hidden=card_hidden).eval()
    if net.card_head is not None:  # a trained-like head: scores of the size of the policy layer's
        for p in net.card_head.parameters():
            torch.nn.init.normal_(p, std=0.3)
    flat = flat_policy(net)
    obs, mask = states
    logits, best, near = _kernel(flat, obs, mask)
    with torch.no_grad():
        want = net(torch.from_numpy(obs), torch.from_numpy(mask))[0].numpy()
    legal = mask.astype(bool)
    np.testing.assert_allclose(logits[legal], want[legal], rtol=1e-4, atol=1e-4)
    assert np.all(logits[~legal] == -np.inf)
    masked = np.where(legal, logits.astype(np.float64), -np.inf)
    np.testing.assert_array_equal(best, masked.argmax(1))
    top2 = -np.sort(-masked, 1)[:, :2]
    np.testing.assert_array_equal(near, top2[:, 0] - top2[:, 1] <= TIE * (1 + np.abs(top2[:, 0])))
    sure = ~near
    assert sure.sum() > 0.9 * len(obs)
    np.testing.assert_array_equal(best[sure], want.argmax(1)[sure])
    for i in range(0, len(obs), 37):
        one = _kernel(flat, obs[i : i + 1], mask[i : i + 1])
        for got, batch in zip(one, (logits, best, near), strict=True):
            np.testing.assert_array_equal(got[0], batch[i])


@pytest.mark.parametrize("card_hidden", [0, 16])
def test_float16_weights_give_the_same_sums(states, card_hidden: int) -> None:
    """A network whose weights are all float16 values (as a checkpoint stores them; some subnormal) travels as
    float16 bits: the kernel's logits, choices and near-tie flags are bit for bit those of the same weights as
    float32, and the float32 sums taken in the documented order. Weights that are not all float16 stay float32."""
    torch.manual_seed(6)
    net = PolicyNet(hidden=(64, 32), card_hidden=card_hidden).eval()
    assert flat_policy(net)[0].dtype == np.float32
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(p.half().float())
        net.trunk[0].weight[:3, :5] = torch.tensor(3e-6).half().float()  # float16 subnormals
    flat = flat_policy(net)
    assert flat[0].dtype == np.uint16
    wide = (flat[0].view(np.float16).astype(np.float32), *flat[1:])
    obs, mask = states
    got, want = _kernel(flat, obs, mask), _kernel(wide, obs, mask)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)
    if not card_hidden:
        np.testing.assert_array_equal(got[0], _sequential(wide, obs, mask))


@pytest.mark.parametrize("card_hidden", [0, 16])
@pytest.mark.parametrize("hidden", [(64, 32), ()])
def test_float64_pass_is_the_float64_network(states, hidden: tuple[int, ...], card_hidden: int) -> None:
    """``compiled_greedy(..., np.float64)`` gives the logits of the same network run by torch in float64 to 1e-13
    (relative), the illegal ones -inf, and their first argmax; a row alone gives what it gives in the batch. The
    weights are float16 values, as a checkpoint's (the card identity rows, which travel summed in float32, stay
    exact), but the card head's biases, which float32 sums would round."""
    from barbu_env.nn import compiled_greedy

    torch.manual_seed(7)
    net = PolicyNet(hidden=hidden, card_hidden=card_hidden).eval()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_((p * 3 if card_hidden else p).half().float())
        if net.card_head is not None:
            for k in ("state", "card"):
                torch.nn.init.normal_(net.card_head[k].bias, std=0.5)
    obs, mask = states
    best, _, logits = compiled_greedy(flat_policy(net), obs, mask, 0.0, np.float64)
    assert logits.dtype == np.float64
    with torch.no_grad():
        want = copy.deepcopy(net).double()(torch.from_numpy(obs).double(), torch.from_numpy(mask))[0].numpy()
    legal = mask.astype(bool)
    scale = 1 + np.abs(np.where(legal, want, 0)).max(1, keepdims=True)
    assert np.abs(np.where(legal, logits - want, 0) / scale).max() < 1e-13
    assert np.all(logits[~legal] == -np.inf)
    np.testing.assert_array_equal(best, np.where(legal, logits, -np.inf).argmax(1))
    for i in range(0, len(obs), 37):
        one = compiled_greedy(flat_policy(net), obs[i : i + 1], mask[i : i + 1], 0.0, np.float64)
        np.testing.assert_array_equal(one[2][0], logits[i])
    with pytest.raises(ValueError, match=r"bad dtype .* expected np.float32 or np.float64"):
        compiled_greedy(flat_policy(net), obs, mask, 0.0, np.float16)


def test_checkpoint_networks_travel_as_float16() -> None:
    """The shipped networks (loaded from float16 checkpoints) reach the kernel as float16 bits."""
    from barbu_env.agents import make

    agent = make("checkpoints")
    assert {str(flat[0].dtype) for flat in agent._flat.values()} == {"uint16"}


def test_no_legal_action_gives_minus_one() -> None:
    """A row without a legal action: every logit -inf, ``best`` -1."""
    torch.manual_seed(5)
    flat = flat_policy(PolicyNet(hidden=(16,), card_hidden=4).eval())
    obs, mask = _states(["no_hearts"], 50)
    mask[0] = 0
    logits, best, _ = _kernel(flat, obs[:2], mask[:2])
    assert best[0] == -1 and np.all(logits[0] == -np.inf) and best[1] >= 0


def test_greedy_choices_take_near_ties_again_in_float64() -> None:
    """``nn.greedy_choices``: where two legal logits of 16 differ by 2**-22, the float32 pass rounds them to a tie (the
    first action) and flags the row; the float64 sums choose the second, and so does ``greedy_choices``. A row
    without a near tie keeps the float32 choice; the logits are the float32 pass's."""
    from barbu_env.agents.neural import TIE as AGENT_TIE
    from barbu_env.nn import OBS_SIZE, compiled_greedy, greedy_choices

    net = PolicyNet(hidden=()).eval()
    with torch.no_grad():
        net.policy.weight.zero_()
        net.policy.bias.zero_()
        net.policy.bias[[3, 5]] = 16.0
        net.policy.weight[5, 0] = 2.0**-22
        net.policy.bias[7] = 1.0
    flat = flat_policy(net)
    obs = np.zeros((2, OBS_SIZE), np.float32)
    obs[:, 0] = 1.0
    mask = np.zeros((2, net.num_actions), np.int8)
    mask[0, [3, 5]] = 1
    mask[1, [3, 7]] = 1
    best32, near, logits = compiled_greedy(flat, obs, mask, AGENT_TIE)
    assert best32.tolist() == [3, 3] and near.tolist() == [True, False] and logits[0, 3] == logits[0, 5] == 16.0
    best, got = greedy_choices(flat, obs, mask, AGENT_TIE)
    assert best.tolist() == [5, 3]
    np.testing.assert_array_equal(got, logits)


def test_greedy_moves_play_forced_moves_without_the_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """``nn.greedy_moves``: ``greedy_choices``' choices; the rows with one legal action (forced moves: the one card of
    the led suit under R5.1, the R7.3 pass with no playable card) take it without the network, and only the other
    rows reach the pass."""
    import barbu_env.nn as nn_module

    torch.manual_seed(6)
    flat = flat_policy(PolicyNet(hidden=(16,), card_hidden=4).eval())
    obs, mask = _states(["no_hearts", "fantan"], 40)
    forced = np.count_nonzero(mask, axis=1) == 1
    assert forced.any() and not forced.all()
    want = nn_module.greedy_choices(flat, obs, mask)[0]
    passed: list[int] = []
    real = nn_module.greedy_choices

    def spy(f: tuple[np.ndarray, ...], o: np.ndarray, m: np.ndarray, tie: float) -> tuple[np.ndarray, np.ndarray]:
        passed.append(len(o))
        return real(f, o, m, tie)

    monkeypatch.setattr(nn_module, "greedy_choices", spy)
    np.testing.assert_array_equal(nn_module.greedy_moves(flat, obs, mask), want)
    assert passed == [int((~forced).sum())]
    passed.clear()
    np.testing.assert_array_equal(nn_module.greedy_moves(flat, obs[forced], mask[forced]), want[forced])
    assert passed == []


def test_shipped_networks_stay_well_inside_the_tie_band() -> None:
    """On the shipped networks of the seven contracts the float32 pass's logits differ from the float64 pass's
    (the reference ``NeuralAgent.card_actions`` redoes near ties with) by under a tenth of ``agents.neural.TIE``
    relative to ``1 + |largest legal logit|``: a row outside the band cannot change its argmax."""
    from barbu_env.agents import make
    from barbu_env.agents.neural import TIE as AGENT_TIE
    from barbu_env.nn import compiled_greedy
    from barbu_env.vector import VectorDeals

    agent = make("checkpoints")
    for i, contract in enumerate(["no_tricks", "no_hearts", "no_queens", "no_king", "no_last_two", "trumps:S",
                                  "fantan:7"]):  # fmt: skip
        flat = agent._flat[contract.split(":")[0]]
        v = VectorDeals(contract, Rules(doubling="off"), batch=24, seed=40 + i)
        v.reset()
        worst = 0.0
        for step in range(48):
            obs, mask, _ = v.observe()
            if step % 3 == 0:
                rows = mask.sum(1) > 1
                _, _, logits = compiled_greedy(flat, obs[rows], mask[rows], AGENT_TIE)
                _, _, ref = compiled_greedy(flat, obs[rows], mask[rows], 0.0, np.float64)
                legal = mask[rows].astype(bool)
                dev = np.abs(np.where(legal, logits, 0).astype(np.float64) - np.where(legal, ref, 0)).max(1)
                worst = max(worst, (dev / (1 + np.abs(np.where(legal, ref, -np.inf).max(1)))).max())
            v.step(v.heuristic_actions())
        assert 0 < worst < AGENT_TIE / 10, (contract, worst)


@pytest.mark.parametrize("permute", [False, True])
def test_sparse_first_layer_is_the_dense_layer(states, permute: bool) -> None:
    """``nn.sparse_linear`` (the first layer of training and inference, by the kernels of ``vector.jit.linear``)
    gives ``layer(x[:, cols])``'s output and its gradients for the weight, the bias and the input to float32
    rounding, with a suit relabelling's column gather and without; its sums are those of the compiled pass's first
    layer bit for bit; a call after a fused optimizer step (which leaves the weights' version as it was) reads the
    new weights."""
    from barbu_env.nn import sparse_linear
    from training.augment import obs_index

    torch.manual_seed(6)
    obs, mask = states
    net = PolicyNet(hidden=()).eval()  # a single layer: observation -> logits
    layer = net.policy
    cols = torch.from_numpy(obs_index((1, 3, 0, 2))) if permute else None
    x = torch.from_numpy(obs).requires_grad_(True)
    g = torch.randn(len(obs), layer.out_features)
    got = sparse_linear(layer, x, cols)
    (got * g).sum().backward()
    grads = [t.grad.clone() for t in (layer.weight, layer.bias, x)]
    for t in (layer.weight, layer.bias, x):
        t.grad = None
    want = layer(x if cols is None else x[:, cols])
    (want * g).sum().backward()
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-5)
    for a, t in zip(grads, (layer.weight, layer.bias, x), strict=True):
        np.testing.assert_allclose(a.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)
    if cols is None:
        legal = mask.astype(bool)
        np.testing.assert_array_equal(got.detach().numpy()[legal], _sequential(flat_policy(net), obs, mask)[legal])
    torch.optim.Adam(layer.parameters(), lr=0.1, fused=True).step()  # in place, the weights' version unchanged
    with torch.no_grad():
        np.testing.assert_allclose(sparse_linear(layer, x, cols).numpy(), layer(x if cols is None else x[:, cols]),
                                   rtol=1e-5, atol=1e-5)  # fmt: skip


def test_sparse_first_layer_refuses_bad_columns_and_falls_back_to_torch() -> None:
    """Column indices of the wrong count or out of range are a ``ValueError`` naming what is expected; float64
    rows and fewer than ``SPARSE_ROWS`` rows go through the torch layer itself."""
    from barbu_env.nn import sparse_linear

    layer = torch.nn.Linear(6, 3)
    x = torch.zeros(2, 6)
    x[0, 2] = 1.0
    with pytest.raises(ValueError, match=r"6 column indices in \[0, 6\)"):
        sparse_linear(layer, x, torch.arange(5))
    with pytest.raises(ValueError, match="column indices"):
        sparse_linear(layer, x, torch.tensor([0, 1, 2, 3, 4, 6]))
    xd = x.double()
    layer64 = torch.nn.Linear(6, 3).double()
    torch.testing.assert_close(sparse_linear(layer64, xd), layer64(xd))
    torch.testing.assert_close(sparse_linear(layer, x, torch.arange(5, -1, -1)), layer(x[:, [5, 4, 3, 2, 1, 0]]))
