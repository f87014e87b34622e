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
    elif type(exc).__module__.startswith(("sqlite3", "psycopg")) and str(exc).strip():  # read without the ORM
        name += f" ({str(exc).strip().splitlines()[0]})"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(_OWN)]
    if frames:
        f = frames[-1]
        name += f" at {Path(f.filename).relative_to(_ROOT)}:{f.lineno} in {f.name}"
    return name[:500]


def redacted_traceback(exc: BaseException) -> str:
    """The traceback of an error (INVESTIGATOR_TRACEBACK=1), without a value from a source.

    Frames show the file, line, function and that line of code, as Python prints them; the
    message of each exception in the chain is left out unless it is one of the runtime's own
    (a foreign message may quote the text being parsed), and locals and notes never appear."""
    chain: list[tuple[BaseException, str]] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    link = ""
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append((current, link))
        if current.__cause__ is not None:
            current, link = current.__cause__, "\nThe above exception was the direct cause of the following exception:\n\n"
        elif current.__context__ is not None and not current.__suppress_context__:
            current, link = current.__context__, "\nDuring handling of the above exception, another exception occurred:\n\n"
        else:
            current = None
    out: list[str] = []
    for error, link_after in reversed(chain):
        frames = traceback.StackSummary.from_list(traceback.extract_tb(error.__traceback__))
        out.append("Traceback (most recent call last):\n" + "".join(frames.format()))
        out.append(describe(error) if isinstance(error, InvestigatorError) else _type_line(error))
        out.append("\n" + link_after if link_after else "\n")
    return "".join(out)


def _type_line(exc: BaseException) -> str:
    name = f"{type(exc).__module__}.{type(exc).__qualname__}".removeprefix("builtins.")
    if isinstance(exc, OSError) and exc.strerror:
        name += f": {exc.strerror}"
    return name + " (message withheld: it may quote a source)"


def store_error(exc: BaseException) -> bool:
    """A database driver's error (the store went away or refused): exit 4 rather than 5."""
    return type(exc).__module__.startswith(("sqlalchemy", "psycopg", "sqlite3"))
