# Two entry points for a fresh machine (only python3 >= 3.11 and make needed):
#   make demo  -- builds .venv, installs mcptrace, runs it on the bundled sample traces
#   make test  -- builds .venv, installs mcptrace with test tools, runs ruff, mypy and pytest
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mcptrace summary sample_traces/
	$(BIN)/mcptrace show sample_traces/capture/healthy-2025-11-25.jsonl

lint: $(STAMP)
	$(BIN)/ruff check mcptrace tests scripts benchmarks
	$(BIN)/ruff format --check mcptrace tests scripts benchmarks
	$(BIN)/mypy

test: lint
	MPLBACKEND=Agg $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_load.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
