"""A run's checkpoint history read from a SQLite checkpointer's file without LangGraph.

`history` lists, per checkpoint, its step, source, round, gap, hits, stop and size. LangGraph's
SQLite saver keeps each checkpoint as one msgpack blob (its metadata as JSON), and our state's
values in it are pydantic extensions (type 5: module, class, fields; times inside them type 3). Those fields are read here
as plain data: no class named in a checkpoint is imported or built. The size `history` shows is
that of the checkpoint serialised again by LangGraph's serializer, which for the types our loop
stores is the stored blob byte for byte (a test checks it on real runs), so it is the blob's size.

Anything else (a PostgreSQL checkpointer, whose values are split over blob rows and reassembled
by LangGraph; a blob that is not msgpack; a value of a type not in `KNOWN`; missing tables) gets
None from `history_rows`, and the caller reads the history through LangGraph as before.
Imports the standard library, ormsgpack and `state.store.location`.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from state.store.location import read_only_uri, sqlite_read_only

METHOD = 3
"""LangGraph's msgpack extension code of a value made by a class method: `[module, class, argument,
method]`; of those only `datetime.datetime.fromisoformat` is read here (times inside our values)."""
PYDANTIC_V2 = 5
"""LangGraph's msgpack extension code of a pydantic (v2) value: `[module, class, fields, method]`."""
KNOWN = frozenset({
    ("state.evidence", "Gap"), ("state.evidence", "Hit"), ("state.claims", "StopReason"),
    ("state.evidence", "TelemetryAction"), ("state.evidence", "RelationsAction"), ("state.evidence", "ChangesAction"),
    ("state.evidence", "PlacementAction"), ("state.evidence", "RecordsAction"), ("state.evidence", "DocumentsAction")})
"""The (module, class) of every type a checkpoint may hold (`graphs.loop_state.CHECKPOINT_TYPES`)."""


class _Unknown(Exception):
    """A checkpoint this reader does not decode: LangGraph's serializer reads the history instead."""


class _Value:
    """A pydantic value of a checkpoint, as its class name and fields."""

    __slots__ = ("name", "fields")

    def __init__(self, name: str, fields: dict[str, Any]) -> None:
        self.name, self.fields = name, fields


def _ext(code: int, data: bytes) -> _Value | str:
    import ormsgpack

    if code not in (METHOD, PYDANTIC_V2):
        raise _Unknown(f"extension type {code}")
    module, name, fields, method = ormsgpack.unpackb(data, ext_hook=_ext, option=ormsgpack.OPT_NON_STR_KEYS)
    if code == METHOD:
        if (module, name, method) != ("datetime", "datetime", "fromisoformat") or not isinstance(fields, str):
            raise _Unknown(f"{module}.{name}.{method}")
        return fields  # the time as written: nothing here needs it as a datetime
    if (module, name) not in KNOWN or not isinstance(fields, dict):
        raise _Unknown(f"{module}.{name}")
    return _Value(name, fields)


def _row(metadata: bytes | str | None, blob: bytes, checkpoint_id: str) -> dict[str, Any]:
    import ormsgpack

    checkpoint = ormsgpack.unpackb(blob, ext_hook=_ext, option=ormsgpack.OPT_NON_STR_KEYS)
    meta = json.loads(metadata) if metadata is not None else {}
    values = checkpoint.get("channel_values", {})
    gap, stop = values.get("gap"), values.get("stop")
    if not isinstance(gap, _Value | None) or not isinstance(stop, _Value | None):
        raise _Unknown("gap or stop is not a value")
    return {
        "step": meta.get("step"), "source": meta.get("source"), "round": values.get("round"),
        "gap": f"{gap.fields['act']['action']} → {gap.fields['claim_id']}" if gap else None,
        "hits": len(values.get("hits") or []), "stop": stop.fields["kind"] if stop else None,
        "bytes": len(blob), "checkpoint_id": checkpoint_id,
    }


def history_rows(path: Path, run_id: str) -> list[dict[str, Any]] | None:
    """The run's checkpoints as `Workspace.history` lists them, read from the checkpointer file at
    `path`; None when only LangGraph can read them. A file not there yet holds no checkpoint."""
    if not path.exists():
        return []
    try:
        uri, ro = (read_only_uri(path), True) if sqlite_read_only(path) else (str(path), False)
        with closing(sqlite3.connect(uri, uri=ro, timeout=30)) as conn:
            rows = conn.execute("SELECT checkpoint_id, type, checkpoint, metadata FROM checkpoints "
                                "WHERE thread_id = ? ORDER BY checkpoint_id DESC", (run_id,)).fetchall()
        if any(kind != "msgpack" for _id, kind, _blob, _meta in rows):
            return None
        out = [_row(meta, blob, cid) for cid, _kind, blob, meta in rows]
    except (sqlite3.Error, _Unknown, KeyError, TypeError, ValueError):
        return None
    return sorted(out, key=lambda r: (r["step"] if r["step"] is not None else -2))
