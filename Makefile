# `make test` and `make train` create/update the local venv (.venv) on first use.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: venv test lint bench clean

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# CPU torch first, so the package's torch range does not pull a multi-GB CUDA build
	$(PY) -m pip install -q "torch==2.13.0"
	$(PY) -m pip install -q -e ".[dev,train]"
	# OpenSpiel / Shimmy are only the benchmark's reference systems: optional
	-$(PY) -m pip install -q -e ".[bench]"
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m pytest -q

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: $(STAMP)
	$(PY) -m barbu_env.benchmark

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
