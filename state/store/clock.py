"""The one clock of the store: every stored time is taken here, aware and in UTC. Imports nothing."""

from __future__ import annotations

from datetime import datetime, timezone


def utc_now() -> datetime:
    """The current time, timezone-aware (UTC): every `at`, `created_at` and lease is one of these."""
    return datetime.now(timezone.utc)
