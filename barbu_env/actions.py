"""The flat action layout shared by the engine, the env and every agent (RULES.md R3.3, R6, R7).

===========  =========  =====================================================================
ids          count      meaning
===========  =========  =====================================================================
0..51        52         play a card, id ``13 * suit + rank`` (R1.2): ``"2C"`` … ``"AS"``
52           1          ``"pass"`` (Fantan, R7.3)
53..61       9          ``"declare:<contract>"`` for the contracts without a parameter, in the
                        order of :data:`PLAIN_CONTRACTS`
62..65       4          ``"declare:trumps:C|D|H|S"`` (R3.2)
66..78       13         ``"declare:fantan:2..A"`` (R3.2; ``T`` for ten)
79..86       8          ``"double:<targets>"``, targets relative to the acting player (R1.3):
                        none, left, across, right, left+across, left+right, across+right,
                        left+across+right
87           1          ``"declare:anti_salad"`` (R10.3), only under rules with a positive salad:
                        :func:`num_actions` is then 88
===========  =========  =====================================================================

With three or five players (R12.2) the doubling ids are the 2**(n-1) subsets of the other players,
79..82 or 79..94, named by offsets (``"double:+1"``, ``"double:+2+4"``), and ``declare:anti_salad``
follows them (83 or 95): pass ``players=n`` to :func:`action_name` / :func:`action_id`. Barbu King
keeps the four-player layout at every count (it has no doubling).
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from .cards import NUM_CARDS, RANKS, SUITS, format_card, parse_card
from .contracts import ANTI_SALAD as _ANTI_SALAD_NAME
from .contracts import CONTRACT_NAMES

#: Seat counts with an action layout: 3, 4, 5 (Barbu, R12) and 6 (Barbu King, R11.5).
PLAYER_COUNTS = (3, 4, 5, 6)

if TYPE_CHECKING:
    from .rules import Rules

PASS = 52
#: Contracts declared without a parameter, in action order (Barbu King's last two: R11).
PLAIN_CONTRACTS: tuple[str, ...] = tuple(n for n in CONTRACT_NAMES if n not in ("trumps", "fantan"))
DECLARE_BASE = 53
TRUMPS_BASE = DECLARE_BASE + len(PLAIN_CONTRACTS)  # 62
FANTAN_BASE = TRUMPS_BASE + 4  # 66
DOUBLE_BASE = FANTAN_BASE + 13  # 79
RELATIVE_NAMES = ("left", "across", "right")


@cache
def double_subsets(players: int = 4) -> tuple[int, ...]:
    """Doubling subsets in action order, as bitmasks of relative seats (bit i = offset +(i+1), R12.2): by
    size, then by offsets. Four players: none, left, across, right, left+across, left+right, …"""
    k = players - 1
    return tuple(sorted(range(1 << k), key=lambda m: (m.bit_count(), [i for i in range(k) if m >> i & 1])))


#: Four players' doubling subsets (bit 0 = left, 1 = across, 2 = right).
DOUBLE_SUBSETS: tuple[int, ...] = double_subsets(4)
DOUBLE_OF_SUBSET: dict[int, int] = {m: DOUBLE_BASE + i for i, m in enumerate(DOUBLE_SUBSETS)}
NUM_ACTIONS = DOUBLE_BASE + len(DOUBLE_SUBSETS)  # 87: the ids of four players' rules without ``anti_salad``


def anti_salad_id(players: int = 4) -> int:
    """R10.3: the declaration of ``anti_salad``, the id after the doubling ones (87 at four players)."""
    return DOUBLE_BASE + (1 << (players - 1))


#: Four players' ``declare:anti_salad``, the one id past :data:`NUM_ACTIONS`.
ANTI_SALAD = anti_salad_id(4)


def num_actions(rules: Rules) -> int:
    """Size of the action space under ``rules``: the doubling ids of ``rules.players`` (R12.2), plus
    ``declare:anti_salad`` with a positive salad (R10.3). Barbu King, which has no doubling, keeps the
    four-player layout (:data:`NUM_ACTIONS`) at every player count."""
    if rules.game == "king":
        return NUM_ACTIONS
    top = anti_salad_id(rules.players)
    return top + 1 if "salad" in rules.positive else top


def _subset_name(m: int, players: int) -> str:
    if not m:
        return "none"
    if players == 4:
        return "+".join(RELATIVE_NAMES[i] for i in range(3) if m >> i & 1)
    return "".join(f"+{i + 1}" for i in range(players - 1) if m >> i & 1)


def contract_name(action: int, players: int = 4) -> str:
    """Contract text of a declare action, without ``declare:`` (``"no_queens"``, ``"trumps:S"``)."""
    if DECLARE_BASE <= action < TRUMPS_BASE:
        return PLAIN_CONTRACTS[action - DECLARE_BASE]
    if TRUMPS_BASE <= action < FANTAN_BASE:
        return "trumps:" + SUITS[action - TRUMPS_BASE]
    if FANTAN_BASE <= action < DOUBLE_BASE:
        return "fantan:" + RANKS[action - FANTAN_BASE]
    if action == anti_salad_id(players):
        return _ANTI_SALAD_NAME
    raise ValueError(
        f"action {action!r} is not a declaration (ids {DECLARE_BASE}..{DOUBLE_BASE - 1} and "
        f"{anti_salad_id(players)} at {players} players)"
    )


@cache
def _names(players: int) -> tuple[str, ...]:
    """Every action name at ``players`` seats, by id."""
    if players not in PLAYER_COUNTS:
        raise ValueError(f"bad players {players!r}: expected one of {PLAYER_COUNTS}")
    return (
        *(format_card(c) for c in range(NUM_CARDS)),
        "pass",
        *("declare:" + contract_name(a) for a in range(DECLARE_BASE, DOUBLE_BASE)),
        *("double:" + _subset_name(m, players) for m in double_subsets(players)),
        "declare:" + _ANTI_SALAD_NAME,
    )


@cache
def _ids(players: int) -> dict[str, int]:
    return {n: i for i, n in enumerate(_names(players))}


def naming_players(rules: Rules) -> int:
    """The ``players`` of :func:`action_name` / :func:`action_id` under ``rules``: ``rules.players`` (R12.2);
    4 for Barbu King, which keeps the four-player ids at every count (it has no doubling)."""
    return 4 if rules.game == "king" else rules.players


@cache
def action_names(rules: Rules) -> tuple[str, ...]:
    """The names of the :func:`num_actions` ids under ``rules``, by id."""
    return _names(naming_players(rules))[: num_actions(rules)]


def action_name(action: int, players: int = 4) -> str:
    """Name of an action id at ``players`` seats, e.g. ``12 -> "AC"``, ``79 -> "double:none"``; doubling
    actions name relative seats, ``"double:left+right"`` at four players, offsets (``"double:+1+3"``) else."""
    names = _names(players)
    top = len(names)
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < top:
        try:
            a = int(action)  # numpy integers
        except (TypeError, ValueError):
            a = -1
        if a != action or not 0 <= a < top:
            raise ValueError(f"bad action {action!r}: expected an int in 0..{top - 1} at {players} players")
        action = a
    return names[action]


def action_id(name: str, players: int = 4) -> int:
    """Id of an action name at ``players`` seats (``"QS"``, ``"10D"``, ``"pass"``, ``"declare:trumps:S"``,
    ``"double:left"`` at four players, ``"double:+1+2"`` at three or five)."""
    if not isinstance(name, str):
        raise ValueError(f"bad action name {name!r}: expected a string")
    ids = _ids(players)
    key = name.strip()
    if key in ids:
        return ids[key]
    low = key.lower()
    if low.startswith("declare:"):
        try:
            return declare_id(key[len("declare:") :], players)
        except ValueError:
            pass
    elif low.startswith("double:"):
        parts = [p for p in low[len("double:") :].split("+") if p]
        if players == 4:
            if parts and all(p in RELATIVE_NAMES for p in parts) and len(set(parts)) == len(parts):
                return DOUBLE_OF_SUBSET[sum(1 << RELATIVE_NAMES.index(p) for p in parts)]
        else:
            offsets = [str(i) for i in range(1, players)]
            if parts and all(p in offsets for p in parts) and len(set(parts)) == len(parts):
                m = sum(1 << (int(p) - 1) for p in parts)
                return DOUBLE_BASE + double_subsets(players).index(m)
    else:
        try:
            return parse_card(key)
        except ValueError:
            pass
    targets = (
        f"targets from {list(RELATIVE_NAMES)} joined by '+'"
        if players == 4
        else f"offsets from +1..+{players - 1} ('double:+1+2')"
    )
    raise ValueError(
        f"unknown action name {name!r}: expected a card ('QS', 'TD', '10D'), 'pass', "
        f"'declare:<contract>' with contract one of {[*PLAIN_CONTRACTS, _ANTI_SALAD_NAME]}, 'trumps:<C|D|H|S>' or "
        f"'fantan:<2..A>', or 'double:none' / 'double:' + {targets}"
    )


def declare_id(contract: str, players: int = 4) -> int:
    """Action id of a contract text as taken by ``contract=`` (``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``)."""
    text = contract.strip()
    low = text.lower()
    if low in PLAIN_CONTRACTS:
        return DECLARE_BASE + PLAIN_CONTRACTS.index(low)
    if low == _ANTI_SALAD_NAME:
        return anti_salad_id(players)
    head, _, param = low.partition(":")
    if head == "trumps" and len(param) == 1 and param.upper() in SUITS:
        return TRUMPS_BASE + SUITS.index(param.upper())
    if head == "fantan" and param:
        p = "T" if param == "10" else param.upper()
        if len(p) == 1 and p in RANKS:
            return FANTAN_BASE + RANKS.index(p)
    raise ValueError(
        f"unknown contract {contract!r}: expected one of {[*PLAIN_CONTRACTS, _ANTI_SALAD_NAME]}, 'trumps:C|D|H|S' or "
        "'fantan:2..9|T|J|Q|K|A'"
    )


def is_card(action: int) -> bool:
    """True for the 52 card actions."""
    return 0 <= action < NUM_CARDS
