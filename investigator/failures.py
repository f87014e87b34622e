"""How an error is told: one line, never source text; and which exit code it gets."""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from state.errors import InvestigatorError

_ROOT = Path(__file__).resolve().parent.parent
_OWN = tuple(str(_ROOT / d) + os.sep for d in ("investigator", "graphs", "state", "tools"))


def describe(exc: BaseException) -> str:
    """One line about an error, never the text of a source.

    The runtime's own errors say what they mean (file, field, expected; they never quote a
    source). Anything else is its type and the line of our code it came from: the message of
    a foreign exception may quote the text being parsed, so it is not repeated (an OS error's
    reason and a database driver's first line are, as they name no source text)."""
    if isinstance(exc, InvestigatorError):
        return " ".join([str(exc), *getattr(exc, "__notes__", [])]).replace("\n", " ")[:500]
    name = type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        name += f" ({exc.strerror})"
    orig = getattr(exc, "orig", None)
    if type(exc).__module__.startswith("sqlalchemy") and orig is not None and str(orig).strip():
        name += f" ({str(orig).strip().splitlines()[0]})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(_OWN)]
    if frames:
        f = frames[-1]
        name += f" at {Path(f.filename).relative_to(_ROOT)}:{f.lineno} in {f.name}"
    return name[:500]


def store_error(exc: BaseException) -> bool:
    """A database driver's error (the store went away or refused): exit 4 rather than 5."""
    return type(exc).__module__.startswith(("sqlalchemy", "psycopg", "sqlite3"))
