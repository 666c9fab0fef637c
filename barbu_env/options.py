"""``key=value`` option strings, read the same way everywhere: agent specs (``pimc:samples=8``),
``barbu-eval --rule``, the training scripts' ``--set``.

Values: ``true``/``false``/``yes``/``no`` (any case) are booleans, decimal integers are ints, other
numbers are floats, ``[a, b]`` is a list of such values, ``{k: v}`` a YAML flow mapping, anything
else is text. :func:`as_bool` is the one reading of a boolean option.
"""

from __future__ import annotations

from typing import Any

TRUE, FALSE = ("true", "yes", "1"), ("false", "no", "0")


def parse_value(text: str) -> Any:
    """The value of an option string: bool, int, float, list of those, mapping, or the stripped text."""
    s = text.strip()
    if s.startswith("[") and s.endswith("]"):
        inner = s[1:-1].strip()
        return [parse_value(item) for item in inner.split(",")] if inner else []
    if s.startswith("{") and s.endswith("}"):
        import yaml

        try:
            return yaml.safe_load(s)
        except yaml.YAMLError as e:
            raise ValueError(f"bad mapping {s!r}: {str(e).splitlines()[0]}") from None
    low = s.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    for kind in (int, float):
        try:
            return kind(s)
        except ValueError:
            pass
    return s


def parse_option(text: str, what: str = "option") -> tuple[str, Any]:
    """``"key=value"`` -> ``(key, parse_value(value))``; ``ValueError`` naming ``text`` otherwise."""
    key, eq, value = str(text).partition("=")
    if not eq or not key.strip():
        raise ValueError(f"bad {what} {text!r}: expected key=value")
    return key.strip(), parse_value(value)


def rule_option_arg(text: str) -> tuple[str, Any]:
    """A command line's ``KEY=VALUE`` rule option (argparse ``type=``): :func:`parse_option`'s pair, its error as
    argparse's."""
    import argparse

    try:
        return parse_option(text, "rule option")
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"{e} (e.g. doubling=off)") from None


def as_bool(value: Any, name: str) -> bool:
    """A boolean option: ``True``/``False``, ``1``/``0`` or one of the texts true/false/yes/no/1/0."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in TRUE + FALSE:
        return value.strip().lower() in TRUE
    raise ValueError(f"bad value {value!r} for option {name!r}: expected true/false (or yes/no, 1/0)")
