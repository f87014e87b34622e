"""What `investigator init` tells its user about the material it listed: `init-report.md`."""

from __future__ import annotations

from state import Frozen

__all__ = ["Skipped", "init_report"]


class Skipped(Frozen):
    path: str
    """The material file, relative to the sources folder."""
    reason: str
    """Why init did not list it."""


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
