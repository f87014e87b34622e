"""Behaviour snapshots: every report a set of cases gives, with wall-clock fields masked, so a
refactor can be shown to change nothing.

    # before the change (or on a worktree of the old commit)
    python bench/same_reports.py snapshot --out /tmp/snap-before --shipped --dev ../shared/cases-dev/converted \
        --generated 100 --seed 500
    # after it
    python bench/same_reports.py snapshot --out /tmp/snap-after  --shipped --dev ../shared/cases-dev/converted \
        --generated 100 --seed 500
    python bench/same_reports.py compare /tmp/snap-before /tmp/snap-after

A snapshot holds one canonical `report.json` per case and tool (`<case>.<tool>.json`, keys sorted) and
`digests.json` (a SHA-256 per file). Masked: the times a run was made and read its sources at
(`generated_at`, `read_at`, a timeline step's `at`) and the run id; nothing else. `compare` prints
each file that differs with its first differing JSON path and exits 1 if any differ or are missing.

Each case runs in a fresh workspace; the case indexes are kept in one folder per snapshot
(`--index-root`) so a second tool on the same case reuses them, as `eval` does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MASKED = {"generated_at", "read_at", "at", "run_id"}


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: ("<masked>" if k in MASKED else masked(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


def canonical(report: dict) -> str:
    return json.dumps(masked(report), sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def case_dirs(args: argparse.Namespace, tmp: Path) -> list[Path]:
    found: list[Path] = []
    if args.shipped:
        found += sorted(p for p in (ROOT / "cases").iterdir() if (p / "case.yaml").is_file())
    for folder in args.dev or []:
        found += sorted(p for p in Path(folder).iterdir() if (p / "case.yaml").is_file())
    if args.generated:
        out = tmp / "generated"
        subprocess.run([sys.executable, "-m", "investigator.cli", "generate", "--seed", str(args.seed),
                        "--count", str(args.generated), "--out", str(out)], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL)
        found += sorted(p for p in out.iterdir() if (p / "case.yaml").is_file())
    found += [Path(c) for c in args.case or []]
    return found


def snapshot(args: argparse.Namespace) -> int:
    from investigator.config import Settings
    from investigator.runtime import Investigator
    from tools.embedding import MiniLMEmbedder

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    embedder = MiniLMEmbedder()
    digests: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="same-reports-") as tmp_name:
        tmp = Path(tmp_name)
        index_root = Path(args.index_root) if args.index_root else tmp / "index"
        cases = case_dirs(args, tmp)
        t0 = time.monotonic()
        for n, case_dir in enumerate(cases, 1):
            for tool in args.tool:
                ws = tmp / "ws" / f"{case_dir.name}-{tool}"
                inv = Investigator(Settings(workspace=ws, index_root=index_root), embedder=embedder,
                                   progress=lambda _m: None)
                try:
                    text = canonical(json.loads(inv.start(case_dir, retrieval=tool).report.to_json()))
                except Exception as exc:  # noqa: BLE001 - a crash is behaviour too: it is recorded, not hidden
                    text = json.dumps({"error": f"{type(exc).__name__}: {exc}"}) + "\n"
                name = f"{case_dir.name}.{tool}.json"
                (out / name).write_text(text)
                digests[name] = hashlib.sha256(text.encode()).hexdigest()
            print(f"[{n}/{len(cases)}] {case_dir.name} ({time.monotonic() - t0:.0f} s)", file=sys.stderr)
    (out / "digests.json").write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(f"{len(digests)} reports in {out}")
    return 0


def first_difference(a: Any, b: Any, path: str = "$") -> str | None:
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}"
            got = first_difference(a[k], b[k], f"{path}.{k}")
            if got:
                return got
        return None
    if isinstance(a, list):
        for i, (x, y) in enumerate(zip(a, b)):
            got = first_difference(x, y, f"{path}[{i}]")
            if got:
                return got
        return None if len(a) == len(b) else f"{path}[{min(len(a), len(b))}]"
    return None if a == b else path


def compare(args: argparse.Namespace) -> int:
    before, after = Path(args.before), Path(args.after)
    da = json.loads((before / "digests.json").read_text())
    db = json.loads((after / "digests.json").read_text())
    bad = 0
    if args.shared:  # a smaller snapshot (e.g. without the generated cases) checked against a larger one
        da = {n: h for n, h in da.items() if n in db}
        db = {n: h for n, h in db.items() if n in da}
    for name in sorted(set(da) | set(db)):
        if name not in da or name not in db:
            print(f"{name}: only in {'the first' if name in da else 'the second'} snapshot")
            bad += 1
        elif da[name] != db[name]:
            where = first_difference(json.loads((before / name).read_text()), json.loads((after / name).read_text()))
            print(f"{name}: differs at {where}")
            bad += 1
    print(f"{len(set(da) & set(db)) - sum(1 for n in da if n in db and da[n] != db[n])} of {len(set(da) | set(db))} "
          f"reports byte-identical (wall-clock fields masked)")
    return 1 if bad else 0


def main() -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot", help="run cases and keep their masked reports")
    s.add_argument("--out", required=True)
    s.add_argument("--shipped", action="store_true", help="every case under cases/")
    s.add_argument("--dev", action="append", help="a folder of case folders (repeatable)")
    s.add_argument("--generated", type=int, default=0, help="this many generated cases")
    s.add_argument("--seed", type=int, default=500)
    s.add_argument("--case", action="append", help="one case folder (repeatable)")
    s.add_argument("--tool", action="append", choices=["basic", "graph"])
    s.add_argument("--index-root", help="keep case indexes here between snapshots")
    c = sub.add_parser("compare", help="compare two snapshots")
    c.add_argument("before")
    c.add_argument("after")
    c.add_argument("--shared", action="store_true", help="compare only the reports both snapshots hold")
    args = p.parse_args()
    if args.cmd == "snapshot":
        args.tool = args.tool or ["basic", "graph"]
        return snapshot(args)
    return compare(args)


if __name__ == "__main__":
    sys.exit(main())
