"""Build a folder next to its final place, then swap it in (no graphrag import here).

A build writes into ``.<name>.building-<pid>-<hex>`` beside ``out``; the swap renames the
current ``out`` to ``.<name>.old-<pid>-<hex>``, the staging folder to ``out``, and removes
the old one. A build killed before the swap leaves the previous folder in place; one killed
between the two renames leaves no ``out`` (so no fresh graph: the next run rebuilds it).
Either way the staging and old folders, which hold source text, are named after their
process, so ``tools.builds.remove_leftovers`` removes them once that process is gone.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

from tools.builds import crash_point


def staging_dir(out: Path) -> Path:
    """A fresh, empty build folder beside ``out``, owned by this process."""
    staging = out.with_name(f".{out.name}.building-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    staging.mkdir(parents=True)
    return staging


def swap_in(staging: Path, out: Path) -> None:
    """Replace ``out`` (if any) with the finished ``staging`` folder."""
    old = out.with_name(f".{out.name}.old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    if out.exists():
        out.rename(old)
    crash_point("graph", 3)
    staging.rename(out)
    crash_point("graph", 4)
    shutil.rmtree(old, ignore_errors=True)
