"""The read tool: read back the exact span of the current source version, at read time.

Permission is checked again when reading (access may have changed since the search).
Outcomes are distinct: `ok`, `denied` (never retried), `not_found` (no longer in the
manifest), `failed` (retried with bounded exponential back-off, then given up). Whatever
goes wrong reading a listed source — a transient fault, a file that is gone, unreadable,
a folder, not UTF-8, or text its parser breaks on — is `failed`, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from state import Frozen
from state.errors import CaseError, SourceDenied, SourceError, SourceNotFound, SourceUnavailable
from state.evidence import ReadOutcome, ReadRecord
from tools.access import AccessPolicy, AccessSnapshot
from tools.corpus import ParseContext, SourceDoc, load_source


class RetryPolicy(Frozen):
    attempts: int = 3
    wait_initial: float = 0.05
    wait_max: float = 0.5


class ReadResult(Frozen):
    record: ReadRecord
    doc: SourceDoc | None = None
    watermark: str = ""


FaultHook = Callable[[str], None]
"""Called before each attempt with the source id; raises to inject a
fault (SourceUnavailable, OSError, ...) or changes the file under the reader."""


class Reader:
    def __init__(self, case_dir: Path, policy: AccessPolicy, retry: RetryPolicy = RetryPolicy(),
                 fault: FaultHook | None = None, ctx: ParseContext | None = None) -> None:
        self.case_dir = Path(case_dir)
        self.policy = policy
        self.retry = retry
        self.fault = fault
        self.ctx = ctx

    def _fetch(self, source_id: str, access: AccessSnapshot) -> SourceDoc:
        try:
            if self.fault is not None:
                self.fault(source_id)
            manifest = self.policy.manifest.current()  # the manifest of now: a source dropped since is not_found
            entry = next((s for s in manifest.sources if s.id == source_id), None)
            if entry is None:
                raise SourceNotFound(source_id, "not in the manifest")
            if access.is_deleted(source_id):
                raise SourceNotFound(source_id, "deleted (tombstone)")
            if not access.can_read(source_id):
                raise SourceDenied(source_id, "the principal shares no group with the source")
            return load_source(self.case_dir, entry, self.ctx)
        except SourceError:
            raise
        except CaseError as exc:
            if exc.field == "path" and "to exist" in exc.expected:
                # listed in the manifest but gone (deleted, rotated away): a failed read, retried
                raise SourceUnavailable(source_id, "the file is gone") from None
            # a source that no longer parses (or reads) is a failed read, named by field, never quoted
            raise SourceUnavailable(source_id, f"{exc.field}: {exc.expected}") from None
        except OSError as exc:
            raise SourceUnavailable(source_id, f"{type(exc).__name__} ({exc.strerror})" if exc.strerror
                                    else type(exc).__name__) from None
        except Exception as exc:  # noqa: BLE001 - a parser that breaks on this text: the read failed, named by type
            raise SourceUnavailable(source_id, f"could not be parsed ({type(exc).__name__})") from None

    def read(self, source_id: str) -> ReadResult:
        """Read the current version of a source with the current access (the caller picks the span)."""
        access = self.policy.current()
        attempts = 0

        def once() -> SourceDoc:
            nonlocal attempts
            attempts += 1
            return self._fetch(source_id, access)

        retrying = Retrying(
            retry=retry_if_exception_type(SourceUnavailable),
            stop=stop_after_attempt(self.retry.attempts),
            wait=wait_exponential(multiplier=self.retry.wait_initial, max=self.retry.wait_max),
            reraise=False,
        )

        def outcome(kind: ReadOutcome, detail: str) -> ReadResult:
            return ReadResult(record=ReadRecord(source_id=source_id, outcome=kind, detail=detail, attempts=attempts),
                              watermark=access.watermark)

        try:
            doc = retrying(once)
        except SourceDenied as exc:
            return outcome("denied", str(exc))
        except SourceNotFound as exc:
            return outcome("not_found", str(exc))
        except RetryError as exc:
            return outcome("failed", str(exc.last_attempt.exception()) if exc.last_attempt else "unavailable")
        return ReadResult(record=ReadRecord(source_id=source_id, version=doc.version, outcome="ok", attempts=attempts),
                          doc=doc, watermark=access.watermark)
