"""Every supported source format parses to typed values whose offsets slice the source exactly.

One test (or a few) per format of docs/case-format.md §4–§6, on small samples written the way
the real tools write them — zap, logrus, pino, bunyan, syslog, PostgreSQL, the OpenTelemetry
collector's file exporter, Jaeger's JSON, kubectl, Prometheus, Helm, Argo CD — including the
malformed lines real files carry. Every parsed record is checked to slice back
(`text[start:end]` is the line, span, pair or entry it was read from), and every line that
cannot be read is kept as unparsed text with its exact offsets, never dropped.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from rulesworld import World
from rulesworld import case as rules_case
from state.errors import CaseError
from state.facts import PlacementFact, RelationFact, SignalFact
from state.sources import MetricMeta, ServiceConfig, SourceEntry
from tools import derive, derive_relations, derive_signals
from tools.corpus import ParseContext, SourceDoc, load_source
from tools.entities import EntityExtractor
from tools.formats import changes, configs, k8s, logs, metrics, traces
from tools.profile import default_profile
from tools.signals import Range

P = default_profile()
UTC = timezone.utc
CST = timezone(timedelta(hours=8))


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def lines_of(text: str) -> list[str]:
    return [ln for ln in text.split("\n") if ln.strip()]


def load(tmp_path: Path, name: str, text: str, kind: str, **entry) -> SourceDoc:
    """Write `text` as a source of a tiny case folder and load it as the runtime does."""
    path = tmp_path / "sources" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    sid = entry.pop("id", name.replace("/", "-").replace(".", "-"))
    e = SourceEntry(id=sid, path=f"sources/{name}", kind=kind, groups=("sre-oncall",), **entry)
    return load_source(tmp_path, e, ParseContext(P, year=2026))


def registry(**kinds: str) -> EntityExtractor:
    return EntityExtractor({k.replace("_", "-"): v for k, v in kinds.items()})


def assert_slices(text: str, items, expected: list[str] | None = None) -> None:
    """Every item's offsets cut a non-empty piece of `text`; with `expected`, exactly those pieces."""
    got = [text[i.start:i.end] for i in items]
    assert all(g.strip() for g in got), got
    assert all("\n" not in g[-1:] for g in got), "a line's offsets end before its newline"
    if expected is not None:
        assert got == expected


def assert_disjoint(*groups) -> None:
    """Parsed records and unparsed blocks never overlap: each character belongs to one at most."""
    spans = sorted((i.start, i.end) for g in groups for i in g)
    assert all(a_end <= b_start for (_a, a_end), (b_start, _b) in zip(spans, spans[1:])), spans


# =============================================================================================
# 4.1 Logs
# =============================================================================================

PLAIN = """\
2026-04-29T10:34:50.870+08:00 INFO  order-service [http-nio-8080-exec-3] GET /api/orders/8812 200 in 212 ms
2026-04-29T10:34:51.123+08:00 WARN order-service [dependency-client] call inventory-service timed out after 2000 ms
2026-04-29T10:34:52.004+08:00 ERROR order-service [http-nio-8080-exec-7] request failed
java.lang.IllegalStateException: inventory-service unavailable
\tat com.example.orders.InventoryClient.reserve(InventoryClient.java:88)
\tat com.example.orders.OrderController.create(OrderController.java:41)
Caused by: java.net.SocketTimeoutException: Read timed out
\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)
\t... 42 more
2026-04-29T10:34:53.310+08:00 INFO  order-service [http-nio-8080-exec-1] GET /api/orders/8813 200 in 198 ms
"""


def test_a_plain_line_gives_its_zoned_time_its_level_and_the_service_after_the_level():
    events, bad = logs.parse_plain(PLAIN, P)
    assert bad == []
    warn = events[1]
    assert warn.ts == utc(2026, 4, 29, 2, 34, 51, 123000) and warn.ts.utcoffset() == timedelta(hours=8)
    assert warn.severity == "warning"
    assert warn.fields["@after_level"] == "order-service"
    assert "call inventory-service timed out after 2000 ms" in warn.message
    assert [e.severity for e in events] == ["info", "warning", "error", "info"]
    assert_slices(PLAIN, events[:2] + events[3:], [lines_of(PLAIN)[0], lines_of(PLAIN)[1], lines_of(PLAIN)[-1]])


def test_a_multi_line_java_stack_trace_is_one_event_with_the_offsets_of_all_its_lines():
    events, bad = logs.parse_plain(PLAIN, P)
    assert len(events) == 4 and bad == []
    trace = events[2]
    assert_disjoint(events)
    block = "\n".join(PLAIN.split("\n")[2:9])
    assert PLAIN[trace.start:trace.end] == block
    assert block.endswith("\t... 42 more") and "Caused by: java.net.SocketTimeoutException" in trace.message
    assert trace.severity == "error" and trace.ts == utc(2026, 4, 29, 2, 34, 52, 4000)


def test_a_python_traceback_is_one_event():
    text = ("2026-04-29 10:34:51,123 ERROR payments Unhandled exception in charge()\n"
            "Traceback (most recent call last):\n"
            '  File "/app/payments/charge.py", line 88, in charge\n'
            "    resp = client.post(url, json=body, timeout=2.0)\n"
            "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='ledger', port=8080): Read timed out.\n"
            "2026-04-29 10:34:52,004 INFO payments charge retried\n")
    events, bad = logs.parse_plain(text, P, "+08:00")
    assert bad == [] and len(events) == 2
    assert text[events[0].start:events[0].end] == text.split("\n2026-04-29 10:34:52")[0]
    assert events[0].ts == utc(2026, 4, 29, 2, 34, 51, 123000)
    assert "ReadTimeout" in events[0].message


@pytest.mark.parametrize("line, severity", [
    ("2026-04-29T10:34:51Z WARN checkout slow response from payments", "warning"),
    ("2026-04-29T10:34:51Z WARNING: checkout slow response from payments", "warning"),
    ("2026-04-29T10:34:51.5Z warn checkout slow response from payments", "warning"),
    ("2026-04-29T10:34:51Z E checkout charge failed", "error"),
    ("2026-04-29T10:34:51Z [err] checkout charge failed", "error"),
    ("2026-04-29T10:34:51Z FATAL checkout cannot bind :8080", "error"),
    ("2026-04-29T10:34:51+0800 DEBUG checkout cache miss sku=88", "debug"),
    ("2026-04-29T10:34:51Z level=warn service=web msg=\"upstream timeout\"", "warning"),
    ("[2026-04-29 10:34:51,123] ERROR [Consumer clientId=orders-1, groupId=orders] Offset commit failed", "error"),
    ("2026-04-29 10:34:51,123 - payments - ERROR - charge failed", "error"),
    # PostgreSQL's stderr log (log_line_prefix '%m [%p] ' and '%m [%p] %u@%d ')
    ("2026-04-29 10:34:51.123 UTC [4242] WARNING:  could not receive data from client: Connection reset by peer",
     "warning"),
    ("2026-04-29 10:34:51.123 UTC [4242] app@orders ERROR:  canceling statement due to statement timeout", "error"),
    ("2026-04-29 10:34:51.123 UTC [4242] FATAL:  remaining connection slots are reserved for superuser connections",
     "error"),
    ("2026-04-29 10:34:51.123 UTC [4242] LOG:  checkpoint starting: time", "info"),
    # PostgreSQL with RDS's prefix '%t:%r:%u@%d:[%p]:' (the level ends a colon-separated prefix)
    ("2026-04-29 10:34:51 UTC:10.46.9.145(43610):app@orders:[27531]:FATAL:  remaining connection slots are reserved",
     "error"),
    ("2026-04-29 10:34:51 UTC::@:[526]:LOG:  checkpoint starting: time", "info"),
])
def test_plain_lines_read_the_level_in_its_common_spellings(line, severity):
    events, bad = logs.parse_plain(line + "\n", P, "Z")
    assert bad == [] and len(events) == 1
    assert events[0].severity == severity
    assert events[0].ts.utcoffset() is not None
    assert_slices(line, events, [line])


def test_a_plain_stamp_without_a_zone_takes_the_sources_timezone():
    text = "2026-04-29 10:34:51,123 ERROR checkout charge failed\n"
    events, _ = logs.parse_plain(text, P, "+08:00")
    assert events[0].ts == utc(2026, 4, 29, 2, 34, 51, 123000)


def test_a_plain_stamp_without_a_zone_and_without_a_timezone_is_kept_unparsed_with_its_offsets():
    text = ("2026-04-29T10:34:51Z INFO checkout ok\n"
            "2026-04-29 10:34:52,004 ERROR checkout charge failed\n")
    events, bad = logs.parse_plain(text, P)
    assert len(events) == 1 and len(bad) == 1
    assert text[bad[0].start:bad[0].end] == "2026-04-29 10:34:52,004 ERROR checkout charge failed"
    assert "timezone" in bad[0].reason


def test_the_stack_trace_of_a_line_kept_unparsed_stays_with_it_not_with_the_event_before():
    text = ("2026-04-29T10:34:51Z INFO checkout ok\n"
            "2026-04-29 10:34:52,004 ERROR checkout charge failed\n"
            "java.net.SocketTimeoutException: Read timed out\n"
            "\tat java.base/java.net.SocketInputStream.read(SocketInputStream.java:168)\n"
            "2026-04-29T10:34:53Z INFO checkout ok again\n")
    events, bad = logs.parse_plain(text, P)
    assert_slices(text, events, ["2026-04-29T10:34:51Z INFO checkout ok",
                                 "2026-04-29T10:34:53Z INFO checkout ok again"])
    (block,) = bad
    assert text[block.start:block.end] == "\n".join(text.split("\n")[1:4])
    assert_disjoint(events, bad)


def test_a_plain_line_before_any_event_is_kept_unparsed_never_dropped():
    text = "==> /var/log/checkout/app.log <==\n2026-04-29T10:34:51Z INFO checkout started\n"
    events, bad = logs.parse_plain(text, P)
    assert len(events) == 1
    assert [text[b.start:b.end] for b in bad] == ["==> /var/log/checkout/app.log <=="]
    assert "timestamp" in bad[0].reason


LOGFMT = """\
ts=2026-04-29T02:34:51Z level=warn service=web msg="upstream timeout" upstream=payments duration_ms=2003
time="2026-04-29T10:34:52+08:00" level=error msg="charge failed: context deadline exceeded" app=checkout
ts=1777430093.25 lvl=E component=ledger msg="write failed" err="pq: could not serialize access"
level=info msg="rotating log file
ts=2026-04-29T02:34:54Z level=info service=web msg="GET /healthz" status=200
"""


def test_a_logfmt_line_gives_time_level_writer_message_and_fields():
    events, bad = logs.parse_logfmt(LOGFMT, P)
    first = events[0]
    assert first.ts == utc(2026, 4, 29, 2, 34, 51)
    assert (first.severity, first.writer, first.message) == ("warning", "web", "upstream timeout")
    assert first.fields["upstream"] == "payments" and first.fields["duration_ms"] == "2003"
    # logrus' text formatter: quoted time with an offset, `app`
    assert (events[1].ts, events[1].severity, events[1].writer) == (utc(2026, 4, 29, 2, 34, 52), "error", "checkout")
    # epoch seconds in `ts`, a one-letter level in `lvl`
    assert events[2].ts == utc(2026, 4, 29, 2, 34, 53, 250000)
    assert (events[2].severity, events[2].writer) == ("error", "ledger")
    kept = [ln for ln in lines_of(LOGFMT) if not ln.startswith("level=info")]
    assert_slices(LOGFMT, events, kept)
    assert [LOGFMT[b.start:b.end] for b in bad] == ['level=info msg="rotating log file']
    assert_disjoint(events, bad)


def test_a_go_panic_after_a_logfmt_line_is_one_event():
    text = ('ts=2026-04-29T02:34:51Z level=error msg="panic recovered" service=web\n'
            "panic: runtime error: invalid memory address or nil pointer dereference\n"
            "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a3b2c]\n"
            "\n"
            "goroutine 1 [running]:\n"
            "main.main()\n"
            "\t/app/main.go:42 +0x1d\n"
            'ts=2026-04-29T02:34:52Z level=info msg="restarted" service=web\n')
    events, bad = logs.parse_logfmt(text, P)
    assert bad == [] and len(events) == 2
    assert text[events[0].start:events[0].end] == text.split("\nts=2026-04-29T02:34:52Z")[0]
    assert events[0].severity == "error" and "goroutine 1 [running]:" in events[0].message


ZAP = ('{"level":"error","ts":1777430091.12,"caller":"payclient/client.go:88","msg":"payment call failed",'
       '"service":"checkout","upstream":"payments","error":"context deadline exceeded",'
       '"stacktrace":"main.charge\\n\\t/app/pay.go:88\\nmain.main\\n\\t/app/main.go:41"}')
LOGRUS = ('{"level":"warning","msg":"slow query on orders","query_ms":1840,"time":"2026-04-29T10:34:51+08:00",'
          '"app":"orders"}')
PINO = ('{"level":50,"time":1777430091123,"pid":7,"hostname":"web-7f6d4c8b95-h8zkt","msg":"upstream timeout",'
        '"upstream":"payments","req":{"id":"r-81","method":"POST","url":"/api/checkout"}}')
BUNYAN = ('{"name":"web","hostname":"web-1","pid":4242,"level":40,"msg":"retrying payment",'
          '"time":"2026-04-29T02:34:51.123Z","v":0}')


def test_a_zap_line_reads_epoch_seconds_and_a_word_level():
    (e,), bad = logs.parse_json(ZAP + "\n", P)
    assert bad == []
    assert e.ts == utc(2026, 4, 29, 2, 34, 51, 120000)
    assert (e.severity, e.writer, e.message) == ("error", "checkout", "payment call failed")
    assert e.fields["upstream"] == "payments" and e.fields["caller"] == "payclient/client.go:88"
    assert_slices(ZAP, [e], [ZAP])


def test_a_logrus_json_line_with_level_warning_is_a_warning():
    (e,), _ = logs.parse_json(LOGRUS + "\n", P)
    assert (e.ts, e.severity, e.writer) == (utc(2026, 4, 29, 2, 34, 51), "warning", "orders")


def test_a_pino_line_with_level_50_is_an_error():
    (e,), _ = logs.parse_json(PINO + "\n", P)
    assert e.severity == "error"
    assert e.ts == utc(2026, 4, 29, 2, 34, 51, 123000), "epoch milliseconds in `time`"
    assert e.writer is None, "pino names no service: the hostname is a pod, not the writer"
    assert e.fields["req.method"] == "POST"
    assert_slices(PINO, [e], [PINO])


@pytest.mark.parametrize("level, severity", [(10, "debug"), (20, "debug"), (30, "info"), (40, "warning"),
                                             (50, "error"), (60, "error")])
def test_pino_and_bunyan_numeric_levels_map_to_severities(level, severity):
    line = f'{{"level":{level},"time":1777430091123,"pid":7,"hostname":"h","msg":"m"}}'
    (e,), _ = logs.parse_json(line, P)
    assert e.severity == severity


def test_a_bunyan_line_names_its_writer_in_name_not_hostname():
    (e,), _ = logs.parse_json(BUNYAN, P)
    assert (e.severity, e.writer, e.message) == ("warning", "web", "retrying payment")
    assert e.ts == utc(2026, 4, 29, 2, 34, 51, 123000)


def test_an_ecs_line_reads_its_dotted_level_and_service_fields():
    line = ('{"@timestamp":"2026-04-29T02:34:51.123Z","log.level":"WARN","message":"pool exhausted",'
            '"service.name":"checkout","ecs.version":"1.6.0"}')
    (e,), _ = logs.parse_json(line, P)
    assert (e.ts, e.severity, e.writer, e.message) == (utc(2026, 4, 29, 2, 34, 51, 123000), "warning", "checkout",
                                                       "pool exhausted")


@pytest.mark.parametrize("stamp", [1777430091.5, 1777430091500, 1777430091500000, 1777430091500000000,
                                   "1777430091500", "2026-04-29T10:34:51.5+08:00", "2026-04-29T02:34:51.500Z"])
def test_epoch_seconds_milliseconds_microseconds_nanoseconds_and_iso_stamps_are_one_instant(stamp):
    got = logs.parse_time(stamp, None)
    assert got == utc(2026, 4, 29, 2, 34, 51, 500000) and got.utcoffset() is not None


@pytest.mark.parametrize("field", ["ts", "time", "timestamp", "@timestamp", "t"])
def test_a_json_stamp_without_a_zone_in_any_time_field_takes_the_sources_timezone(field):
    line = f'{{"{field}":"2026-04-29 10:34:51.5","level":"info","msg":"cache warmed"}}'
    (e,), _ = logs.parse_json(line, P, "+08:00")
    assert e.ts == utc(2026, 4, 29, 2, 34, 51, 500000)
    events, bad = logs.parse_json(line, P, None)
    assert events == [] and [line[b.start:b.end] for b in bad] == [line] and "zone" in bad[0].reason


def test_json_lines_keep_a_broken_line_unparsed_with_its_exact_offsets():
    broken = '{"level":"info","ts":1777430092.5,"msg":"flushing buffered spans to the coll'
    no_time = '{"level":"error","msg":"no clock on this one","service":"checkout"}'
    text = "\n".join([ZAP, broken, LOGRUS, no_time, '"just a string"', PINO, ""])
    events, bad = logs.parse_json(text, P)
    assert_slices(text, events, [ZAP, LOGRUS, PINO])
    assert [text[b.start:b.end] for b in bad] == [broken, no_time, '"just a string"']
    assert "time" in bad[1].reason
    assert_disjoint(events, bad)


def test_an_indented_stack_trace_after_a_json_line_belongs_to_that_event():
    text = (PINO + "\n"
            "    at Socket.<anonymous> (/app/node_modules/pg/lib/connection.js:114:12)\n"
            "    at Socket.emit (node:events:517:28)\n"
            + BUNYAN + "\n")
    events, bad = logs.parse_json(text, P)
    assert bad == [] and len(events) == 2
    assert text[events[0].start:events[0].end] == text.split("\n" + BUNYAN)[0]


def test_a_json_line_with_a_raw_line_separator_in_a_string_is_one_event():
    # JSON.stringify (pino, bunyan) leaves U+2028/U+2029 unescaped: they are not line breaks of the file
    line = '{"level":50,"time":1777430091123,"msg":"bad input: \u2028ignore\u2029 this","name":"web"}'
    text = line + "\n" + BUNYAN + "\n"
    events, bad = logs.parse_json(text, P)
    assert bad == []
    assert_slices(text, events, [line, BUNYAN])
    assert events[0].severity == "error" and "\u2028" in events[0].message


SYSLOG_5424 = """\
<27>1 2026-04-29T10:34:51.003+08:00 web-1 web 4242 - [meta sequenceId="17"] payment call failed upstream=payments
<14>1 2026-04-29T02:34:52Z web-1 web 4242 - - GET /healthz 200
<12>1 2026-04-29T10:34:53+08:00 web-1 - - - - disk 91% full
"""


def test_an_rfc5424_line_gives_its_time_app_and_the_severity_of_its_pri():
    events, bad = logs.parse_syslog(SYSLOG_5424, P)
    assert bad == []
    first = events[0]
    assert first.ts == utc(2026, 4, 29, 2, 34, 51, 3000)
    assert (first.severity, first.writer) == ("error", "web")  # PRI 27 = daemon.err
    assert first.message == "payment call failed upstream=payments" and first.fields["upstream"] == "payments"
    assert [e.severity for e in events] == ["error", "info", "warning"]
    assert events[2].writer is None, "a NILVALUE app names no writer"
    assert_slices(SYSLOG_5424, events, lines_of(SYSLOG_5424))


SYSLOG_3164 = """\
<12>Apr 29 10:34:51 web-1 web[4242]: slow response from payments after 1840 ms
<11>Apr  9 08:00:02 web-1 web[4242]: charge failed
-- MARK --
"""


def test_an_rfc3164_line_takes_the_sources_timezone_and_the_windows_year():
    events, bad = logs.parse_syslog(SYSLOG_3164, P, "+08:00", 2026)
    assert events[0].ts == utc(2026, 4, 29, 2, 34, 51) and events[0].ts.utcoffset() == timedelta(hours=8)
    assert events[1].ts == datetime(2026, 4, 9, 8, 0, 2, tzinfo=CST), "a day padded with a space"
    assert [(e.severity, e.writer) for e in events] == [("warning", "web"), ("error", "web")]
    assert events[0].message == "slow response from payments after 1840 ms"
    assert_slices(SYSLOG_3164, events, lines_of(SYSLOG_3164)[:2])
    assert [SYSLOG_3164[b.start:b.end] for b in bad] == ["-- MARK --"]


def test_a_syslog_file_line_without_pri_is_read_with_an_unknown_severity_unless_its_text_names_one():
    text = ("Apr 29 10:34:51 web-1 web[4242]: slow response from payments\n"
            "Apr 29 10:34:52 web-1 web[4242]: ERROR charge failed\n")
    assert logs.detect(text) == "syslog"
    events, bad = logs.parse_syslog(text, P, "+08:00", 2026)
    assert bad == [] and [(e.severity, e.writer) for e in events] == [("unknown", "web"), ("error", "web")]
    assert_slices(text, events, lines_of(text))


def test_an_rfc3164_line_without_a_timezone_is_kept_unparsed():
    events, bad = logs.parse_syslog(SYSLOG_3164, P, None, 2026)
    assert events == []
    assert [SYSLOG_3164[b.start:b.end] for b in bad] == lines_of(SYSLOG_3164)
    assert "timezone" in bad[0].reason


@pytest.mark.parametrize("line, severity", [
    # PostgreSQL's syslog levels are one lower than its own (ERROR is sent as LOG_WARNING,
    # WARNING as LOG_NOTICE), and syslog_sequence_numbers (on by default) prefixes `[N-1]`
    ("<132>Apr 29 10:34:52 db-1 postgres[5512]: [7-1] ERROR:  canceling statement due to statement timeout", "error"),
    ("<133>Apr 29 10:34:52 db-1 postgres[5512]: [8-1] WARNING:  there is no transaction in progress", "warning"),
    ("<131>Apr 29 10:34:52 db-1 postgres[5512]: [9-1] FATAL:  sorry, too many clients already", "error"),
    ("<134>Apr 29 10:34:52 db-1 postgres[5512]: [10-1] LOG:  checkpoint starting: time", "info"),
    ("<133>1 2026-04-29T10:34:52+08:00 db-1 postgres 5512 - - ERROR:  deadlock detected", "error"),
])
def test_a_postgresql_level_word_in_a_syslog_message_wins_over_the_pri(line, severity):
    (e,), _ = logs.parse_syslog(line, P, "+08:00", 2026)
    assert e.severity == severity and e.writer == "postgres"


@pytest.mark.parametrize("text, fmt", [
    (ZAP + "\n" + PINO + "\n", "json"),
    (LOGFMT, "logfmt"),
    (SYSLOG_5424, "syslog"),
    (SYSLOG_3164, "syslog"),
    (PLAIN, "plain"),
    ("2026-04-29 10:34:51.123 UTC [4242] LOG:  checkpoint starting: time\n", "plain"),
])
def test_the_log_format_is_detected_from_the_first_lines(text, fmt):
    assert logs.detect(text) == fmt


def test_a_line_that_names_no_service_is_written_by_the_manifests_service(tmp_path):
    text = PINO + "\n" + ZAP + "\n"
    doc = load(tmp_path, "logs/web.jsonl", text, "log", service="web", environment="prod")
    assert doc.format == "json"
    reg = registry(web="service", checkout="service", payments="service")
    pino, zap = doc.events
    assert derive.writer_of(doc, pino, reg) == "web", "no writer field: the manifest's service"
    assert derive.writer_of(doc, zap, reg) == "checkout", "a writer field naming a known service wins"
    assert {s.entity for s in derive.streams(doc, reg, P)} == {"web", "checkout"}


def test_a_plain_line_names_its_writer_right_after_the_level(tmp_path):
    doc = load(tmp_path, "logs/app.log", PLAIN, "log", service="edge", environment="prod")
    reg = registry(edge="service", order_service="service", inventory_service="service")
    assert {derive.writer_of(doc, e, reg) for e in doc.events} == {"order-service"}
    rel = derive_relations.log_relations(doc, reg, P)
    assert [(r.source, r.target) for r in rel] == [("order-service", "inventory-service")]
    assert rel[0].at.quote == doc.text[rel[0].at.start:rel[0].at.end] == lines_of(PLAIN)[1]


def test_a_loaded_log_keeps_its_unparsed_lines_with_offsets_into_the_file(tmp_path):
    text = "\r\n".join([ZAP, '{"level":"info","ts":17774', PINO]) + "\r\n"
    doc = load(tmp_path, "logs/checkout.jsonl", text, "log", service="checkout", environment="prod")
    assert_slices(doc.text, doc.events, [ZAP, PINO])
    assert [doc.text[b.start:b.end] for b in doc.unparsed] == ['{"level":"info","ts":17774']


# =============================================================================================
# 4.2 Traces
# =============================================================================================

def _kv(key: str, value) -> dict:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    return {"key": key, "value": {"stringValue": value}}


T_NS = 1777430091000000000  # 2026-04-29T02:34:51Z
TRACE = "5b8efff798038103d269b633813fc60c"


def _otlp_span(span_id: str, parent: str, name: str, kind: int, start_ms: int, dur_ms: int, attrs: dict,
               status: dict | None = None) -> dict:
    return {"traceId": TRACE, "spanId": span_id, "parentSpanId": parent, "flags": 1, "name": name, "kind": kind,
            "startTimeUnixNano": str(T_NS + start_ms * 1_000_000),
            "endTimeUnixNano": str(T_NS + (start_ms + dur_ms) * 1_000_000),
            "attributes": [_kv(k, v) for k, v in attrs.items()], "status": status or {}}


def _otlp_line(service: str, spans: list[dict]) -> str:
    doc = {"resourceSpans": [{
        "resource": {"attributes": [_kv("service.name", service), _kv("k8s.namespace.name", "prod")]},
        "scopeSpans": [{"scope": {"name": "io.opentelemetry.http", "version": "1.32.0"}, "spans": spans}],
        "schemaUrl": "https://opentelemetry.io/schemas/1.24.0"}]}
    return json.dumps(doc, separators=(",", ":"))


OTLP_FRONTEND = _otlp_line("frontend", [
    _otlp_span("eee19b7ec3c1b174", "", "GET /checkout", 2, 0, 2450, {"http.request.method": "GET",
                                                                    "http.response.status_code": 200}),
    _otlp_span("53995c3f42cd8ad8", "eee19b7ec3c1b174", "POST /api/checkout", 3, 10, 2420,
               {"http.request.method": "POST", "server.address": "checkout"}),
])
OTLP_CHECKOUT = _otlp_line("checkout", [
    _otlp_span("d8a5b0c9e9f0a1b2", "53995c3f42cd8ad8", "POST /api/checkout", 2, 15, 2400,
               {"http.route": "/api/checkout", "http.response.status_code": 502},
               {"code": 2, "message": "upstream payments failed"}),
    _otlp_span("0af7651916cd43dd", "d8a5b0c9e9f0a1b2", "SELECT orders", 3, 20, 35,
               {"db.system": "postgresql", "db.name": "orders", "db.statement": "SELECT * FROM orders WHERE id=$1"}),
    _otlp_span("b9c7c989f97918e1", "d8a5b0c9e9f0a1b2", "POST /v1/charges", 3, 60, 2000,
               {"peer.service": "payments", "rpc.retry": True}, {"code": "STATUS_CODE_ERROR"}),
])


def test_otlp_spans_give_service_kind_times_durations_errors_and_attributes():
    text = OTLP_FRONTEND + "\n" + OTLP_CHECKOUT + "\n"
    assert traces.detect(text) == "otlp"
    spans, bad = traces.parse_otlp(text)
    assert bad == []
    by = {s.span_id: s for s in spans}
    root, client = by["eee19b7ec3c1b174"], by["53995c3f42cd8ad8"]
    server, db, pay = by["d8a5b0c9e9f0a1b2"], by["0af7651916cd43dd"], by["b9c7c989f97918e1"]
    assert (root.service, root.kind, root.parent_id, root.error) == ("frontend", "server", None, False)
    assert root.start_ts == utc(2026, 4, 29, 2, 34, 51) and root.duration_ms == 2450.0
    assert (client.kind, client.parent_id) == ("client", root.span_id)
    assert (server.service, server.parent_id, server.error) == ("checkout", client.span_id, True)
    assert server.start_ts == utc(2026, 4, 29, 2, 34, 51, 15000) and server.duration_ms == 2400.0
    assert server.attributes["http.response.status_code"] == "502", "intValue is a string in OTLP JSON"
    assert (db.attributes["db.name"], db.error, db.duration_ms) == ("orders", False, 35.0)
    assert pay.error and pay.attributes["peer.service"] == "payments" and pay.attributes["rpc.retry"] == "true"
    for s in spans:
        assert json.loads(text[s.start:s.end])["spanId"] == s.span_id


def test_otlp_file_exporter_lines_keep_a_broken_line_and_a_span_without_service_unparsed():
    no_service = json.dumps({"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
        _otlp_span("1111111111111111", "", "orphan", 1, 0, 1, {})]}]}]}, separators=(",", ":"))
    broken = OTLP_CHECKOUT[:180]
    text = "\n".join([OTLP_FRONTEND, broken, no_service, OTLP_CHECKOUT]) + "\n"
    spans, bad = traces.parse_otlp(text)
    assert len(spans) == 5
    pieces = [text[b.start:b.end] for b in bad]
    assert pieces[0] == broken
    assert json.loads(pieces[1])["spanId"] == "1111111111111111" and "service" in bad[1].reason


def test_one_pretty_printed_otlp_object_with_enum_names_and_the_legacy_scope_key_is_read():
    doc = json.loads(OTLP_CHECKOUT)
    rs = doc["resourceSpans"][0]
    rs["instrumentationLibrarySpans"] = rs.pop("scopeSpans")
    for sp in rs["instrumentationLibrarySpans"][0]["spans"]:
        sp["kind"] = {2: "SPAN_KIND_SERVER", 3: "SPAN_KIND_CLIENT"}[sp["kind"]]
    text = json.dumps(doc, indent=2)
    spans, bad = traces.parse_otlp(text)
    assert bad == [] and [(s.service, s.kind) for s in spans] == [("checkout", "server"), ("checkout", "client"),
                                                                  ("checkout", "client")]
    for s in spans:
        assert json.loads(text[s.start:s.end])["spanId"] == s.span_id


JAEGER = json.dumps({"data": [{
    "traceID": "4bf92f3577b34da6a3ce929d0e0e4736",
    "spans": [
        {"traceID": "4bf92f3577b34da6a3ce929d0e0e4736", "spanID": "00f067aa0ba902b7", "flags": 1,
         "operationName": "HTTP GET /api/cart", "references": [], "startTime": 1777430091000000, "duration": 812000,
         "tags": [{"key": "span.kind", "type": "string", "value": "server"},
                  {"key": "http.status_code", "type": "int64", "value": 500},
                  {"key": "error", "type": "bool", "value": True}],
         "logs": [], "processID": "p1", "warnings": None},
        {"traceID": "4bf92f3577b34da6a3ce929d0e0e4736", "spanID": "b7ad6b7169203331", "flags": 1,
         "operationName": "GET /v1/prices",
         "references": [{"refType": "CHILD_OF", "traceID": "4bf92f3577b34da6a3ce929d0e0e4736",
                         "spanID": "00f067aa0ba902b7"}],
         "startTime": 1777430091010000, "duration": 790500,
         "tags": [{"key": "span.kind", "type": "string", "value": "client"},
                  {"key": "peer.service", "type": "string", "value": "pricing"}],
         "logs": [], "processID": "p1", "warnings": None},
        {"traceID": "4bf92f3577b34da6a3ce929d0e0e4736", "spanID": "e457b5a2e4d86bd1", "flags": 1,
         "operationName": "GET /v1/prices",
         "references": [{"refType": "CHILD_OF", "traceID": "4bf92f3577b34da6a3ce929d0e0e4736",
                         "spanID": "b7ad6b7169203331"}],
         "startTime": 1777430091020000, "duration": 780000,
         "tags": [{"key": "span.kind", "type": "string", "value": "server"}],
         "logs": [], "processID": "p2", "warnings": None},
        {"traceID": "4bf92f3577b34da6a3ce929d0e0e4736", "spanID": "c1f2e3d4a5b60718", "flags": 1,
         "operationName": "SELECT prices",
         "references": [{"refType": "CHILD_OF", "traceID": "4bf92f3577b34da6a3ce929d0e0e4736",
                         "spanID": "e457b5a2e4d86bd1"}],
         "startTime": 1777430091030000, "duration": 760000,
         "tags": [{"key": "span.kind", "type": "string", "value": "client"},
                  {"key": "db.type", "type": "string", "value": "sql"},
                  {"key": "db.instance", "type": "string", "value": "pricing-db"}],
         "logs": [], "processID": "p2", "warnings": None},
        {"traceID": "4bf92f3577b34da6a3ce929d0e0e4736", "operationName": "no id", "references": [],
         "processID": "p2"},
    ],
    "processes": {"p1": {"serviceName": "web", "tags": [{"key": "hostname", "type": "string", "value": "web-1"}]},
                  "p2": {"serviceName": "pricing", "tags": []}},
    "warnings": None}], "total": 0, "limit": 0, "offset": 0, "errors": None}, indent=2)


def test_jaeger_spans_give_parents_services_durations_and_errors():
    assert traces.detect(JAEGER) == "jaeger"
    spans, bad = traces.parse_jaeger(JAEGER)
    by = {s.span_id: s for s in spans}
    root, client, server, db = (by[i] for i in ("00f067aa0ba902b7", "b7ad6b7169203331", "e457b5a2e4d86bd1",
                                                "c1f2e3d4a5b60718"))
    assert (root.service, root.kind, root.parent_id, root.error) == ("web", "server", None, True)
    assert root.start_ts == utc(2026, 4, 29, 2, 34, 51) and root.duration_ms == 812.0
    assert (client.service, client.kind, client.parent_id, client.error) == ("web", "client", root.span_id, False)
    assert (server.service, server.parent_id, server.duration_ms) == ("pricing", client.span_id, 780.0)
    assert db.start_ts == utc(2026, 4, 29, 2, 34, 51, 30000) and db.attributes["db.instance"] == "pricing-db"
    for s in spans:
        assert json.loads(JAEGER[s.start:s.end])["spanID"] == s.span_id
    assert len(bad) == 1 and json.loads(JAEGER[bad[0].start:bad[0].end])["operationName"] == "no id"


def test_spans_give_service_to_service_calls_across_parents_peer_service_and_database_attributes(tmp_path):
    otlp = load(tmp_path, "traces/checkout.otlp.jsonl", OTLP_FRONTEND + "\n" + OTLP_CHECKOUT + "\n", "trace",
                environment="prod")
    reg = registry(frontend="service", checkout="service", payments="service", orders="database")
    rels = derive_relations.trace_relations(otlp, reg, P)
    assert {(r.source, r.target) for r in rels} == {("frontend", "checkout"), ("checkout", "orders"),
                                                    ("checkout", "payments")}
    assert all(r.relation == "calls" and r.environment == "prod" for r in rels)
    for r in rels:
        assert r.at.quote == otlp.text[r.at.start:r.at.end] and json.loads(r.at.quote)["spanId"]

    jaeger = load(tmp_path, "traces/cart.json", JAEGER, "trace", environment="prod")
    reg = registry(web="service", pricing="service", pricing_db="database")
    rels = derive_relations.trace_relations(jaeger, reg, P)
    assert {(r.source, r.target) for r in rels} == {("web", "pricing"), ("pricing", "pricing-db")}
    assert {r.via for r in rels} <= {"trace child span", "span attribute peer.service", "span attribute db.instance"}


def test_spans_give_a_services_per_minute_p95_duration_and_error_share(tmp_path):
    spans = [_otlp_span(f"{i:016x}", "", "POST /api/checkout", 2, start, dur, {}, {"code": 2} if err else None)
             for i, (start, dur, err) in enumerate([(0, 100, False), (20_000, 120, False), (40_000, 110, False),
                                                    (60_000, 300, True), (70_000, 280, False)], start=1)]
    doc = load(tmp_path, "traces/checkout.json", _otlp_line("checkout", spans), "trace", environment="prod")
    reg = registry(checkout="service")
    t0 = utc(2026, 4, 29, 2, 34, 51)
    rng = Range(baseline_from=t0 - timedelta(minutes=30), search_from=t0 - timedelta(minutes=10),
                end=t0 + timedelta(minutes=20))
    dense = P.model_copy(update={"anomaly": P.anomaly.model_copy(update={"min_bucket_spans": 2})})
    two_minutes = Range(baseline_from=t0, search_from=t0, end=t0 + timedelta(minutes=2))
    facts = derive_signals.trace_facts(doc, "checkout", reg, dense, two_minutes)
    sig = {f.name: f for f in facts if isinstance(f, SignalFact)}
    assert sig["span p95 duration"].points == ((t0, 120.0), (t0 + timedelta(minutes=1), 300.0))
    assert sig["span p95 duration"].unit == "ms" and sig["span p95 duration"].role == "latency"
    assert sig["span error share"].points == ((t0, 0.0), (t0 + timedelta(minutes=1), 0.5))

    # five spans in fifty minutes are too few for per-minute buckets: the buckets widen, so no
    # onset is dated more precisely than the sampling allows
    facts = derive_signals.trace_facts(doc, "checkout", reg, P, rng)
    sig = {f.name: f for f in facts if isinstance(f, SignalFact)}
    assert len(sig["span p95 duration"].points) == 1


# =============================================================================================
# 4.4 Kubernetes
# =============================================================================================

EVENTS = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
    {"apiVersion": "v1", "kind": "Event", "count": 5, "eventTime": None,
     "firstTimestamp": "2026-04-29T02:36:10Z", "lastTimestamp": "2026-04-29T02:41:02Z",
     "involvedObject": {"apiVersion": "v1", "fieldPath": "spec.containers{web}", "kind": "Pod",
                        "name": "web-7f6d4c8b95-h8zkt", "namespace": "prod", "uid": "5b1c"},
     "message": "Back-off restarting failed container web in pod web-7f6d4c8b95-h8zkt_prod(5b1c)",
     "metadata": {"creationTimestamp": "2026-04-29T02:36:10Z", "name": "web-7f6d4c8b95-h8zkt.18a9",
                  "namespace": "prod"},
     "reason": "BackOff", "reportingComponent": "kubelet", "reportingInstance": "node-7",
     "source": {"component": "kubelet", "host": "node-7"}, "type": "Warning"},
    {"apiVersion": "v1", "kind": "Event", "count": 1, "eventTime": None,
     "firstTimestamp": "2026-04-29T02:31:00Z", "lastTimestamp": "2026-04-29T02:31:00Z",
     "involvedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "prod"},
     "message": "Scaled up replica set web-7f6d4c8b95 from 1 to 3",
     "metadata": {"name": "web.18a8", "namespace": "prod"},
     "reason": "ScalingReplicaSet", "source": {"component": "deployment-controller"}, "type": "Normal"},
    {"apiVersion": "v1", "kind": "Event", "count": 1, "eventTime": None,
     "firstTimestamp": "2026-04-29T02:32:30Z", "lastTimestamp": "2026-04-29T02:32:30Z",
     "involvedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "prod"},
     "message": "Scaled down replica set web-5d8c6b9f7 from 3 to 0",
     "metadata": {"name": "web.18a7", "namespace": "prod"},
     "reason": "ScalingReplicaSet", "source": {"component": "deployment-controller"}, "type": "Normal"},
    {"action": "Scheduling", "apiVersion": "v1", "kind": "Event", "eventTime": "2026-04-29T02:38:44.120391Z",
     "firstTimestamp": None, "lastTimestamp": None,
     "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "web-7f6d4c8b95-q9rtm", "namespace": "prod"},
     "message": "0/6 nodes are available: 6 Insufficient memory.",
     "metadata": {"name": "web-7f6d4c8b95-q9rtm.18aa", "namespace": "prod"},
     "reason": "FailedScheduling", "reportingComponent": "default-scheduler", "source": {}, "type": "Warning"},
    {"apiVersion": "v1", "kind": "Event", "involvedObject": {"kind": "Pod", "name": "web-7f6d4c8b95-h8zkt"},
     "metadata": {"name": "broken"}, "type": "Warning"},
]}, indent=4)


def test_kubectl_events_give_time_type_reason_count_and_the_object():
    assert k8s.detect(EVENTS) == "events"
    events, bad = k8s.parse_events(EVENTS)
    backoff, up, down, sched = events
    assert (backoff.ts, backoff.type, backoff.reason, backoff.count) == (utc(2026, 4, 29, 2, 36, 10), "Warning",
                                                                         "BackOff", 5)
    assert (backoff.object_kind, backoff.object_name, backoff.namespace) == ("Pod", "web-7f6d4c8b95-h8zkt", "prod")
    assert sched.ts == utc(2026, 4, 29, 2, 38, 44, 120391) and sched.count == 1, "eventTime when firstTimestamp is null"
    assert k8s.rollout_of(up) == ("web", "7f6d4c8b95")
    assert k8s.rollout_of(down) is None, "scaling the old replica set down dates nothing"
    assert k8s.rollout_of(backoff) is None
    for e in events:
        assert json.loads(EVENTS[e.start:e.end])["reason"] == e.reason
    assert len(bad) == 1 and json.loads(EVENTS[bad[0].start:bad[0].end])["metadata"]["name"] == "broken"


def test_an_event_of_a_pod_belongs_to_the_pods_workload(tmp_path):
    doc = load(tmp_path, "k8s/events.json", EVENTS, "kubernetes", environment="prod")
    reg = registry(web="service")
    assert {s.entity for s in derive.streams(doc, reg, P)} == {"web"}
    (date,) = derive.rollout_dates(doc, reg)
    assert (date.workload, date.template_hash, date.ts) == ("web", "7f6d4c8b95", utc(2026, 4, 29, 2, 31))
    assert json.loads(date.at.quote)["message"].startswith("Scaled up")


def _pod(name: str, node: str, owner: tuple[str, str] | None, labels: dict, status: dict) -> dict:
    meta = {"name": name, "namespace": "prod", "labels": labels, "uid": name[-5:]}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True,
                                    "blockOwnerDeletion": True, "uid": "9f0e"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "app", "image": "registry.example.com/app:1"}], "nodeName": node},
            "status": status}


PODS = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
    _pod("web-7f6d4c8b95-h8zkt", "node-7", ("ReplicaSet", "web-7f6d4c8b95"),
         {"app": "web", "pod-template-hash": "7f6d4c8b95"},
         {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}),
    _pod("orders-db-0", "node-3", ("StatefulSet", "orders-db"), {"app": "orders-db"},
         {"phase": "Running", "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}],
          "containerStatuses": [{"name": "postgres", "restartCount": 7, "ready": False,
                                 "state": {"waiting": {"reason": "CrashLoopBackOff",
                                                       "message": "back-off 5m0s restarting failed container"}}}]}),
    _pod("report-builder-29165730-xk2lp", "node-5", ("Job", "report-builder-29165730"),
         {"job-name": "report-builder-29165730"}, {"phase": "Succeeded"}),
]}, indent=4)


def test_kubectl_get_pods_json_gives_each_pods_workload_and_node():
    assert k8s.detect(PODS) == "pods", "a container's waiting `reason` does not make pods an event list"
    pods, bad = k8s.parse_pods_json(PODS)
    assert bad == []
    assert [(p.pod, p.workload, p.node, p.template_hash) for p in pods] == [
        ("web-7f6d4c8b95-h8zkt", "web", "node-7", "7f6d4c8b95"),
        ("orders-db-0", "orders-db", "node-3", None),
        ("report-builder-29165730-xk2lp", "report-builder", "node-5", None),
    ]
    for p in pods:
        assert json.loads(PODS[p.start:p.end])["metadata"]["name"] == p.pod


PODS_WIDE = """\
NAMESPACE    NAME                   READY   STATUS    RESTARTS     AGE   IP            NODE     NOMINATED NODE   READINESS GATES
prod         web-7f6d4c8b95-h8zkt   1/1     Running   0            2d    10.244.1.23   node-7   <none>           <none>
prod         web-7f6d4c8b95-q9rtm   0/1     Pending   0            3m    <none>        <none>   <none>           <none>
prod         orders-db-0            1/1     Running   2 (5h ago)   9d    10.244.3.9    node-3   <none>           <none>
monitoring   node-exporter-7tq9v    1/1     Running   0            12d   10.0.3.17     node-7   <none>           <none>
"""


def test_kubectl_get_pods_wide_gives_name_and_node_and_keeps_a_pending_pod_unparsed():
    assert k8s.detect(PODS_WIDE) == "pods-wide"
    pods, bad = k8s.parse_pods_wide(PODS_WIDE)
    assert [(p.pod, p.node, p.namespace) for p in pods] == [
        ("web-7f6d4c8b95-h8zkt", "node-7", "prod"), ("orders-db-0", "node-3", "prod"),
        ("node-exporter-7tq9v", "node-7", "monitoring")]
    rows = lines_of(PODS_WIDE)
    assert_slices(PODS_WIDE, pods, [rows[1], rows[3], rows[4]])
    assert [PODS_WIDE[b.start:b.end] for b in bad] == [rows[2]]


@pytest.mark.parametrize("pod, workload", [
    ("web-7f6d4c8b95-h8zkt", "web"),
    ("checkout-service-6d5f7b8c9-4kq2m", "checkout-service"),
    ("report-builder-29165730-xk2lp", "report-builder"),
    ("orders-db-0", None),
    # a DaemonSet pod: `exporter` is a word, not a pod-template hash (hashes have no vowels)
    ("node-exporter-7tq9v", None),
    ("ingress-controller-x2l9p", None),
])
def test_a_pod_name_resolves_to_its_deployments_workload_only_when_it_has_the_hash_shape(pod, workload):
    assert k8s.workload_of_pod(pod) == workload


def test_pod_placements_resolve_pods_to_workloads_that_run_on_nodes(tmp_path):
    doc = load(tmp_path, "k8s/pods-wide.txt", PODS_WIDE, "kubernetes", environment="prod")
    reg = registry(web="service", orders_db="database")
    facts = derive_relations.placement_facts(doc, reg)
    placed = [(f.workload, f.node, f.pod) for f in facts if isinstance(f, PlacementFact)]
    assert placed == [("web", "node-7", "web-7f6d4c8b95-h8zkt")]
    (rel,) = [f for f in facts if isinstance(f, RelationFact)]
    assert (rel.source, rel.target, rel.relation) == ("web", "node-7", "runs_on")
    assert rel.at.quote == lines_of(PODS_WIDE)[1]


CAPTURED = datetime(2026, 4, 29, 10, 55, tzinfo=CST)

DESCRIBE_POD = """\
Name:             web-7f6d4c8b95-h8zkt
Namespace:        prod
Priority:         0
Service Account:  web
Node:             node-7/10.0.3.17
Start Time:       Wed, 29 Apr 2026 10:20:11 +0800
Labels:           app=web
                  pod-template-hash=7f6d4c8b95
Annotations:      <none>
Status:           Running
IP:               10.244.1.23
IPs:
  IP:           10.244.1.23
Controlled By:  ReplicaSet/web-7f6d4c8b95
Containers:
  web:
    Container ID:   containerd://4f1c0e7d
    Image:          registry.example.com/web:4.19.0
    Port:           8080/TCP
    State:          Running
      Started:      Wed, 29 Apr 2026 10:38:02 +0800
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Ready:          True
    Restart Count:  5
Conditions:
  Type                        Status
  PodReadyToStartContainers   True
  Initialized                 True
  Ready                       True
  ContainersReady             True
  PodScheduled                True
QoS Class:                   Burstable
Node-Selectors:              <none>
Events:
  Type     Reason     Age                  From               Message
  ----     ------     ----                 ----               -------
  Normal   Scheduled  35m                  default-scheduler  Successfully assigned prod/web-7f6d4c8b95-h8zkt to node-7
  Warning  BackOff    3m (x5 over 8m)      kubelet            Back-off restarting failed container web in pod web-7f6d4c8b95-h8zkt
  Warning  Unhealthy  2m10s (x12 over 9m)  kubelet            Readiness probe failed: HTTP probe failed with statuscode: 503
"""


def test_kubectl_describe_pod_gives_its_node_its_controller_and_events_dated_from_captured_at():
    assert k8s.detect(DESCRIBE_POD) == "describe"
    placements, events, bad, problem = k8s.parse_describe(DESCRIBE_POD, CAPTURED)
    assert problem is None and bad == []
    (p,) = placements
    assert (p.pod, p.node, p.workload) == ("web-7f6d4c8b95-h8zkt", "node-7", "web")
    assert DESCRIBE_POD[p.start:p.end] == "Node:             node-7/10.0.3.17"
    assert [(e.type, e.reason, e.ts, e.count) for e in events] == [
        ("Normal", "Scheduled", CAPTURED - timedelta(minutes=35), 1),
        ("Warning", "BackOff", CAPTURED - timedelta(minutes=8), 5),
        ("Warning", "Unhealthy", CAPTURED - timedelta(minutes=9), 12),
    ]
    assert events[2].message == "Readiness probe failed: HTTP probe failed with statuscode: 503"
    assert all((e.object_kind, e.object_name) == ("Pod", "web-7f6d4c8b95-h8zkt") for e in events)
    assert_slices(DESCRIBE_POD, events, lines_of(DESCRIBE_POD)[-3:])


def test_kubectl_describe_without_captured_at_cannot_date_its_events_and_says_so():
    _placements, events, bad, problem = k8s.parse_describe(DESCRIBE_POD, None)
    assert events == [] and problem and "captured_at" in problem
    assert [DESCRIBE_POD[b.start:b.end] for b in bad] == lines_of(DESCRIBE_POD)[-3:]


def test_kubectl_describe_of_several_pods_gives_each_its_node_and_events():
    other = DESCRIBE_POD.replace("web-7f6d4c8b95-h8zkt", "web-7f6d4c8b95-b7lmc").replace("node-7/10.0.3.17",
                                                                                         "node-2/10.0.3.12")
    text = DESCRIBE_POD + "\n\n" + other
    placements, events, bad, _ = k8s.parse_describe(text, CAPTURED)
    assert bad == [] and [(p.pod, p.node, p.workload) for p in placements] == [
        ("web-7f6d4c8b95-h8zkt", "node-7", "web"), ("web-7f6d4c8b95-b7lmc", "node-2", "web")]
    assert [e.object_name for e in events] == ["web-7f6d4c8b95-h8zkt"] * 3 + ["web-7f6d4c8b95-b7lmc"] * 3
    assert_slices(text, events[3:], lines_of(other)[-3:])


def test_a_loaded_describe_without_captured_at_names_the_manifest_field_it_needs(tmp_path):
    with pytest.raises(CaseError) as err:
        load(tmp_path, "k8s/describe-web.txt", DESCRIBE_POD, "kubernetes", environment="prod")
    assert err.value.field.endswith("captured_at") and "web-7f6d4c8b95" not in str(err.value)
    doc = load(tmp_path, "k8s/describe-web.txt", DESCRIBE_POD, "kubernetes", environment="prod",
               captured_at=CAPTURED)
    assert doc.format == "describe" and len(doc.k8s_events) == 3


DESCRIBE_NODE = """\
Name:               node-7
Roles:              <none>
Labels:             kubernetes.io/hostname=node-7
                    node.kubernetes.io/instance-type=n2-standard-8
CreationTimestamp:  Mon, 02 Mar 2026 08:00:00 +0800
Taints:             <none>
Unschedulable:      false
Conditions:
  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                         Message
  ----             ------  -----------------                 ------------------                ------                         -------
  MemoryPressure   True    Wed, 29 Apr 2026 10:41:12 +0800   Wed, 29 Apr 2026 10:36:02 +0800   KubeletHasInsufficientMemory   kubelet has insufficient memory available
  DiskPressure     False   Wed, 29 Apr 2026 10:41:12 +0800   Mon, 02 Mar 2026 08:00:40 +0800   KubeletHasNoDiskPressure       kubelet has no disk pressure
  Ready            True    Wed, 29 Apr 2026 10:41:12 +0800   Mon, 02 Mar 2026 08:01:10 +0800   KubeletReady                   kubelet is posting ready status
Addresses:
  InternalIP:  10.0.3.17
  Hostname:    node-7
Non-terminated Pods:          (3 in total)
  Namespace                   Name                            CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age
  ---------                   ----                            ------------  ----------  ---------------  -------------  ---
  prod                        web-7f6d4c8b95-h8zkt            250m (3%)     1 (12%)     512Mi (1%)       1Gi (3%)       35m
  prod                        batch-worker-6c8d9f7b5-m2x8n    2 (25%)       4 (50%)     24Gi (80%)       28Gi (93%)     2d
  monitoring                  node-exporter-7tq9v             50m (0%)      250m (3%)   64Mi (0%)        128Mi (0%)     12d
Allocated resources:
  (Total limits may be over 100 percent, i.e., overcommitted.)
  Resource           Requests      Limits
  --------           --------      ------
  cpu                2300m (28%)   5250m (65%)
Events:
  Type     Reason                     Age   From     Message
  ----     ------                     ----  ----     -------
  Warning  SystemOOM                  5m    kubelet  System OOM encountered, victim process: java, pid: 4242
  Normal   NodeHasInsufficientMemory  5m    kubelet  Node node-7 status is now: NodeHasInsufficientMemory
"""


def test_kubectl_describe_node_gives_condition_transitions_its_pods_and_its_events():
    placements, events, bad, problem = k8s.parse_describe(DESCRIBE_NODE, CAPTURED)
    assert problem is None and bad == []
    assert [(p.pod, p.node, p.namespace, p.workload) for p in placements] == [
        ("web-7f6d4c8b95-h8zkt", "node-7", "prod", "web"),
        ("batch-worker-6c8d9f7b5-m2x8n", "node-7", "prod", "batch-worker"),
        ("node-exporter-7tq9v", "node-7", "monitoring", None),
    ]
    cond = [e for e in events if e.type == "Condition"]
    assert [(e.reason, e.ts) for e in cond] == [("MemoryPressure", datetime(2026, 4, 29, 10, 36, 2, tzinfo=CST)),
                                                ("Ready", datetime(2026, 3, 2, 8, 1, 10, tzinfo=CST))]
    oom = next(e for e in events if e.reason == "SystemOOM")
    assert (oom.type, oom.ts, oom.object_kind, oom.object_name) == ("Warning", CAPTURED - timedelta(minutes=5),
                                                                    "Node", "node-7")
    rows = lines_of(DESCRIBE_NODE)
    assert_slices(DESCRIBE_NODE, placements, [r for r in rows if r.startswith(("  prod   ", "  monitoring   "))])
    assert_slices(DESCRIBE_NODE, events, [rows[10], rows[12], rows[-2], rows[-1]])


@pytest.mark.parametrize("text, fmt", [(EVENTS, "events"), (PODS, "pods"), (PODS_WIDE, "pods-wide"),
                                       (DESCRIBE_POD, "describe"), (DESCRIBE_NODE, "describe")])
def test_the_kubernetes_format_is_detected_from_the_content(text, fmt):
    assert k8s.detect(text) == fmt


def test_a_loaded_kubernetes_pods_list_with_a_crashing_pod_is_read_as_pods(tmp_path):
    doc = load(tmp_path, "k8s/pods.json", PODS, "kubernetes", environment="prod")
    assert doc.format == "pods" and doc.unparsed == ()
    assert [p.workload for p in doc.placements] == ["web", "orders-db", "report-builder"]


# =============================================================================================
# 4.3 Metrics
# =============================================================================================

CSV = """\
ts,value
2026-04-29T10:38:00+08:00,212
2026-04-29T10:39:00+08:00,218.5
1777430400,NaN
2026-04-29T10:41:00+08:00,2140
2026-04-29T10:42:00+08:00,n/a
2026-04-29T10:43:00+08:00,+Inf
"""
SIDECAR = """\
metric: p95_latency_ms
service: checkout
environment: prod
unit: ms
role: latency
resolution: 60s
"""


def test_a_csv_series_with_its_sidecar_gives_typed_points_with_the_offsets_of_their_lines(tmp_path):
    (tmp_path / "sources" / "metrics").mkdir(parents=True)
    (tmp_path / "sources" / "metrics" / "p95.csv.meta.yaml").write_text(SIDECAR)
    doc = load(tmp_path, "metrics/p95.csv", CSV, "metric", environment="prod")
    assert doc.format == "csv"
    (s,) = doc.series
    assert (s.metric, s.entity, s.environment, s.unit, s.role) == ("p95_latency_ms", "checkout", "prod", "ms",
                                                                  "latency")
    assert s.key == "p95_latency_ms{}"
    ts = [p.ts for p in s.points]
    assert ts == [utc(2026, 4, 29, 2, 38), utc(2026, 4, 29, 2, 39), utc(2026, 4, 29, 2, 40), utc(2026, 4, 29, 2, 41),
                  utc(2026, 4, 29, 2, 43)]
    values = [p.value for p in s.points]
    assert values[:2] == [212.0, 218.5] and math.isnan(values[2]) and values[3] == 2140.0 and values[4] == math.inf
    rows = lines_of(CSV)
    assert_slices(CSV, s.points, [rows[1], rows[2], rows[3], rows[4], rows[6]])
    assert [CSV[b.start:b.end] for b in doc.unparsed] == ["2026-04-29T10:42:00+08:00,n/a"]


def test_a_csv_stamp_without_a_zone_needs_the_sources_timezone():
    text = "ts,value\r\n2026-04-29 10:38:00,212\r\n2026-04-29 10:39:00,219\r\n"
    series, bad, problem = metrics.parse_csv(text, MetricMeta(metric="m"), "m", None)
    assert problem is None and series[0].points == () and len(bad) == 2
    assert text[bad[0].start:bad[0].end] == "2026-04-29 10:38:00,212"
    (s,), bad, _ = metrics.parse_csv(text, MetricMeta(metric="m"), "m", None, "+08:00")
    assert bad == [] and [p.ts for p in s.points] == [utc(2026, 4, 29, 2, 38), utc(2026, 4, 29, 2, 39)]
    assert_slices(text, s.points, ["2026-04-29 10:38:00,212", "2026-04-29 10:39:00,219"])


def test_a_csv_without_the_ts_value_or_grafana_header_is_a_problem_not_a_series():
    series, _bad, problem = metrics.parse_csv("at;p95\n2026-04-29T10:38:00Z;212\n", MetricMeta(), "m", None)
    assert series == [] and "ts,value" in problem and "Grafana" in problem
    (series,), _bad, problem = metrics.parse_csv("time,p95\n2026-04-29T10:38:00Z,212\n", MetricMeta(), "m", None)
    assert problem is None and series.metric == "p95"  # a `time,<series>` header is Grafana's


PROMETHEUS = (
    '{"status":"success","data":{"resultType":"matrix","result":['
    '{"metric":{"__name__":"http_server_requests_seconds_p95","namespace":"prod","service":"checkout"},'
    '"values":[[1777430100,"0.21"],[1777430160,"0.23"],[1777430220,"2.1"]]},'
    '{"metric":{"__name__":"http_server_requests_seconds_p95","namespace":"prod","service":"payments"},'
    '"values":[[1777430100,"NaN"],[1777430160,"+Inf"],[1777430220,"-Inf"],[1777430280,"0.05"]]},'
    '{"metric":{"__name__":"container_memory_working_set_bytes","container":"server","namespace":"prod",'
    '"pod":"web-7f6d4c8b95-h8zkt"},"values":[[1777430100.5,"7.5e+08"],[1777430160]]},'
    '{"metric":{"__name__":"pg_stat_activity_count","datname":"orders","instance":"orders-db:9187",'
    '"job":"postgres-exporter"},"values":[[1777430100,"48"]]},'
    '{"metric":{"__name__":"probe_success","job":"blackbox"},"values":[[1777430100,"1"]]}'
    ']}}'
)


def test_a_prometheus_range_query_gives_several_labelled_series_with_nan_and_inf_values():
    series, bad, problem = metrics.parse_prometheus(PROMETHEUS, None, "fallback", None)
    assert problem is None
    checkout, payments, memory, pg, probe = series
    assert checkout.metric == "http_server_requests_seconds_p95"
    assert checkout.labels == {"namespace": "prod", "service": "checkout"}
    assert checkout.key == 'http_server_requests_seconds_p95{namespace="prod",service="checkout"}'
    assert checkout.key != payments.key
    assert [(p.ts, p.value) for p in checkout.points] == [
        (utc(2026, 4, 29, 2, 35), 0.21), (utc(2026, 4, 29, 2, 36), 0.23), (utc(2026, 4, 29, 2, 37), 2.1)]
    vals = [p.value for p in payments.points]
    assert math.isnan(vals[0]) and vals[1:] == [math.inf, -math.inf, 0.05]
    assert [(p.ts, p.value) for p in memory.points] == [(utc(2026, 4, 29, 2, 35, 0, 500000), 7.5e8)]
    assert_slices(PROMETHEUS, checkout.points, ['[1777430100,"0.21"]', '[1777430160,"0.23"]', '[1777430220,"2.1"]'])
    assert_slices(PROMETHEUS, payments.points[:2], ['[1777430100,"NaN"]', '[1777430160,"+Inf"]'])
    for s in series:
        assert json.loads(PROMETHEUS[s.start:s.end])["metric"].get("__name__") == s.metric
    assert [PROMETHEUS[b.start:b.end] for b in bad] == ["[1777430160]"]


def test_a_prometheus_series_is_about_the_first_label_naming_a_known_entity_else_the_manifests_service(tmp_path):
    doc = load(tmp_path, "metrics/query.json", PROMETHEUS, "metric", service="edge", environment="prod")
    assert doc.format == "prometheus"
    reg = registry(checkout="service", payments="service", web="service", orders_db="database", edge="service")
    assert [derive.series_entity(doc, s, reg, P) for s in doc.series] == [
        "checkout", "payments",
        "web",        # a pod resolves to its workload
        "orders-db",  # host:port resolves to its host
        "edge"]       # no label names a known entity
    streams = derive.streams(doc, reg, P)
    assert {(s.entity, s.metric) for s in streams} >= {("checkout", "http_server_requests_seconds_p95"),
                                                       ("orders-db", "pg_stat_activity_count")}


def test_a_prometheus_series_without_a_name_takes_the_sidecars_metric():
    text = '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"service":"checkout"},' \
           '"values":[[1777430100,"0.5"]]}]}}'
    (s,), _, _ = metrics.parse_prometheus(text, MetricMeta(metric="error_ratio", unit="%"), "src-id", None)
    assert (s.metric, s.unit, s.labels) == ("error_ratio", "%", {"service": "checkout"})
    (s,), _, _ = metrics.parse_prometheus(text, None, "src-id", None)
    assert s.metric == "src-id"


def test_a_prometheus_instant_query_gives_one_point_per_series():
    text = ('{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"web"},'
            '"value":[1777430100.781,"1"]}]}}')
    (s,), bad, _ = metrics.parse_prometheus(text, None, "x", None)
    assert bad == [] and [(p.ts, p.value) for p in s.points] == [(utc(2026, 4, 29, 2, 35, 0, 781000), 1.0)]
    assert text[s.points[0].start:s.points[0].end] == '[1777430100.781,"1"]'


def test_a_prometheus_error_response_is_a_problem_not_a_series():
    series, _, problem = metrics.parse_prometheus('{"status":"error","errorType":"bad_data","error":"parse error"}',
                                                  None, "x", None)
    assert series == [] and "data.result" in problem


# =============================================================================================
# 5. Changes
# =============================================================================================

RECORD = """\
---
id: DEP-20260429-0412
type: release
service: order-service
environment: prod
started_at: 2026-04-29T10:22:00+08:00
completed_at: 2026-04-29T10:31:00+08:00
version_from: 4.18.2
version_to: 4.19.0
summary: >
  Release 4.19.0: larger checkout batches, dependency-client 2.4.0.
config_changes:
  - key: checkout_batch_size
    from: "50"
    to: "64"
dependency_changes:
  - name: dependency-client
    from: 2.3.1
    to: 2.4.0
"""


def test_a_change_record_with_a_diff_gives_its_typed_change(tmp_path):
    assert changes.detect(RECORD) == "record"
    doc = load(tmp_path, "changes/DEP-20260429-0412.yaml", RECORD, "change", environment="prod")
    (c,) = doc.changes
    assert (c.id, c.type, c.service, c.environment) == ("DEP-20260429-0412", "release", "order-service", "prod")
    assert c.started_at == utc(2026, 4, 29, 2, 22) and c.at == c.completed_at == utc(2026, 4, 29, 2, 31)
    assert (c.version_from, c.version_to) == ("4.18.2", "4.19.0")
    assert [(x.key, x.from_, x.to) for x in c.config_changes] == [("checkout_batch_size", "50", "64")]
    assert [(d.name, d.from_, d.to) for d in c.dependency_changes] == [("dependency-client", "2.3.1", "2.4.0")]
    assert doc.text[c.start:c.end] == RECORD.strip()
    (fact,) = derive.change_facts(doc, registry(order_service="service"), P)
    assert fact.type == "deployment", "`release` normalises through the profile"


def test_a_deployment_record_without_a_diff_is_a_change_all_the_same(tmp_path):
    text = ("id: DEP-20260429-0399\ntype: deployment\nservice: payments\nenvironment: prod\n"
            "started_at: 2026-04-29T01:58:00Z\nversion_to: '5.2.0'\n")
    assert changes.detect(text) == "record"
    doc = load(tmp_path, "changes/dep.yaml", text, "change", environment="prod")
    (c,) = doc.changes
    assert c.config_changes == () and c.dependency_changes == () and c.completed_at is None
    assert c.at == utc(2026, 4, 29, 1, 58), "the start counts when there is no completion"


HELM = ('[{"revision":2,"updated":"2026-04-20T09:12:44.123456789+08:00","status":"superseded","chart":"web-4.18.2",'
        '"app_version":"4.18.2","description":"Upgrade complete"},'
        '{"revision":3,"updated":"2026-04-29T10:31:02.485703123+08:00","status":"superseded","chart":"web-4.19.0",'
        '"app_version":"4.19.0","description":"Upgrade complete"},'
        '{"revision":4,"updated":"2026-04-29T10:52:40.0219+08:00","status":"deployed","chart":"web-4.18.2",'
        '"app_version":"4.18.2","description":"Rollback to 2"},'
        '{"revision":5,"status":"pending-upgrade","chart":"web-4.19.1","app_version":"4.19.1"}]\n')


def test_a_helm_history_gives_a_deployment_per_revision_with_the_previous_app_version():
    assert changes.detect(HELM) == "helm"
    got, bad = changes.parse_helm(HELM, "web", "prod")
    assert [(c.id, c.type, c.version_from, c.version_to, c.revision) for c in got] == [
        ("web@helm-rev2", "deployment", None, "4.18.2", "2"),
        ("web@helm-rev3", "deployment", "4.18.2", "4.19.0", "3"),
        ("web@helm-rev4", "rollback", "4.19.0", "4.18.2", "4"),
    ]
    assert got[2].rollback_of == "web@helm-rev3", "a rollback undoes the revision that was deployed before it"
    assert got[1].at == utc(2026, 4, 29, 2, 31, 2, 485703), "Go's nanosecond stamps keep their microseconds"
    assert all(c.service == "web" and c.environment == "prod" for c in got)
    for c in got:
        assert json.loads(HELM[c.start:c.end])["revision"] == int(c.revision)
    assert len(bad) == 1 and json.loads(HELM[bad[0].start:bad[0].end])["revision"] == 5


def _argo_resources(n: int) -> list[dict]:
    return [{"group": "apps", "kind": "Deployment", "name": f"web-part-{i}", "namespace": "prod", "status": "Synced",
             "version": "v1", "health": {"status": "Healthy"}} for i in range(n)]


def _argo_app(resources: int) -> str:
    return json.dumps({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "web", "namespace": "argocd"},
        "spec": {"destination": {"namespace": "prod", "server": "https://kubernetes.default.svc"},
                 "project": "default",
                 "source": {"path": "apps/web", "repoURL": "https://git.example.com/platform/deploy.git",
                            "targetRevision": "main"}},
        "status": {
            "resources": _argo_resources(resources),
            "sync": {"revision": "9f1c2e4b7a0d", "status": "Synced"},
            "health": {"status": "Healthy"},
            "history": [
                {"deployStartedAt": "2026-04-28T06:00:01Z", "deployedAt": "2026-04-28T06:00:40Z", "id": 6,
                 "revision": "4b0d1e9c2f3a",
                 "source": {"path": "apps/web", "repoURL": "https://git.example.com/platform/deploy.git",
                            "targetRevision": "main"}},
                {"deployStartedAt": "2026-04-29T02:30:40Z", "deployedAt": "2026-04-29T02:31:02Z", "id": 7,
                 "revision": "9f1c2e4b7a0d",
                 "source": {"path": "apps/web", "repoURL": "https://git.example.com/platform/deploy.git",
                            "targetRevision": "main"}},
            ],
            "reconciledAt": "2026-04-29T02:50:00Z"}}, indent=4)


def test_an_argocd_application_history_gives_deployments_between_git_revisions():
    text = _argo_app(resources=3)
    assert changes.detect(text) == "argocd"
    got, bad = changes.parse_argocd(text, "web", "prod")
    assert bad == []
    assert [(c.id, c.version_from, c.version_to, c.started_at, c.completed_at) for c in got] == [
        ("web@argocd-6", None, "4b0d1e9c2f3a", utc(2026, 4, 28, 6, 0, 1), utc(2026, 4, 28, 6, 0, 40)),
        ("web@argocd-7", "4b0d1e9c2f3a", "9f1c2e4b7a0d", utc(2026, 4, 29, 2, 30, 40), utc(2026, 4, 29, 2, 31, 2)),
    ]
    for c in got:
        assert json.loads(text[c.start:c.end])["id"] == int(c.revision)


def test_an_argocd_application_with_many_resources_before_its_history_is_still_argocd():
    text = _argo_app(resources=40)
    assert text.index('"deployedAt"') > 4000
    assert changes.detect(text) == "argocd"


def test_an_argocd_history_list_on_its_own_is_read_as_well():
    text = json.dumps(json.loads(_argo_app(0))["status"]["history"])
    got, _ = changes.parse_argocd(text, "web", "prod")
    assert [c.id for c in got] == ["web@argocd-6", "web@argocd-7"]


ROLLOUT = """\
deployment.apps/web 
REVISION  CHANGE-CAUSE
1         <none>
2         kubectl set image deployment/web web=registry.example.com/web:4.18.2 --record=true
3         deploy 4.19.0 (PR #1187)

deployment.apps/web with revision #2
Pod Template:
  Labels:\tapp=web
\tpod-template-hash=5d8c6b9f7
  Annotations:\tkubernetes.io/change-cause: kubectl set image deployment/web web=registry.example.com/web:4.18.2
  Containers:
   web:
    Image:\tregistry.example.com:5000/team/web:4.18.2
    Port:\t8080/TCP
    Host Port:\t0/TCP
    Environment:
      DB_POOL_SIZE:\t20
      RETRY_TIMEOUT_MS:\t200
    Mounts:\t<none>
  Volumes:\t<none>

deployment.apps/web with revision #3
Pod Template:
  Labels:\tapp=web
\tpod-template-hash=7f6d4c8b95
  Annotations:\tkubernetes.io/change-cause: deploy 4.19.0 (PR #1187)
  Containers:
   web:
    Image:\tregistry.example.com:5000/team/web:4.19.0
    Port:\t8080/TCP
    Host Port:\t0/TCP
    Environment:
      DB_POOL_SIZE:\t20
      RETRY_TIMEOUT_MS:\t2000
      FEATURE_BATCHING:\ttrue
    Mounts:\t<none>
  Volumes:\t<none>
"""


def test_a_rollout_history_gives_a_deployment_per_revision_with_its_hash_image_and_environment_diff():
    assert changes.detect(ROLLOUT) == "rollout"
    got, bad = changes.parse_rollout(ROLLOUT, "web", "prod")
    assert bad == []
    assert [(c.id, c.summary, c.template_hash, c.version_from, c.version_to) for c in got] == [
        ("web@rev1", "", None, None, None),
        ("web@rev2", "kubectl set image deployment/web web=registry.example.com/web:4.18.2 --record=true",
         "5d8c6b9f7", None, "4.18.2"),
        ("web@rev3", "deploy 4.19.0 (PR #1187)", "7f6d4c8b95", "4.18.2", "4.19.0"),
    ]
    assert [(x.key, x.from_, x.to) for x in got[2].config_changes] == [("FEATURE_BATCHING", None, "true"),
                                                                      ("RETRY_TIMEOUT_MS", "200", "2000")]
    assert all(c.at is None for c in got), "a revision is dated only by its ScalingReplicaSet event"
    assert_slices(ROLLOUT, got, lines_of(ROLLOUT)[2:5])


def _scaled(ts: str, message: str) -> dict:
    return {"apiVersion": "v1", "kind": "Event", "count": 1, "firstTimestamp": ts, "lastTimestamp": ts,
            "involvedObject": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "namespace": "prod"},
            "message": message, "metadata": {"name": "web.18", "namespace": "prod"}, "reason": "ScalingReplicaSet",
            "source": {"component": "deployment-controller"}, "type": "Normal"}


def test_a_rollout_revision_is_dated_by_the_scale_ups_of_its_pod_template_hash(tmp_path):
    events = json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        _scaled("2026-07-01T08:51:00Z", "Scaled up replica set web-7f6d4c8b95 from 0 to 1"),
        _scaled("2026-07-01T08:52:30Z", "Scaled down replica set web-5d8c6b9f7 from 3 to 2"),
        _scaled("2026-07-01T08:54:00Z", "Scaled up replica set web-7f6d4c8b95 from 1 to 3"),
    ]}, indent=4)
    ev_doc = load(tmp_path, "k8s/events.json", events, "kubernetes", environment="prod")
    ro_doc = load(tmp_path, "changes/rollout.txt", ROLLOUT, "change", service="web", environment="prod")
    reg = registry(web="service")
    world = World(rules_case("web"))
    for fact in derive.change_facts(ro_doc, reg, P):
        world.read(fact, source_kind="change")
    for fact in derive.rollout_dates(ev_doc, reg):
        world.read(fact, source_kind="kubernetes")
    k = world.knowledge()
    (rev3, _eid), = k.changes
    assert (rev3.id, rev3.started_at, rev3.completed_at) == ("web@rev3", utc(2026, 7, 1, 8, 51), utc(2026, 7, 1, 8, 54))
    assert sorted(c.id for c, _e in k.undated) == ["web@rev1", "web@rev2"], "no event dates them: never a cause"


def test_a_rollout_history_row_that_is_not_a_revision_is_kept_unparsed():
    text = "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\nerror: no rollout history found\n"
    got, bad = changes.parse_rollout(text, "web", "prod")
    assert [c.id for c in got] == ["web@rev1"]
    assert [text[b.start:b.end] for b in bad] == ["error: no rollout history found"]


FLAGS_JSONL = """\
{"at":"2026-04-29T10:30:00+08:00","flag":"new-pricing","service":"pricing","environment":"prod","from":false,"to":true,"actor":"li.na","comment":"ramp to 100%"}
{"at":"2026-04-29T10:47:12+08:00","flag":"new-pricing","service":"pricing","environment":"prod","from":true,"to":false,"actor":"oncall"
{"id":"FF-2291","at":"2026-04-29T02:49:00Z","flag":"batch-writes","from":"off","to":"on"}
{"flag":"no-time","from":false,"to":true}
"""


def test_a_flag_audit_gives_a_feature_flag_change_per_toggle_and_keeps_broken_lines():
    assert changes.detect(FLAGS_JSONL) == "flags"
    got, bad = changes.parse_flags(FLAGS_JSONL, "checkout", "prod")
    first, second = got
    assert (first.id, first.type, first.service, first.environment) == (
        "new-pricing@2026-04-29T10:30:00+08:00", "feature_flag", "pricing", "prod")
    assert first.at == utc(2026, 4, 29, 2, 30) and first.summary == "ramp to 100%"
    assert (first.flag.name, first.flag.from_, first.flag.to) == ("new-pricing", "false", "true")
    assert (second.id, second.service, second.flag.from_, second.flag.to) == ("FF-2291", "checkout", "off", "on")
    rows = lines_of(FLAGS_JSONL)
    assert_slices(FLAGS_JSONL, got, [rows[0], rows[2]])
    assert [FLAGS_JSONL[b.start:b.end] for b in bad] == [rows[1], rows[3]]


FLAGS_YAML = """\
# exported from the flag service audit log
- at: 2026-04-29T10:30:00+08:00
  flag: new-pricing
  from: false
  to: true
  actor: li.na
- id: FF-2292
  at: 2026-04-29T10:47:12+08:00
  flag: new-pricing
  from: true
  to: false
"""


def test_a_yaml_list_of_flag_toggles_is_a_flag_audit():
    assert changes.detect(FLAGS_YAML) == "flags"
    got, bad = changes.parse_flags(FLAGS_YAML, "pricing", "prod")
    assert bad == []
    assert [(c.id, c.at, c.flag.from_, c.flag.to) for c in got] == [
        ("new-pricing@2026-04-29T10:30:00+08:00", utc(2026, 4, 29, 2, 30), "false", "true"),
        ("FF-2292", utc(2026, 4, 29, 2, 47, 12), "true", "false")]
    assert FLAGS_YAML[got[0].start:got[0].end].startswith("at: 2026-04-29T10:30:00+08:00")
    assert FLAGS_YAML[got[1].start:got[1].end].endswith("to: false")


@pytest.mark.parametrize("text, fmt", [
    (RECORD, "record"),
    (RECORD.removeprefix("---\n"), "record"),
    (HELM, "helm"),
    (_argo_app(2), "argocd"),
    (ROLLOUT, "rollout"),
    ("REVISION  CHANGE-CAUSE\n1         <none>\n", "rollout"),
    (FLAGS_JSONL, "flags"),
    (FLAGS_YAML, "flags"),
])
def test_the_change_format_is_detected_from_the_content(text, fmt):
    assert changes.detect(text) == fmt


def test_a_loaded_change_record_with_a_document_marker_and_block_lists_is_a_record(tmp_path):
    doc = load(tmp_path, "changes/dep.yaml", RECORD, "change", environment="prod")
    assert doc.format == "record" and isinstance(doc.changes[0].started_at, datetime)
    assert doc.unparsed == ()


SNAP_BEFORE = """\
db:
  pool:
    max_size: 20
retry_timeout_ms: 200
payments:
  url: http://payments.prod.svc.cluster.local:8080
"""
SNAP_AFTER = """\
db:
  pool:
    max_size: 64
retry_timeout_ms: 200
payments:
  url: http://payments.prod.svc.cluster.local:8080
feature_batching: true
"""


def _snapshots(tmp_path: Path, with_versions: bool, captured: bool = True) -> tuple[SourceDoc, SourceDoc]:
    extra = [{"version": "4.18.2"}, {"version": "4.19.0"}] if with_versions else [{}, {}]
    if captured:
        extra[0]["captured_at"] = datetime(2026, 4, 29, 4, 0, tzinfo=CST)
        extra[1]["captured_at"] = datetime(2026, 4, 29, 10, 40, tzinfo=CST)
    # the later snapshot is listed first: order comes from the snapshots, not the manifest
    b = load(tmp_path, "config/web-1040.yaml", SNAP_AFTER, "config", id="web-config-1040", service="web",
             environment="prod", **extra[1])
    a = load(tmp_path, "config/web-0400.yaml", SNAP_BEFORE, "config", id="web-config-0400", service="web",
             environment="prod", **extra[0])
    return a, b


def test_two_config_snapshots_of_a_service_are_diffed_into_a_config_push(tmp_path):
    a, b = _snapshots(tmp_path, with_versions=False)
    reg = registry(web="service", payments="service")
    sa, sb = derive.snapshot_fact(a, reg), derive.snapshot_fact(b, reg)
    assert sb.settings["db.pool.max_size"] == "64" and sb.captured_at == utc(2026, 4, 29, 2, 40)
    s, e = sb.lines["db.pool.max_size"]
    assert b.text[s:e] == "max_size: 64"
    world = World(rules_case("web"))
    world.read(sb, source_kind="config")
    world.read(sa, source_kind="config")
    (ch, _eid), = world.knowledge().changes
    assert (ch.id, ch.type, ch.entity) == ("web@config:web-config-0400..web-config-1040", "config_push", "web")
    assert ch.effective == utc(2026, 4, 29, 2, 40), "dated by the later snapshot's captured_at"
    assert [(c.key, c.from_, c.to) for c in ch.config_changes] == [("db.pool.max_size", "20", "64"),
                                                                   ("feature_batching", None, "true")]


@pytest.mark.parametrize("captured", [True, False], ids=["ordered-by-captured_at", "ordered-by-deployments"])
def test_a_snapshot_diff_joins_the_deployment_that_installed_the_later_version(tmp_path, captured):
    a, b = _snapshots(tmp_path, with_versions=True, captured=captured)
    reg = registry(web="service")
    upgrades = json.dumps(json.loads(HELM)[:2])  # 4.18.2 then 4.19.0 (no rollback to muddle the order)
    helm = load(tmp_path, "changes/web-helm.json", upgrades, "change", service="web", environment="prod")
    world = World(rules_case("web"))
    for fact in derive.change_facts(helm, reg, P):
        world.read(fact, source_kind="change")
    world.read(derive.snapshot_fact(b, reg), source_kind="config")
    world.read(derive.snapshot_fact(a, reg), source_kind="config")
    got = {c.id: c for c, _e in world.knowledge().changes}
    assert not any("@config:" in cid for cid in got)
    rev3 = got["web@helm-rev3"]
    assert rev3.type == "deployment" and rev3.version_to == "4.19.0"
    assert [(c.key, c.from_, c.to) for c in rev3.config_changes] == [("db.pool.max_size", "20", "64"),
                                                                     ("feature_batching", None, "true")]


# =============================================================================================
# 6. Configs
# =============================================================================================

SETTINGS_RECORD = """\
service: web
environment: prod
version: 4.19.0
settings:
  db:
    pool:
      max_size: 64
  payments.url: http://payments.prod.svc.cluster.local:8080
  retry_timeout_ms: 2000
  feature_batching: true
"""


def test_a_settings_record_flattens_nested_keys_and_keeps_dotted_keys_as_written(tmp_path):
    assert configs.detect(SETTINGS_RECORD) == "record"
    doc = load(tmp_path, "config/web.yaml", SETTINGS_RECORD, "config", service="web", environment="prod")
    assert isinstance(doc.record, ServiceConfig) and doc.version == "4.19.0"
    got = {s.key: s.value for s in doc.settings}
    assert got == {"db.pool.max_size": "64", "payments.url": "http://payments.prod.svc.cluster.local:8080",
                   "retry_timeout_ms": "2000", "feature_batching": "true"}
    assert_slices(doc.text, doc.settings, ["max_size: 64", "payments.url: http://payments.prod.svc.cluster.local:8080",
                                           "retry_timeout_ms: 2000", "feature_batching: true"])


SPRING_YAML = """\
server:
  port: 8080
spring:
  datasource:
    url: jdbc:postgresql://orders-db:5432/orders
    hikari:
      maximum-pool-size: 20
      connection-timeout: 30000
  kafka:
    bootstrap-servers:
      - kafka.prod.svc.cluster.local:9092
      - kafka.prod.svc.cluster.local:9093
pay-client:
  retry_budget: 3
"""


def test_a_yaml_config_flattens_to_dotted_keys_with_the_offsets_of_each_setting():
    assert configs.detect(SPRING_YAML) == "yaml"
    got = configs.parse_yaml(SPRING_YAML)
    assert {s.key: s.value for s in got} == {
        "server.port": "8080", "spring.datasource.url": "jdbc:postgresql://orders-db:5432/orders",
        "spring.datasource.hikari.maximum-pool-size": "20", "spring.datasource.hikari.connection-timeout": "30000",
        "spring.kafka.bootstrap-servers": "kafka.prod.svc.cluster.local:9092,kafka.prod.svc.cluster.local:9093",
        "pay-client.retry_budget": "3"}
    by = {s.key: SPRING_YAML[s.start:s.end] for s in got}
    assert by["spring.datasource.hikari.maximum-pool-size"] == "maximum-pool-size: 20"
    assert by["spring.kafka.bootstrap-servers"] == \
        "bootstrap-servers:\n      - kafka.prod.svc.cluster.local:9092\n      - kafka.prod.svc.cluster.local:9093"


def test_config_values_naming_other_entities_and_component_prefixes_are_relations(tmp_path):
    doc = load(tmp_path, "config/application.yaml", SPRING_YAML, "config", service="orders", environment="prod")
    reg = EntityExtractor({"orders": "service", "orders-db": "database", "kafka": "queue", "pay-client": "component"})
    rels = derive_relations.config_relations(doc, reg)
    assert {(r.source, r.target, r.relation) for r in rels} == {
        ("orders", "orders-db", "configured"), ("orders", "kafka", "configured"), ("orders", "pay-client", "uses")}
    for r in rels:
        assert r.at.quote == doc.text[r.at.start:r.at.end]


JSON_CONFIG = """\
{
  "server": {"port": 8080},
  "payments": {"baseUrl": "http://payments.prod.svc.cluster.local:8080", "timeoutMs": 2000},
  "features": {"batching": true},
  "allowedOrigins": ["https://shop.example.com", "https://m.shop.example.com"],
  "cache": null
}
"""


def test_a_json_config_flattens_to_dotted_keys_with_the_offsets_of_each_value():
    assert configs.detect(JSON_CONFIG) == "json"
    got = configs.parse_json(JSON_CONFIG)
    assert [(s.key, s.value, JSON_CONFIG[s.start:s.end]) for s in got] == [
        ("server.port", "8080", "8080"),
        ("payments.baseUrl", "http://payments.prod.svc.cluster.local:8080",
         '"http://payments.prod.svc.cluster.local:8080"'),
        ("payments.timeoutMs", "2000", "2000"),
        ("features.batching", "true", "true"),
        ("allowedOrigins", "https://shop.example.com,https://m.shop.example.com",
         '["https://shop.example.com", "https://m.shop.example.com"]'),
        ("cache", "", "null"),
    ]


DOTENV = """\
# payments service
export DB_HOST=orders-db.internal
DB_PORT=5432
DB_URL="postgres://app@orders-db:5432/orders"   # primary
RETRY_TIMEOUT_MS='2000'
LOG_LEVEL=info # was debug
EMPTY=
this line is not an assignment
"""


def test_a_dotenv_file_reads_export_quotes_and_comments_and_keeps_a_malformed_line():
    assert configs.detect(DOTENV.replace("this line is not an assignment\n", "")) == "env"
    got, bad = configs.parse_env(DOTENV)
    assert [(s.key, s.value) for s in got] == [
        ("DB_HOST", "orders-db.internal"), ("DB_PORT", "5432"), ("DB_URL", "postgres://app@orders-db:5432/orders"),
        ("RETRY_TIMEOUT_MS", "2000"), ("LOG_LEVEL", "info"), ("EMPTY", "")]
    rows = lines_of(DOTENV)
    assert_slices(DOTENV, got, rows[1:7])
    assert [DOTENV[b.start:b.end] for b in bad] == ["this line is not an assignment"]


PROPERTIES = """\
# application.properties
spring.datasource.url=jdbc:postgresql://orders-db:5432/orders
spring.datasource.hikari.maximum-pool-size = 20
! legacy comment style
pay-client.base-url: http://payments:8080
management.endpoints.web.exposure.include=health,info,prometheus
server.port=8080
a line without a separator
"""


def test_a_properties_file_reads_equals_and_colon_separators_and_keeps_a_malformed_line():
    assert configs.detect(PROPERTIES.replace("pay-client.base-url: ", "pay-client.base-url=")
                          .replace("a line without a separator\n", "")) == "properties"
    got, bad = configs.parse_properties(PROPERTIES)
    assert [(s.key, s.value) for s in got] == [
        ("spring.datasource.url", "jdbc:postgresql://orders-db:5432/orders"),
        ("spring.datasource.hikari.maximum-pool-size", "20"), ("pay-client.base-url", "http://payments:8080"),
        ("management.endpoints.web.exposure.include", "health,info,prometheus"), ("server.port", "8080")]
    rows = lines_of(PROPERTIES)
    assert_slices(PROPERTIES, got, [rows[1], rows[2], rows[4], rows[5], rows[6]])
    assert [PROPERTIES[b.start:b.end] for b in bad] == ["a line without a separator"]


CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: orders-config
  namespace: prod
data:
  LOG_LEVEL: info
  DB_POOL_SIZE: "20"
  application.properties: |
    spring.datasource.url=jdbc:postgresql://orders-db:5432/orders
    spring.datasource.hikari.maximum-pool-size=20
  application.yaml: |
    payments:
      url: http://payments:8080
      timeout-ms: 2000
    features:
      batching: true
"""


def test_a_configmap_reads_scalar_data_and_data_values_that_are_files():
    assert configs.detect(CONFIGMAP) == "configmap"
    got = configs.parse_configmap(CONFIGMAP)
    assert {s.key: s.value for s in got} == {
        "LOG_LEVEL": "info", "DB_POOL_SIZE": "20",
        "spring.datasource.url": "jdbc:postgresql://orders-db:5432/orders",
        "spring.datasource.hikari.maximum-pool-size": "20",
        "payments.url": "http://payments:8080", "payments.timeout-ms": "2000", "features.batching": "true"}
    by = {s.key: CONFIGMAP[s.start:s.end] for s in got}
    assert by["LOG_LEVEL"] == "LOG_LEVEL: info"
    assert by["spring.datasource.hikari.maximum-pool-size"] == "spring.datasource.hikari.maximum-pool-size=20"
    assert by["payments.timeout-ms"] == "timeout-ms: 2000"
    assert by["features.batching"] == "batching: true"


def test_a_configmap_from_kubectl_json_reads_its_embedded_files_inside_the_json_strings():
    text = json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": "orders-config", "namespace": "prod"},
                       "data": {"LOG_LEVEL": "info",
                                "application.properties": "spring.datasource.url=jdbc:postgresql://orders-db:5432/"
                                                          "orders\nserver.port=8080\n"}}, indent=4)
    assert configs.detect(text) == "configmap"
    got = configs.parse_configmap(text)
    assert [(s.key, s.value, text[s.start:s.end]) for s in got] == [
        ("LOG_LEVEL", "info", '"info"'),
        ("spring.datasource.url", "jdbc:postgresql://orders-db:5432/orders",
         "spring.datasource.url=jdbc:postgresql://orders-db:5432/orders"),
        ("server.port", "8080", "server.port=8080")]


@pytest.mark.parametrize("text, fmt", [(SETTINGS_RECORD, "record"), (SPRING_YAML, "yaml"), (JSON_CONFIG, "json"),
                                       ("export A_B=1\nC=two\n", "env"), ("a.b=1\nc.d=two\n", "properties"),
                                       (CONFIGMAP, "configmap")])
def test_the_config_format_is_detected_from_the_content(text, fmt):
    assert configs.detect(text) == fmt


def test_a_loaded_config_keeps_the_manifests_version_and_captured_at_for_snapshots(tmp_path):
    doc = load(tmp_path, "config/web.env", DOTENV, "config", format="env", service="web", environment="prod",
               version="4.19.0",
               captured_at=datetime(2026, 4, 29, 10, 40, tzinfo=CST))
    assert doc.format == "env" and doc.version == "4.19.0"
    snap = derive.snapshot_fact(doc, registry(web="service"))
    assert (snap.entity, snap.version, snap.captured_at) == ("web", "4.19.0", utc(2026, 4, 29, 2, 40))
    assert [doc.text[b.start:b.end] for b in doc.unparsed] == ["this line is not an assignment"]



def test_bad_lines_that_blame_an_unnamed_upstream_are_counted_as_such(tmp_path):
    """"upstream dependency unavailable" names nothing, yet says the failure comes from below."""
    from state.facts import UPSTREAM, MentionFact

    t0 = utc(2026, 4, 29, 2, 30)
    lines = [f"{(t0 + timedelta(minutes=m)).isoformat().replace('+00:00', 'Z')} INFO api handled request" for m in range(0, 40)]
    lines += [f"{(t0 + timedelta(minutes=30, seconds=s)).isoformat().replace('+00:00', 'Z')} ERROR api handler returned an "
              f"error: upstream dependency unavailable" for s in range(0, 600, 20)]
    doc = load(tmp_path, "logs/api.log", "\n".join(sorted(lines)), "log", environment="prod")
    rng = Range(baseline_from=t0, search_from=t0 + timedelta(minutes=25), end=t0 + timedelta(minutes=45))
    facts = derive_signals.log_facts(doc, "api", registry(api="service"), P, rng)
    up = [f for f in facts if isinstance(f, MentionFact) and f.name == UPSTREAM]
    assert up and up[0].anomalous


def test_a_name_both_warnings_and_errors_carry_is_quoted_from_an_error_line(tmp_path):
    """Where a burst naming something holds warnings and errors, the mention is an error one and
    quotes its first error line: that is where the errors point (docs/deciding.md §4)."""
    from state.facts import MentionFact

    t0 = utc(2026, 4, 29, 2, 30)
    lines = [f"{(t0 + timedelta(minutes=m)).isoformat().replace('+00:00', 'Z')} INFO api handled request" for m in range(0, 40)]
    lines += [f"{(t0 + timedelta(minutes=30, seconds=s)).isoformat().replace('+00:00', 'Z')} WARN api slow answer from "
              f"payments" for s in range(0, 120, 20)]
    lines += [f"{(t0 + timedelta(minutes=32, seconds=s)).isoformat().replace('+00:00', 'Z')} ERROR api call to payments "
              f"failed: timeout" for s in range(0, 300, 20)]
    doc = load(tmp_path, "logs/api.log", "\n".join(sorted(lines)), "log", environment="prod")
    rng = Range(baseline_from=t0, search_from=t0 + timedelta(minutes=25), end=t0 + timedelta(minutes=45))
    facts = derive_signals.log_facts(doc, "api", registry(api="service", payments="service"), P, rng)
    m = next(f for f in facts if isinstance(f, MentionFact) and f.name == "payments")
    assert m.anomalous and m.severity == "error"
    assert "ERROR api call to payments failed" in m.at.quote
    assert m.ts == t0 + timedelta(minutes=30), "the burst still begins at its first line"
