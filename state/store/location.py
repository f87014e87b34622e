"""Where a store is and how a SQLite store file is opened, in the standard library alone.

Both the SQLAlchemy engines (`engine`) and the reader without the ORM (`rows`) open a SQLite file
that this process cannot write the same way: read-only, through `read_only_uri`. Imports nothing
of ours.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

_SQLITE_FILE = re.compile(r"sqlite(?:\+pysqlite)?:///([^?]+)")
_POSTGRES = re.compile(r"postgresql\+psycopg://[^?]*(?:\?.*)?")


def sqlite_file(url: str) -> Path | None:
    """The database file of a plain `sqlite:///path` URL (no query, not in memory); None otherwise,
    also for the URLs SQLAlchemy would read with connect arguments (`?mode=ro&uri=true`)."""
    m = _SQLITE_FILE.fullmatch(url)
    if m is None or m.group(1) == ":memory:":
        return None
    return Path(m.group(1))


def postgres_conninfo(url: str) -> str | None:
    """The libpq connection string of a `postgresql+psycopg://…` store URL (None for any other URL)."""
    if _POSTGRES.fullmatch(url) is None:
        return None
    return "postgresql://" + url.removeprefix("postgresql+psycopg://")


def sqlite_read_only(path: Path | None) -> bool:
    """An existing SQLite file this process may read but not write (nor create its WAL files beside):
    a workspace on a read-only mount, or one owned by another account, is still there to be read."""
    if path is None or not path.is_file():
        return False
    try:
        with open(path, "r+b"):  # opened for writing, nothing written: the file's mode and the mount decide
            pass
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return True
        raise
    return not os.access(path.parent, os.W_OK)


def read_only_uri(path: Path) -> str:
    """A SQLite URI for a store nobody may write: without locks or WAL files (`immutable`) when its last
    writer closed it (its write-ahead log is folded in); read-only through the log when one is left."""
    wal = path.with_name(path.name + "-wal")
    left = wal.exists() and wal.stat().st_size > 0
    return f"file:{path.resolve()}?mode=ro" if left else f"file:{path.resolve()}?immutable=1"
