"""The claim-by-claim evidence report: a versioned JSON document and its Markdown and HTML renderings.

Built only from the store's active evidence: revoked evidence is listed by id and reason,
never with its text. A run that stopped without `evidence_ready` never shows a causal claim
as confirmed.

`report.json` is `Report.to_json()`; it loads back with `Report.model_validate_json` and is
described by the JSON Schema `report_json_schema()`, shipped as docs/report.schema.json.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import ConfigDict, Field

from investigator import __version__
from state import Frozen
from state.case import Case, CausalChainClaim
from state.claims import Alternative, ClaimDecision, Hop, RootCause, StopReason
from state.evidence import Evidence, Finding, Span
from state.facts import SignalFact
from state.steps import DecideStep, GrantStep, Logged, PlanStep, ReadStep, ResumeStep, RetrieveStep, UpdateStep
from state.store import RunRow, Store

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


def _view(ev: Evidence) -> EvidenceView:
    return EvidenceView(id=ev.id, kind=ev.kind, source_id=ev.source_id, source_kind=ev.source_kind, version=ev.version,
                        span=ev.span, trust=ev.trust, label=ev.label, found=ev.found, read_at=ev.read_at,
                        watermark=ev.watermark, signals=tuple(ev.signals()), text=ev.text, facts=_fact_words(ev))


def _timeline(steps: list[Logged]) -> list[dict[str, Any]]:
    out = []
    for s in steps:
        st = s.step
        item: dict[str, Any] = {"round": st.round, "node": st.node, "at": s.at.isoformat()}
        if isinstance(st, PlanStep):
            g = st.gap
            item["summary"] = f"{g.action} → {g.claim_id}: {g.reason}" if g else st.note
            if st.choice is not None:
                c = st.choice
                item["summary"] += (f" [model chose {c.choice} of {c.offered}]" if c.fallback is None
                                    else f" [deterministic first choice: {c.fallback}]")
        elif isinstance(st, RetrieveStep):
            item["summary"] = (f"{st.tool} '{st.gap.query[:80]}' → {len(st.hits)} hits"
                               + (f", denied {list(st.denied)}" if st.denied else ""))
        elif isinstance(st, ReadStep):
            outs = [f"{r.source_id}:{r.outcome}" for r in st.reads]
            item["summary"] = ", ".join(outs) or "nothing to read"
        elif isinstance(st, ResumeStep):
            rc = st.recheck
            item["summary"] = (f"resume: {rc.reused} observations reused, revoked {list(rc.revoked)}, "
                               f"re-anchored {list(rc.reanchored)}, stale {list(rc.stale)}")
        elif isinstance(st, GrantStep):
            item["summary"] = f"grant {', '.join(st.groups)} by {st.by or '?'}; unlocks {', '.join(st.unlocks) or 'nothing yet'}"
        elif isinstance(st, UpdateStep):
            item["summary"] = ", ".join(f"{c}={v}" for c, v in st.decisions.items())
        elif isinstance(st, DecideStep):
            item["summary"] = f"stop: {st.stop.kind}" if st.stop else ("continue" + (f" ({st.resumed_after})" if st.resumed_after else ""))
        out.append(item)
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


def build_report(case: Case, run: RunRow, store: Store) -> Report:
    stop = StopReason.model_validate_json(run.stop_json) if run.stop_json else None
    decisions = store.decisions(run.run_id)
    history = store.decision_history(run.run_id)
    active = {e.id: e for e in store.evidence(run.run_id)}
    inactive = [e for e in store.evidence(run.run_id, include_inactive=True) if e.status != "active"]
    claims = []
    for claim in case.required_claims:
        d = decisions.get(claim.id) or ClaimDecision(claim_id=claim.id, state="candidate", verdict="insufficient",
                                                     rule="not yet decided", missing=("the run has not reached this claim",))
        verdict, note = d.verdict, ""
        if isinstance(claim, CausalChainClaim) and verdict == "confirmed" and (stop is None or stop.kind != "evidence_ready"):
            verdict, note = "inferred", "the run stopped before evidence_ready: a root cause is never confirmed then"
        keep = lambda ids: tuple(i for i in ids if i in active)  # noqa: E731 - revoked ids are not shown
        claims.append(ClaimView(
            id=claim.id, kind=claim.kind, statement=claim.statement, verdict=verdict, state=d.state, rule=d.rule,
            supporting=keep(d.supporting), opposing=keep(d.opposing), conflicts=d.conflicts, missing=d.missing,
            path=tuple(h.model_copy(update={"evidence_ids": keep(h.evidence_ids)}) for h in d.path),
            root_cause=d.root_cause if verdict in ("confirmed", "inferred") else None,
            alternatives=tuple(a.model_copy(update={"evidence_ids": keep(a.evidence_ids)}) for a in d.alternatives),
            blocked_by=d.blocked_by, proposed_by=keep(d.proposed_by), scope=str(case.subject), note=note,
            history=tuple(f"r{r}: {h.verdict}" for r, h in history if h.claim_id == claim.id)))
    reads = store.reads(run.run_id)
    steps = store.steps(run.run_id)
    by = lambda outcome: sorted({r.source_id for _r, r in reads if r.outcome == outcome})  # noqa: E731
    return Report(
        generated_at=datetime.now(UTC), tool_version=__version__,
        case_id=case.id, run_id=run.run_id, title=case.title, alert=f"{case.alert.id}: {case.alert.text}",
        question=case.question, subject=str(case.subject),
        window=f"{case.window.start.isoformat()} – {case.window.end.isoformat()}",
        principal=f"{case.principal.id} (groups: {', '.join(case.principal.groups)})", retrieval=run.retrieval,
        status=run.status, stop=stop,
        budgets={"rounds_used": run.rounds_used, "rounds_limit": run.rounds_limit,
                 "reads_used": run.reads_used, "reads_limit": run.reads_limit},
        reads={"total": len(reads), "ok": sum(1 for _r, r in reads if r.outcome == "ok"),
               "reused": sum(s.step.recheck.reused for s in steps if isinstance(s.step, ResumeStep)),
               "denied": by("denied"), "failed": by("failed"), "not_found": by("not_found")},
        claims=tuple(claims), evidence=tuple(_view(e) for e in active.values()),
        revoked=tuple({"id": e.id, "source_id": e.source_id, "status": e.status, "reason": e.status_note}
                      for e in inactive),
        timeline=tuple(_timeline(steps)),
        planner=planner_summary(run, steps),
    )


def _quote(text: str, limit: int = 240) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _ev_line(ev: EvidenceView) -> str:
    label = f" **[{ev.label}]**" if ev.label else ""
    if ev.kind == "initial":
        return f"- `{ev.id}` ({ev.trust}, from the case) {ev.text}"
    span = ev.span
    where = f"{ev.source_id}@{ev.version} [{span.start}:{span.end}] #{span.content_hash}" if span else ev.source_id
    extra = "".join(f" — {signal_words(sig)}" for sig in ev.signals[:2])
    facts = f"\n  ({'; '.join(ev.facts)})" if ev.facts else ""
    return f"- `{ev.id}` {where}{label}{extra}\n  > {_quote(span.quote) if span else ''}{facts}"


def signal_words(sig: SignalFact) -> str:
    """One line for a signal: what it is, whether it departed, since when, by how much."""
    if not sig.decidable:
        return f"{sig.entity} {sig.name}: cannot decide ({sig.note})"
    if sig.anomalous:
        base = f" from {sig.baseline:g}" if sig.baseline is not None else ""
        lvl = f" to {sig.level:g} {sig.unit}" if sig.level is not None else ""
        return f"{sig.entity} {sig.name} {sig.direction}{base}{lvl} since {sig.onset:%H:%M:%S}"
    return f"{sig.entity} {sig.name}: no departure (baseline {sig.baseline if sig.baseline is not None else '?'}, " \
           f"peak {sig.peak if sig.peak is not None else '?'})"


def render_markdown(r: Report) -> str:
    ev = {e.id: e for e in r.evidence}
    lines = [f"# Investigation {r.run_id}: {r.case_id}", "", f"{r.title}".strip(), "",
             f"- **Alert**: {r.alert}", f"- **Question**: {r.question}", f"- **Subject**: {r.subject}",
             f"- **Window**: {r.window}", f"- **Principal**: {r.principal}", f"- **Retrieval**: {r.retrieval}",
             f"- **Status**: {r.status}",
             f"- **Stop reason**: {r.stop.kind + (' — ' + r.stop.detail if r.stop.detail else '') if r.stop else '(running)'}",
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
            lines += ["", f"**Root cause**: {rc.entity} — {rc.kind}"
                      + (f" {rc.change}" if rc.change else "") + (f", changed element {rc.element}" if rc.element else "")
                      + (f" → {rc.refined}" if rc.refined else ""),
                      f"- anomalous path: {' → '.join(rc.path)}" + (f" (root onset {rc.onset:%H:%M:%S})" if rc.onset else ""),
                      f"- {rc.summary}"]
        if c.path:
            lines += ["", "Bridge path:", ""]
            lines += [f"{i}. {h.source} → {h.target} ({'applies' if h.applicable else 'does not apply yet'}: {h.note}) "
                      f"[{', '.join(e for e in h.evidence_ids if e in ev)}]" for i, h in enumerate(c.path, 1)]
        for title, ids in (("Supporting evidence", c.supporting), ("Opposing evidence", c.opposing),
                           ("Proposed by", c.proposed_by)):
            if ids:
                lines += ["", f"{title}:", ""] + [_ev_line(ev[i]) for i in ids if i in ev]
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
    if r.revoked:
        lines += ["", "## Revoked or stale evidence", ""]
        lines += [f"- `{x['id']}` from {x['source_id']}: {x['status']} ({x['reason']})" for x in r.revoked]
    lines += _planner_lines(r.planner)
    lines += ["", "## Timeline", "", "| round | node | what |", "| --- | --- | --- |"]
    lines += [f"| {t['round']} | {t['node']} | {t['summary']} |" for t in r.timeline]
    return "\n".join(lines) + "\n"


def write_report(r: Report, out: Path) -> list[Path]:
    """Write report.json, report.md and report.html atomically (a temp file renamed into place)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in (("report.json", r.to_json()), ("report.md", render_markdown(r)), ("report.html", render_html(r))):
        tmp = out / f".{name}.tmp"
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out / name)
        written.append(out / name)
    return written


def _svg_path(hops) -> str:  # noqa: ANN001 - tuple[Hop, ...]
    """The bridge path as boxes and arrows; dashed where a hop does not apply yet."""
    if not hops:
        return ""
    nodes = [hops[0].source, *[h.target for h in hops]]
    w, gap, h = 170, 60, 44
    width = len(nodes) * w + (len(nodes) - 1) * gap + 20
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{h + 40}" role="img" '
             f'aria-label="bridge path">']
    for i, name in enumerate(nodes):
        x = 10 + i * (w + gap)
        parts.append(f'<rect x="{x}" y="10" width="{w}" height="{h}" rx="8" fill="#eef3fb" stroke="#3a6ea5"/>'
                     f'<text x="{x + w / 2}" y="{10 + h / 2 + 5}" text-anchor="middle" font-size="13">{escape(name)}</text>')
        if i < len(hops):
            hop = hops[i]
            x1, x2 = x + w, x + w + gap
            dash = "" if hop.applicable else ' stroke-dasharray="5,4"'
            parts.append(f'<line x1="{x1}" y1="{10 + h / 2}" x2="{x2 - 6}" y2="{10 + h / 2}" stroke="#333"{dash}/>'
                         f'<polygon points="{x2 - 6},{10 + h / 2 - 5} {x2},{10 + h / 2} {x2 - 6},{10 + h / 2 + 5}" fill="#333"/>'
                         f'<text x="{(x1 + x2) / 2}" y="{h + 30}" text-anchor="middle" font-size="10">'
                         f'{escape(", ".join(hop.evidence_ids[:3]))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(r: Report) -> str:
    """One self-contained HTML page: the claims, their evidence and the bridge path drawn."""
    ev = {e.id: e for e in r.evidence}
    css = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}"
           ".v-confirmed{color:#17703a}.v-refuted{color:#a12b2b}.v-inferred{color:#9a6700}.v-insufficient{color:#555}"
           "blockquote{margin:.3em 0 .8em 1em;padding-left:.8em;border-left:3px solid #ccc;font-size:.9em;white-space:pre-wrap}"
           "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}"
           ".label{background:#fff3cd;padding:0 4px;border-radius:3px}")
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(r.run_id)}</title><style>{css}</style></head><body>",
           f"<h1>Investigation {escape(r.run_id)}: {escape(r.case_id)}</h1><p>{escape(r.title)}</p><table>"]
    for k, v in (("Alert", r.alert), ("Question", r.question), ("Subject", r.subject), ("Window", r.window),
                 ("Principal", r.principal), ("Retrieval", r.retrieval),
                 ("Stop reason", f"{r.stop.kind} — {r.stop.detail}" if r.stop else r.status),
                 ("Budgets", f"rounds {r.budgets['rounds_used']}/{r.budgets['rounds_limit']}, reads "
                             f"{r.budgets['reads_used']}/{r.budgets['reads_limit']}"),
                 ("Denied / failed / not found", f"{', '.join(r.reads['denied']) or '—'} / "
                  f"{', '.join(r.reads['failed']) or '—'} / {', '.join(r.reads['not_found']) or '—'}")):
        out.append(f"<tr><th>{k}</th><td>{escape(str(v))}</td></tr>")
    out.append("</table>")
    for c in r.claims:
        out.append(f"<h2><code>{escape(c.id)}</code> — <span class='v-{c.verdict}'>{c.verdict}</span></h2>"
                   f"<p>{escape(c.statement)}</p><p><small>rule: {escape(c.rule)}</small></p>")
        if c.note:
            out.append(f"<p><em>{escape(c.note)}</em></p>")
        out.append(_svg_path(c.path))
        for title, ids in (("Supporting", c.supporting), ("Opposing", c.opposing), ("Proposed by", c.proposed_by)):
            items = [ev[i] for i in ids if i in ev]
            if items:
                out.append(f"<h3>{title}</h3>")
                for e in items:
                    where = (f"{e.source_id}@{e.version} [{e.span.start}:{e.span.end}]" if e.span
                             else f"from the case ({e.trust})")
                    label = f" <span class='label'>{e.label}</span>" if e.label else ""
                    for sig in e.signals[:2]:
                        where += f" — {signal_words(sig)}"
                    quote = e.span.quote if e.span else e.text
                    out.append(f"<div><code>{e.id}</code> {escape(where)}{label}<blockquote>{escape(quote)}</blockquote></div>")
        for title, items in (("Unresolved conflicts", c.conflicts), ("Missing observations", c.missing)):
            if items:
                out.append(f"<h3>{title}</h3><ul>" + "".join(f"<li>{escape(x)}</li>" for x in items) + "</ul>")
    out.append("<h2>Timeline</h2><table><tr><th>round</th><th>node</th><th>what</th></tr>")
    out += [f"<tr><td>{t['round']}</td><td>{t['node']}</td><td>{escape(str(t['summary']))}</td></tr>" for t in r.timeline]
    out.append("</table></body></html>")
    return "\n".join(out)
