# The two commands of the README:  `make run` (set up + chat UI) and `make test` (set up + all checks).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export GRADIO_ANALYTICS_ENABLED := False
export ANONYMIZED_TELEMETRY := False

.PHONY: run test setup lint bench eval clean

$(STAMP): pyproject.toml scripts/setup.sh
	bash scripts/setup.sh "$(PY)"
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/talkqa serve

lint: $(STAMP)
	$(BIN)/ruff check qa ui eval tests bench
	$(BIN)/ruff format --check qa ui eval tests bench
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest

# 1k and 10k take ~20 min on 2 cores; add 100000 for the full run (an hour of embedding).
BENCH_SIZES ?= 1000,10000
bench: $(STAMP)
	$(BIN)/python -m bench.run --sizes $(BENCH_SIZES)

eval: $(STAMP)
	$(BIN)/talkqa eval

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
