"""Merge `investigator eval` outputs (eval.json of batches run separately) into one table.

    .venv/bin/python bench/eval_merge.py OUT_DIR batch1/eval.json batch2/eval.json ...

A long evaluation (hundreds of generated cases) is run in batches so that a cut-off keeps
what finished; this writes OUT_DIR/eval.json and eval.md as one `eval` run would.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from investigator.evaluate import CaseScore, to_json, to_markdown  # noqa: E402

DERIVED = ("verdict_accuracy", "root_ok", "root_scored")


def load(paths: list[Path]) -> list[CaseScore]:
    scores = []
    for p in paths:
        for d in json.loads(Path(p).read_text())["cases"]:
            scores.append(CaseScore.model_validate({k: v for k, v in d.items() if k not in DERIVED}))
    return scores


def main() -> None:
    out, *files = sys.argv[1:]
    scores = load([Path(f) for f in files])
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "eval.json").write_text(to_json(scores))
    (Path(out) / "eval.md").write_text(to_markdown(scores, per_case=False))
    print(to_markdown(scores, per_case=False))


if __name__ == "__main__":
    main()
