"""Rule options and presets (RULES.md: every named option with its default; R10.1 presets)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from barbu_env.rules import CHOICES, PRESET_DIR, PRESETS, Rules, load_rules, rules_from_dict

#: Every option of RULES.md with its documented default.
DEFAULTS = {
    "schedule": "blocks",  # R2.2
    "tiebreak": "none",  # R2.4
    "hearts_lead": "only_hearts_left",  # R4.1
    "king_discard": "free",  # R4.4
    "trump_lead": "must_if_able",  # R5.4
    "overtrump": "no",  # R5.5
    "doubling": "classic",  # R6.7
    "undoubled_negative": "play",  # R6.6
    "fantan_pass": "forced",  # R7.3
    "ace_plays_again": False,  # R7.5
    "ravage_city": False,  # R9
    "scoring": "classic",  # R10.1
    "salad": False,  # R10.2
    "game": "barbu",  # R11
    "players": 4,  # R1.3, R11.4
    "short": False,  # R11.3
    "choose": False,  # R11.3
    "positive": (),  # R10.3
}
#: Every value RULES.md names for each string option.
VALUES = {
    "schedule": {"blocks", "rotate"},
    "tiebreak": {"none", "first_declarer", "extra_deals"},
    "hearts_lead": {"only_hearts_left", "until_broken", "free"},
    "king_discard": {"free", "forced"},
    "trump_lead": {"must_if_able", "free"},
    "overtrump": {"no", "yes"},
    "doubling": {"classic", "declarer_only", "off"},
    "undoubled_negative": {"play", "split"},
    "fantan_pass": {"forced", "free"},
    "scoring": {"classic", "basic52", "basic32"},
}


def test_defaults_are_rules_md() -> None:
    """Rules() is classic Barbu: every option at its RULES.md default, and no other option exists."""
    assert dataclasses.asdict(Rules()) == DEFAULTS
    assert Rules().deck_size == 52 and Rules().hand_size == 13


@pytest.mark.parametrize("option", sorted(VALUES))
def test_every_value_accepted_and_a_bad_one_listed(option: str) -> None:
    """Each documented value is accepted; an unknown value is an error naming the option and all valid values."""
    assert set(CHOICES[option]) == VALUES[option]
    for value in VALUES[option]:
        if (option, value) == ("doubling", "off"):
            assert getattr(Rules(doubling="off"), option) == "off"
            continue
        assert getattr(Rules(**{option: value}), option) == value
    with pytest.raises(ValueError) as e:
        Rules(**{option: "bogus"})
    msg = str(e.value)
    assert "'bogus'" in msg and repr(option) in msg
    for value in VALUES[option]:
        assert repr(value) in msg


@pytest.mark.parametrize("option", ["ace_plays_again", "ravage_city", "salad"])
def test_boolean_options(option: str) -> None:
    """R7.5, R9, R10.2 switches take true/false only."""
    assert getattr(Rules(**{option: True}), option) is True
    with pytest.raises(ValueError, match="true or false"):
        Rules(**{option: "yes"})


def test_unknown_key_lists_the_valid_options() -> None:
    with pytest.raises(ValueError) as e:
        load_rules("classic", overtrumps="yes")
    msg = str(e.value)
    assert "'overtrumps'" in msg
    for name in DEFAULTS:
        assert repr(name) in msg
    with pytest.raises(ValueError, match="'colour'"):
        rules_from_dict({"colour": "red"})
    with pytest.raises(ValueError, match="valid options"):
        Rules().replace(trump="S")


def test_unknown_preset_lists_presets() -> None:
    with pytest.raises(ValueError) as e:
        load_rules("hearts")
    for name in PRESETS:
        assert repr(name) in str(e.value)


def test_yaml_presets_equal_builtin_presets() -> None:
    """configs/rules/*.yaml and barbu_env.rules.PRESETS hold the same presets with the same options."""
    files = {p.stem: p for p in Path(PRESET_DIR).glob("*.yaml")}
    assert set(files) == set(PRESETS)
    for name, path in files.items():
        data = yaml.safe_load(path.read_text()) or {}
        assert load_rules(path) == load_rules(name) == rules_from_dict(dict(PRESETS[name])), name
        assert rules_from_dict(data) == Rules(**PRESETS[name]), name


def test_presets_mean_what_rules_md_says() -> None:
    assert load_rules("classic") == Rules()
    assert load_rules("ravage_city").ravage_city
    assert load_rules("basic32").deck_size == 32 and load_rules("basic32").hand_size == 8
    assert load_rules("spanish").king_discard == "forced"
    online = load_rules("online")
    assert (online.overtrump, online.hearts_lead, online.ace_plays_again, online.salad) == (
        "yes", "until_broken", True, True,
    )  # fmt: skip


def test_overrides_and_yaml_booleans(tmp_path: Path) -> None:
    """Keyword overrides apply on top of a preset; YAML's bare yes/no for overtrump read as "yes"/"no"."""
    r = load_rules("ravage_city", schedule="rotate")
    assert r.ravage_city and r.schedule == "rotate"
    f = tmp_path / "mine.yaml"
    f.write_text("overtrump: yes\nsalad: true\n")
    assert load_rules(f) == Rules(overtrump="yes", salad=True)
    f.write_text("- a list\n")
    with pytest.raises(ValueError, match="mapping"):
        load_rules(f)
    with pytest.raises(ValueError, match="not found"):
        load_rules(tmp_path / "missing.yaml")


def test_split_needs_doubling() -> None:
    """R6.6 split with R6.7 doubling=off would never play a negative deal: rejected with the reason."""
    with pytest.raises(ValueError, match="doubling"):
        Rules(undoubled_negative="split", doubling="off")
