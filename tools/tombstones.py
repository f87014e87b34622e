"""The sources deleted from a case's chunk index, read with DuckDB alone.

Kept apart from `tools.index` (which needs the chunker, the derivations and pyarrow) so that
re-checking access for `show` costs one small import and one read-only connection.
"""

from __future__ import annotations

from pathlib import Path

from state.errors import IndexMissing

__all__ = ["tombstoned"]


def tombstoned(path: Path) -> set[str]:
    """The sources deleted from the index at `path`. An index that exists but cannot be read is
    an error, never "nothing deleted" (a rebuild would bring its deleted sources back)."""
    if not Path(path).exists():
        return set()
    import duckdb  # only when there is an index to read

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
