"""The report as one self-contained HTML page that answers first: the root cause (or why there
is none) with its anomalous path, the stop reason and a verdict table sit at the top, above the
fold of a laptop screen; the alert's details, each claim's evidence, the bridge path drawn,
permissions, the planner and the timeline follow.

Rendered by jinja2 with autoescape on: every value (ids, quotes, titles, notes, timeline
summaries) is escaped by the template engine, so text from a case or a source can never
become markup. Only the geometry of the path drawing is computed here.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jinja2 import Environment, StrictUndefined
from markupsafe import Markup

from investigator.report import Report, answer, signal_words, stop_words
from state.claims import Hop

CSS = ("body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}"
       ".v-confirmed{color:#17703a}.v-refuted{color:#a12b2b}.v-inferred{color:#9a6700}.v-insufficient{color:#555}"
       "blockquote{margin:.3em 0 .8em 1em;padding-left:.8em;border-left:3px solid #ccc;font-size:.9em;white-space:pre-wrap}"
       "table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left}"
       ".label{background:#fff3cd;padding:0 4px;border-radius:3px}.warn{color:#a12b2b}"
       "h1{font-size:1.4em;margin:.2em 0}.sub{color:#555;margin:.2em 0 .8em}"
       ".answer{border:2px solid #3a6ea5;border-radius:8px;padding:.6em 1em;margin:.6em 0 1em;background:#f6f9fd}"
       ".answer .line{font-size:1.2em;font-weight:600}.answer .path{font-family:ui-monospace,monospace;margin-top:.3em}"
       ".answer .stop{color:#555;margin-top:.3em;font-size:.9em}"
       "#verdicts td.st{max-width:560px}#verdicts{margin-bottom:1em}details>summary{cursor:pointer}")

TEMPLATE = """<!doctype html><html><head><meta charset='utf-8'><title>{{ r.run_id }}</title><style>{{ css }}</style></head><body>
<h1>Investigation {{ r.run_id }}: {{ r.case_id }}</h1><p class='sub'>{{ r.title }}</p>
<section id='answer' class='answer'><div class='line v-{{ a.verdict }}'>{{ a.line }}</div>
{%- if a.path %}<div class='path'>{{ a.path }}</div>{% endif %}
<div class='stop'>Stop: {{ stop }} · rounds {{ r.budgets['rounds_used'] }}/{{ r.budgets['rounds_limit'] }}, reads {{ r.budgets['reads_used'] }}/{{ r.budgets['reads_limit'] }}</div></section>
<table id='verdicts'><tr><th>claim</th><th>verdict</th><th>statement</th><th>evidence</th></tr>
{%- for c in r.claims %}
<tr><td><a href='#claim-{{ loop.index }}'><code>{{ c.id }}</code></a></td><td class='v-{{ c.verdict }}'><strong>{{ c.verdict }}</strong></td><td class='st'>{{ c.statement }}</td><td>{{ c.supporting | length }} supporting{% if c.opposing %}, {{ c.opposing | length }} opposing{% endif %}{% if c.missing %}; missing: {{ c.missing[0] }}{% endif %}</td></tr>
{%- endfor %}
</table>
<h2>Alert and run</h2><table>
{%- for k, v in head %}
<tr><th>{{ k }}</th><td>{{ v }}</td></tr>
{%- endfor %}
</table>
<h2>Claims and evidence</h2>
{%- for c in r.claims %}
<h3 id='claim-{{ loop.index }}'><code>{{ c.id }}</code> — <span class='v-{{ c.verdict }}'>{{ c.verdict }}</span></h3><p>{{ c.statement }}</p><p><small>rule: {{ c.rule }}</small></p>
{%- if c.note %}
<p><em>{{ c.note }}</em></p>
{%- endif %}
{%- set d = drawings[loop.index0] %}
{%- if d %}
<svg xmlns="http://www.w3.org/2000/svg" width="{{ d.width }}" height="{{ d.height }}" role="img" aria-label="bridge path">
{%- for n in d.nodes -%}
<rect x="{{ n.x }}" y="10" width="{{ d.w }}" height="{{ d.h }}" rx="8" fill="#eef3fb" stroke="#3a6ea5"/><text x="{{ n.cx }}" y="{{ d.ty }}" text-anchor="middle" font-size="13">{{ n.name }}</text>
{%- if n.arrow %}<line x1="{{ n.arrow.x1 }}" y1="{{ d.my }}" x2="{{ n.arrow.x2 - 6 }}" y2="{{ d.my }}" stroke="#333"{% if n.arrow.dashed %} stroke-dasharray="5,4"{% endif %}/><polygon points="{{ n.arrow.x2 - 6 }},{{ d.my - 5 }} {{ n.arrow.x2 }},{{ d.my }} {{ n.arrow.x2 - 6 }},{{ d.my + 5 }}" fill="#333"/><text x="{{ n.arrow.cx }}" y="{{ d.h + 30 }}" text-anchor="middle" font-size="10">{{ n.arrow.label }}</text>{% endif %}
{%- endfor -%}
</svg>
{%- endif %}
{%- for title, ids in [("Supporting", c.supporting), ("Opposing", c.opposing), ("Proposed by", c.proposed_by)] %}
{%- set items = ids | select("in", ev) | list %}
{%- if items %}
<h4>{{ title }}</h4>
{%- for i in items %}{% set e = ev[i] %}
<div><code>{{ e.id }}</code> {{ where(e) }}
{%- if e.label %} <span class='label'>{{ e.label }}</span>{% endif %}
{%- if e.withheld %} <span class='label'>withheld</span> <em>{{ e.withheld }}</em>{% endif %}
{%- if e.instruction %} <strong class='warn'>⚠ tries to instruct the investigator (&lsquo;{{ e.instruction }}&rsquo;): quoted as data, ignored</strong>{% endif %}
{%- if not e.withheld %}<blockquote>{{ e.span.quote if e.span else e.text }}</blockquote>{% endif %}</div>
{%- endfor %}
{%- endif %}
{%- endfor %}
{%- for title, items in [("Unresolved conflicts", c.conflicts), ("Missing observations", c.missing)] %}
{%- if items %}
<h4>{{ title }}</h4><ul>{% for x in items %}<li>{{ x }}</li>{% endfor %}</ul>
{%- endif %}
{%- endfor %}
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
{%- if r.planner and r.planner.get("kind", "deterministic") != "deterministic" %}
<h2>Planner</h2><p>{{ r.planner.get("model") or "?" }}{% if r.planner.get("endpoint") %} at {{ r.planner.endpoint }}{% endif %}: {{ r.planner.get("rounds", 0) }} rounds planned, the model chose {{ r.planner.get("model_chose", 0) }}; {{ r.planner.get("calls", 0) }} calls, {{ r.planner.get("tokens", 0) }} tokens; endpoint failures {{ r.planner.get("endpoint_failures", 0) }}</p>
{%- endif %}
<h2>Timeline</h2><table><tr><th>round</th><th>node</th><th>what</th></tr>
{%- for t in r.timeline %}
<tr><td>{{ t.round }}</td><td>{{ t.node }}</td><td>{{ t.summary }}</td></tr>
{%- endfor %}
</table></body></html>
"""


@cache
def _template() -> Any:  # noqa: ANN401 - jinja2.Template
    env = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=False, lstrip_blocks=False)
    return env.from_string(TEMPLATE)


def _drawing(hops: tuple[Hop, ...]) -> dict[str, Any] | None:
    """Geometry of the bridge path: boxes and arrows, dashed where a hop does not apply yet."""
    if not hops:
        return None
    names = [hops[0].source, *[h.target for h in hops]]
    w, gap, h = 170, 60, 44
    nodes = []
    for i, name in enumerate(names):
        x = 10 + i * (w + gap)
        arrow = None
        if i < len(hops):
            x1, x2 = x + w, x + w + gap
            arrow = {"x1": x1, "x2": x2, "cx": (x1 + x2) / 2, "dashed": not hops[i].applicable,
                     "label": ", ".join(hops[i].evidence_ids[:3])}
        nodes.append({"x": x, "cx": x + w / 2, "name": name, "arrow": arrow})
    return {"width": len(names) * w + (len(names) - 1) * gap + 20, "height": h + 40, "w": w, "h": h,
            "ty": 10 + h / 2 + 5, "my": 10 + h / 2, "nodes": nodes}


def _where(e: Any) -> str:  # noqa: ANN401 - EvidenceView
    where = f"{e.source_id}@{e.version} [{e.span.start}:{e.span.end}]" if e.span else (
        f"{e.source_id}@{e.version}" if e.withheld else f"from the case ({e.trust})")
    for sig in e.signals[:2]:
        where += f" — {signal_words(sig)}"
    return where


def render_html(r: Report) -> str:
    """One self-contained HTML page, answer first: root cause and verdicts on top, evidence below."""
    stop = stop_words(r) if r.stop else r.status
    head = [("Alert", r.alert), ("Question", r.question), ("Subject", r.subject), ("Window", r.window),
            ("Principal", r.principal), ("Retrieval", r.retrieval), ("Stop reason", stop),
            ("Budgets", f"rounds {r.budgets['rounds_used']}/{r.budgets['rounds_limit']}, reads "
                        f"{r.budgets['reads_used']}/{r.budgets['reads_limit']}"),
            ("Denied / failed / not found", f"{', '.join(r.reads['denied']) or '—'} / "
                                            f"{', '.join(r.reads['failed']) or '—'} / {', '.join(r.reads['not_found']) or '—'}")]
    return _template().render(r=r, a=answer(r), stop=stop, css=Markup(CSS), head=head, ev={e.id: e for e in r.evidence},
                              drawings=[_drawing(c.path) for c in r.claims], where=_where)
