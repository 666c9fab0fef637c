"""Property-based tests (hypothesis) of the tools' entry points: ``agents.make`` specs and seeds,
checkpoint files (corrupt, truncated, wrong types), YAML training configs and ``barbu-eval``
arguments. Each call runs under a time limit and must give a valid result or a clear error: a
``ValueError``/``TypeError`` naming what was wrong, or for the CLI a one-line error with exit status 2.
"""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from timeouts import time_limit  # noqa: E402

from barbu_env import agents  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 20
#: Examples per property (``BARBU_EXAMPLES=1000`` for a longer search); derandomized: the same examples every run.
EXAMPLES = int(os.environ.get("BARBU_EXAMPLES", "60"))
FAST = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])  # fmt: skip


def names_something(message: str, *parts: object) -> bool:
    """True when ``message`` mentions one of ``parts`` (as given or as its repr)."""
    return any(repr(p) in message or (str(p).strip() and str(p) in message) for p in parts)


# ----------------------------------------------------------------------------- agents.make
texts = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
values = st.one_of(texts, st.integers(-3, 40).map(str), st.sampled_from(["true", "no", "1.5", "nan", "[1,2]", ""]))
option_keys = st.one_of(st.sampled_from(["samples", "greedy", "fallback", "depth"]), texts)
options = st.lists(st.tuples(option_keys, values), max_size=3).map(lambda kv: ",".join(f"{k}={v}" for k, v in kv))
names = st.one_of(
    st.sampled_from(["random", "heuristic", "pimc", "checkpoints/no_queens.pt", "checkpoints", "nope.pt", "x/y"]), texts
)
specs = st.one_of(texts, st.builds(lambda n, o: f"{n}:{o}" if o else n, names, options))
seeds = st.one_of(st.none(), st.integers(-5, 2**64), st.floats(), st.text(max_size=3), st.booleans())


@FAST
@given(spec=specs, seed=seeds)
def test_make_gives_an_agent_or_a_clear_error(spec, seed) -> None:
    if "checkpoints/" in spec or spec.startswith("checkpoints"):
        pytest.importorskip("torch")
    try:
        with time_limit(LIMIT_S):
            agent = agents.make(spec, seed=seed)
    except (ValueError, TypeError) as e:
        msg = str(e)
        head, _, tail = spec.rpartition(":")
        items = tail.split(",")
        parts = [spec, spec.strip(), head.strip(), seed, *items, *(kv.partition("=")[0].strip() for kv in items)]
        assert msg and names_something(msg, *parts), msg
        return
    assert isinstance(agent, agents.Agent)


@FAST
@given(spec=st.one_of(st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2), st.binary(max_size=4)))
def test_make_refuses_specs_that_are_not_text(spec) -> None:
    with time_limit(LIMIT_S), pytest.raises((ValueError, TypeError), match="agent spec"):
        agents.make(spec)


# ----------------------------------------------------------------------------- checkpoint files
def _valid_checkpoint_bytes() -> bytes:
    torch = pytest.importorskip("torch")
    from barbu_env.nn import PolicyNet, save_checkpoint

    buf = Path(__import__("tempfile").mkdtemp()) / "v.pt"
    torch.manual_seed(0)
    save_checkpoint(buf, PolicyNet(hidden=(3,)), "no_queens", {})
    return buf.read_bytes()


json_like = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**40), 2**40), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8,
)
HEADER = ("format", "env_version", "obs_layout", "obs_size", "num_actions", "contract", "hidden", "state_dict", "meta")
header_keys = st.sampled_from(HEADER)


@FAST
@given(data=st.data())
def test_load_checkpoint_of_damaged_files_is_a_clear_error(tmp_path_factory, data) -> None:
    torch = pytest.importorskip("torch")
    from barbu_env.nn import load_checkpoint

    good = _valid_checkpoint_bytes()
    how = data.draw(st.sampled_from(["truncate", "flip", "garbage", "header"]))
    if how == "truncate":
        raw = good[: data.draw(st.integers(0, len(good) - 1))]
    elif how == "flip":
        raw = bytearray(good)
        for i in data.draw(st.lists(st.integers(0, len(good) - 1), min_size=1, max_size=8)):
            raw[i] ^= data.draw(st.integers(1, 255))
        raw = bytes(raw)
    elif how == "garbage":
        raw = data.draw(st.binary(max_size=200))
    else:
        path = tmp_path_factory.mktemp("h") / "g.pt"
        path.write_bytes(good)
        ckpt = torch.load(path, weights_only=True)
        for k in data.draw(st.lists(header_keys, min_size=1, max_size=3)):
            if data.draw(st.booleans()):
                ckpt.pop(k, None)
            else:
                ckpt[k] = data.draw(json_like)
        torch.save(ckpt, path)
        raw = path.read_bytes()
    path = tmp_path_factory.mktemp("c") / "damaged.pt"
    path.write_bytes(raw)
    try:
        with time_limit(LIMIT_S):
            net, ckpt = load_checkpoint(path)
    except ValueError as e:
        assert "damaged.pt" in str(e), str(e)
        return
    assert net.obs_size == ckpt["obs_size"]  # a flip that changed nothing that matters loads


# ----------------------------------------------------------------------------- YAML training configs
KNOWN = ("states", "epochs", "lr", "double_prob", "hidden", "contracts", "augment", "per_contract", "rules", "seed",
         "label_prob", "workers", "minibatch", "out_dir")  # fmt: skip
config_keys = st.one_of(st.sampled_from(KNOWN), st.text(max_size=6))
config_values = st.one_of(
    json_like,
    st.sampled_from([[8], [0], ["no_queens"], ["nope"], {"trumps": {"states": 3}}, {"x": 1}, "classic", 0.5, 2.5, -1]),
)


@FAST
@given(data=st.dictionaries(config_keys, config_values, max_size=4))
def test_yaml_configs_load_or_name_the_bad_key(tmp_path_factory, data) -> None:
    pytest.importorskip("torch")
    import yaml

    from training.common import load_config
    from training.rollout_q import RolloutQConfig

    path = tmp_path_factory.mktemp("y") / "cfg.yaml"
    path.write_text(yaml.safe_dump(data))
    try:
        with time_limit(LIMIT_S):
            cfg = load_config(RolloutQConfig, path)
    except (ValueError, TypeError) as e:
        assert names_something(str(e), *data), str(e)
        return
    assert isinstance(cfg, RolloutQConfig)


@FAST
@given(text=st.text(max_size=60))
def test_yaml_config_text_loads_or_is_a_clear_error(tmp_path_factory, text) -> None:
    pytest.importorskip("torch")
    from training.common import load_config
    from training.rollout_q import RolloutQConfig

    path = tmp_path_factory.mktemp("t") / "cfg.yaml"
    path.write_text(text)
    try:
        with time_limit(LIMIT_S):
            load_config(RolloutQConfig, path)
    except (ValueError, TypeError) as e:
        assert str(e)


# ----------------------------------------------------------------------------- barbu-eval arguments
class _Valid(Exception):
    """Raised in place of playing: the arguments passed every check."""


flag_values = {
    "--agents": st.lists(specs, min_size=1, max_size=3),
    "--mode": st.lists(st.sampled_from(["deal", "match", "tournament"]), max_size=1),
    "--contract": st.lists(st.sampled_from(["all", "no_queens", "trumps", "salad", "no_spades"]), max_size=2),
    "--deals": st.lists(st.sampled_from(["1", "0", "-2", "x", "1e3"]), max_size=1),
    "--matches": st.lists(st.sampled_from(["1", "0", "abc"]), max_size=1),
    "--seed": st.lists(st.sampled_from(["0", "-1", "99", "1.5"]), max_size=1),
    "--lineup": st.lists(st.sampled_from(["1v3", "2v2", "4", "3v1"]), max_size=1),
    "--workers": st.lists(st.sampled_from(["1", "2", "0", "many"]), max_size=1),
    "--rules": st.lists(st.sampled_from(["classic", "king", "king3", "nope", "configs/rules/x.yaml"]), max_size=1),
    "--rule": st.lists(st.sampled_from(["overtrump=yes", "players=3", "doubling=never", "x=1", "novalue"]), max_size=1),
    "--doubling": st.lists(st.sampled_from(["off", "classic", "sometimes"]), max_size=1),
    "--out": st.lists(st.sampled_from(["OUT", "FILE", "FILE/below", "/proc/barbu_x"]), max_size=1),
    "--resume": st.just([]),
    "--no-progress": st.just([]),
}


@settings(FAST, max_examples=EXAMPLES + 20)
@given(data=st.data())
def test_cli_arguments_run_or_fail_in_one_line(tmp_path_factory, monkeypatch, data) -> None:
    from barbu_env.evaluation import cli

    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "FILE").write_text("x")
    flags = data.draw(st.lists(st.sampled_from(sorted(flag_values)), unique=True, max_size=6))
    argv: list[str] = []
    for flag in flags:
        vals = data.draw(flag_values[flag])
        vals = [str(tmp / v) if v in ("OUT", "FILE", "FILE/below") else v for v in vals]
        argv += [flag, *vals]
    if any(".pt" in a or "checkpoints" in a for a in argv):
        pytest.importorskip("torch")

    def not_played(*args, **kwargs):
        raise _Valid

    monkeypatch.setattr(cli, "run", not_played)
    err = io.StringIO()
    code = None
    try:
        with time_limit(LIMIT_S), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(argv)
    except _Valid:
        return
    except SystemExit as e:
        code = e.code
    lines = [line for line in err.getvalue().splitlines() if not line.startswith("barbu-eval: note:")]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("barbu-eval: error:"), (argv, err.getvalue())
