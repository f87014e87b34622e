# Two commands do everything:  make run   (install + investigate the reference case)
#                              make test  (install + run the test suite; .ci/run calls this with CI=true: slow tests too)
PYTHON ?= python3.11
VENV   ?= .venv
BIN     = $(VENV)/bin
CASE   ?= cases/ALR-20260429-017
export LITELLM_LOCAL_MODEL_COST_MAP = True
export HF_HUB_OFFLINE = 1

.PHONY: install run test bench clean browser

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first, pinned to the CPU build; an unpinned torch pulls a multi-GB CUDA build
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,llm,studio]'
	# export MiniLM to ONNX once (offline, from the package's weights); on failure the embedder exports lazily or uses torch
	$(BIN)/python -m tools.onnx_embedding fp32 || echo "ONNX export failed: MiniLMEmbedder will fall back to sentence-transformers"
	touch $@

install: $(BIN)/.installed

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
FULL = $(filter true 1,$(CI) $(SLOW))
test: install browser
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/pytest -q $(if $(FULL),,-m "not slow")

clean:
	rm -rf .investigator out
