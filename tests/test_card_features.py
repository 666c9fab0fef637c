"""The card head's per-card features (``barbu_env.nn.card_features``) against the engine (RULES.md R4.2, R5.1, R4.4)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from helpers import mid_deals

from barbu_env import Rules
from barbu_env.cards import SUIT_MASK
from barbu_env.engine.deal import PLAY
from barbu_env.nn import CARD_FEATURES, PolicyNet, card_features, flat_policy
from barbu_env.observation import encode

F = {name: i for i, name in enumerate(CARD_FEATURES)}
RULES = Rules(doubling="off")


def _features(deal):
    seat = deal.to_move
    obs = torch.from_numpy(encode(deal, seat)[None])
    mask = torch.zeros(1, 87)
    mask[0, deal.legal_actions()] = 1
    return seat, card_features(obs, mask)[0].numpy().T


@pytest.mark.parametrize("contract", ["no_tricks", "trumps:S", "no_hearts"])
def test_beats_trick_is_the_engines_winner_after_the_card(contract: str) -> None:
    """R5.1 (and R4.2 for trumps): ``beats_trick`` of each legal card says whether the seat on move leads the
    trick once it plays that card, as the engine's trick winner says."""
    checked = 0
    for deal in mid_deals(RULES, 60, seed=7, contracts=[contract]):
        if deal.phase != PLAY:
            continue
        seat, f = _features(deal)
        for c in deal.legal_actions():
            after = deal.clone()
            after.apply(c)
            winner = after.last_trick[2] if not after.trick else after.winner
            assert f[c, F["beats_trick"]] == float(winner == seat), (deal, c)
            checked += 1
    assert checked > 100


def test_rank_counts_and_places_match_the_deal() -> None:
    """Own hand, unseen cards and the counts above / below each card in its suit (R1.2 ranks)."""
    for deal in mid_deals(RULES, 30, seed=3, contracts=["no_queens", "trumps:H"]):
        seat, f = _features(deal)
        hand, unseen = deal.hands[seat], deal.unseen(seat)
        for c in range(52):
            suit = SUIT_MASK[c // 13]
            above = suit & ~((1 << (c + 1)) - 1)
            below = suit & ((1 << c) - 1)
            assert f[c, F["in_hand"]] == (hand >> c & 1) and f[c, F["unseen"]] == (unseen >> c & 1)
            assert f[c, F["higher_unseen"]] * 13 == pytest.approx((unseen & above).bit_count())
            assert f[c, F["lower_own"]] * 13 == pytest.approx((hand & below).bit_count())
            assert f[c, F["suit_own"]] * 13 == pytest.approx((hand & suit).bit_count())
        legal = set(deal.legal_actions())
        assert all(f[c, F["legal"]] == (c in legal) for c in range(52))


def test_card_head_changes_only_card_logits() -> None:
    """The card head adds to the 52 card logits only."""
    torch.manual_seed(0)
    net = PolicyNet(hidden=(16,), card_hidden=8)
    plain = PolicyNet(hidden=(16,))
    plain.load_state_dict({k: v for k, v in net.state_dict().items() if not k.startswith("card_head")})
    deal = mid_deals(RULES, 1, seed=1, contracts=["no_king"])[0]
    obs = torch.from_numpy(np.stack([encode(deal, s) for s in range(4)]))
    mask = torch.ones(4, 87)
    with torch.no_grad():
        a, va = net.scores(obs, mask)
        b, vb = plain.scores(obs, mask)
    assert torch.equal(a[:, 52:], b[:, 52:]) and torch.equal(va, vb) and not torch.equal(a[:, :52], b[:, :52])


@pytest.mark.parametrize("contract", ["no_hearts", "trumps:D", "fantan:J", "no_last_two"])
def test_compiled_card_head_is_the_torch_pass(contract: str) -> None:
    """The compiled kernel (``vector.jit.policy.greedy_actions`` on ``flat_policy``) gives the torch pass's logits
    of every legal action (to float32 rounding) and its argmax, on VectorDeals states of every trick position."""
    from barbu_env.vector import VectorDeals
    from barbu_env.vector.jit import greedy_actions, policy

    assert policy._F == len(CARD_FEATURES)  # the kernel's feature rows are as wide as the features it is given
    torch.manual_seed(2)
    net = PolicyNet(hidden=(64, 32), card_hidden=16).eval()
    for p in net.card_head.parameters():  # a trained-like head: scores of the size of the policy layer's
        torch.nn.init.normal_(p, std=0.3)
    flat = flat_policy(net)
    v = VectorDeals(contract, "classic", batch=64, seed=9)
    v.reset()
    for _ in range(30):
        obs, mask, _ = v.observe()
        with torch.no_grad():
            want = net(torch.from_numpy(obs), torch.from_numpy(mask))[0].numpy()
        got = np.empty(want.shape, np.float32)
        best, near = np.empty(len(obs), np.int64), np.empty(len(obs), np.bool_)
        greedy_actions(obs, mask, *flat, 1e-4, got, best, near)
        legal = mask.astype(bool)
        np.testing.assert_allclose(got[legal], want[legal], rtol=1e-4, atol=1e-4)
        sure = ~near
        np.testing.assert_array_equal(best[sure], want.argmax(1)[sure])
        v.step(v.heuristic_actions())


@pytest.mark.parametrize("card_hidden", [0, 16])
def test_checkpoint_plays_batched_as_row_by_row(tmp_path, card_hidden: int) -> None:
    """A network saved and loaded as an agent (``card_hidden`` in the checkpoint): ``card_actions`` picks on every
    row what it picks from that row alone and the argmax of the network run by torch in float64; a checkpoint
    without the key loads as a plain MLP."""
    from barbu_env.agents import make
    from barbu_env.nn import load_checkpoint, save_checkpoint
    from barbu_env.vector import VectorDeals

    torch.manual_seed(1)
    save_checkpoint(tmp_path / "no_queens.pt", PolicyNet(hidden=(32,), card_hidden=card_hidden), "no_queens", {})
    net, ckpt = load_checkpoint(tmp_path / "no_queens.pt")
    assert ckpt["card_hidden"] == card_hidden and (net.card_head is not None) == bool(card_hidden)
    agent = make(str(tmp_path))
    wide = copy.deepcopy(agent.nets["no_queens"]).double()
    v = VectorDeals("no_queens", "classic", batch=64, seed=5)
    v.reset()
    for _ in range(20):
        obs, mask, _ = v.observe()
        got = agent.card_actions("no_queens", obs.copy(), mask.copy())
        alone = [agent.card_actions("no_queens", obs[i : i + 1], mask[i : i + 1])[0] for i in range(v.batch)]
        np.testing.assert_array_equal(got, alone)
        with torch.no_grad():
            want = wide(torch.from_numpy(obs).double(), torch.from_numpy(mask))[0].numpy().argmax(1)
        np.testing.assert_array_equal(got, want)
        v.step(v.heuristic_actions())
    if card_hidden:
        return
    del ckpt["card_hidden"]
    ckpt["state_dict"] = {k: v for k, v in ckpt["state_dict"].items() if not k.startswith("card_head")}
    torch.save(ckpt, tmp_path / "plain.pt")
    assert load_checkpoint(tmp_path / "plain.pt")[0].card_head is None
