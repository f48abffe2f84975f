# tokcourse: `make book` and `make test` each work on a fresh clone.
# They create .venv, install the package with its extras, fetch the offline tokenizer files,
# then build the book or run the whole test suite.

PYTHON ?= python3
PY     ?= 3.12
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.tokcourse-installed
BUILD  := $(BIN)/jupyter-book build . -W -n --keep-going
# One pytest worker per core (pytest-xdist); tests that share a build or a venv take a file lock.
PYTEST := $(BIN)/python -m pytest -n auto

.DEFAULT_GOAL := help
.PHONY: help setup book test test-python test-full bench lint format notebooks-clean sync-url clean

help:
	@echo "make book        build the book into _build/html (sets everything up first)"
	@echo "make test        run the full test suite, notebooks and book build included"
	@echo "make test-python PY=3.13  run every chapter under another Python (default 3.12, Colab's)"
	@echo "make test-full   the same with the big parity run (slow)"
	@echo "make bench       speed and memory benchmarks -> benchmarks/RESULTS.md (slow)"
	@echo "make setup       venv + package + offline tokenizer files only"
	@echo "make lint        ruff on the package, tests and notebooks"
	@echo "make format      ruff format + strip notebook outputs"
	@echo "make sync-url    copy repository.url from _config.yml into notebooks and README"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Python >= 3.11 needed; run: make PYTHON=python3.11 ...")'
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)
	$(BIN)/python -m tokcourse.assets setup

book: setup
	$(BUILD)
	@echo
	@echo "Book built. Open: file://$(CURDIR)/_build/html/index.html"

test: setup
	$(PYTEST)

# Every chapter, as committed, under Python $(PY) in a venv made by `pip install .` (Colab's way).
test-python: setup
	TOKCOURSE_TEST_PYTHON=$(PY) $(PYTEST) tests/test_colab_python.py

test-full: setup
	TOKCOURSE_PARITY_EXAMPLES=50000 $(PYTEST) -m "slow or not slow"

bench: setup
	$(BIN)/python benchmarks/run_all.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/python tools/notebooks.py normalize notebooks/*.ipynb

notebooks-clean: $(STAMP)
	$(BIN)/python tools/notebooks.py normalize notebooks/*.ipynb

sync-url: $(STAMP)
	$(BIN)/python tools/sync_repo_url.py

clean:
	rm -rf _build .pytest_cache .ruff_cache .hypothesis
