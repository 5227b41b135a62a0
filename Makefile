# Quick start: `make solve` then `make test`. Both create .venv when missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
INSTANCE ?= instances/paper-multimesh-n256.toml

.PHONY: solve test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

solve: $(STAMP)
	$(BIN)/ocsplan solve $(INSTANCE)

# both cores (pytest-xdist): every test is independent of order and of the other worker; bytecode is
# cached even where PYTHONDONTWRITEBYTECODE is set, so the suite's hundreds of `python -m ocsplan`
# children do not compile every module again (fresh clone: 244 s and 475 s of CPU, against 251 s and 487 s)
test: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest -n auto

# ruff and mypy strict over src, tests and scripts (mypy's files: pyproject.toml)
lint: $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/ruff check src tests scripts
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python scripts/bench_planner.py

clean:
	rm -rf $(VENV) .pytest_cache build src/*.egg-info
