"""The report as one self-contained HTML page that answers first: the root cause (or why there
is none) with its anomalous path, the stop reason and a verdict table sit at the top, above the
fold of a laptop screen; the alert's details, each claim's evidence, the bridge path drawn,
permissions, the planner and the timeline follow.

Rendered by jinja2 with autoescape on: every value (ids, quotes, titles, notes, timeline
summaries) is escaped by the template engine, so text from a case or a source can never
become markup. Only the geometry of the path drawing is computed here.
"""

from __future__ import annotations

from datetime import tzinfo
from functools import cache
from typing import Any

from jinja2 import Environment, StrictUndefined
from markupsafe import Markup

from investigator.report_model import Report

from investigator.report_md import answer, signal_words, stop_words
from investigator.report_words import (
    BECAME, HOP, first_citations, fold_quiet, first_line, local, long_quote, metric_reading, timeline_rounds, value_changes,
    what_changed, zone,
)
from state.claims import Hop

CSS = ("body{font-family:system-ui,sans-serif;font-size:15px;max-width:1100px;margin:1.2em auto;padding:0 1em;color:#222;line-height:1.3}"
       ".v-confirmed{color:#17703a}.v-refuted{color:#a12b2b}.v-inferred{color:#9a6700}.v-insufficient{color:#555}"
       "blockquote{margin:.2em 0 .4em 1em;padding-left:.8em;border-left:3px solid #ccc;font-size:.9em;white-space:pre-wrap}"
       "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
       ".label{background:#fff3cd;padding:0 4px;border-radius:3px}.warn{color:#a12b2b}"
       "h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.2em;margin:.8em 0 .25em}h3{font-size:1.05em;margin:.7em 0 .15em}"
       "h4{display:inline;font-size:.95em;margin:0}.sub{color:#555;margin:.2em 0 .6em}"
       ".answer{border:2px solid #3a6ea5;border-radius:8px;padding:.6em 1em;margin:.6em 0 .8em;background:#f6f9fd}"
       ".answer .line{font-size:1.2em;font-weight:600}.answer .path{font-family:ui-monospace,monospace;margin-top:.3em}"
       ".answer .stop,.legend,.rule,.ref,.svc{color:#555;font-size:.9em}.legend{margin:.2em 0}"
       "#verdicts{margin-bottom:.4em}details>summary{cursor:pointer}"
       "ul.ev{list-style:none;margin:.2em 0 .5em;padding-left:.5em}ul.ev>li{margin:.25em 0}"
       ".reading{font-family:ui-monospace,monospace;background:#f3f3f3;padding:0 4px;border-radius:3px}"
       "details.raw{display:inline-block;vertical-align:top;margin-left:.5em;font-size:.85em;color:#555}details.quote>summary{font-size:.9em}"
       "dl.run{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.3em 0}dl.run dt{font-weight:600}"
       "dl.run dd{margin:0}.rc{margin:.3em 0}p{margin:.3em 0}.svc{border-bottom:1px solid #ddd;padding-bottom:.4em}"
       ".svc a{margin-right:1em}td.n{text-align:right;color:#555}#timeline,#verdicts{width:100%}#timeline{font-size:.9em}")

TEMPLATE = """<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{{ r.run_id }}: {{ r.case_id }}</title><style>{{ css }}</style></head><body>
{%- if service %}
<nav class='svc' id='service'><a href='/'>All runs</a> Run {{ service.run_id }}: <span class='s-{{ service.state }}'>{{ service.state }}</span>{% if service.error %} ({{ service.error }}){% endif %} · received {{ service.received }}{% if service.took %} · alert to report {{ service.took }}{% endif %} · {{ service.attempts }} attempt(s){% if service.worker %} by {{ service.worker }}{% endif %}<br>
<a id='full-report' href='{{ service.full }}'>Full report (report.html)</a><a href='{{ service.json }}'>report.json</a><a href='{{ service.api }}'>run API</a></nav>
{%- endif %}
<h1>Investigation {{ r.run_id }}: {{ r.case_id }}</h1><p class='sub'>{{ r.title }}</p>
<section id='answer' class='answer'><div class='line v-{{ a.verdict }}'>{{ a.line }}</div>
{%- if a.path %}<div class='path'>{{ a.path }}</div>{% endif %}
<div class='stop'>Stop: {{ stop }} · rounds {{ r.budgets['rounds_used'] }}/{{ r.budgets['rounds_limit'] }}, reads {{ r.budgets['reads_used'] }}/{{ r.budgets['reads_limit'] }}</div></section>
<table id='verdicts'><tr><th>claim</th><th>verdict</th><th>statement</th><th style='width:17%'>evidence</th></tr>
{%- for c in r.claims %}
<tr><td><a href='#claim-{{ loop.index }}'><code>{{ c.id }}</code></a></td><td class='v-{{ c.verdict }}'><strong>{{ c.verdict }}</strong></td><td class='st'>{{ c.statement }}</td><td>{% for title, ids in [("supporting", c.supporting), ("opposing", c.opposing)] if ids %}{% if not loop.first %}; {% endif %}{{ title }} {% for i in ids %}<a href='#ev-{{ i }}'>{{ i }}</a>{% if not loop.last %}, {% endif %}{% endfor %}{% else %}none{% endfor %}{% if c.missing %}; missing: {{ c.missing[0] }}{% endif %}</td></tr>
{%- endfor %}
</table>
<p class='legend'>{{ hop }} next hop · old {{ became }} new · times in {{ r.timezone }} · each piece of evidence is quoted once, where it is first cited; later mentions link to it</p>
<h2>Alert and run</h2><dl class='run'>
{%- for k, v in head %}
<dt>{{ k }}</dt><dd>{{ v }}</dd>
{%- endfor %}
</dl>
<h2>Claims and evidence</h2>
{%- for c in r.claims %}{% set ci = loop.index0 %}
<section class='claim'><h3 id='claim-{{ loop.index }}'><code>{{ c.id }}</code> — <span class='v-{{ c.verdict }}'>{{ c.verdict }}</span></h3><p class='rule'>rule: {{ c.rule }}</p>
{%- if c.note %}
<p><em>{{ c.note }}</em></p>
{%- endif %}
{%- if c.root_cause %}
<p class='rc'><strong>Root cause</strong>: {% if c.id == a.claim %}<a href='#answer'>the answer above</a>{% else %}{{ c.root_cause.entity }} — {{ what_changed(c) }}{% endif %}{% if c.root_cause.onset %}; {{ c.root_cause.entity }} anomalous since {{ local(c.root_cause.onset) }}{% endif %}{% if values[ci] %}; the change set {{ values[ci] }}{% endif %}</p>
{%- endif %}
{%- set d = drawings[ci] %}
{%- if d %}
<svg xmlns="http://www.w3.org/2000/svg" width="{{ d.width }}" height="{{ d.height }}" viewBox="0 0 {{ d.width }} {{ d.height }}" style="max-width:100%;height:auto" role="img" aria-label="bridge path">
{%- for n in d.nodes -%}
<rect x="{{ n.x }}" y="10" width="{{ n.w }}" height="{{ d.h }}" rx="8" fill="#eef3fb" stroke="#3a6ea5"><title>{{ n.full }}</title></rect><text x="{{ n.cx }}" y="{{ d.ty }}" text-anchor="middle" font-size="13">{{ n.name }}</text>
{%- if n.arrow %}<line x1="{{ n.arrow.x1 }}" y1="{{ d.my }}" x2="{{ n.arrow.x2 - 6 }}" y2="{{ d.my }}" stroke="#333"{% if n.arrow.dashed %} stroke-dasharray="5,4"{% endif %}/><polygon points="{{ n.arrow.x2 - 6 }},{{ d.my - 5 }} {{ n.arrow.x2 }},{{ d.my }} {{ n.arrow.x2 - 6 }},{{ d.my + 5 }}" fill="#333"/><text x="{{ n.arrow.cx }}" y="{{ d.h + 30 }}" text-anchor="middle" font-size="10">{{ n.arrow.label }}</text>{% endif %}
{%- endfor -%}
</svg>
{%- endif %}
{%- for title, items in cited[ci] %}
<div><h4>{{ title }}</h4><ul class='ev'>
{%- for e, full in items %}
{%- if not full %}
<li class='ref'><a href='#ev-{{ e.id }}'><code>{{ e.id }}</code></a> {{ e.source_id }}{% if e.label %} <span class='label'>{{ e.label }}</span>{% endif %} — quoted above, under {{ first[e.id] }}</li>
{%- else %}
<li id='ev-{{ e.id }}'><code>{{ e.id }}</code> {{ where(e) }}
{%- if e.label %} <span class='label'>{{ e.label }}</span>{% endif %}
{%- if e.withheld %} <span class='label'>withheld</span> <em>{{ e.withheld }}</em>{% endif %}
{%- if e.instruction %} <strong class='warn'>⚠ tries to instruct the investigator (&lsquo;{{ e.instruction }}&rsquo;): quoted as data, ignored</strong>{% endif %}
{%- if not e.withheld %}{% set q = e.span.quote if e.span else e.text %}{% set reading = reading_of(e) %}
{%- if reading %} · cites <span class='reading' title='cited span [{{ e.span.start }}:{{ e.span.end }}]: {{ q }}'>{{ reading }}</span><details class='raw'><summary>cited span</summary><code>{{ q }}</code></details>
{%- elif long(q) %}<details class='quote'><summary>{{ first_line(q) }} … ({{ q.count("\n") + 1 }} lines)</summary><blockquote>{{ q }}</blockquote></details>
{%- else %}<blockquote>{{ q }}</blockquote>{% endif %}
{%- endif %}</li>
{%- endif %}
{%- endfor %}
</ul></div>
{%- endfor %}
{%- for title, items in [("Unresolved conflicts", c.conflicts), ("Missing observations", c.missing)] %}
{%- if items %}
<div><h4>{{ title }}</h4><ul>{% for x in items %}<li>{{ x }}</li>{% endfor %}</ul></div>
{%- endif %}
{%- endfor %}
</section>
{%- endfor %}
{%- if r.denied or r.grants %}
<h2>Permissions</h2><ul>
{%- for d in r.denied %}
<li>denied <code>{{ d.source_id }}</code>{% if d.needed_for %} (needed for {{ d.needed_for | join(", ") }}){% endif %}; {% if d.groups %}readable by group {{ d.groups | join(", ") }}: <code>investigator grant {{ r.run_id }} --group {{ d.groups[0] }}</code>{% else %}no group would make it readable{% endif %}</li>
{%- endfor %}
{%- for g in r.grants %}
<li>granted {{ g.groups | join(", ") }} by {{ g.by }} at {{ g.at.strftime("%Y-%m-%d %H:%M:%S %Z") }}; unlocked {{ g.unlocks | join(", ") or "nothing" }}{% if g.answers %}; answers the pause for {{ g.answers | join(", ") }}{% endif %}</li>
{%- endfor %}
</ul>
{%- endif %}
{%- if r.left_out %}
<h2>Left out of the case</h2><ul>
{%- for x in r.left_out %}
<li><code>{{ x.source_id }}</code> ({{ x.path }}): {{ x.problem }}; untrusted and unreadable as it stands, so never read or cited</li>
{%- endfor %}
</ul>
{%- endif %}
{%- if r.revoked %}
<h2>Revoked or stale evidence</h2><ul>
{%- for x in r.revoked %}
<li><code>{{ x.id }}</code> from {{ x.source_id }}: {{ x.status }} ({{ x.reason }})</li>
{%- endfor %}
</ul>
{%- endif %}
{%- if r.planner and r.planner.get("kind", "deterministic") != "deterministic" %}
<h2>Planner</h2><p>{{ r.planner.get("model") or "?" }}{% if r.planner.get("endpoint") %} at {{ r.planner.endpoint }}{% endif %}: {{ r.planner.get("rounds", 0) }} rounds planned, the model chose {{ r.planner.get("model_chose", 0) }}; {{ r.planner.get("calls", 0) }} calls, {{ r.planner.get("tokens", 0) }} tokens; endpoint failures {{ r.planner.get("endpoint_failures", 0) }}</p>
{%- endif %}
<h2>Timeline</h2><p class='legend'>One row per round with only the verdicts it changed; rounds that changed none are folded together.</p><table id='timeline'><tr><th>round</th><th style='width:36%'>asked</th><th style='width:24%'>found and read</th><th>verdicts changed</th></tr>
{%- for t in rounds %}
{%- if t.get('quiet') %}
<tr class='quiet'><td class='n'>{{ t.round }}–{{ t.last }}</td><td colspan='3'><details><summary>{{ t.quiet | length }} rounds changed no verdict ({{ quiet_words(t.quiet) }})</summary><table>
{%- for q in t.quiet %}<tr><td class='n'>{{ q.round }}</td><td>{{ q.asked }}</td><td{% if q.query %} title='query: {{ q.query }}'{% endif %}>{{ q.read }}</td></tr>{% endfor %}
</table></details></td></tr>
{%- else %}
<tr><td class='n'>{{ t.round }}</td><td>{{ t.asked }}</td><td{% if t.query %} title='query: {{ t.query }}'{% endif %}>{{ t.read }}</td><td>{{ t.changed or "—" }}{% if t.stop %}<br><strong>{{ t.stop }}</strong>{% endif %}</td></tr>
{%- endif %}
{%- endfor %}
</table></body></html>
"""


# The bridge drawing's boxes: the widest name drawn whole, the narrowest box, and the width one
# character of the 13 px label takes (generous for system sans-serif: digits and lower case run 6.5-7.5).
NAME_MAX = 40
BOX_MIN = 150
CHAR_PX = 7.6


@cache
def _template() -> Any:
    env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=False, lstrip_blocks=False)
    return env.from_string(TEMPLATE)


def _drawing(hops: tuple[Hop, ...]) -> dict[str, Any] | None:
    """Geometry of the bridge path: boxes and arrows, dashed where a hop does not apply yet.

    Each box is as wide as its name (a host or a long identifier does not run over its neighbours),
    a name past `NAME_MAX` characters is cut with an ellipsis and kept whole in the box's tooltip,
    and the drawing scales down (its `viewBox`) where the path is wider than the page.
    """
    if not hops:
        return None
    names = [hops[0].source, *[h.target for h in hops]]
    gap, h = 60, 44
    nodes = []
    x = 10.0
    for i, name in enumerate(names):
        shown = name if len(name) <= NAME_MAX else name[: NAME_MAX - 1] + "\u2026"
        w = max(BOX_MIN, round(len(shown) * CHAR_PX + 24))
        arrow = None
        if i < len(hops):
            x1, x2 = x + w, x + w + gap
            arrow = {"x1": x1, "x2": x2, "cx": (x1 + x2) / 2, "dashed": not hops[i].applicable,
                     "label": ", ".join(hops[i].evidence_ids[:3])}
        nodes.append({"x": x, "w": w, "cx": x + w / 2, "name": shown, "full": name, "arrow": arrow})
        x += w + gap
    return {"width": round(x - gap + 10), "height": h + 40, "h": h,
            "ty": 10 + h / 2 + 5, "my": 10 + h / 2, "nodes": nodes}


def _where(e: Any, tz: tzinfo) -> str:
    where = f"{e.source_id}@{e.version} [{e.span.start}:{e.span.end}]" if e.span else (
        f"{e.source_id}@{e.version}" if e.withheld else f"from the case ({e.trust})")
    for sig in e.signals[:2]:
        where += f" — {signal_words(sig, tz)}"
    return where


def _cited(r: Report) -> list[list[tuple[str, list[tuple[Any, bool]]]]]:
    """Per claim, its evidence by role, each with whether it is quoted here (its first citation in the
    report) or refers back to where it was."""
    ev = {e.id: e for e in r.evidence}
    shown: set[str] = set()
    out = []
    for c in r.claims:
        groups = []
        for title, ids in (("Supporting", c.supporting), ("Opposing", c.opposing), ("Proposed by", c.proposed_by)):
            items = [(ev[i], i not in shown) for i in ids if i in ev]
            shown.update(i for i in ids if i in ev)
            if items:
                groups.append((title, items))
        out.append(groups)
    return out


def _quiet_words(rows: list[dict[str, Any]]) -> str:
    """What folded rounds did, by action: `telemetry ×3, relations ×2, placement`."""
    actions: dict[str, int] = {}
    for row in rows:
        action = row["asked"].split(" ", 1)[0] or "continue"
        actions[action] = actions.get(action, 0) + 1
    return ", ".join(a + (f" ×{n}" if n > 1 else "") for a, n in actions.items())


def render_html(r: Report, service: dict[str, Any] | None = None) -> str:
    """One self-contained HTML page, answer first: root cause and verdicts on top, evidence below.
    `service` (the service's run page) adds a bar with the run's state and a link to the full report."""
    tz = zone(r.timezone)
    stop = stop_words(r) if r.stop else r.status
    trouble = "; ".join(f"{what}: {', '.join(r.reads[k])}" for k, what in (
        ("denied", "denied"), ("failed", "failed"), ("not_found", "not found")) if r.reads[k])
    head = [("Alert", r.alert), ("Question", r.question),
            ("Run", f"subject {r.subject} · window {r.window} · principal {r.principal} · {r.retrieval} retrieval · "
                    f"reads {r.reads['ok']} ok of {r.reads['total']}"
                    + (f" ({r.reads['reused']} reused on resume)" if r.reads["reused"] else "")
                    + f" · {trouble or 'no source denied, failed or not found'}")]
    return _template().render(
        r=r, a=answer(r), stop=stop, css=Markup(CSS), head=head, service=service, hop=HOP, became=BECAME,
        drawings=[_drawing(c.path) for c in r.claims], cited=_cited(r), first=first_citations(r),
        values=[value_changes(c) for c in r.claims], rounds=fold_quiet(timeline_rounds(r)),
        where=lambda e: _where(e, tz), reading_of=lambda e: metric_reading(e, tz), local=lambda at: local(at, tz),
        what_changed=what_changed, long=long_quote, quiet_words=_quiet_words, first_line=first_line)
