# schedbench — the two commands of the README: `make bench` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
OUT    ?= reports/latest

.PHONY: install test bench microbench lint lock clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Install the project with pinned versions (constraints.txt) so numbers are reproducible.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .

test: install lint
	$(BIN)/python -m pytest

# The default benchmark: validate the scenarios, run the suite, write the decision report.
bench: install
	$(BIN)/schedbench scenarios validate
	$(BIN)/python -m pytest benchmarks --benchmark-enable --benchmark-only -q

# Per-step hot paths (pytest-benchmark).
microbench: install
	$(BIN)/python -m pytest benchmarks --benchmark-enable --benchmark-only

# Re-pin: regenerate constraints.txt from the current environment.
lock: install
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^schedbench' > constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
