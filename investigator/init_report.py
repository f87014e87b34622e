"""What `investigator init` tells its user about the material it listed: `init-report.md`."""

from __future__ import annotations

from datetime import timezone
from state import Frozen
from tools.formats.logs import parse_time

__all__ = ["Skipped", "init_report", "local_times"]


class Skipped(Frozen):
    path: str
    """The material file, relative to the sources folder."""
    reason: str
    """Why init did not list it."""


def local_times(text: str) -> bool:
    """Whether a CSV's first row is dated by a local time without a zone (as Grafana writes them)."""
    rows = text.splitlines()[1:2]
    cell = rows[0].split(",", 1)[0].strip().strip('"') if rows else ""
    return bool(cell) and parse_time(cell, None) is None and parse_time(cell, timezone.utc) is not None


def init_report(entries: list[dict], skipped: list[Skipped], assumed: list[str], zoneless: list[str], env: str) -> str:
    lines = ["# What `investigator init` made of the material", "",
             f"{len(entries)} sources listed in sources.yaml; {len(skipped)} files skipped.", ""]
    if skipped:
        lines += ["| skipped file | why |", "| --- | --- |", *(f"| `{s.path}` | {s.reason} |" for s in skipped), ""]
    if assumed:
        lines += [f"Stating no environment, taken to be from the alert's (`{env}`); correct in sources.yaml "
                  "where wrong:", "", *(f"- `{a}`" for a in assumed), ""]
    if zoneless:
        lines += ["Times without a zone and no timezone given: their rows are not read until the entry in "
                  "sources.yaml gets a `timezone` (e.g. `timezone: \"+05:00\"`, the zone of the browser that "
                  "exported them):", "", *(f"- `{z}`" for z in zoneless), ""]
    return "\n".join(lines)
