#!/usr/bin/env bash
# The dedicated environment of the metric-based RCA baselines: bench/baselines/.venv with
# PyRCA (sfr-pyrca 1.0.1) and CIRCA (circa-clue 0.1.1). Idempotent: does nothing when the
# venv already matches requirements.txt and this script. See README.md for why it is
# separate from the project's .venv and why both libraries are installed with --no-deps.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.venv"
PYTHON="${PYTHON:-python3.11}"
STAMP="$VENV/.installed"
WANT="$(cat "$HERE/requirements.txt" "$HERE/setup.sh" | sha256sum | cut -d' ' -f1)"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && "$VENV/bin/python" -c "import pyrca, circa" 2>/dev/null; then
  echo "bench/baselines/.venv is up to date"
  exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  for p in /usr/bin/python3.11 /usr/local/bin/python3.11; do
    [ -x "$p" ] && PYTHON="$p" && break
  done
fi
"$PYTHON" -c 'import sys; assert sys.version_info[:2] == (3, 11), sys.version' \
  || { echo "setup.sh: needs Python 3.11 (set PYTHON=...)" >&2; exit 1; }

rm -f "$STAMP"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
# 1. the pinned scientific stack (NumPy < 2: scikit-learn 1.1.3 is built against NumPy 1.x)
"$VENV/bin/pip" install -q -r "$HERE/requirements.txt"
# 2. the two libraries without their declared dependencies:
#    - sfr-pyrca requires javabridge (a JDK build, only for its FGES graph learner via
#      py-causal, which is not on PyPI); nothing used here imports it;
#    - circa-clue requires rpy2 (an R installation), torch, pytorch-lightning, tigramite,
#      ads-evt, bayesian-changepoint-detection, pingouin and the `dataclasses` backport,
#      all for its graph learners, detectors and experiment code; RHT, DA, the structural
#      graph and the data model import only NumPy, SciPy, scikit-learn, networkx, PyYAML.
"$VENV/bin/pip" install -q --no-deps "sfr-pyrca==1.0.1" "circa-clue==0.1.1"
# 3. smoke check: every module the harness calls imports
"$VENV/bin/python" - <<'PY'
import pyrca.analyzers.random_walk, pyrca.analyzers.rcd, pyrca.analyzers.bayesian, pyrca.outliers.stats
import circa.alg.ci, circa.alg.common, circa.graph.common, circa.graph.structural, circa.model.data_loader
from importlib.metadata import version
print("baselines venv:", {p: version(p) for p in ("sfr-pyrca", "circa-clue", "numpy", "pandas", "scikit-learn")})
PY
echo "$WANT" > "$STAMP"
