"""Seeded synthetic incidents in the documented case format, with gold answers.

`generate(seed, count, out)` writes `count` case folders under `out`; the same seed and
count give byte-identical folders. Each case follows docs/case-format.md and its
`expected.yaml` follows from docs/deciding.md (see `expected.py`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from .case import write_case
from .scenario import CAUSES, RED_HERRINGS, VARIANTS, build_scenario

__all__ = ["generate", "CAUSES", "VARIANTS", "RED_HERRINGS"]


def generate(seed: int, count: int, out: Path, *, variant: str | None = None,
             progress: Callable[[str], None] | None = None) -> list[Path]:
    """Write `count` cases for `seed` under `out`; return their folders in index order.

    `variant` forces every case to that variant (`hop_in_prose`: each decisive hop written only in prose).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    t_all = time.perf_counter()
    for index in range(count):
        t0 = time.perf_counter()
        sc = build_scenario(seed, index, variant)
        paths.append(write_case(sc, out))
        if progress is not None:
            progress(f"{paths[-1].name}: {sc.cause}/{sc.variant}, depth {len(sc.path) - 1}, "
                     f"{time.perf_counter() - t0:.3f}s")
    if progress is not None and count:
        total = time.perf_counter() - t_all
        progress(f"{count} cases in {total:.2f}s ({total / count:.3f}s per case)")
    return paths
