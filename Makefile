# Two entry points: `make demo` (the main job) and `make test` (the full suite, lint and types).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# torch first, pinned: this machine carries the 2.13.0 CPU wheel; any looser spec pulls a CUDA build.
TORCH := torch==2.13.0

.PHONY: demo test lint typecheck unit bench clean docs bare-install-check

$(VENV)/.base:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e ".[all]"
	touch $@

$(VENV)/.dev: $(VENV)/.base pyproject.toml
	$(PIP) install -q -e ".[dev]"
	$(PIP) install -q --no-deps neurobench==2.3.0 snntorch==1.0.0 lightning==2.6.6
	touch $@

demo: $(VENV)/.base
	$(PY) -m torchtally demo

lint: $(VENV)/.dev
	$(PY) -m ruff check src tests benchmarks examples
	$(PY) -m ruff format --check src tests benchmarks examples

typecheck: $(VENV)/.dev
	$(PY) -m mypy

# pytest-xdist: one worker per core (`--dist worksteal` evens out the long tests at the end);
# `make unit PYTEST_WORKERS=0` runs the suite in one process.
PYTEST_WORKERS ?= auto
unit: $(VENV)/.dev
	$(PY) -m pytest -q -n $(PYTEST_WORKERS) --dist worksteal

# The docs site into site/, warnings as errors (API reference generated from docstrings).
# No --quiet: it silences the warnings that --strict counts, and the build then passes.
docs: $(VENV)/.dev
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

# A user's install: a fresh venv with torch alone, then the package with no extras (CI
# installs .[all], which would hide an import of an optional package); run from outside the
# tree so that src/ is not what gets imported.
BARE := build/bare-venv
bare-install-check:
	rm -rf $(BARE)
	$(PYTHON) -m venv $(BARE)
	$(BARE)/bin/python -m pip install -q $(TORCH)
	$(BARE)/bin/python -m pip install -q .
	cd $(BARE) && bin/python $(CURDIR)/scripts/bare_install_check.py


# The site is built (strictly) before the suite, which then checks that build
# (tests/test_docs.py) instead of building it a second time.
test: export TORCHTALLY_BUILT_SITE = $(CURDIR)/site
test: lint typecheck docs unit bare-install-check

bench: $(VENV)/.dev
	$(PY) -m benchmarks run

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache
