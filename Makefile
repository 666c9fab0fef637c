# `make test` and `make train` create/update the local venv (.venv) on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: venv train test lint bench docs clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU torch first, so the package's torch range does not pull a multi-GB CUDA build
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[dev,train,play]"
	# OpenSpiel / Shimmy are only the benchmark's reference systems: optional
	-$(PY) -m pip install -q -e ".[bench]"
	# RL framework adapters (tests skip a framework that is missing): optional, one line each
	-$(PY) -m pip install -q -e ".[sb3]" "torch==2.13.0"
	-$(PY) -m pip install -q -e ".[torchrl]" "torch==2.13.0"
	-$(PY) -m pip install -q -e ".[rllib]" "torch==2.13.0"
	-$(PY) -m pip install -q -e ".[tianshou]" "torch==2.13.0"
	# the documentation site (make docs): optional
	-$(PY) -m pip install -q -e ".[docs]"
	touch $(STAMP)

venv: $(STAMP)

# The main job: self-play training on configs/default.yaml, then the evaluation table vs the baselines.
train: $(STAMP)
	$(PY) -m training.rollout_q --config configs/default.yaml $(ARGS)

# pytest-xdist spreads the tests over TEST_WORKERS processes (auto: one per core; 0: in this process).
TEST_WORKERS ?= auto
test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q -n $(TEST_WORKERS)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

# The documentation site (MkDocs Material, API pages from the docstrings) into site/; any warning fails.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

bench: $(STAMP)
	$(PY) -m barbu_env.benchmark

clean:
	rm -rf $(VENV) .pytest_cache build site *.egg-info
