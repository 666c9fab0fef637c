"""``render_mode="rgb_array"`` (issue 19): PettingZoo's render test, what the picture may show (``render_hands``,
never another seat's hidden cards), and recording a deal as a GIF."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import SUIT_HANDS
from pettingzoo.test import render_test
from PIL import Image

import barbu_env
from barbu_env.engine.deal import Deal
from barbu_env.render_image import HEIGHT, WIDTH, record_deal, render_image, save_gif
from barbu_env.rules import load_rules


@pytest.mark.parametrize(
    "kwargs", [{}, {"mode": "deal", "contract": "fantan:8"}, {"rules": "king5"}], ids=["match", "fantan", "king5"]
)
def test_pettingzoo_render_test(kwargs, capsys):
    render_test(lambda render_mode=None: barbu_env.env(render_mode=render_mode, **kwargs))
    capsys.readouterr()  # the "human" mode's prints


def test_picture_is_an_rgb_array_of_the_table():
    env = barbu_env.env(mode="deal", contract="no_queens", render_mode="rgb_array")
    env.reset(seed=0)
    before = env.render()
    assert before.shape == (HEIGHT, WIDTH, 3) and before.dtype == np.uint8
    env.step(env.deal.legal_actions()[0])
    after = env.render()
    assert (after != before).any()  # the card went from the hand to the trick


def _swapped_hidden_hands() -> tuple[Deal, Deal]:
    """Two deals before the first card, alike but for the hands of seats 1 and 2 (seat 0 on move)."""
    r = load_rules("classic", doubling="off")
    hands = SUIT_HANDS
    a = Deal.from_hands(hands, 0, "no_tricks", r)
    b = Deal.from_hands([hands[0], hands[2], hands[1], hands[3]], 0, "no_tricks", r)
    return a, b


def test_hidden_hands_are_not_drawn():
    """R1.3 / render_hands: with "current" only the seat on move shows its cards; "none" shows none; "all" all."""
    a, b = _swapped_hidden_hands()
    for hands in ("current", "none"):
        np.testing.assert_array_equal(render_image(a, hands=hands), render_image(b, hands=hands))
    assert (render_image(a, hands="all") != render_image(b, hands="all")).any()
    assert (render_image(a, hands="current") != render_image(a, hands="none")).any()  # seat 0's own cards


def test_doubles_and_scores_are_drawn():
    """R6: a double changes the picture; a finished deal shows its scores (R8.1)."""
    rules = load_rules("classic")
    deal = Deal.from_hands(SUIT_HANDS, 0, "no_tricks", rules)
    plain = render_image(deal)
    deal.apply(barbu_env.action_id("double:right"))  # seat 1 doubles seat 0
    assert (render_image(deal) != plain).any()
    while not deal.is_over:
        deal.apply(deal.legal_actions()[0])
    over = render_image(deal)
    assert over.shape == (HEIGHT, WIDTH, 3)


def test_save_gif_round_trip(tmp_path):
    frames = [np.full((20, 30, 3), v, np.uint8) for v in (0, 90, 180)]
    path = save_gif(frames, tmp_path / "x.gif", fps=4)
    with Image.open(path) as im:
        assert im.n_frames == 3 and im.size == (30, 20)
    with pytest.raises(ValueError, match="at least one frame"):
        save_gif([], tmp_path / "y.gif")
    with pytest.raises(ValueError, match="frame 1 is"):
        save_gif([frames[0], np.zeros((20, 30), np.uint8)], tmp_path / "y.gif")


def test_record_deal_writes_every_decision(tmp_path):
    """The documented recipe: one deal of heuristic players, a frame per decision (R4.3: No queens may end early)."""
    path = record_deal(tmp_path / "deal.gif", seed=1, contract="no_queens", doubling="off")
    with Image.open(path) as im:
        frames = im.n_frames
        assert im.size == (WIDTH, HEIGHT)
    assert 10 < frames <= 53  # the start, then one per card played
    assert path.stat().st_size < 500_000
