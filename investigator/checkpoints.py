"""The LangGraph checkpointer on the same database kind as the store."""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from collections.abc import Iterator

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from graphs.loop_state import CHECKPOINT_TYPES
from investigator.config import Settings
from state.store import read_only_uri, sqlite_read_only


def serializer() -> JsonPlusSerializer:
    """Strict msgpack: only our own state types may be revived from a checkpoint."""
    return JsonPlusSerializer(allowed_msgpack_modules=list(CHECKPOINT_TYPES))


@contextmanager
def open_checkpointer(settings: Settings) -> Iterator[BaseCheckpointSaver]:
    url = settings.resolved_store_url
    if url.startswith("postgresql"):
        from langgraph.checkpoint.postgres import PostgresSaver

        conninfo = url.replace("postgresql+psycopg://", "postgresql://")
        with PostgresSaver.from_conn_string(conninfo) as saver:
            saver.serde = serializer()
            saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = settings.checkpoint_path
    read_only = sqlite_read_only(path)  # a workspace that cannot be written: its history can still be read
    if read_only:
        conn = sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA busy_timeout=30000")
    try:
        saver = SqliteSaver(conn, serde=serializer())
        if read_only:
            saver.is_setup = True  # its tables are there (setup would write)
        else:
            saver.setup()
        yield saver
    finally:
        conn.close()
