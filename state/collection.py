"""`collection.yaml`: where each collected source of a case came from (`investigator collect`).

A case folder written by `collect` holds, next to `case.yaml` and `sources.yaml`, one record per
thing it tried to fetch: the source it became (or why it failed), and what a citation of it
needs to be checked against the system it came from — the PromQL query, the time range and step,
the server, the git commit, the `kubectl` command — with when it was fetched and the SHA-256 of
the bytes written. The runtime does not read it to decide anything; people and reviews do.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from state._base import AwareDatetime, Frozen

Collector = Literal["prometheus", "git", "kubernetes", "material"]


class Fetched(Frozen):
    """One fetch: a source written, or a failure recorded in its place."""

    collector: Collector
    """Which system it came from."""
    what: str
    """What was asked, in words (`latency_p95 of checkout`, `commits touching apps/checkout`)."""
    status: Literal["ok", "failed", "empty"]
    """`ok`: written as a source; `failed`: the system refused or did not answer (see `error`);
    `empty`: it answered with nothing to keep (a query matching no series)."""
    source_id: str | None = None
    """The id in `sources.yaml` (only when `ok`)."""
    path: str | None = None
    """The file in the case folder (only when `ok`)."""
    error: str | None = None
    """Why it failed: one line, never a secret."""
    attempts: int = Field(default=1, ge=0)
    """Tries made (transient faults are retried)."""
    fetched_at: AwareDatetime
    """When the answer (or the last failure) came."""
    sha256: str | None = None
    """SHA-256 of the file's bytes as written."""
    server: str | None = None
    """Prometheus base URL, git repository, or kubeconfig cluster server."""
    query: str | None = None
    """The PromQL expression, or the command run (`kubectl get events -n prod -o json`)."""
    start: AwareDatetime | None = None
    """Range start (Prometheus) or lookback start (git)."""
    end: AwareDatetime | None = None
    """Range end (Prometheus) or lookback end (git)."""
    step: str | None = None
    """Query resolution (`30s`)."""
    commits: tuple[str, ...] = ()
    """Git: the full commit ids the source was taken from."""
    service: str | None = None
    """The service the source is about."""


class Collection(Frozen):
    """The whole file."""

    format: Literal["investigator/collection@1"] = "investigator/collection@1"
    alert: str
    """The alert id the case was collected for."""
    collected_at: AwareDatetime
    window_start: AwareDatetime
    window_end: AwareDatetime
    services: tuple[str, ...]
    """The services collected for: the alert's, and those its material relates to it."""
    fetched: tuple[Fetched, ...] = ()
    skipped: tuple[str, ...] = ()
    """Collectors not run, each with why (`kubernetes: no --kubeconfig given`)."""

    def failed(self) -> tuple[Fetched, ...]:
        return tuple(f for f in self.fetched if f.status == "failed")
