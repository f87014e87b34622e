"""`python -m investigator.generator --seed S --count N --out DIR`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import generate


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m investigator.generator",
                                description="Write seeded synthetic incident cases with gold answers.")
    p.add_argument("--seed", type=int, required=True, help="the seed; the same seed and count give identical cases")
    p.add_argument("--count", type=int, required=True, help="how many cases to write")
    p.add_argument("--out", type=Path, required=True, help="the folder to write the case folders into")
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    args = p.parse_args(argv)
    lines: list[str] = []

    def progress(msg: str) -> None:
        lines.append(msg)
        if not args.quiet or " cases in " in msg:
            print(msg, flush=True)

    generate(args.seed, args.count, args.out, progress=progress)
    return 0


if __name__ == "__main__":
    sys.exit(main())
