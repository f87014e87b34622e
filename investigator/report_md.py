"""The report as Markdown, and the one-line answer and stop words every rendering starts with."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Any


from state.facts import SignalFact
from investigator.report_words import (
    BECAME, first_citations, local, metric_reading, path_words, timeline_rounds, value_changes,
    what_changed, zone,
)
from investigator.report_words import signal_words as _signal_words

if TYPE_CHECKING:  # `runs` imports this module: the access mask (numpy) comes with `show` only
    pass
from investigator.report_model import (
    ClaimView, EvidenceView, Report,
)


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
    quoted = first_citations(r)
    shown: set[str] = set()
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
