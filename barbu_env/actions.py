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
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .cards import NUM_CARDS, RANKS, SUITS, format_card, parse_card
from .contracts import ANTI_SALAD as _ANTI_SALAD_NAME
from .contracts import CONTRACT_NAMES

if TYPE_CHECKING:
    from .rules import Rules

PASS = 52
#: Contracts declared without a parameter, in action order (Barbu King's last two: R11).
PLAIN_CONTRACTS: tuple[str, ...] = tuple(n for n in CONTRACT_NAMES if n not in ("trumps", "fantan"))
DECLARE_BASE = 53
TRUMPS_BASE = DECLARE_BASE + len(PLAIN_CONTRACTS)  # 62
FANTAN_BASE = TRUMPS_BASE + 4  # 66
DOUBLE_BASE = FANTAN_BASE + 13  # 79
#: Doubling subsets as bitmasks of relative seats (bit 0 = left, 1 = across, 2 = right).
DOUBLE_SUBSETS: tuple[int, ...] = (0b000, 0b001, 0b010, 0b100, 0b011, 0b101, 0b110, 0b111)
DOUBLE_OF_SUBSET: dict[int, int] = {m: DOUBLE_BASE + i for i, m in enumerate(DOUBLE_SUBSETS)}
NUM_ACTIONS = DOUBLE_BASE + len(DOUBLE_SUBSETS)  # 87: the ids of every rule set without ``anti_salad``
#: R10.3: the declaration of ``anti_salad``, the one id past :data:`NUM_ACTIONS`.
ANTI_SALAD = NUM_ACTIONS
RELATIVE_NAMES = ("left", "across", "right")


def _subset_name(m: int) -> str:
    names = [RELATIVE_NAMES[i] for i in range(3) if m >> i & 1]
    return "+".join(names) if names else "none"


def contract_name(action: int) -> str:
    """Contract text of a declare action, without ``declare:`` (``"no_queens"``, ``"trumps:S"``)."""
    if DECLARE_BASE <= action < TRUMPS_BASE:
        return PLAIN_CONTRACTS[action - DECLARE_BASE]
    if TRUMPS_BASE <= action < FANTAN_BASE:
        return "trumps:" + SUITS[action - TRUMPS_BASE]
    if FANTAN_BASE <= action < DOUBLE_BASE:
        return "fantan:" + RANKS[action - FANTAN_BASE]
    if action == ANTI_SALAD:
        return _ANTI_SALAD_NAME
    raise ValueError(
        f"action {action!r} is not a declaration (ids {DECLARE_BASE}..{DOUBLE_BASE - 1} and {ANTI_SALAD})"
    )


_NAMES: list[str] = (
    [format_card(c) for c in range(NUM_CARDS)]
    + ["pass"]
    + ["declare:" + contract_name(a) for a in range(DECLARE_BASE, DOUBLE_BASE)]
    + ["double:" + _subset_name(m) for m in DOUBLE_SUBSETS]
    + ["declare:" + _ANTI_SALAD_NAME]
)
_IDS: dict[str, int] = {n: i for i, n in enumerate(_NAMES)}


def num_actions(rules: Rules) -> int:
    """Size of the action space under ``rules``: :data:`NUM_ACTIONS`, one more with ``anti_salad`` (R10.3)."""
    return NUM_ACTIONS + 1 if "salad" in rules.positive else NUM_ACTIONS


def action_name(action: int) -> str:
    """Name of an action id, e.g. ``12 -> "AC"``, ``79 -> "double:none"``."""
    top = len(_NAMES)
    if isinstance(action, bool) or not isinstance(action, int) or not 0 <= action < top:
        try:
            a = int(action)  # numpy integers
        except (TypeError, ValueError):
            a = -1
        if a != action or not 0 <= a < top:
            raise ValueError(f"bad action {action!r}: expected an int in 0..{top - 1}")
        action = a
    return _NAMES[action]


def action_id(name: str) -> int:
    """Id of an action name (``"QS"``, ``"10D"``, ``"pass"``, ``"declare:trumps:S"``, ``"double:left"``)."""
    if not isinstance(name, str):
        raise ValueError(f"bad action name {name!r}: expected a string")
    key = name.strip()
    if key in _IDS:
        return _IDS[key]
    low = key.lower()
    if low.startswith("declare:"):
        try:
            return declare_id(key[len("declare:"):])
        except ValueError:
            pass
    elif low.startswith("double:"):
        parts = [p for p in low[len("double:"):].split("+") if p]
        if parts and all(p in RELATIVE_NAMES for p in parts) and len(set(parts)) == len(parts):
            return DOUBLE_OF_SUBSET[sum(1 << RELATIVE_NAMES.index(p) for p in parts)]
    else:
        try:
            return parse_card(key)
        except ValueError:
            pass
    raise ValueError(
        f"unknown action name {name!r}: expected a card ('QS', 'TD', '10D'), 'pass', "
        f"'declare:<contract>' with contract one of {list(PLAIN_CONTRACTS)}, 'trumps:<C|D|H|S>' or "
        f"'fantan:<2..A>', or 'double:none' / 'double:' + targets from {list(RELATIVE_NAMES)} joined by '+'"
    )


def declare_id(contract: str) -> int:
    """Action id of a contract text as taken by ``contract=`` (``"no_queens"``, ``"trumps:S"``, ``"fantan:5"``)."""
    text = contract.strip()
    low = text.lower()
    if low in PLAIN_CONTRACTS:
        return DECLARE_BASE + PLAIN_CONTRACTS.index(low)
    if low == _ANTI_SALAD_NAME:
        return ANTI_SALAD
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
