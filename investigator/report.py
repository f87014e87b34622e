"""The claim-by-claim evidence report, built from a run's store (the format is `report_model`; the
Markdown is `report_md`, the HTML `report_html`, the files `report_files`).

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
from typing import TYPE_CHECKING, Any


from graphs.ready import at_stop
from investigator import __version__
from state.case import Case
from state.claims import ClaimDecision, RootCause, StopReason
from state.evidence import Evidence
from state.steps import DecideStep, GrantStep, Logged, PlanStep, ReadStep, ResumeStep, RetrieveStep, UpdateStep
from investigator.report_words import (
    offset_of, verdict_changes,
)

if TYPE_CHECKING:  # `runs` imports this module: the access mask (numpy) comes with `show` only
    from state.store import Rows, Store
    from state.store.rows import AnyRun
    from tools.access import AccessSnapshot
from investigator.report_model import (
    SCHEMA, ClaimView, DeniedSource, EvidenceView, GrantView, LeftOutSource, Report, ValueChange, report_json_schema,
)

__all__ = ["SCHEMA", "ClaimView", "DeniedSource", "EvidenceView", "GrantView", "LeftOutSource", "Report", "ValueChange",
           "build_report", "planner_summary", "report_json_schema"]


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


def planner_summary(run: AnyRun, steps: list[Logged]) -> dict[str, Any]:
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


def _utc(at: datetime) -> datetime:
    """Stores keep UTC; SQLite hands it back without a zone."""
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _grant_item(g: GrantView, round_: int) -> dict[str, Any]:
    return {"round": round_, "node": "grant", "at": g.at.isoformat(),
            "summary": f"grant {', '.join(g.groups)} by {g.by}; unlocks {', '.join(g.unlocks) or 'nothing'}"}


def build_report(case: Case, run: AnyRun, store: Store | Rows, access: AccessSnapshot | None = None) -> Report:
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
        (verdict, note), state, missing = at_stop(claim, d, stop), d.state, d.missing
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
            from graphs.rulebook.knowledge import Knowledge  # the deciders' own reading of the evidence

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
