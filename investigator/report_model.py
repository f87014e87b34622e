"""The report's format: `report.json` is `Report.to_json()`; it loads back with
`Report.model_validate_json` and is described by the JSON Schema `report_json_schema()`, shipped as
docs/report.schema.json. Values only: building a report is `investigator.report`, rendering it
`investigator.report_md` and `investigator.report_html`, writing it `investigator.report_files`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Final, Literal

from pydantic import ConfigDict, Field

from state import Frozen
from state.claims import Alternative, Hop, RootCause, StopReason
from state.evidence import Finding, Span
from state.facts import SignalFact


def field_docstrings(cls: type) -> dict[str, str]:
    """The docstring under each field of a model class, cleaned as `inspect.cleandoc` does."""
    import ast
    import inspect
    import textwrap

    node = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    if not isinstance(node, ast.ClassDef):
        return {}
    return {field.target.id: inspect.cleandoc(doc.value.value) for field, doc in zip(node.body, node.body[1:])
            if isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)
            and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)}


def _described(schema: dict[str, Any], cls: type) -> None:
    """The model's JSON Schema with each field's docstring as its description.

    Read from the source when a schema is generated, not when the module is imported (pydantic's
    `use_attribute_docstrings` reads and parses the file at import: a cost `show` would pay)."""
    fields = getattr(cls, "model_fields", {})
    for name, doc in field_docstrings(cls).items():
        info = fields.get(name)
        for key in (name, info.alias if info is not None else None):
            if key in schema.get("properties", {}):
                schema["properties"][key]["description"] = doc


SCHEMA: Final = "investigator/report@1"
"""The report format's name and version: `report.json`'s `schema` field and the JSON Schema's `$id`."""


class EvidenceView(Frozen):
    """One piece of evidence as the report cites it: where it was read, the exact span, what it shows."""

    model_config = ConfigDict(json_schema_extra=_described)

    id: str
    kind: str
    source_id: str
    source_kind: str
    version: str
    span: Span | None
    trust: str
    label: str = ""
    """'historical', 'retired', 'superseded' or 'untrusted' when the source is such."""
    found: Finding | None = None
    read_at: datetime | None = None
    watermark: str = ""
    signals: tuple[SignalFact, ...] = ()
    """What the span shows of an entity's signal (metric, log lines, spans, events)."""
    text: str = ""
    facts: tuple[str, ...] = ()
    """The other facts the span states, in words."""
    instruction: str = ""
    """Words in the quoted text that try to instruct the investigator (flagged; they changed nothing)."""
    withheld: str = ""
    """Why the text is not shown: the source is no longer readable by the principal, or was deleted."""


class DeniedSource(Frozen):
    """A source the run needed and the principal may not read, and who could let it."""

    source_id: str
    groups: tuple[str, ...]
    """Groups that would make it readable (a member can `grant` them); empty if none would."""
    needed_for: tuple[str, ...] = ()


class LeftOutSource(Frozen):
    """An untrusted source whose content could not be read (broken front matter, a parser error):
    left out of the case, so nothing of it was indexed, read or cited."""

    source_id: str
    path: str
    problem: str


class GrantView(Frozen):
    at: datetime
    by: str
    groups: tuple[str, ...]
    unlocks: tuple[str, ...]
    """Sources the principal could read only after this grant."""
    answers: tuple[str, ...]
    """The paused run's denied sources this grant made readable."""


class ValueChange(Frozen):
    """One value the root cause's change set, as its change record (or the config snapshots diffed) says."""

    model_config = ConfigDict(json_schema_extra=_described)

    what: str
    """The key, flag or dependency, or `version`."""
    old: str | None = None
    """Its value before the change (None: not set, or not recorded)."""
    new: str | None = None
    """Its value after the change (None: removed, or not recorded)."""


class ClaimView(Frozen):
    """One required claim of the case: its verdict, the rule that decided it and the evidence ids behind it."""

    model_config = ConfigDict(json_schema_extra=_described)

    id: str
    kind: str
    statement: str
    verdict: str
    state: str
    rule: str
    supporting: tuple[str, ...]
    opposing: tuple[str, ...]
    conflicts: tuple[str, ...]
    missing: tuple[str, ...]
    path: tuple[Hop, ...]
    root_cause: RootCause | None = None
    alternatives: tuple[Alternative, ...] = ()
    blocked_by: tuple[str, ...] = ()
    proposed_by: tuple[str, ...]
    scope: str
    history: tuple[str, ...]
    """Earlier verdicts by round, oldest first ('r3: insufficient')."""
    note: str = ""
    changed: tuple[ValueChange, ...] = ()
    """What the root cause's change set, the changed element first (empty when the cause is no change)."""


class Report(Frozen):
    """One run's answer, claim by claim, with the evidence behind each verdict (report.json)."""

    model_config = ConfigDict(json_schema_extra=_described, title="Investigator report")

    schema_: Literal["investigator/report@1"] = Field(SCHEMA, alias="schema")
    """The format and its version; a report of another version does not load as this one."""
    generated_at: datetime
    """When this report was built from the store (UTC)."""
    tool_version: str
    """The version of the investigator package that built it."""
    case_id: str
    run_id: str
    title: str
    alert: str
    question: str
    subject: str
    window: str
    timezone: str = "+00:00"
    """The case's UTC offset (its alert's, e.g. `+08:00`): the renderings show times in it."""
    principal: str
    retrieval: str
    status: str
    stop: StopReason | None
    budgets: dict[str, int]
    reads: dict[str, Any]
    claims: tuple[ClaimView, ...]
    evidence: tuple[EvidenceView, ...]
    revoked: tuple[dict[str, str], ...]
    timeline: tuple[dict[str, Any], ...]
    planner: dict[str, Any] = {}
    """Who chose the actions: `kind`, and for a model-backed planner its endpoint, model, calls,
    tokens, fallbacks by reason, the failures named, and one entry per planned round."""
    denied: tuple[DeniedSource, ...] = ()
    """Sources the run was refused, with the groups that would unlock each."""
    grants: tuple[GrantView, ...] = ()
    left_out: tuple[LeftOutSource, ...] = ()
    """Untrusted sources left out of the case when the run was last driven, each with its problem."""

    def to_json(self) -> str:
        """The report.json text; `Report.model_validate_json` reads it back to an equal report."""
        return json.dumps(self.model_dump(mode="json", by_alias=True), indent=2, sort_keys=False, ensure_ascii=False)


def report_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) that every report.json satisfies (docs/report.schema.json)."""
    schema = Report.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA, **schema}
