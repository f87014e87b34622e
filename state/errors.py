"""One error hierarchy, split by who must act.

    InvestigatorError
    ├── CaseError                 the user fixes a case folder (file, field, expectation)
    │   └── CaseProblems          several of them at once (init's front-matter check)
    ├── ConfigError               the user fixes an option or a store URL
    ├── SourceError               something about reading one source
    │   ├── SourceDenied          the principal may not read it: never retried
    │   ├── SourceNotFound        the source or span is gone: never retried
    │   └── SourceUnavailable     a transient fault: retried (bounded), then recorded as `failed`
    ├── RunNotFound / RunStateError   the run id is unknown / the run cannot do what was asked
    ├── StoreUnavailable          the store cannot be opened or reached
    ├── RunFailed                 a run stopped on an unexpected error (recorded, resumable)
    └── IndexMissing              an index is missing or was built for other sources

Interrupted (a KeyboardInterrupt) is raised when Ctrl-C or SIGTERM stops a run.

A budget stop is not an error: it is a stop reason on the run.
"""

from __future__ import annotations


class InvestigatorError(Exception):
    """Base of every error the runtime raises on purpose."""

    exit_code = 1


class CaseError(InvestigatorError):
    """A case folder is malformed: names the file, the field and what was expected."""

    exit_code = 2

    def __init__(self, file: str, field: str, expected: str) -> None:
        self.file, self.field, self.expected = file, field, expected
        super().__init__(f"{file}: {field}: {expected}")


class CaseProblems(CaseError):
    """Several case problems found in one pass, so they can be fixed at once (the first is the message)."""

    def __init__(self, problems: list[CaseError]) -> None:
        self.problems = tuple(problems)
        first = problems[0]
        super().__init__(first.file, first.field, first.expected)
        if len(problems) > 1:
            self.add_note(f"(and {len(problems) - 1} more)")


class ConfigError(InvestigatorError):
    exit_code = 2


class SourceError(InvestigatorError):
    def __init__(self, source_id: str, detail: str = "") -> None:
        self.source_id = source_id
        super().__init__(f"{source_id}: {detail}" if detail else source_id)


class SourceDenied(SourceError):
    """The principal does not share a group with the source."""


class SourceNotFound(SourceError):
    """The source, its version or the span is gone."""


class SourceUnavailable(SourceError):
    """A transient fault reading the source (retried, bounded)."""


class RunNotFound(InvestigatorError):
    exit_code = 3


class RunStateError(InvestigatorError):
    exit_code = 3


class IndexMissing(InvestigatorError):
    """The retrieval index for a case has not been built or is stale."""

    exit_code = 2


class StoreUnavailable(InvestigatorError):
    """The store cannot be opened or reached (a missing database, a server that does not answer)."""

    exit_code = 4


class RunFailed(InvestigatorError):
    """A run stopped on an unexpected error: recorded as `failed` (or `quarantined`), resumable."""

    exit_code = 5


class Interrupted(KeyboardInterrupt):
    """The process was asked to stop (Ctrl-C, SIGTERM); a run it drove is left `interrupted`."""

    def __init__(self, message: str = "interrupted", signum: int = 2) -> None:
        self.signum = signum
        super().__init__(message)

    @property
    def exit_code(self) -> int:
        return 128 + self.signum
