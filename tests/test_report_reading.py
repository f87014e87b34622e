"""What a person reads in a report: evidence quoted once, metric points as times and values in the
case's zone, a timeline of what changed, one arrow per meaning and a headline that says what changed."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from investigator.report import ClaimView, EvidenceView, Report, ValueChange

from investigator.report_md import answer, render_markdown
from investigator.report_html import render_html
from investigator.report_words import BECAME, HOP, metric_reading, verdict_changes, what_changed, zone
from state.claims import Hop, RootCause
from state.facts import SignalFact
from state.span import Span


@pytest.fixture(scope="module")
def report(reference_run) -> Report:
    inv, result, _out = reference_run
    return inv.report(result.run_id)


def test_each_piece_of_evidence_is_quoted_once_and_later_mentions_link_to_it(report):
    html = render_html(report)
    cited = [i for c in report.claims for i in (*c.supporting, *c.opposing, *c.proposed_by)]
    twice = {i for i in cited if cited.count(i) > 1}
    assert twice, "the reference report cites some evidence under two claims (E14: the deployment record)"
    for i in set(cited):
        assert html.count(f"id='ev-{i}'") == 1, i
    for i in twice:
        assert html.count(f"href='#ev-{i}'") >= 2, i  # the verdict table and the later mention link back
    record = next(e for e in report.evidence if e.id == "E14").span.quote
    assert html.count("Release 4.19.0 of order-service") == record.count("Release 4.19.0 of order-service") == 1
    md = render_markdown(report)
    assert md.count("Release 4.19.0 of order-service") <= 1 and "quoted above, under `deployment_change`" in md


def test_a_metric_point_reads_as_time_and_value_in_the_cases_zone_and_keeps_its_exact_span():
    tz = zone("+08:00")
    at = datetime(2026, 12, 1, 2, 45, tzinfo=UTC)  # 10:45 at +08:00
    quote = f'[{at.timestamp()}, "0.07500"]'
    sig = SignalFact(entity="api", signal="metric", name="error_ratio", unit="ratio", anomalous=True, direction="up")
    e = EvidenceView(id="E2", kind="read", source_id="api-errors", source_kind="metric", version="v1", trust="verified",
                     span=Span(start=10, end=10 + len(quote), quote=quote), signals=(sig,))
    assert metric_reading(e, tz) == "10:45:00 0.07500 ratio"
    row = "2026-12-01T02:45:00Z,0.07500"
    csv = e.model_copy(update={"span": Span(start=0, end=len(row), quote=row)})
    assert metric_reading(csv, tz) == "10:45:00 0.07500 ratio"
    html = render_html(_report(evidence=[e], claims=[_claim("symptom", supporting=("E2",))], timezone="+08:00"))
    assert "10:45:00 0.07500 ratio" in html
    assert "1796" not in re.sub(r"<(details|span)[^>]*title='[^']*'|<details class='raw'>.*?</details>", "", html,
                                flags=re.S), "no raw epoch outside the cited span"
    assert quote.replace('"', "&#34;") in html  # the exact span, one click (or a hover) away


def test_the_timeline_shows_only_the_verdicts_a_round_changed(report):
    updates = [t["summary"] for t in report.timeline if t["node"] == "update"]
    assert len(updates) == report.budgets["rounds_used"]
    for claim in report.claims:  # a claim is named in the rounds its verdict changed, and in no other
        verdicts = [h.split(": ", 1)[1] for h in claim.history]
        changes = sum(1 for i, v in enumerate(verdicts) if i == 0 or verdicts[i - 1] != v)
        assert sum(claim.id in u for u in updates) == changes, (claim.id, claim.history, updates)
    assert verdict_changes({"a": "insufficient", "b": "refuted"}, {"a": "confirmed", "b": "refuted"}) == \
        f"a insufficient {BECAME} confirmed"
    html = render_html(report)
    timeline = re.sub(r"<details>.*?</details>", "", html.split("id='timeline'")[1], flags=re.S)
    rows = re.findall(r"<tr[ >]", timeline)[1:]
    assert len(rows) < report.budgets["rounds_used"], "rounds that changed no verdict are folded together"


def test_one_arrow_per_meaning(report):
    md = render_markdown(report)
    causal = next(c for c in report.claims if c.root_cause is not None)
    assert f"dependency-client 2.3.1 {BECAME} 2.4.0" in md  # old ⇒ new
    assert f"order-service {HOP} dependency-client {HOP} retry_timeout" in md  # next hop
    timeline = "\n".join(t["summary"] for t in report.timeline)
    assert HOP not in timeline and HOP not in what_changed(causal)
    for line in md.splitlines():  # wherever → is written, both sides are names of entities, keys or changes
        for left, right in re.findall(r"(\S+) → (\S+)", line):
            assert not re.match(r"^[\d.]+$", left) and not re.match(r"^[\d.]+$", right), line


def test_the_headline_says_which_value_the_change_set_from_what_to_what():
    rc = RootCause(entity="redis-sessions", kind="config_push", change="CFG-20260611-0217", element="maxmemory_policy",
                   path=("search-api", "redis-sessions"))
    claim = _claim("cause", root_cause=rc, changed=(ValueChange(what="maxmemory_policy", old="allkeys-lru",
                                                                new="noeviction"),))
    line = answer(_report(claims=[claim]))["line"]
    assert line == ("Root cause (confirmed): redis-sessions — config push CFG-20260611-0217 changed maxmemory_policy "
                    "from allkeys-lru to noeviction")


def test_a_config_push_with_no_element_named_says_the_values_it_set():
    rc = RootCause(entity="vmstorage", kind="config_push", change="CFG-9", path=("vmstorage",))
    changed = tuple(ValueChange(what=k, old=o, new=n) for k, o, n in (("memory.allowedPercent", "60", "15"),
                                                                        ("dedup.minScrapeInterval", "0s", "30s"),
                                                                        ("retention", "30d", "14d")))
    assert answer(_report(claims=[_claim("cause", root_cause=rc, changed=changed)]))["line"] == (
        "Root cause (confirmed): vmstorage — config push CFG-9 changed memory.allowedPercent from 60 to 15 and "
        "dedup.minScrapeInterval from 0s to 30s (and 1 more)")


def test_a_headline_never_reads_x_to_x():
    rc = RootCause(entity="partnerhub", kind="certificate", change="CHG-1", element="partnerhub",
                   path=("partnerhub", "partnerhub"))
    hop = Hop(source="partnerhub", target="partnerhub", evidence_ids=("E1",), status="applicable")
    claim = _claim("cause", root_cause=rc, path=(hop,), changed=(ValueChange(what="version", old="3.8.0", new="3.8.0"),))
    a = answer(_report(claims=[claim]))
    assert a["line"] == "Root cause (confirmed): partnerhub — certificate change CHG-1"
    assert "partnerhub → partnerhub" not in a["line"] + a["path"]
    assert "3.8.0" not in render_html(_report(claims=[claim])), "a version that did not change is not a change"


def _claim(cid: str, **extra) -> ClaimView:
    base = dict(id=cid, kind="causal_chain", statement="s", verdict="confirmed", state="supported", rule="r",
                supporting=("E1",), opposing=(), conflicts=(), missing=(), path=(), proposed_by=(), scope="prod/x",
                history=())
    return ClaimView.model_validate({**base, **extra})


def _report(claims: list[ClaimView], evidence: list[EvidenceView] = (), timezone: str = "+00:00") -> Report:  # type: ignore[assignment]
    return Report.model_validate({
        "generated_at": datetime(2026, 12, 1, tzinfo=UTC).isoformat(), "tool_version": "0", "case_id": "c",
        "run_id": "r", "title": "t", "alert": "a", "question": "q", "subject": "prod/x", "window": "w",
        "timezone": timezone, "principal": "p", "retrieval": "basic", "status": "stopped", "stop": None,
        "budgets": {"rounds_used": 1, "rounds_limit": 2, "reads_used": 1, "reads_limit": 2},
        "reads": {"total": 0, "ok": 0, "reused": 0, "denied": [], "failed": [], "not_found": []},
        "claims": [c.model_dump() for c in claims], "evidence": [e.model_dump() for e in evidence], "revoked": [],
        "timeline": []})

