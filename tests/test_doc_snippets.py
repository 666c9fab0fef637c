"""The README's quick start and docs/FRAMEWORKS.md's snippets run as written, so the docs cannot rot.

Each fenced ``python`` block is executed in a fresh namespace, in a temporary working directory; a
framework block is skipped when the framework it imports is not installed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FRAMEWORKS = ROOT / "docs" / "FRAMEWORKS.md"
#: Framework module needed by a block -> the module to import-or-skip.
NEEDS = {"sb3_contrib": "sb3_contrib", "torchrl": "torchrl", "wrappers.rllib": "ray.rllib", "tianshou": "tianshou"}


def python_blocks(text: str) -> list[str]:
    """The fenced ``python`` blocks of a Markdown text, in order."""
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.M | re.S)


def snippets() -> list[str]:
    return python_blocks(FRAMEWORKS.read_text(encoding="utf-8"))


def test_readme_quick_start_runs(tmp_path, monkeypatch):
    """The README's quick start plays one whole deal with heuristic players."""
    blocks = python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert blocks, "README.md has no python block"
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(blocks[0], "README.md quick start", "exec"), namespace)
    env = namespace["env"]
    assert not env.agents  # the deal was played to its end
    assert sum(env.deal.scores) == -24  # No queens: four queens at -6 each (R4)


#: The framework of each snippet, in order (RLlib: deal mode, then match mode).
SNIPPETS = ("sb3_contrib", "sb3_contrib", "torchrl", "wrappers.rllib", "wrappers.rllib", "tianshou")


def test_section_has_the_six_snippets():
    blocks = snippets()
    assert [next(k for k in NEEDS if k in b) for b in blocks] == list(SNIPPETS)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(6), ids=["sb3", "sb3_vector", "torchrl", "rllib", "rllib_match", "tianshou"])
def test_snippet_runs(index, tmp_path, monkeypatch):
    code = snippets()[index]
    for key, module in NEEDS.items():
        if key in code:
            pytest.importorskip(module)
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the CI machine has 2 shared cores
    monkeypatch.chdir(tmp_path)
    if "rllib" in code:
        import ray

        # the snippet's build_algo() uses this instance (never a stale default cluster left by `ray start`)
        ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
    namespace: dict = {"__name__": "__readme__"}
    try:
        exec(compile(code, f"docs/FRAMEWORKS.md snippet {index + 1}", "exec"), namespace)
    finally:
        torch.set_num_threads(threads)
        if "rllib" in code:
            import ray

            ray.shutdown()
    if "make_vec" in code:  # a deal takes at most 14 learner decisions (13 cards, a trump suit); PPO stepped
        assert namespace["deals"] >= 1024 and namespace["model"].num_timesteps >= 4096
    if "tianshou" in code:  # the trainer stepped the envs and finished whole deals
        assert namespace["result"].train_step >= 300 and namespace["result"].train_episode >= 1
    if "ModuleAgent" in code:  # the trained policy played a whole match: 28 deals in the score sheet
        assert namespace["env"].unwrapped.match.is_over and len(namespace["env"].unwrapped.match.records) == 28
    if "export_policies" in code:
        assert sorted(p.name for p in (tmp_path / "runs/readme_rllib/policies").iterdir()) == [
            "no_queens.pt",
            "trumps.pt",
        ]
