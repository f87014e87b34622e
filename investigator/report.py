"""The claim-by-claim evidence report: a versioned JSON document and its Markdown and HTML renderings.

Built only from the store's active evidence: revoked evidence is listed by id and reason,
never with its text, and evidence of a source the principal cannot read *now* (access
re-checked when the report is built, e.g. by `show`) is withheld and marked the same way.
A run that stopped without `evidence_ready` never shows a causal claim as confirmed. Text
that tries to instruct the investigator is flagged where it is quoted. The HTML page is
rendered by a template engine that escapes every value.

`report.json` is `Report.to_json()`; it loads back with `Report.model_validate_json` and is
described by the JSON Schema `report_json_schema()`, shipped as docs/report.schema.json.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import ConfigDict, Field

from investigator import __version__
from state import Frozen
from state.case import Case, CausalChainClaim
from state.errors import ConfigError
from state.claims import Alternative, ClaimDecision, Hop, RootCause, StopReason
from state.evidence import Evidence, Finding, Span
from state.facts import SignalFact
from state.steps import DecideStep, GrantStep, Logged, PlanStep, ReadStep, ResumeStep, RetrieveStep, UpdateStep
from state.store import RunRow, Store
from investigator.report_words import (
    BECAME, first_citations, local, metric_reading, offset_of, path_words, timeline_rounds, value_changes,
    verdict_changes, what_changed, zone,
)
from investigator.report_words import signal_words as _signal_words

if TYPE_CHECKING:  # `runs` imports this module: the access mask (numpy) comes with `show` only
    from tools.access import AccessSnapshot

SCHEMA: Final = "investigator/report@1"
"""The report format's name and version: `report.json`'s `schema` field and the JSON Schema's `$id`."""


class EvidenceView(Frozen):
    """One piece of evidence as the report cites it: where it was read, the exact span, what it shows."""

    model_config = ConfigDict(use_attribute_docstrings=True)  # field docstrings become schema descriptions

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

    model_config = ConfigDict(use_attribute_docstrings=True)

    what: str
    """The key, flag or dependency, or `version`."""
    old: str | None = None
    """Its value before the change (None: not set, or not recorded)."""
    new: str | None = None
    """Its value after the change (None: removed, or not recorded)."""


class ClaimView(Frozen):
    """One required claim of the case: its verdict, the rule that decided it and the evidence ids behind it."""

    model_config = ConfigDict(use_attribute_docstrings=True)  # field docstrings become schema descriptions

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

    model_config = ConfigDict(use_attribute_docstrings=True, title="Investigator report")

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


def _fact_words(ev: Evidence) -> tuple[str, ...]:
    out = []
    for f in ev.facts:
        if f.kind == "relation":
            out.append(f"{f.source} → {f.target} ({f.via})")
        elif f.kind == "change":
            out.append(f"change {f.id} of {f.entity} ({f.type})")
        elif f.kind == "statement":
            out.append(f"states a change of {f.key} ({f.phrase})")
        elif f.kind == "injection":
            out.append(f"tries to instruct the investigator ('{f.phrase}'): ignored")
        elif f.kind == "placement":
            out.append(f"{f.workload} runs on {f.node}")
        elif f.kind == "mention":
            out.append(f"{f.entity}'s {f.severity} line names {f.name}")
    return tuple(dict.fromkeys(out))[:12]


def _instruction(ev: Evidence, injection: Any) -> str:
    """The first words of the evidence that try to instruct the investigator, if any."""
    found = next((f.phrase for f in ev.facts if f.kind == "injection"), "")
    if found:
        return found
    m = injection.search(ev.span.quote if ev.span else ev.text)
    return m.group(0) if m else ""


def _view(ev: Evidence, injection: Any, withheld: str = "") -> EvidenceView:
    if withheld:  # ids and provenance only: nothing the source says
        return EvidenceView(id=ev.id, kind=ev.kind, source_id=ev.source_id, source_kind=ev.source_kind,
                            version=ev.version, span=None, trust=ev.trust, read_at=ev.read_at, watermark=ev.watermark,
                            withheld=withheld)
    return EvidenceView(id=ev.id, kind=ev.kind, source_id=ev.source_id, source_kind=ev.source_kind, version=ev.version,
                        span=ev.span, trust=ev.trust, label=ev.label, found=ev.found, read_at=ev.read_at,
                        watermark=ev.watermark, signals=tuple(ev.signals()), text=ev.text, facts=_fact_words(ev),
                        instruction=_instruction(ev, injection))


def _withheld(active: dict[str, Evidence], access: AccessSnapshot | None) -> dict[str, str]:
    """Evidence whose source the principal cannot read now, with the reason (never its text)."""
    if access is None:
        return {}
    out = {}
    for eid, ev in active.items():
        if ev.kind == "initial" or access.can_read(ev.source_id):
            continue
        out[eid] = ("withheld: the source was deleted (tombstone)" if access.is_deleted(ev.source_id) else
                    "withheld: the source is no longer readable by the principal")
    return out


def _timeline(steps: list[Logged], grants: tuple[GrantView, ...] = ()) -> list[dict[str, Any]]:
    """One item per step; an update says only the verdicts it changed (the claims' history has them all)."""
    out = []
    verdicts: dict[str, str] = {}
    pending = sorted(grants, key=lambda g: g.at)
    for s in steps:
        st = s.step
        while pending and _utc(pending[0].at) <= _utc(s.at):  # a grant sits between the pause and the resume
            out.append(_grant_item(pending.pop(0), st.round))
        item: dict[str, Any] = {"round": st.round, "node": st.node, "at": s.at.isoformat()}
        if isinstance(st, PlanStep):
            g = st.gap
            item["summary"] = f"{g.action} for {g.claim_id}: {g.reason}" if g else st.note
            if st.choice is not None:
                c = st.choice
                item["summary"] += (f" [model chose {c.choice} of {c.offered}]" if c.fallback is None
                                    else f" [deterministic first choice: {c.fallback}]")
        elif isinstance(st, RetrieveStep):
            item["summary"] = (f"{st.tool} '{st.gap.query[:80]}': {len(st.hits)} hit{'' if len(st.hits) == 1 else 's'}"
                               + (f", denied {list(st.denied)}" if st.denied else ""))
            item.update(query=st.gap.query, hits=len(st.hits), denied=list(st.denied))
        elif isinstance(st, ReadStep):
            outs = [f"{r.source_id}:{r.outcome}" for r in st.reads]
            item["summary"] = ", ".join(outs) or "nothing to read"
            item["sources"] = [[r.source_id, r.outcome] for r in st.reads]
        elif isinstance(st, ResumeStep):
            rc = st.recheck
            item["summary"] = (f"resume: {rc.reused} observations reused, revoked {list(rc.revoked)}, "
                               f"re-anchored {list(rc.reanchored)}, stale {list(rc.stale)}")
        elif isinstance(st, GrantStep):
            item["summary"] = f"grant {', '.join(st.groups)} by {st.by or '?'}; unlocks {', '.join(st.unlocks) or 'nothing yet'}"
        elif isinstance(st, UpdateStep):
            item["summary"] = verdict_changes(verdicts, dict(st.decisions))
            verdicts.update(st.decisions)
        elif isinstance(st, DecideStep):
            item["summary"] = f"stop: {st.stop.kind}" if st.stop else ("continue" + (f" ({st.resumed_after})" if st.resumed_after else ""))
        out.append(item)
    out += [_grant_item(g, out[-1]["round"] if out else 0) for g in pending]
    return out


def planner_summary(run: RunRow, steps: list[Logged]) -> dict[str, Any]:
    """The planner of a run as recorded: its kind and settings (never a key), and for a model
    what every round's call did (choice, fallback and why, tokens)."""
    kind = run.planner or "deterministic"
    out: dict[str, Any] = {"kind": kind}
    if kind == "deterministic":
        return out
    settings = json.loads(run.planner_json or "{}")
    choices = [(s.step.round, s.step.choice) for s in steps if isinstance(s.step, PlanStep) and s.step.choice]
    fallbacks: dict[str, int] = {}
    errors: dict[str, int] = {}
    for _r, c in choices:
        if c.fallback is not None:
            fallbacks[c.fallback] = fallbacks.get(c.fallback, 0) + 1
        if c.error and c.fallback == "endpoint":  # the calls that failed, named (not the skipped ones)
            errors[c.error] = errors.get(c.error, 0) + 1
    out.update({
        "endpoint": settings.get("endpoint"), "model": settings.get("model") or (choices[0][1].model if choices else ""),
        "token_budget": settings.get("token_budget"), "timeout": settings.get("timeout"),
        "rounds": len(choices), "model_chose": sum(1 for _r, c in choices if c.fallback is None),
        "calls": sum(1 for _r, c in choices if c.fallback in (None, "unusable answer", "endpoint")),
        "tokens": sum(c.tokens for _r, c in choices),
        "tokens_estimated": any(c.tokens_estimated for _r, c in choices),
        "fallbacks": fallbacks, "endpoint_failures": fallbacks.get("endpoint", 0), "errors": errors,
        "choices": [{"round": r, **c.model_dump(exclude={"planner", "model"})} for r, c in choices],
    })
    return out


def _planner_lines(p: dict[str, Any]) -> list[str]:
    if p.get("kind", "deterministic") == "deterministic":
        return []
    lines = ["", "## Planner", "",
             f"- **Model**: {p.get('model') or '?'}" + (f" at {p['endpoint']}" if p.get("endpoint") else " (given in code)"),
             f"- **Rounds planned**: {p['rounds']}; the model chose {p['model_chose']}, "
             f"{p['rounds'] - p['model_chose']} took the deterministic first choice",
             f"- **Calls**: {p['calls']}; tokens {p['tokens']}" + (" (partly estimated: chars / 4)" if p["tokens_estimated"] else "")
             + (f" of a budget of {p['token_budget']}" if p.get("token_budget") is not None else "")]
    if p["fallbacks"]:
        lines.append("- **Fallbacks**: " + ", ".join(f"{k} × {v}" for k, v in sorted(p["fallbacks"].items())))
    if p["errors"]:
        lines.append(f"- **Endpoint failures** ({p['endpoint_failures']} calls failed):")
        lines += [f"  - {e} (× {n})" for e, n in p["errors"].items()]
    lines += ["", "| round | offered | choice | fallback | why | tokens |", "| --- | --- | --- | --- | --- | --- |"]
    cell = lambda text: text.replace("|", "\\|")  # noqa: E731 - model words and error text in a table cell
    lines += [f"| {c['round']} | {c['offered']} | {c['choice']} | {c['fallback'] or '-'}"
              f"{' (' + cell(c['error']) + ')' if c['error'] else ''} | {cell(c['why']) or '-'} | {c['tokens']} |"
              for c in p["choices"]]
    return lines


def _utc(at: datetime) -> datetime:
    """Stores keep UTC; SQLite hands it back without a zone."""
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _grant_item(g: GrantView, round_: int) -> dict[str, Any]:
    return {"round": round_, "node": "grant", "at": g.at.isoformat(),
            "summary": f"grant {', '.join(g.groups)} by {g.by}; unlocks {', '.join(g.unlocks) or 'nothing'}"}


def build_report(case: Case, run: RunRow, store: Store, access: AccessSnapshot | None = None) -> Report:
    """The report of a run; with `access` (the principal's access now), evidence of a source it
    can no longer read is withheld and the claims resting on it say so."""
    stop = StopReason.model_validate_json(run.stop_json) if run.stop_json else None
    decisions = store.decisions(run.run_id)
    history = store.decision_history(run.run_id)
    active = {e.id: e for e in store.evidence(run.run_id)}
    inactive = [e for e in store.evidence(run.run_id, include_inactive=True) if e.status != "active"]
    withheld = _withheld(active, access)
    from tools.profile import load_profile

    profile = load_profile(case.profile)
    injection = profile.injection_re
    read_rounds = sorted(r for r, _rec in store.reads(run.run_id))

    def reads_by_round(round_: int) -> int:
        """Reads made up to and including a round: what reaching a hop cost."""
        return sum(1 for r in read_rounds if r <= round_)

    steps = store.steps(run.run_id)
    changes = _ChangeLookup(case, profile, [e for e in active.values() if e.id not in withheld], steps)
    claims = []
    for claim in case.required_claims:
        d = decisions.get(claim.id) or ClaimDecision(claim_id=claim.id, state="candidate", verdict="insufficient",
                                                     rule="not yet decided", missing=("the run has not reached this claim",))
        verdict, state, note, missing = d.verdict, d.state, "", d.missing
        if isinstance(claim, CausalChainClaim) and verdict == "confirmed" and (stop is None or stop.kind != "evidence_ready"):
            verdict, note = "inferred", "the run stopped before evidence_ready: a root cause is never confirmed then"
        keep = lambda ids: _cited(ids, active)  # noqa: E731 - revoked ids are not shown
        if verdict == "confirmed" and not keep(d.supporting):
            gone = [i for i in _parts(d.supporting) if i not in active]
            verdict, state = "insufficient", "insufficient"
            missing = (f"read-back evidence for {claim.id}: the report holds no evidence it rested on"
                       + (f" ({', '.join(gone)} no longer active)" if gone else "")
                       + f"; `investigator resume {run.run_id}` re-decides", *missing)
            note = "; ".join(x for x in (note, "the deciders held it, but no evidence behind it is in the report: "
                                               "a verdict is never shown without it") if x)
        rests = [i for i in _parts((*d.supporting, *(e for h in d.path for e in h.evidence_ids))) if i in withheld]
        root_cause = d.root_cause if verdict in ("confirmed", "inferred") else None
        path = tuple(h.model_copy(update={"evidence_ids": keep(h.evidence_ids),
                                          "reads": reads_by_round(h.round) if h.round is not None else None})
                     for h in d.path)
        if rests:
            note = "; ".join(x for x in (note, f"rests on evidence withheld now ({', '.join(rests)}: no longer "
                                               f"readable); `investigator resume {run.run_id}` re-checks and re-decides") if x)
            path = tuple(h.model_copy(update={"note": "withheld: rests on evidence no longer readable"})
                         if set(h.evidence_ids) & set(rests) else h for h in path)
            if root_cause is not None:
                root_cause = root_cause.model_copy(update={"summary": "withheld: rests on evidence no longer readable"})
        claims.append(ClaimView(
            id=claim.id, kind=claim.kind, statement=claim.statement, verdict=verdict, state=state, rule=d.rule,
            supporting=keep(d.supporting), opposing=keep(d.opposing), conflicts=d.conflicts, missing=missing,
            path=path, root_cause=root_cause,
            alternatives=tuple(a.model_copy(update={"evidence_ids": keep(a.evidence_ids)}) for a in d.alternatives),
            blocked_by=d.blocked_by, proposed_by=keep(d.proposed_by), scope=str(case.subject), note=note,
            history=tuple(f"r{r}: {h.verdict}" for r, h in history if h.claim_id == claim.id),
            changed=changes.values(root_cause) if root_cause is not None and not rests else ()))
    reads = store.reads(run.run_id)
    by = lambda outcome: sorted({r.source_id for _r, r in reads if r.outcome == outcome})  # noqa: E731
    grants = tuple(GrantView(at=g.at, by=g.by, groups=g.groups, unlocks=g.unlocks, answers=g.answers)
                   for g in store.grants(run.run_id))
    return Report(
        generated_at=datetime.now(UTC), tool_version=__version__,
        case_id=case.id, run_id=run.run_id, title=case.title, alert=f"{case.alert.id}: {case.alert.text}",
        question=case.question, subject=str(case.subject),
        window=f"{case.window.start.isoformat()} – {case.window.end.isoformat()}",
        timezone=offset_of(case.alert.fired_at),
        principal=f"{case.principal.id} (groups: {', '.join(case.principal.groups)})", retrieval=run.retrieval,
        status=run.status, stop=stop,
        budgets={"rounds_used": run.rounds_used, "rounds_limit": run.rounds_limit,
                 "reads_used": run.reads_used, "reads_limit": run.reads_limit},
        reads={"total": len(reads), "ok": sum(1 for _r, r in reads if r.outcome == "ok"),
               "reused": sum(s.step.recheck.reused for s in steps if isinstance(s.step, ResumeStep)),
               "denied": by("denied"), "failed": by("failed"), "not_found": by("not_found")},
        claims=tuple(claims), evidence=tuple(_view(e, injection, withheld.get(e.id, "")) for e in active.values()),
        revoked=tuple({"id": e.id, "source_id": e.source_id, "status": e.status, "reason": e.status_note}
                      for e in inactive),
        timeline=tuple(_timeline(steps, grants)),
        planner=planner_summary(run, steps),
        denied=_denied(by("denied"), stop, claims, access), grants=grants,
        left_out=tuple(LeftOutSource.model_validate(x) for x in json.loads(run.left_out or "[]")),
    )


class _ChangeLookup:
    """The changes the run's readable evidence establishes, as the deciders see them (a deployment merged
    with the config snapshots it installed, a diff of two snapshots), built only when a cause asks."""

    def __init__(self, case: Case, profile: Any, evidence: list[Evidence], steps: list[Logged]) -> None:
        self._args = (case, profile, evidence, steps)
        self._changes: list[Any] | None = None

    def values(self, rc: RootCause) -> tuple[ValueChange, ...]:
        if rc.change is None:
            return ()
        if self._changes is None:
            from graphs.knowledge import Knowledge  # the deciders' own reading of the evidence

            self._changes = [c for c, _e in Knowledge.build(*self._args).changes]
        ch = next((c for c in self._changes if c.id == rc.change), None)
        if ch is None:
            return ()
        text = lambda v: None if v is None else str(v)  # noqa: E731 - YAML values of any type, as written
        out = [ValueChange(what=c.key, old=text(c.from_), new=text(c.to)) for c in ch.config_changes]
        out += [ValueChange(what=d.name, old=d.from_, new=d.to) for d in ch.dependency_changes]
        if ch.flag is not None:
            out.append(ValueChange(what=ch.flag.name, old=text(ch.flag.from_), new=text(ch.flag.to)))
        if ch.version_from != ch.version_to:
            out.append(ValueChange(what="version", old=ch.version_from, new=ch.version_to))
        first = [v for v in out if rc.element and _key(v.what) == _key(rc.element)]
        return tuple(dict.fromkeys([*first, *out]))


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _parts(ids: tuple[str, ...]) -> list[str]:
    """Evidence ids one by one: a decider cites what several reads establish together (a change found
    by diffing two config snapshots) as one id joined with '+' (`E3+E4`)."""
    return list(dict.fromkeys(p for i in ids for p in i.split("+") if p))


def _cited(ids: tuple[str, ...], active: dict[str, Evidence]) -> tuple[str, ...]:
    """The ids a claim cites that the report shows: composite ids split, revoked or stale ones left out."""
    return tuple(i for i in _parts(ids) if i in active)


def _denied(read_denied: list[str], stop: StopReason | None, claims: list[ClaimView],
            access: AccessSnapshot | None) -> tuple[DeniedSource, ...]:
    """Every source the run was refused and still may not read, with the groups that would unlock it."""
    ids = list(dict.fromkeys([*(stop.sources if stop and stop.kind in ("awaiting_permission", "permission_denied")
                                else ()), *(x for c in claims for x in c.blocked_by), *read_denied]))
    out = []
    for sid in ids:
        if access is not None and (access.can_read(sid) or access.is_deleted(sid)):
            continue  # readable now (a grant), or gone
        needed = tuple(c.id for c in claims if sid in c.blocked_by)
        if stop is not None and sid in stop.sources:
            needed = tuple(dict.fromkeys([*needed, *stop.claims]))
        out.append(DeniedSource(source_id=sid, groups=access.unlocking_groups(sid) if access is not None else (),
                                needed_for=needed))
    return tuple(out)


def _quote(text: str, limit: int = 240) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _ev_line(ev: EvidenceView, tz: Any = UTC, quoted_in: str = "") -> str:
    """An evidence item: quoted in full where it is first cited, a reference back to that quote after."""
    label = f" **[{ev.label}]**" if ev.label else ""
    if quoted_in:
        return f"- `{ev.id}` {ev.source_id}@{ev.version}{label} (quoted above, under `{quoted_in}`)"
    if ev.withheld:
        return f"- `{ev.id}` {ev.source_id}@{ev.version} **[withheld]** ({ev.withheld})"
    warn = (f"\n  ⚠ tries to instruct the investigator ('{_quote(ev.instruction, 80)}'): quoted as data, ignored"
            if ev.instruction else "")
    if ev.kind == "initial":
        return f"- `{ev.id}` ({ev.trust}, from the case) {ev.text}{warn}"
    span = ev.span
    where = f"{ev.source_id}@{ev.version} [{span.start}:{span.end}] #{span.content_hash}" if span else ev.source_id
    extra = "".join(f" — {signal_words(sig, tz)}" for sig in ev.signals[:2])
    facts = f"\n  ({'; '.join(ev.facts)})" if ev.facts else ""
    reading = metric_reading(ev, tz)
    quote = f"{reading} (cited span `{span.quote}`)" if reading and span else (_quote(span.quote) if span else "")
    return f"- `{ev.id}` {where}{label}{extra}{warn}\n  > {quote}{facts}"


def _causal(r: Report) -> ClaimView | None:
    """The claim that names (or fails to name) the root cause: the one with a root cause, else
    the first causal-chain claim."""
    return next((c for c in r.claims if c.root_cause is not None), None) or next(
        (c for c in r.claims if c.kind == "causal_chain"), None)


def answer(r: Report) -> dict[str, Any]:
    """The report's answer in one line, for the top of every rendering: the root cause with its
    verdict and anomalous path, or why there is none (the verdict and the first missing observation)."""
    c = _causal(r)
    if c is not None and c.root_cause is not None:
        rc = c.root_cause
        bridge = [c.path[0].source, *[h.target for h in c.path]] if c.path else []
        parts = ([f"anomalous path {path_words(rc.path)}"] if len(set(rc.path)) > 1 else []) + (
            [f"bridge path {path_words(bridge)}"] if len(set(bridge)) > 1 else [])
        return {"verdict": c.verdict, "claim": c.id, "line": f"Root cause ({c.verdict}): {rc.entity} — {what_changed(c)}",
                "path": "; ".join(parts)}
    if c is None:
        return {"verdict": "", "claim": "", "line": "No causal claim was asked", "path": ""}
    why = c.missing[0] if c.missing else (stop_words(r) if r.stop else r.status)
    return {"verdict": c.verdict, "claim": c.id, "line": f"No root cause established ({c.verdict}): {why}", "path": ""}


def stop_words(r: Report) -> str:
    """The stop reason in one line; a permission stop names who can grant."""
    if r.stop is None:
        return "(running)"
    line = r.stop.kind + (f" — {r.stop.detail}" if r.stop.detail else "")
    if r.stop.kind in ("awaiting_permission", "permission_denied") and r.stop.groups:
        line += f" (groups that can read it: {', '.join(r.stop.groups)})"
    return line


def _permission_lines(r: Report) -> list[str]:
    lines: list[str] = []
    for d in r.denied:
        who = (f"readable by group {', '.join(d.groups)}: `investigator grant {r.run_id} --group {d.groups[0]}`"
               if d.groups else "no group would make it readable")
        lines.append(f"- denied `{d.source_id}`" + (f" (needed for {', '.join(d.needed_for)})" if d.needed_for else "")
                     + f"; {who}")
    for g in r.grants:
        lines.append(f"- granted {', '.join(g.groups)} by {g.by} at {g.at:%Y-%m-%d %H:%M:%S %Z}; unlocked "
                     f"{', '.join(g.unlocks) or 'nothing'}" + (f"; answers the pause for {', '.join(g.answers)}"
                                                              if g.answers else ""))
    return lines


def signal_words(sig: SignalFact, tz: Any = UTC) -> str:
    """One line for a signal: what it is, whether it departed, since when (in `tz`), by how much."""
    return _signal_words(sig, tz)


def render_markdown(r: Report) -> str:
    ev = {e.id: e for e in r.evidence}
    tz = zone(r.timezone)
    quoted, shown = first_citations(r), set()
    a = answer(r)
    lines = [f"# Investigation {r.run_id}: {r.case_id}", "", f"{r.title}".strip(), "",
             f"**{a['line']}**" + (f"  \n{a['path']}" if a["path"] else ""), "",
             f"- **Alert**: {r.alert}", f"- **Question**: {r.question}", f"- **Subject**: {r.subject}",
             f"- **Window**: {r.window} (times below in {r.timezone}; {BECAME} marks old {BECAME} new)",
             f"- **Principal**: {r.principal}", f"- **Retrieval**: {r.retrieval}",
             f"- **Status**: {r.status}",
             f"- **Stop reason**: {stop_words(r)}",
             f"- **Budgets**: rounds {r.budgets['rounds_used']}/{r.budgets['rounds_limit']}, "
             f"reads {r.budgets['reads_used']}/{r.budgets['reads_limit']}",
             f"- **Reads**: {r.reads['ok']} ok of {r.reads['total']} ({r.reads['reused']} reused on resume); denied: {', '.join(r.reads['denied']) or 'none'}; "
             f"failed: {', '.join(r.reads['failed']) or 'none'}; not found: {', '.join(r.reads['not_found']) or 'none'}",
             "", "## Claims", "", "| claim | verdict | rule |", "| --- | --- | --- |"]
    lines += [f"| `{c.id}` | **{c.verdict}** | {c.rule} |" for c in r.claims]
    for c in r.claims:
        lines += ["", f"### `{c.id}` — {c.verdict}", "", f"{c.statement}", "", f"- state: {c.state}; scope: {c.scope}",
                  f"- rule: {c.rule}"]
        if c.note:
            lines.append(f"- note: {c.note}")
        if c.history:
            lines.append(f"- history: {', '.join(c.history)}")
        if c.root_cause is not None:
            rc = c.root_cause
            lines += ["", f"**Root cause**: {rc.entity} — {what_changed(c)}",
                      f"- anomalous path: {path_words(rc.path)}" + (f" (root onset {local(rc.onset, tz)})" if rc.onset else ""),
                      f"- {value_changes(c) or change_words(rc.summary)}"]
        if c.path:
            lines += ["", "Bridge path:", ""]
            lines += [f"{i}. {h.source} → {h.target} ({'applies' if h.applicable else 'does not apply yet'}: "
                      f"{change_words(h.note) if c.root_cause and i >= len(c.root_cause.path) else h.note}) "
                      f"[{', '.join(e for e in h.evidence_ids if e in ev)}]"
                      + (f" — reached in round {h.round}, after {h.reads} reads" if h.round is not None else "")
                      for i, h in enumerate(c.path, 1)]
        for title, ids in (("Supporting evidence", c.supporting), ("Opposing evidence", c.opposing),
                           ("Proposed by", c.proposed_by)):
            if ids:
                lines += ["", f"{title}:", ""] + [_ev_line(ev[i], tz, quoted[i] if i in shown else "")
                                                  for i in ids if i in ev]
                shown.update(ids)
        if c.alternatives:
            lines += ["", "Other explanations:", ""] + [
                f"- {a.what}: **{a.status.replace('_', ' ')}** — {a.why}" + (f" [{', '.join(a.evidence_ids[:4])}]" if a.evidence_ids else "")
                for a in c.alternatives]
        if c.blocked_by:
            lines += ["", "Not readable by the principal (needed):", ""] + [f"- {x}" for x in c.blocked_by]
        if c.conflicts:
            lines += ["", "Unresolved conflicts:", ""] + [f"- {x}" for x in c.conflicts]
        if c.missing:
            lines += ["", "Missing observations:", ""] + [f"- {x}" for x in c.missing]
    if r.denied or r.grants:
        lines += ["", "## Permissions", ""] + _permission_lines(r)
    if r.left_out:
        lines += ["", "## Left out of the case", ""]
        lines += [f"- `{x.source_id}` ({x.path}): {x.problem}; untrusted and unreadable as it stands, so never "
                  f"read or cited" for x in r.left_out]
    if r.revoked:
        lines += ["", "## Revoked or stale evidence", ""]
        lines += [f"- `{x['id']}` from {x['source_id']}: {x['status']} ({x['reason']})" for x in r.revoked]
    lines += _planner_lines(r.planner)
    lines += ["", "## Timeline", "", "| round | asked | read | verdicts changed |", "| --- | --- | --- | --- |"]
    cell = lambda text: text.replace("|", "\\|")  # noqa: E731 - queries and summaries in a table cell
    lines += [f"| {t['round']} | {cell(t['asked'])} | {cell(t['read'])} | "
              f"{'; '.join(x for x in (t['changed'], t['stop']) if x) or '—'} |" for t in timeline_rounds(r)]
    return _no_raw_html("\n".join(lines) + "\n")


def change_words(text: str) -> str:
    """A change described by the deciders (`50 → 64`) with the report's own glyph for old and new:
    `→` is kept for the next hop."""
    return text.replace(" → ", f" {BECAME} ")


def _no_raw_html(text: str) -> str:
    """Markdown passes raw HTML through to whatever renders it: case text (a title, a question, a quote)
    holding `<script>` or `<img onerror=…>` must arrive as text. Every `<` becomes `&lt;` (the report's own
    markup has none; a `<` inside a code span would show as `&lt;`, and ids are names without one)."""
    return text.replace("<", "&lt;")


def check_out_folder(out: Path, option: str = "--out") -> None:
    """A folder the report can be written into, checked before a run starts (not after it finished):
    an existing folder that may be written, or one that can be created (its nearest existing parent is
    a folder that may be written). A file in the way, or a read-only place, is a ConfigError (exit 2)."""
    out = Path(out)
    if out.exists():
        if not out.is_dir():
            raise ConfigError(f"{option}: a folder to write the report into ({out} is a file)")
        if not _writable(out):
            raise ConfigError(f"{option}: a folder this process may write into ({out} is not writable)")
        return
    for parent in out.absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"{option}: a folder that can be created ({parent} is a file)")
            if not _writable(parent):
                raise ConfigError(f"{option}: a folder that can be created ({parent} is not writable)")
            return


def _writable(folder: Path) -> bool:
    """Whether a file can be made in the folder: tried with an unnamed temporary file (nothing is left,
    and a read-only mount or a folder of another owner answers as it would for the report)."""
    import tempfile

    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def write_report(r: Report, out: Path) -> list[Path]:
    """Write report.json, report.md and report.html atomically (a temp file renamed into place)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    from investigator.report_html import render_html  # the template module renders a Report

    written = []
    for name, text in (("report.json", r.to_json()), ("report.md", render_markdown(r)), ("report.html", render_html(r))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)
        written.append(out / name)
    return written
