# schedbench — the two commands of the README: `make bench` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
OUT    ?= reports/latest
# test processes (pytest-xdist; 0: one process). Many tests wait (scripted latencies, run
# deadlines, load windows) while others compute, so three on a 2-core host keep both cores
# busier than two: the whole suite in 723 s against 844 s, back to back on one slow 2-core
# host. worksteal: an idle process takes queued tests from a busy one (a long module fixture
# at the end no longer runs alone)
TEST_JOBS ?= 3
# Python writes its bytecode cache as it would in production: with PYTHONDONTWRITEBYTECODE set
# (some CI images set it), every worker, shard and test subprocess recompiles the harness it
# imports. A small gain: the merge tests (then tests/results/test_merge.py) took 99 s without
# the cache and 94 s with it, run back to back (a first pair, 110 and 84 s, was mostly noise)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install test test-fast bench bench-quick microbench lint lock envs lock-envs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Install the project with pinned versions (constraints.txt) so numbers are reproducible.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[langchain,report,test,cluster]'
	touch $(STAMP)

install: $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# lint (mypy: one core for ~40 s on a fresh clone) and envs (uv: mostly waiting on downloads
# and disk) side by side, then the tests
test: install
	@$(MAKE) --no-print-directory -j2 lint envs
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist worksteal

# The quick in-process tier: no other process, no engine environment, no engine played
# through every scenario (tests/conftest.py).
test-fast: install
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist worksteal -m "not subprocess and not peers and not slow" tests

# The default benchmark: validate the scenarios, build (first time) or reuse the engine
# environments, measure every engine on every scenario in isolated workers, profile each
# engine (a separate probe), run the customisation catalogue and the false-simplicity programs
# (~8 s), score the debug modes, write the decision report.
# An incomplete run (a crashed worker) still gets its report; make then exits non-zero.
bench: install envs
	@if [ "$(OUT)" = "reports/reference" ] && [ -n "$$(git status --porcelain --untracked-files=no)" ]; then \
	  echo "make bench: refusing to write reports/reference from a dirty tree (commit first)"; exit 2; fi
	$(BIN)/schedbench scenarios validate
	rm -rf $(OUT)
	$(BIN)/schedbench run --out $(OUT); rc=$$?; \
	  $(BIN)/schedbench probe --out $(OUT) || rc=1; \
	  $(BIN)/schedbench catalogue --out $(OUT) || rc=1; \
	  $(BIN)/schedbench multimodel --out $(OUT) || rc=1; \
	  $(BIN)/schedbench debug-score --out $(OUT) --table '' && \
	  $(BIN)/schedbench report $(OUT) && \
	  echo "report: $(OUT)/report.html and $(OUT)/report.md" && exit $$rc

# A one-minute smoke run of the whole matrix, with its report.
bench-quick: install envs
	rm -rf $(OUT)-quick
	$(BIN)/schedbench run --quick --out $(OUT)-quick; rc=$$?; \
	  $(BIN)/schedbench probe --quick --out $(OUT)-quick || rc=1; \
	  $(BIN)/schedbench report $(OUT)-quick && exit $$rc

# Per-step hot paths (pytest-benchmark).
microbench: install
	$(BIN)/python -m pytest benchmarks --benchmark-enable --benchmark-only

# Re-pin: regenerate constraints.txt from the current environment.
lock: install
	$(BIN)/python -m pip freeze --exclude-editable | grep -v '^schedbench' > constraints.txt

# The engine environments (bench/envs/: peers, LangChain lines): `schedbench run` builds the
# ones it needs on first use (~1 min for all of them) and reuses them; this builds all now.
envs: install
	$(BIN)/python -m bench.envs build

# Re-lock every engine environment's constraints.txt (uv pip compile).
lock-envs: install
	$(BIN)/python -m bench.envs lock

clean:
	rm -rf $(VENV) .envs .pytest_cache .ruff_cache
