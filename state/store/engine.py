"""Store URLs and engines: which database a URL names, how it is opened, how it is printed.

SQLite files get WAL and a busy timeout; a SQLite file this process cannot write is opened
read-only (`location`); PostgreSQL engines ping before use. Imports SQLAlchemy, `state.errors` and
`location` only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError
from sqlmodel import create_engine

from state.errors import ConfigError
from state.store.location import read_only_uri, sqlite_read_only


def shown_url(url: str) -> str:
    """A store URL as it may be printed (no password)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return re.sub(r"(?<=[/:])([^/@:]*):[^/@]*@", r"\1:***@", url)


def sqlite_path(url: str) -> Path | None:
    """The database file of a `sqlite:///…` URL (None for in-memory or another kind of store)."""
    if not url.startswith("sqlite"):
        return None
    db = make_url(url).database
    return Path(db) if db and db != ":memory:" else None


def make_engine(url: str) -> Engine:
    """An engine for a store URL (`sqlite:///path.db` or `postgresql+psycopg://…`); a SQLite file that
    cannot be written is opened read-only (listing and showing runs work, a write is refused)."""
    path = sqlite_path(url) if url.startswith("sqlite") else None
    if path is not None and sqlite_read_only(path):
        return create_engine(f"sqlite:///{read_only_uri(path)}&uri=true")
    if url.startswith("sqlite"):
        try:
            engine = create_engine(url, connect_args={"timeout": 30})
        except ArgumentError as exc:
            raise ConfigError(f"store URL {shown_url(url)!r}: expected sqlite:///path/to/file.db ({exc})") from None

        @event.listens_for(engine, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

        return engine
    if url.startswith("postgresql"):
        try:
            return create_engine(url, pool_pre_ping=True)
        except (ArgumentError, ValueError) as exc:
            raise ConfigError(f"store URL {shown_url(url)!r}: expected postgresql+psycopg://user@host:port/database "
                              f"({type(exc).__name__})") from None
    raise ConfigError(f"store URL {url!r}: expected sqlite:///… or postgresql+psycopg://…")


def is_read_only(engine: Engine) -> bool:
    """An engine `make_engine` opened read-only: its tables are used as they are, never created."""
    return "mode=ro" in str(engine.url) or "immutable=1" in str(engine.url)


def unreachable(exc: DBAPIError) -> bool:
    """A store that cannot be opened at all (no server, no database, not a database file): no retry helps."""
    text = str(exc.orig).lower()
    return exc.connection_invalidated or any(w in text for w in (
        "connection", "does not exist", "unable to open", "not a database", "authentication"))
