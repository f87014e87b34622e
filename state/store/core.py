"""The part every store part shares: the engine, the lazily created tables, one session per call.

A SQLite store whose file does not exist yet is created (with its folder) by the first write,
never by a look-up: `absent()` tells the look-ups to find nothing. Imports the tables and the
engine helpers of this package.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Self

from sqlalchemy import inspect
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, SQLModel

from state.errors import ConfigError, StoreUnavailable
from state.store import tables as _tables  # noqa: F401 - registers every table before create_all
from state.store.engine import is_read_only, make_engine, shown_url, sqlite_path, unreachable


class StoreCore:
    """One investigation store's engine and tables; the parts (runs, evidence, ...) add the reads and writes."""

    def __init__(self, engine: Engine, path: Path | None = None) -> None:
        self.engine = engine
        self.path = path
        self._ready = is_read_only(engine)  # read-only: tables as they are
        if path is not None and not path.exists():
            self._check_folder()
        else:
            self._prepare()

    @classmethod
    def from_url(cls, url: str) -> Self:
        return cls(make_engine(url), sqlite_path(url))

    def create(self) -> None:
        """Create the database (a SQLite file and its folder) and the tables now, for a writer that
        uses `engine` directly; the store's own methods create it on their first write."""
        self._prepare()

    def _check_folder(self) -> None:
        """A SQLite file that is still to be created must have a folder it can be created in."""
        assert self.path is not None
        for parent in self.path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ConfigError(f"store {shown_url(str(self.engine.url))}: cannot create the folder "
                                      f"{self.path.parent} ({parent} is a file)")
                return

    def _prepare(self) -> None:
        """Create the tables (and a SQLite file's folder) once; a store that cannot be opened is one clear error."""
        if self._ready:
            return
        where = shown_url(str(self.engine.url))
        if self.path is not None:
            if self.path.is_dir():
                raise ConfigError(f"store {where}: expected a database file, found a folder")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"store {where}: cannot create the folder {self.path.parent} "
                                  f"({exc.strerror or type(exc).__name__})") from None
        for attempt in range(10):  # two first runs on a fresh store create its tables at once:
            try:  # the one that finds a table made meanwhile checks again
                SQLModel.metadata.create_all(self.engine)
                self._add_missing_columns()
                break
            except DBAPIError as exc:
                if attempt < 9 and not unreachable(exc):
                    time.sleep(0.05 * (attempt + 1))
                    continue
                detail = str(exc.orig).strip().splitlines()[0] if str(exc.orig).strip() else type(exc.orig).__name__
                if self.path is not None:
                    raise ConfigError(f"store {where}: cannot open it as a SQLite database ({detail})") from None
                raise StoreUnavailable(f"store {where}: {detail}") from None
        self._ready = True

    def _absent(self) -> bool:
        """A SQLite store not created yet: look-ups find nothing and create nothing."""
        return not self._ready and self.path is not None and not self.path.exists()

    def _add_missing_columns(self) -> None:
        """Columns added to a table after a store was created are added to it (nullable, no data)."""
        insp = inspect(self.engine)
        for table in SQLModel.metadata.sorted_tables:
            if not table.name.startswith("inv_") or not insp.has_table(table.name):
                continue
            have = {c["name"] for c in insp.get_columns(table.name)}
            for column in table.columns:
                if column.name not in have:
                    kind = column.type.compile(dialect=self.engine.dialect)
                    with self.engine.begin() as conn:
                        conn.exec_driver_sql(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}')

    @contextmanager
    def _session(self) -> Iterator[Session]:
        self._prepare()
        with Session(self.engine, expire_on_commit=False) as session:
            yield session
            session.commit()
