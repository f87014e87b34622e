"""The sources deleted from a case's chunk index: from the index's tombstone list when that list
still describes the index file exactly, otherwise read with DuckDB.

Kept apart from `tools.index` (which needs the chunker, the derivations and pyarrow) so that
re-checking access for `show` or `grant` costs a stat and a small file, not DuckDB (~0.1 s).

The list (`basic.tombstones.json` beside `basic.duckdb`) is written by the index's writers only
(`tools.index`: a tombstone, a rebuild), after they wrote: the tombstones read back from the file
with DuckDB, together with the file's `IndexState` before and after that read. A reader trusts the
list only when the file is in that very state, before and after it reads the list, with no
write-ahead log beside it (committed rows not yet in the file). A state names the file (device,
inode), its size, modification time and the hash of its first 12 KiB, where DuckDB keeps the
headers that every checkpoint rewrites (with an iteration counter), so a write the modification
time cannot tell apart (same clock tick, same size) still changes it. Every other case falls back
to DuckDB: no list (an older index, a writer killed before it wrote one), a list of another state
(a rebuild swapped the file in, a tombstone or any other write changed it, the file was moved or
copied), an unreadable list. A writer removes the list before it writes, so a list is never newer
than its file's state, and the list being wrong can only cost a DuckDB read.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from state.errors import IndexMissing

__all__ = ["IndexState", "forget_list", "index_state", "list_path", "tombstoned", "write_list"]

LIST_VERSION = 1
_HEAD = 3 * 4096
"""DuckDB's main header and its two database headers (the one a checkpoint writes alternates)."""

IndexState = tuple[int, int, int, int, str]
"""(device, inode, size, modification time in ns, hash of the file's first 12 KiB)."""


def list_path(path: Path) -> Path:
    """The tombstone list of the index at `path` (`basic.duckdb` -> `basic.tombstones.json`)."""
    return Path(path).with_suffix(".tombstones.json")


def index_state(path: Path) -> IndexState | None:
    """The state of the index file at `path`; None when there is none, or when a write-ahead log
    beside it holds committed rows the file does not (the file alone does not say what is in it)."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            head = hashlib.sha256(f.read(_HEAD)).hexdigest()
        now = os.stat(path)  # still the file that was read (not swapped by a rebuild meanwhile)
    except OSError:
        return None
    if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) or os.path.lexists(f"{path}.wal"):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, head


def tombstoned(path: Path) -> set[str]:
    """The sources deleted from the index at `path`. An index that exists but cannot be read is
    an error, never "nothing deleted" (a rebuild would bring its deleted sources back)."""
    if not Path(path).exists():
        return set()
    listed = _listed(Path(path))
    return listed if listed is not None else _read(Path(path))


def _listed(path: Path) -> set[str] | None:
    """The tombstone list's ids when it describes the index file as it is now, else None."""
    before = index_state(path)
    if before is None:
        return None
    try:
        data = json.loads(list_path(path).read_text(encoding="utf-8"))
        ok = (data["version"] == LIST_VERSION and list(data["state"]) == list(before)
              and all(isinstance(s, str) for s in data["tombstoned"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not ok or index_state(path) != before:
        return None
    return set(data["tombstoned"])


def _read(path: Path) -> set[str]:
    import duckdb  # only when no tombstone list describes the index

    try:
        con = duckdb.connect(str(path), read_only=True)
        try:
            return {r[0] for r in con.execute("SELECT source_id FROM tombstones").fetchall()}
        finally:
            con.close()
    except duckdb.Error as exc:
        raise IndexMissing(f"the index at {path} cannot be read ({str(exc).splitlines()[0]}): if another "
                           "process is writing it, try again; if it is damaged, move it away, run "
                           "`investigator index CASE` and delete again any source deleted before") from None


def forget_list(path: Path) -> None:
    """Remove the tombstone list of the index at `path`: what a writer does before it writes."""
    list_path(path).unlink(missing_ok=True)


def write_list(path: Path) -> bool:
    """Write the tombstone list of the index at `path` after a write (its connection closed):
    the tombstones DuckDB reads, with the file's state, unchanged from before that read to after
    it. Returns False (and leaves no list) when the state moved or cannot be pinned, or the list
    cannot be written: readers then read DuckDB, as they would without a list."""
    from tools.builds import build_name

    forget_list(path)
    before = index_state(path)
    if before is None:
        return False
    ids = _read(Path(path))
    if index_state(path) != before:
        return False
    target = list_path(path)
    tmp = target.with_name(build_name(".json"))  # a killed writer's file is removed as a build leftover
    try:
        tmp.write_text(json.dumps({"version": LIST_VERSION, "state": list(before), "tombstoned": sorted(ids)}),
                       encoding="utf-8")
        os.replace(tmp, target)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    if index_state(path) != before:  # written meanwhile: the list may not describe it (readers would see it too)
        forget_list(path)
        return False
    return True
