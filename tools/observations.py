"""Structured tools: metrics, change records, logs and records by time window, in DuckDB.

Each answer lists the matching sources the principal may read (as hits to read back) and,
separately, the ids of matching sources it may not read: their existence is manifest
metadata, their content never leaves the index.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from state._base import Frozen
from state.evidence import Hit
from tools.access import AccessSnapshot
from tools.index import open_index


class Lookup(Frozen):
    hits: tuple[Hit, ...] = ()
    denied: tuple[str, ...] = ()
    searched: tuple[str, ...] = ()
    """Readable sources that were searched (matched or not): 'searched and not found' needs them."""


def _split(rows: list[tuple], access: AccessSnapshot, tool: str, channel: str) -> Lookup:
    hits, denied = [], []
    for rank, (source_id, chunk_id, start, end, score) in enumerate(rows, start=1):
        if access.can_read(source_id):
            hits.append(Hit(source_id=source_id, chunk_id=chunk_id, start=start, end=end, score=float(score),
                            rank=len(hits) + 1, channel=channel, tool=tool))
        elif source_id not in denied:
            denied.append(source_id)
    return Lookup(hits=tuple(hits), denied=tuple(denied))


class Observations:
    """Time-window queries over the case index."""

    def __init__(self, index_path: Path) -> None:
        self.index_path = index_path

    def _rows(self, sql: str, params: list) -> list[tuple]:
        con = open_index(self.index_path)
        try:
            return con.execute(sql, params).fetchall()
        finally:
            con.close()

    def metric(self, metric: str, service: str, environment: str, access: AccessSnapshot) -> Lookup:
        """The sources holding `metric` for one service and environment (whole series to read back)."""
        rows = self._rows(
            """SELECT source_id, 'series:' || source_id, 0, 0, count(*) FROM metric_points
               WHERE metric = ? AND service = ? AND environment = ? GROUP BY source_id ORDER BY source_id""",
            [metric, service, environment],
        )
        return _split(rows, access, "metrics", "series")

    def changes(self, services: list[str], environment: str, start: datetime, end: datetime,
                types: list[str], access: AccessSnapshot) -> Lookup:
        """Change records of `services` in `environment` that started or completed in [start, end]."""
        rows = self._rows(
            f"""SELECT source_id, 'record:' || source_id, 0, 0, 1.0 FROM changes
                WHERE service IN ({','.join('?' * len(services))}) AND environment = ?
                  AND type IN ({','.join('?' * len(types))})
                  AND ((started_at BETWEEN ? AND ?) OR (completed_at BETWEEN ? AND ?))
                ORDER BY started_at, source_id""",
            [*services, environment, *types, start, end, start, end],
        )
        searched = self._rows(
            f"SELECT DISTINCT source_id FROM changes WHERE service IN ({','.join('?' * len(services))}) "
            "AND environment = ? ORDER BY source_id", [*services, environment])
        out = _split(rows, access, "changes", "window")
        return out.model_copy(update={"searched": tuple(s for (s,) in searched if access.can_read(s))})

    def logs(self, service: str, environment: str, start: datetime, end: datetime, access: AccessSnapshot,
             levels: tuple[str, ...] = ("WARN", "ERROR")) -> Lookup:
        """Log chunks of a service in the window, ranked by how many WARN/ERROR lines they hold."""
        level_sql = " OR ".join("l.line LIKE ?" for _ in levels)
        rows = self._rows(
            f"""SELECT c.source_id, c.chunk_id, c.start_, c.end_, count(*) AS n
                FROM log_lines l JOIN chunks c ON c.source_id = l.source_id
                     AND l.start_ >= c.start_ AND l.end_ <= c.end_
                WHERE l.service = ? AND l.environment = ? AND l.ts BETWEEN ? AND ? AND ({level_sql})
                GROUP BY c.source_id, c.chunk_id, c.start_, c.end_
                ORDER BY n DESC, c.start_ ASC""",
            [service, environment, start, end, *[f"% {lv} %" for lv in levels]],
        )
        return _split(rows, access, "logs", "window")

    def records(self, kinds: list[str], service: str, environment: str, access: AccessSnapshot) -> Lookup:
        """Mapping / ownership / config / catalog records about a service."""
        rows = self._rows(
            f"""SELECT source_id, 'record:' || source_id, 0, 0, 1.0 FROM records
                WHERE kind IN ({','.join('?' * len(kinds))}) AND (service = ? OR service = '*')
                  AND (environment = ? OR environment = '*') ORDER BY kind, source_id""",
            [*kinds, service, environment],
        )
        return _split(rows, access, "records", "lookup")
