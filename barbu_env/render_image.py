"""Pictures of the table for ``render_mode="rgb_array"``: an H×W×3 ``uint8`` image drawn with Pillow, and GIFs.

:func:`render_image` draws what :func:`barbu_env.render.render_text` writes: the contract and declarer, each
seat round the table (seat 0 at the bottom, its left, R1.3, to the left of the picture) with its tricks, points,
doubles (R6) and hand (face up as ``render_hands`` allows, ``"current"``: only the seat on move; face down
otherwise), the trick in progress (or the last trick, with its winner), the Fantan table (R7), the match totals
and the deal's scores once it is over. Suit symbols are drawn as shapes (no font needs them), the text uses
Pillow's built-in font, so no display, window or system font is needed.

:func:`save_gif` writes frames as an animated GIF; ``python -m barbu_env.render_image --out deal.gif`` records
one deal of heuristic players (the picture in the README).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .cards import RANKS, copies_cards
from .engine.deal import Deal, Phase
from .engine.match import Match
from .render import positive_mark, variant_title

WIDTH, HEIGHT = 800, 560
_FELT, _FELT_DARK, _INK, _CARD, _BACK = (22, 96, 56), (16, 72, 42), (245, 245, 235), (250, 250, 246), (60, 70, 140)
_RED, _BLACK, _GOLD, _ORANGE, _GREY = (200, 30, 40), (20, 20, 20), (250, 210, 60), (250, 150, 60), (170, 190, 175)
_CW, _CH = 34, 48  # a card in a hand
_TW, _TH = 46, 64  # a card on the table
_SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")


@cache
def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    """Pillow's built-in font at ``size`` (its fixed-size bitmap font where FreeType is missing)."""
    try:
        return ImageFont.load_default(size)
    except (TypeError, ImportError, OSError):
        return ImageFont.load_default()


def _suit(d: ImageDraw.ImageDraw, x: float, y: float, s: float, suit: int) -> None:
    """Suit symbol ``suit`` (0 clubs, 1 diamonds, 2 hearts, 3 spades) of size ``s`` centred at (x, y)."""
    color = _RED if suit in (1, 2) else _BLACK
    r = s / 4
    if suit == 1:
        d.polygon([(x, y - s / 2), (x + s * 0.38, y), (x, y + s / 2), (x - s * 0.38, y)], fill=color)
    elif suit == 2:
        d.ellipse([x - 2 * r, y - s / 2 + 1, x, y - s / 2 + 1 + 2 * r], fill=color)
        d.ellipse([x, y - s / 2 + 1, x + 2 * r, y - s / 2 + 1 + 2 * r], fill=color)
        d.polygon(
            [(x - 2 * r, y - s / 2 + 1 + r * 1.2), (x + 2 * r, y - s / 2 + 1 + r * 1.2), (x, y + s / 2)], fill=color
        )
    elif suit == 3:
        d.polygon([(x, y - s / 2), (x + 2 * r, y + r * 0.2), (x - 2 * r, y + r * 0.2)], fill=color)
        d.ellipse([x - 2 * r, y - r * 0.6, x, y + r * 1.4], fill=color)
        d.ellipse([x, y - r * 0.6, x + 2 * r, y + r * 1.4], fill=color)
        d.polygon([(x, y + r * 0.4), (x + r, y + s / 2), (x - r, y + s / 2)], fill=color)
    else:  # three leaves and a stem
        q = s * 0.21
        for lx, ly in ((x, y - s / 2 + q), (x - q * 1.15, y + q * 0.25), (x + q * 1.15, y + q * 0.25)):
            d.ellipse([lx - q, ly - q, lx + q, ly + q], fill=color)
        d.polygon([(x, y - q * 0.5), (x + q * 0.8, y + s / 2), (x - q * 0.8, y + s / 2)], fill=color)


def _card(d: ImageDraw.ImageDraw, x: float, y: float, c: int | None, w: int = _CW, h: int = _CH) -> None:
    """A card with top-left corner (x, y): face up for a card id, face down for ``None``."""
    if c is None:
        d.rounded_rectangle([x, y, x + w, y + h], radius=4, fill=_BACK, outline=_INK)
        d.rounded_rectangle([x + 4, y + 4, x + w - 4, y + h - 4], radius=3, outline=(120, 130, 200))
        return
    d.rounded_rectangle([x, y, x + w, y + h], radius=4, fill=_CARD, outline=(90, 90, 90))
    suit, rank = divmod(c, 13)
    label = "10" if RANKS[rank] == "T" else RANKS[rank]
    size = max(11, h // 4)
    d.text((x + 3, y + 2), label, font=_font(size), fill=_RED if suit in (1, 2) else _BLACK)
    _suit(d, x + 3 + size * 0.35, y + 5 + size * 1.3, size * 0.75, suit)  # under the rank: seen in a fanned hand
    if w >= _TW:
        _suit(d, x + w * 0.6, y + h * 0.62, w * 0.45, suit)


def _anchor(seat: int, n: int) -> tuple[float, float]:
    """Where seat ``seat`` sits: seat 0 at the bottom, the next seats clockwise as seen from above (R1.3)."""
    a = math.radians(270 - 360 * seat / n)
    rx = 0.42 if n == 6 else 0.36  # six 17-card hands (R11.5) need the room
    return WIDTH / 2 + rx * WIDTH * math.cos(a), HEIGHT / 2 - 0.38 * HEIGHT * math.sin(a)


def _contract_label(deal: Deal) -> str:
    if deal.contract is None:
        return "contract to be declared"
    if deal.trump >= 0:
        return f"Trumps: {_SUIT_NAMES[deal.trump]}"
    if deal.fantan_rank >= 0:
        name = "Domino" if deal.rules.king else "Fantan"
        return f"{name} from {RANKS[deal.fantan_rank].replace('T', '10')}"
    return deal.contract.name.replace("_", " ").capitalize() + positive_mark(deal)


def render_image(deal: Deal, match: Match | None = None, hands: str = "current") -> np.ndarray:
    """The table as an ``(HEIGHT, WIDTH, 3)`` ``uint8`` image (see the module docstring); ``hands`` is
    ``render_hands``: ``"current"``, ``"all"`` or ``"none"``."""
    img = Image.new("RGB", (WIDTH, HEIGHT), _FELT)
    d = ImageDraw.Draw(img)
    d.ellipse([70, 70, WIDTH - 70, HEIGHT - 70], fill=_FELT_DARK)
    n = deal.n
    small, big = _font(13), _font(17)
    title = f"Barbu King, {n} players: lowest total wins" if deal.rules.king else variant_title(deal.rules) or "Barbu"
    d.text((12, 8), title, font=big, fill=_INK)
    d.text((12, 30), f"{_contract_label(deal)}  ·  declarer P{deal.declarer}", font=small, fill=_GOLD)
    phase = f"phase: {Phase(deal.phase).name.lower()}"
    if deal.contract is not None and deal.contract.play != "fantan":
        phase += f"  ·  trick {min(deal.trick_no + 1, deal.num_tricks)}/{deal.num_tricks}"
    d.text((12, 48), phase, font=small, fill=_INK)
    if match is not None:
        head = "match over" if match.is_over else f"deal {match.deal_no + 1}/{match.num_deals}"
        d.text((WIDTH - 12, 8), head, font=big, fill=_INK, anchor="ra")
        totals = "  ".join(f"P{s} {t:+d}" for s, t in enumerate(match.totals))
        d.text((WIDTH - 12, 30), f"totals  {totals}", font=small, fill=_INK, anchor="ra")
    on_move = deal.current_player
    for s in range(n):
        _seat(d, deal, s, hands == "all" or (hands == "current" and s == on_move), s == on_move)
    _table(d, deal)
    if deal.is_over and deal.scores is not None:
        scores = "   ".join(f"P{s} {v:+d}" for s, v in enumerate(deal.scores))
        d.rounded_rectangle([WIDTH / 2 - 190, HEIGHT / 2 - 20, WIDTH / 2 + 190, HEIGHT / 2 + 20], 8, fill=_INK)
        d.text((WIDTH / 2, HEIGHT / 2), f"deal scores   {scores}", font=small, fill=_BLACK, anchor="mm")
    return np.asarray(img, dtype=np.uint8)


def _seat(d: ImageDraw.ImageDraw, deal: Deal, s: int, face_up: bool, moving: bool) -> None:
    """Seat ``s``: its label line (tricks, points, doubles) over its hand."""
    x, y = _anchor(s, deal.n)
    hand = copies_cards(deal.held(s))  # a card held twice (R11.5) is drawn twice
    step = 20 if len(hand) <= 13 else 17 if deal.n < 6 else 14
    width = _CW + step * max(len(hand) - 1, 0)
    left = min(max(x - width / 2, 8), WIDTH - 8 - width)
    top = min(max(y - _CH / 2, 100), HEIGHT - _CH - 8)
    label = (
        f"P{s}{'  (declarer)' if s == deal.declarer else ''}  ·  {deal.tricks_won[s]} tricks  ·  {deal.points[s]:+d}"
    )
    if deal.phase == Phase.FANTAN or deal.passes[s]:
        label += f"  ·  {deal.passes[s]} passes"
    d.text((left, top - 18), label, font=_font(13), fill=_GOLD if moving else _INK)
    if moving:
        d.rectangle([left - 4, top - 4, left + width + 4, top + _CH + 4], outline=_GOLD, width=2)
    if deal.doubles[s]:
        targets = " ".join(f"P{t}" for t in range(deal.n) if deal.doubles[s] >> t & 1)
        d.text((left, top - 34), f"doubles {targets}", font=_font(13), fill=_ORANGE)
    for i, c in enumerate(hand):
        _card(d, left + i * step, top, c if face_up else None)


def _table(d: ImageDraw.ImageDraw, deal: Deal) -> None:
    """The middle: the trick in progress (or the last one, greyed, with its winner), or the Fantan table."""
    cx, cy = WIDTH / 2, HEIGHT / 2
    if deal.contract is not None and deal.contract.play == "fantan":
        for suit in range(4):
            lo, hi = deal.fantan_lo[suit], deal.fantan_hi[suit]
            y = cy - 2 * (_TH * 0.55) + suit * _TH * 0.55 - 6
            if lo < 0:
                d.text((cx, y + _TH * 0.25), f"{_SUIT_NAMES[suit]}: not open", font=_font(13), fill=_GREY, anchor="mm")
                continue
            run = list(range(13 * suit + lo, 13 * suit + hi + 1))
            x0 = cx - (_CW * 0.6 * (len(run) - 1) + _CW) / 2
            for i, c in enumerate(run):
                _card(d, x0 + i * _CW * 0.6, y, c, _CW, int(_TH * 0.5))
        if deal.finished:
            out = " ".join(f"P{s}" for s in deal.finished)
            d.text((cx, cy + 2 * _TH * 0.55 + 8), f"out: {out}", font=_font(13), fill=_INK, anchor="mm")
        return
    trick, leader, winner = deal.trick, deal.leader, None
    if not trick and deal.last_trick is not None:
        leader, trick, winner = deal.last_trick
    for k, c in enumerate(trick):
        s = (leader + k) % deal.n
        ax, ay = _anchor(s, deal.n)
        x, y = cx + 0.32 * (ax - cx) - _TW / 2, cy + 0.42 * (ay - cy) - _TH / 2
        _card(d, x, y, c, _TW, _TH)
        if winner is not None:  # the last trick: greyed, its winner's card outlined
            d.rounded_rectangle([x, y, x + _TW, y + _TH], 4, outline=_GOLD if s == winner else _GREY, width=2)
    if winner is not None:
        d.text((cx, cy), f"last trick → P{winner}", font=_font(13), fill=_INK, anchor="mm")


def save_gif(frames: Sequence[np.ndarray], path: str | Path, fps: float = 2.0, hold_last: int = 4) -> Path:
    """Write ``frames`` (``H×W×3`` ``uint8``) as an animated GIF looping forever, ``fps`` frames a second, the
    last frame shown ``hold_last`` times as long. ``ValueError`` for no frames or frames of another shape."""
    if not frames:
        raise ValueError("save_gif needs at least one frame")
    shape = frames[0].shape
    for i, f in enumerate(frames):
        if f.shape != shape or f.dtype != np.uint8 or f.ndim != 3 or f.shape[2] != 3:
            raise ValueError(f"frame {i} is {f.dtype} {f.shape}: every frame must be uint8 {shape} (H×W×3)")
    # one palette for every frame (from the first, middle and last frames side by side), so that a frame differs
    # from the one before only where the table changed: small GIFs
    montage = np.concatenate([frames[0], frames[len(frames) // 2], frames[-1]], axis=1)
    palette = Image.fromarray(montage).quantize(colors=48, method=Image.Quantize.MEDIANCUT)
    images = [Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
    ms = int(1000 / fps)
    path = Path(path)
    images[0].save(path, save_all=True, append_images=images[1:], duration=[ms] * (len(images) - 1) + [ms * hold_last],
                   loop=0, optimize=True)  # fmt: skip
    return path


def record_deal(path: str | Path, seed: int = 0, fps: float = 2.0, **env_kwargs: object) -> Path:
    """Play one deal of heuristic players in ``barbu_env.env(mode="deal", render_mode="rgb_array", ...)`` and
    write every decision's picture to the GIF ``path``."""
    from . import agents
    from .env import env as make_env

    kwargs = {"mode": "deal", "render_hands": "all", **env_kwargs, "render_mode": "rgb_array"}
    game = make_env(**kwargs)
    players = {a: agents.make("heuristic", seed=seed + i) for i, a in enumerate(game.possible_agents)}
    game.reset(seed=seed)
    frames = [game.render()]
    for agent in game.agent_iter():
        _, _, term, trunc, _ = game.last()
        if term or trunc:
            game.step(None)
            continue
        game.step(players[agent].act(game, agent))
        frames.append(game.render())
    return save_gif(frames, path, fps)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m barbu_env.render_image", description="Record one deal as a GIF.")
    parser.add_argument("--out", type=Path, default=Path("deal.gif"))
    parser.add_argument("--contract", default="no_queens")
    parser.add_argument("--rules", default=None, help="a rules preset (classic by default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fps", type=float, default=2.0)
    args = parser.parse_args(argv)
    path = record_deal(args.out, args.seed, args.fps, contract=args.contract, rules=args.rules)
    print(f"wrote {path} ({path.stat().st_size // 1024} kB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
