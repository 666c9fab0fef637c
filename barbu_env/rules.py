"""Rule options: one frozen dataclass holding every option of RULES.md, with presets.

``Rules()`` is classic Barbu with every documented default. Presets live as YAML files under
``configs/rules/`` (``classic``, ``ravage_city``, ``basic52``, ``basic32``, ``king``, …) and are loaded
with :func:`load_rules`; unknown keys and values are errors that list the valid ones.

Barbu King (R11) is the same engine with ``game="king"``: its contracts are rows of the same table
(:mod:`barbu_env.contracts`) and its schedule is data (:class:`barbu_env.engine.Match`); ``players``
(3, 4 or 5, R11.4; 6 with two packs, R11.5), ``short`` and ``choose`` (R11.3) apply to it only.
``positive`` (R10.3) negates some negative contracts of classic Barbu; with a positive salad the negative
one is played too, as ``anti_salad``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from .cards import DECK32, FULL_DECK, KING_OF_HEARTS

#: Allowed values of each string option.
CHOICES: dict[str, tuple[str, ...]] = {
    "schedule": ("blocks", "rotate"),
    "tiebreak": ("none", "first_declarer", "extra_deals"),
    "hearts_lead": ("only_hearts_left", "until_broken", "free"),
    "king_discard": ("free", "forced"),
    "trump_lead": ("must_if_able", "free"),
    "overtrump": ("no", "yes"),
    "doubling": ("classic", "declarer_only", "off"),
    "undoubled_negative": ("play", "split"),
    "fantan_pass": ("forced", "free"),
    "scoring": ("classic", "basic52", "basic32"),
}
BOOL_OPTIONS = ("ace_plays_again", "ravage_city", "salad")
#: Options of the game itself (R11), kept apart from ``CHOICES``/``BOOL_OPTIONS`` because the classic
#: observation's ``rules`` block is laid out from those two (its size must not change).
GAMES = ("barbu", "king")
PLAYER_COUNTS = (3, 4, 5, 6)
#: R12.1: seat counts of classic Barbu (``game="barbu"``).
BARBU_PLAYER_COUNTS = (3, 4, 5)
#: R11.4 / R11.5: seat counts of Barbu King (six players play with two packs).
KING_PLAYER_COUNTS = (3, 4, 5, 6)
KING_BOOL_OPTIONS = ("short", "choose")
#: Options that Barbu King (R11) does not have: (name, the only value allowed with ``game="king"``).
_NOT_IN_KING = (("ravage_city", False), ("salad", False), ("scoring", "classic"), ("doubling", "off"),
                ("undoubled_negative", "play"), ("positive", ()))  # fmt: skip
#: R10.3: the negative contracts that option ``positive`` may negate, in table order.
POSITIVE_CHOICES: tuple[str, ...] = ("no_tricks", "no_hearts", "no_queens", "salad")


@dataclass(frozen=True)
class Rules:
    """Every option of RULES.md; the defaults are classic Barbu (seeds 000/004)."""

    schedule: str = "blocks"  # R2.2: "blocks" (7 deals per declarer in a row) or "rotate"
    tiebreak: str = "none"  # R2.4: "none", "first_declarer" or "extra_deals"
    hearts_lead: str = "only_hearts_left"  # R4.1: "only_hearts_left", "until_broken" or "free"
    king_discard: str = "free"  # R4.4: "free" or "forced" (Spanish rules)
    trump_lead: str = "must_if_able"  # R5.4: "must_if_able" or "free"
    overtrump: str = "no"  # R5.5: "no" or "yes" (must beat every trump in the trick if able)
    doubling: str = "classic"  # R6.7: "classic", "declarer_only" or "off"
    undoubled_negative: str = "play"  # R6.6: "play" or "split" (undoubled negative deal not played)
    fantan_pass: str = "forced"  # R7.3: "forced" (pass only with no playable card) or "free"
    ace_plays_again: bool = False  # R7.5: playing an ace in Fantan gives another turn
    ravage_city: bool = False  # R9: the eighth contract; 32 deals; No King -16, Fantan 55/30/10/-10
    scoring: str = "classic"  # R10.1: "classic" (R4), "basic52" or "basic32" (32-card deck)
    salad: bool = False  # R10.2: the Salad contract (No tricks+hearts+queens+King in one deal)
    game: str = "barbu"  # R11: "barbu" (R1-R10) or "king" (Barbu King: 8 fixed deals, lowest total wins)
    players: int = 4  # R1.3 / R11.4 / R11.5 / R12.1: number of seats, 3, 4 or 5 (6: Barbu King only)
    short: bool = False  # R11.3: King with deals 1-5 only (no Take tricks, No first or last, Domino)
    choose: bool = False  # R11.3: King where the dealer is declarer and chooses each contract once
    positive: tuple[str, ...] = ()  # R10.3: negative contracts played with every point negated

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) and name == "overtrump":
                object.__setattr__(self, name, "yes" if value else "no")
            elif isinstance(value, str) and value in allowed:
                object.__setattr__(self, name, str(value))  # a str subclass (numpy's str_) is stored as str
            else:
                raise ValueError(f"bad value {value!r} for rule option {name!r}: expected one of {allowed}")
        for name in (*BOOL_OPTIONS, *KING_BOOL_OPTIONS):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"bad value {value!r} for rule option {name!r}: expected true or false")
            object.__setattr__(self, name, bool(value))
        if isinstance(self.game, str) and self.game in GAMES:
            object.__setattr__(self, "game", str(self.game))
        players = self.players
        if isinstance(players, (int, np.integer)) and not isinstance(players, (bool, np.bool_)):
            object.__setattr__(self, "players", int(players))  # numpy integers are ints
        else:
            raise ValueError(f"bad value {players!r} for rule option 'players': expected an int in {PLAYER_COUNTS}")
        self._check_positive()
        self._check_game()
        if self.undoubled_negative == "split" and self.doubling == "off":
            raise ValueError(
                "undoubled_negative='split' needs a doubling phase: with doubling='off' no negative "
                "deal could ever be played (use undoubled_negative='play')"
            )

    def _check_positive(self) -> None:
        """R10.3: ``positive`` is a list of distinct :data:`POSITIVE_CHOICES`, stored as a tuple in table order."""
        value = self.positive
        if isinstance(value, str) or not isinstance(value, (list, tuple)):
            raise ValueError(
                f"bad value {value!r} for rule option 'positive': expected a list of contract names from "
                f"{list(POSITIVE_CHOICES)}"
            )
        for name in value:
            if not (isinstance(name, str) and name in POSITIVE_CHOICES):
                raise ValueError(
                    f"bad contract {name!r} in rule option 'positive': expected names from {list(POSITIVE_CHOICES)}"
                )
        if len(set(value)) != len(value):
            raise ValueError(f"rule option 'positive' names a contract twice: {list(value)}")
        if "salad" in value and not self.salad:
            raise ValueError(
                "positive=['salad', ...] needs salad=True: the salad is played only with option salad (R10.3)"
            )
        object.__setattr__(self, "positive", tuple(n for n in POSITIVE_CHOICES if n in value))

    def _check_game(self) -> None:
        """R11: the game, its player count and its options; King excludes Barbu-only options."""
        if not (isinstance(self.game, str) and self.game in GAMES):
            raise ValueError(f"bad value {self.game!r} for rule option 'game': expected one of {GAMES}")
        if self.players not in PLAYER_COUNTS:
            raise ValueError(f"bad value {self.players!r} for rule option 'players': expected one of {PLAYER_COUNTS}")
        if self.game == "barbu":
            if self.players not in BARBU_PLAYER_COUNTS:
                raise ValueError(
                    f"bad value {self.players!r} for rule option 'players' with game='barbu': classic Barbu has "
                    f"{BARBU_PLAYER_COUNTS} seats (R12.1); six players play Barbu King with two packs (game='king', "
                    "R11.5)"
                )
            if self.ravage_city and self.players != 4:
                raise ValueError(
                    f"ravage_city=True needs players=4 (R12.7): Ravage City's -24 cannot be shared in whole "
                    f"points by a five-way tie; with players={self.players} use ravage_city=False"
                )
            for name in KING_BOOL_OPTIONS:
                if getattr(self, name):
                    raise ValueError(f"{name}=True is a Barbu King option (R11.3): use it with game='king'")
            return
        for name, value in _NOT_IN_KING:
            if getattr(self, name) != value:
                raise ValueError(
                    f"{name}={getattr(self, name)!r} does not apply to Barbu King (R11.1: no doubling, no "
                    f"trumps, its own contracts): with game='king' use {name}={value!r}"
                )
        if self.tiebreak == "extra_deals":
            raise ValueError("tiebreak='extra_deals' is not supported with game='king': use 'none' or 'first_declarer'")
        if self.schedule != "blocks" and not self.choose:
            raise ValueError(
                f"schedule={self.schedule!r} applies to Barbu King only with choose=True (R11.3); the "
                "fixed order moves the dealer one seat left every deal (R11.1)"
            )

    @property
    def king(self) -> bool:
        """True for Barbu King (R11): points are bad, the lowest total wins."""
        return self.game == "king"

    @property
    def score_sign(self) -> int:
        """+1 when points are good (Barbu), -1 when they are bad (Barbu King, R11): the env's reward
        is ``score_sign * points`` and agents maximise it."""
        return -1 if self.game == "king" else 1

    @property
    def deck(self) -> int:
        """Bitmask of the cards in play: 52, 32 with ``basic32`` (R10.1), less the cards R11.4 (King) or
        R12.1 (Barbu) remove for 3 or 5 players."""
        return _deck(self.scoring == "basic32", self.players, self.game)

    @property
    def deck2(self) -> int:
        """Bitmask of the cards in play twice: with six players of Barbu King (R11.5, two packs) every card but
        2♣ and K♥ (the Barbu, one copy, has K♥'s id); 0 otherwise."""
        return _TWO_PACKS_SECOND if self.two_packs else 0

    @property
    def two_packs(self) -> bool:
        """True for six-player Barbu King (R11.5): two packs, so a hand may hold two copies of a card."""
        return self.players == 6

    @property
    def deck_size(self) -> int:
        """Cards in play: 52, 32 for ``basic32`` (R10.1), 51 or 50 for 3 or 5 players (R11.4, R12.1), 30
        for ``basic32`` at 3 or 5, 102 for six-player King (R11.5, both copies counted)."""
        return self.deck.bit_count() + self.deck2.bit_count()

    @property
    def hand_size(self) -> int:
        """Cards per player and tricks per deal: 13, 8 with 32 cards, 17 / 10 for 3 / 5 players (10 / 6 with
        32 cards), 17 for six-player King (R11.5)."""
        return self.deck_size // self.players

    def replace(self, **changes: Any) -> Rules:
        """A copy with some options changed (validated)."""
        check_keys(changes)
        return dataclasses.replace(self, **changes)


def _deck(deck32: bool, players: int, game: str = "barbu") -> int:
    if deck32:
        return DECK32 & ~REMOVED_CARDS_32.get(players, 0)
    return FULL_DECK & ~(KING_REMOVED_CARDS if game == "king" else REMOVED_CARDS).get(players, 0)


_2C, _2D, _7C, _7D = 1 << 0, 1 << 13, 1 << 5, 1 << 18
#: R12.1: cards classic Barbu takes out of the 52-card pack by player count (2♦ for 3, 2♦ and 2♣ for 5).
REMOVED_CARDS: dict[int, int] = {3: _2D, 5: _2C | _2D}
#: R12.1: cards taken out of ``basic32``'s 32-card pack for 3 or 5 players (7♦ and 7♣).
REMOVED_CARDS_32: dict[int, int] = {3: _7C | _7D, 5: _7C | _7D}
#: R11.4: cards Barbu King takes out of the pack by player count (2♣ for 3 players, 2♣ and 2♦ for 5).
KING_REMOVED_CARDS: dict[int, int] = {3: _2C, 5: _2C | _2D}
#: R11.5: the cards of the second pack with six players of King: all but 2♣ and K♥ (the Barbu is the only K♥).
_TWO_PACKS_SECOND = FULL_DECK & ~_2C & ~(1 << KING_OF_HEARTS)

OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))
PRESET_DIR = Path(__file__).resolve().parent.parent / "configs" / "rules"
#: Built-in presets, kept identical to the YAML files of ``configs/rules/`` (a test checks it), so
#: that an installed package without the repository's ``configs/`` still knows them.
PRESETS: dict[str, dict[str, Any]] = {
    "classic": {},
    "ravage_city": {"ravage_city": True},
    "basic52": {"scoring": "basic52"},
    "basic32": {"scoring": "basic32"},
    "salad": {"salad": True},
    "rotate": {"schedule": "rotate"},
    "spanish": {"king_discard": "forced"},
    "online": {"overtrump": "yes", "hearts_lead": "until_broken", "ace_plays_again": True, "salad": True},
    "king": {"game": "king", "doubling": "off"},
    "king_short": {"game": "king", "doubling": "off", "short": True},
    "king_choose": {"game": "king", "doubling": "off", "choose": True},
    "king3": {"game": "king", "doubling": "off", "players": 3},
    "king5": {"game": "king", "doubling": "off", "players": 5},
    "king6": {"game": "king", "doubling": "off", "players": 6},
    "classic3": {"players": 3},
    "classic5": {"players": 5},
    "positive1": {"salad": True, "positive": ("no_tricks", "salad")},
    "positive2": {"salad": True, "positive": ("no_tricks", "no_hearts", "salad")},
    "positive3": {"salad": True, "positive": ("no_tricks", "no_hearts", "no_queens", "salad")},
}


def check_keys(options: dict[str, Any]) -> None:
    """Raise ``ValueError`` naming any key that is not a rule option."""
    unknown = sorted(set(options) - set(OPTION_NAMES))
    if unknown:
        raise ValueError(f"unknown rule option(s) {unknown}: valid options are {list(OPTION_NAMES)}")


def rules_from_dict(options: dict[str, Any]) -> Rules:
    """Rules from a mapping of option names to values; unknown keys are errors."""
    if not isinstance(options, dict):
        raise ValueError(f"rule options must be a mapping of option names to values, got {type(options).__name__}")
    check_keys(options)
    return Rules(**options)


def load_rules(spec: str | Path | dict[str, Any] | Rules | None = None, **overrides: Any) -> Rules:
    """Rules from a preset name, a YAML file path, a mapping or a ``Rules``, with keyword overrides."""
    if spec is None:
        base = Rules()
    elif isinstance(spec, Rules):
        base = spec
    elif isinstance(spec, dict):
        base = rules_from_dict(spec)
    elif isinstance(spec, (str, Path)) and str(spec) in PRESETS:
        base = rules_from_dict(dict(PRESETS[str(spec)]))
    elif isinstance(spec, (str, Path)) and (str(spec).endswith((".yaml", ".yml")) or Path(spec).exists()):
        base = rules_from_dict(_read_yaml(Path(spec)))
    else:
        raise ValueError(
            f"unknown rules {spec!r}: expected a preset name {sorted(PRESETS)}, a YAML file path, "
            "a mapping of options or a Rules object"
        )
    return base.replace(**overrides) if overrides else base


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    if not path.is_file():
        raise ValueError(f"rules file {str(path)!r} not found")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        raise ValueError(f"rules file {str(path)!r} is not valid YAML: {e}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"rules file {str(path)!r} must hold a mapping of option names to values")
    return data
