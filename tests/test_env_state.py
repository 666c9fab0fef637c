"""``raw_env.state()``: the global state for centralised critics, every seat's observation in seat order (all
hands, R1.4, and the public information), under every preset, in deal and match mode."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import env_presets, random_env_play

import barbu_env


def _check_state(e) -> None:
    """``state()`` is every seat's observation in seat order, inside ``state_space``."""
    raw = e.unwrapped
    state = raw.state()
    np.testing.assert_array_equal(state, np.concatenate([raw.observe(a)["observation"] for a in raw.possible_agents]))
    assert state.shape == raw.state_space.shape and raw.state_space.contains(state)


@pytest.mark.parametrize("preset", env_presets())
def test_state_is_every_seat_observation(preset):
    rng = np.random.default_rng(7)
    for mode in ("deal", "match"):
        e = barbu_env.env(rules=preset, mode=mode)
        with pytest.raises(RuntimeError, match="call reset"):
            e.unwrapped.state()
        e.reset(seed=3)
        random_env_play(e, rng, 400 if mode == "match" else None, check=_check_state)
        _check_state(e)  # after the last step too


def test_torchrl_reads_the_state():
    """TorchRL's ``PettingZooWrapper(return_state=True)`` puts it in every step of a rollout."""
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper

    raw = barbu_env.env(mode="deal", contract="no_queens", doubling="off")
    env = PettingZooWrapper(env=raw, use_mask=True, return_state=True, seed=0)
    rollout = env.rollout(20)
    assert rollout["state"].shape == (20, raw.unwrapped.state_space.shape[0])
    assert rollout["state"][0, :52].sum() == 13  # player_0's hand block (its first): 13 cards before play


@pytest.mark.parametrize("preset", ["classic", "king6"])
def test_pettingzoo_state_test(preset):
    """PettingZoo's own checks of ``state_space`` and ``state()`` (its random actions ignore the mask: an illegal one
    ends the episode, ``illegal_action="terminate"``)."""
    import importlib

    state_test = importlib.import_module("pettingzoo.test.state_test")  # the package exports a function of that name
    e = barbu_env.env(rules=preset, illegal_action="terminate")
    state_test.test_state_space(e)
    state_test.test_state(e, 100)
