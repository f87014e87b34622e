"""Count what `investigator` does with the hostile-input catalogue (bench/hostile/catalogue.py).

    PYTHONPATH=. python bench/hostile/count.py [--markdown bench/results/hostile-input.md] [--only ID ...]

Runs the catalogue twice: as it is, and with INVESTIGATOR_TRACEBACK=1 (the mode every internal
error's message recommends: it must print no value of a source either). Prints, for each: tried,
refused cleanly (exit 2/3 and one line naming file + field, or the argument), refused unclearly,
internal errors (exit 4/5), tracebacks, accepted (rightly / wrongly), partial state, leaks; then
every entry that is not as expected, and the accepted entries with why acceptance is right.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.hostile.catalogue import CATALOGUE, Outcome, run_all  # noqa: E402


def summary(outcomes: list[Outcome]) -> dict[str, int]:
    kinds = Counter(o.kind for o in outcomes)
    return {
        "tried": len(outcomes),
        "refused cleanly": kinds["refused"],
        "refused, unclear message": kinds["refused-unclear"],
        "internal errors (exit 4/5)": sum(o.code in (4, 5) for o in outcomes),
        "tracebacks": kinds["traceback"],
        "hung (stopped after 60 s)": kinds["hung"],
        "accepted": kinds["accepted"],
        "accepted rightly": sum(o.kind == "accepted" and o.entry.expect == "accept" for o in outcomes),
        "accepted wrongly": sum(o.kind == "accepted" and o.entry.expect == "refuse" for o in outcomes),
        "refused wrongly": sum(o.kind != "accepted" and o.entry.expect == "accept" for o in outcomes),
        "partial state": sum(o.partial or o.wrote for o in outcomes),
        "leaks of unreadable content": sum(o.leak for o in outcomes),
    }


def first_line(text: str, width: int = 150) -> str:
    line = text.strip().splitlines()[-1] if text.strip() else ""
    return line if len(line) <= width else line[: width - 1] + "…"


def render(outcomes: list[Outcome], seconds: float, traced: list[Outcome] | None = None) -> str:
    s = summary(outcomes)
    t = summary(traced) if traced is not None else None
    if t is None:
        out = ["| outcome | count |", "| --- | ---: |", *[f"| {k} | {v} |" for k, v in s.items()], ""]
    else:
        out = ["| outcome | as it is | INVESTIGATOR_TRACEBACK=1 |", "| --- | ---: | ---: |",
               *[f"| {k} | {v} | {t[k]} |" for k, v in s.items()], ""]
    by_area = Counter(o.entry.area for o in outcomes)
    out.append("By area: " + ", ".join(f"{a} {n}" for a, n in by_area.items()) + f". Wall time {seconds:.0f} s.")
    out.append("")
    for label, runs in (("", outcomes), (" (INVESTIGATOR_TRACEBACK=1)", traced or [])):
        if label and traced is None:
            continue
        bad = [o for o in runs if not o.as_expected]
        out.append(f"Not as expected{label}: {len(bad)}")
        for o in bad:
            flags = ",".join(f for f in ("partial", "wrote", "leak") if getattr(o, f))
            out.append(f"- `{o.entry.id}` ({o.entry.what}): {o.kind}{' ' + flags if flags else ''}, exit {o.code}: "
                       f"`{first_line(o.stderr)}`")
        out.append("")
    out.append("Accepted, and why that is right:")
    for o in outcomes:
        if o.kind == "accepted" and o.entry.expect == "accept":
            out.append(f"- `{o.entry.id}` ({o.entry.what}): {o.entry.why}")
    out.append("")
    out.append("| id | area | input | outcome | exit | message |")
    out.append("| --- | --- | --- | --- | ---: | --- |")
    for o in outcomes:
        flags = "".join(f" +{f}" for f in ("partial", "wrote", "leak") if getattr(o, f))
        msg = first_line(o.stderr, 200).replace("|", "\\|")
        out.append(f"| {o.entry.id} | {o.entry.area} | {o.entry.what.replace('|', '/')} | {o.kind}{flags} | "
                   f"{o.code if o.code is not None else '-'} | {msg} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", help="also write the table here")
    ap.add_argument("--only", nargs="*", help="entry ids to run (default all)")
    args = ap.parse_args()
    entries = [e for e in CATALOGUE if not args.only or e.id in args.only]
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        t0 = time.monotonic()
        outcomes = run_all(Path(tmp), entries)
        os.environ["INVESTIGATOR_TRACEBACK"] = "1"
        try:
            traced = run_all(Path(tmp), entries)
        finally:
            os.environ.pop("INVESTIGATOR_TRACEBACK", None)
        seconds = time.monotonic() - t0
    text = render(outcomes, seconds, traced)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    worst = [summary(outcomes), summary(traced)]
    return 1 if any(s["tracebacks"] or s["hung (stopped after 60 s)"] or s["partial state"] or s["internal errors (exit 4/5)"]
                    or s["leaks of unreadable content"] or s["accepted wrongly"] for s in worst) else 0


if __name__ == "__main__":
    sys.exit(main())
