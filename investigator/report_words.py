"""How a report says things to a person, shared by the Markdown and HTML renderings.

One glyph per meaning: `→` is the next hop along a path or a stated relation and nothing else;
a value or a verdict that changed is written `old ⇒ new` (the headline says it in words: "from
old to new"). Times are shown in the case's time zone (the alert's UTC offset), a metric quote
as the time and value it cites (the exact span stays with it), and the timeline one row per round
with only what changed.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from investigator.report_model import ClaimView, EvidenceView, Report

HOP: Final = "→"
"""The next hop along a path, or a stated relation from one entity to another."""
BECAME: Final = "⇒"
"""A value or a verdict that changed: `old ⇒ new`."""

_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")


def offset_of(at: datetime) -> str:
    """`+08:00` for an aware datetime, `+00:00` for UTC (or a naive one)."""
    delta = at.utcoffset() or timedelta(0)
    sign = "-" if delta < timedelta(0) else "+"
    minutes = abs(int(delta.total_seconds())) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def zone(offset: str) -> tzinfo:
    """The fixed zone of an offset like `+08:00` (UTC when empty or unreadable)."""
    m = _OFFSET.match(offset.strip())
    if not m:
        return UTC
    delta = timedelta(hours=int(m.group(2)), minutes=int(m.group(3)))
    return timezone(-delta if m.group(1) == "-" else delta)


def local(at: datetime, tz: tzinfo, fmt: str = "%H:%M:%S") -> str:
    """A time in the case's zone (a naive time is UTC, as the stores keep it)."""
    return (at if at.tzinfo is not None else at.replace(tzinfo=UTC)).astimezone(tz).strftime(fmt)


def _point(line: str) -> tuple[datetime, str] | None:
    """One metric point as a source writes it: a Prometheus `[epoch, "value"]` pair, or a CSV row
    `time,value[,…]` with an ISO time or an epoch."""
    line = line.strip().rstrip(",")
    if not line:
        return None
    if line.startswith("["):
        try:
            ts, value = json.loads(line)[:2]
            return datetime.fromtimestamp(float(ts), UTC), str(value)
        except (ValueError, TypeError):
            return None
    cells = [c.strip().strip('"') for c in line.split(",")]
    if len(cells) < 2:
        return None
    try:
        at = datetime.fromtimestamp(float(cells[0]), UTC)
    except ValueError:
        try:
            at = datetime.fromisoformat(cells[0].replace("Z", "+00:00"))
        except ValueError:
            return None
    try:
        float(cells[1])
    except ValueError:
        return None
    return at, cells[1]


def metric_reading(e: EvidenceView, tz: tzinfo) -> str:
    """A metric quote as the time(s) and value(s) it cites, in the case's zone, with the unit of its
    signal (`10:36:00 708 ms`); empty when the quote is not a list of points."""
    if e.source_kind != "metric" or e.span is None:
        return ""
    lines = [x for x in e.span.quote.splitlines() if x.strip()]
    points = [_point(x) for x in lines]
    if not points or any(p is None for p in points):
        return ""
    unit = next((s.unit for s in e.signals if s.signal == "metric" and s.unit), "")
    return "; ".join(f"{local(at, tz)} {value}{' ' + unit if unit else ''}"
                     for at, value in (p for p in points if p is not None))


def signal_words(sig: Any, tz: tzinfo = UTC) -> str:
    """One line for a signal: what it is, whether it departed, since when (in the case's zone), by how much."""
    if not sig.decidable:
        return f"{sig.entity} {sig.name}: cannot decide ({sig.note})"
    if sig.anomalous:
        base = f" from {sig.baseline:g}" if sig.baseline is not None else ""
        lvl = f" to {sig.level:g} {sig.unit}" if sig.level is not None else ""
        since = f" since {local(sig.onset, tz)}" if sig.onset is not None else ""
        return f"{sig.entity} {sig.name} {sig.direction}{base}{lvl}{since}"
    return (f"{sig.entity} {sig.name}: no departure (baseline {sig.baseline if sig.baseline is not None else '?'}, "
            f"peak {sig.peak if sig.peak is not None else '?'})")


def long_quote(text: str, lines: int = 12, chars: int = 640) -> bool:
    """Whether a quote is folded (its first line shown, the whole of it one click away)."""
    return text.count("\n") >= lines or len(text) > chars


def first_line(text: str, limit: int = 140) -> str:
    """The first line of a folded quote that says something (not a lone `{` or `---`)."""
    lines = [x.strip() for x in text.splitlines() if x.strip()]
    one = next((x for x in lines if any(ch.isalnum() for ch in x)), lines[0] if lines else "")
    return one if len(one) <= limit else one[: limit - 1] + "…"


def first_citations(r: Report) -> dict[str, str]:
    """Each evidence id and the claim that quotes it: the first claim citing it (supporting, opposing,
    proposing, in that order); every later mention refers back to that quote."""
    out: dict[str, str] = {}
    for c in r.claims:
        for i in (*c.supporting, *c.opposing, *c.proposed_by):
            out.setdefault(i, c.id)
    return out


def path_words(names: list[str] | tuple[str, ...]) -> str:
    """A path hop by hop, a name never followed by itself (`a → a` says nothing)."""
    out: list[str] = []
    for n in names:
        if not out or out[-1] != n:
            out.append(n)
    return f" {HOP} ".join(out)


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]", "", key.lower())


def what_changed(c: ClaimView) -> str:
    """The root cause's change in words: which change set which value from what to what (the changed
    element's, when the change record or the snapshots diffed say it), never `X → X`."""
    rc = c.root_cause
    assert rc is not None
    kind = _KIND.get(rc.kind, rc.kind.replace("_", " "))
    if rc.change is None:
        if rc.kind == "capacity":
            return (f"capacity: {rc.element} reached" if rc.element and rc.element != rc.entity
                    else "its own traffic rose, with no change before its onset")
        if rc.kind == "external":
            return "a third party's own failure, with nothing of ours changed before its onset"
        return kind
    head = (f"noisy neighbour, after its change {rc.change}" if rc.kind == "noisy_neighbour"
            else f"{kind} {rc.change}")
    el = next((v for v in c.changed if rc.element and _norm(v.what) == _norm(rc.element)), None)
    values = [v for v in c.changed if v.what != "version" and v.old != v.new]
    if el is not None and el.old != el.new:
        head += f" changed {_from_to(el)}"
    elif rc.element and rc.element != rc.entity:
        head += f" changed {rc.element}"
    elif rc.kind in ("config_push", "feature_flag") and values:  # the values are the change: say them
        head += " changed " + " and ".join(_from_to(v) for v in values[:2]) + (
            f" (and {len(values) - 2} more)" if len(values) > 2 else "")
    if rc.refined and rc.refined not in (rc.element, rc.entity):
        head += f", which changed {rc.refined}"
    return head


_KIND: Final = {"config_push": "config push", "feature_flag": "feature flag", "certificate": "certificate change",
                 "dns": "DNS change", "infrastructure": "infrastructure change", "other": "change"}


def _from_to(v: Any) -> str:
    if v.old is None:  # no earlier value was read (a migration applied, an issuer set): say what it became
        return f"{v.what} set to {v.new}"
    return f"{v.what} from {v.old} to {v.new if v.new is not None else '(unset)'}"


def value_changes(c: ClaimView) -> str:
    """Every value the cause's change set, `key old ⇒ new` (`key set to new` where no earlier value was
    read), the changed element first."""
    return "; ".join(f"{v.what} set to {v.new}" if v.old is None else
                     f"{v.what} {v.old} {BECAME} {v.new if v.new is not None else '(unset)'}"
                     for v in c.changed if v.old != v.new)


def timeline_rounds(r: Report) -> list[dict[str, Any]]:
    """The timeline folded to one row per round: what was asked, what was found and read, which
    verdicts changed (only those) and the stop; a grant or a resume is a row of its own."""
    rows: list[dict[str, Any]] = []
    cur: dict[str, Any] | None = None
    for t in r.timeline:
        node = t["node"]
        if node in ("grant", "resume"):
            rows.append({"round": t["round"], "asked": t["summary"], "query": "", "read": "", "changed": "",
                         "stop": "", "event": node})
            cur = None
            continue
        if cur is None or cur["round"] != t["round"] or cur.get("event"):
            cur = {"round": t["round"], "asked": "", "query": "", "read": "", "changed": "", "stop": ""}
            rows.append(cur)
        s = t.get("summary", "")
        if node == "plan":
            cur["asked"] = s
        elif node == "retrieve":
            cur["query"] = t.get("query", "")
            found = (f"{t['hits']} hit{'' if t['hits'] == 1 else 's'}" if "hits" in t else s) + (
                f", denied {', '.join(t['denied'])}" if t.get("denied") else "")
            cur["read"] = "; ".join(x for x in (cur["read"], found) if x)
        elif node == "read":
            cur["read"] = "; ".join(x for x in (cur["read"], _reads(t) if "sources" in t else s) if x)
        elif node == "update" and s != NO_CHANGE:
            cur["changed"] = s
        elif node == "decide" and s.startswith("stop"):
            cur["stop"] = s
    return rows


def _reads(t: dict[str, Any]) -> str:
    """What a read step opened, each source once: `read a, b (×2 spans); c: denied`."""
    ok: dict[str, int] = {}
    other: list[str] = []
    for source, outcome in t["sources"]:
        if outcome == "ok":
            ok[source] = ok.get(source, 0) + 1
        else:
            other.append(f"{source}: {outcome.replace('_', ' ')}")
    parts = ([f"read {', '.join(s + (f' (×{n} spans)' if n > 1 else '') for s, n in ok.items())}"] if ok else []) + other
    return "; ".join(parts) or "nothing to read"


NO_CHANGE: Final = "no verdict changed"


def verdict_changes(before: dict[str, str], now: dict[str, str]) -> str:
    """The verdicts an update changed, `claim old ⇒ new`; first verdicts grouped by verdict
    (`confirmed: a; insufficient: b, c`)."""
    out = [f"{c} {before[c]} {BECAME} {v}" for c, v in now.items() if c in before and before[c] != v]
    first: dict[str, list[str]] = {}
    for c, v in now.items():
        if c not in before:
            first.setdefault(v, []).append(c)
    out += [f"{v}: {', '.join(cs)}" for v, cs in first.items()]
    return "; ".join(out) or NO_CHANGE


def fold_quiet(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive rounds that changed no verdict and did not stop, folded into one row that
    holds them (`quiet`): the timeline shows what changed, the rest one click away."""
    out: list[dict[str, Any]] = []
    for row in rows:
        quiet = not (row["changed"] or row["stop"] or row.get("event"))
        if quiet and out and out[-1].get("quiet") is not None:
            out[-1]["quiet"].append(row)
            out[-1]["last"] = row["round"]
        elif quiet:
            out.append({**row, "quiet": [row], "last": row["round"]})
        else:
            out.append(row)
    return [r["quiet"][0] if r.get("quiet") is not None and len(r["quiet"]) == 1 else r for r in out]
