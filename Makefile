# Two entry points for a fresh machine (only python3 >= 3.11 and make needed):
#   make demo  -- builds .venv, installs mcptrace, summarises and lints the bundled sample traces
#   make test  -- builds .venv, installs mcptrace with test tools, runs ruff, mypy and pytest
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml setup.py mcptrace/_scan.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,notebooks]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mcptrace summary sample_traces/
	@echo
	@echo "== mcptrace lint sample_traces/capture/incident-2025-11-25.jsonl"
	@# exit status 1 means "findings at or above the fail level": expected for this sample
	$(BIN)/mcptrace lint sample_traces/capture/incident-2025-11-25.jsonl || test $$? -eq 1

lint: $(STAMP)
	$(BIN)/ruff check mcptrace tests scripts benchmarks
	$(BIN)/ruff format --check mcptrace tests scripts benchmarks
	$(BIN)/mypy

test: lint
	MPLBACKEND=Agg $(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_load.py
	$(BIN)/python benchmarks/bench_lint.py
	$(BIN)/python benchmarks/bench_files.py
	$(BIN)/python benchmarks/bench_rotated.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
