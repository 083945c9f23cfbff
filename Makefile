PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo test lint bench clean install-dev

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e ".[dev]"
	touch $(VENV)/.installed $@

## demo: create .venv, install gfun, train Naive / Fun / gFun on the bundled demo data, print the table
demo: $(VENV)/.installed
	$(VENV)/bin/gfun demo

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
