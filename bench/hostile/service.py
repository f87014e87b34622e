"""A bounded hostile-body run against `investigator serve` on 127.0.0.1 (issue 19).

    PYTHONPATH=. python bench/hostile/service.py [--markdown FILE]

Starts the service (SQLite store and queue in a temporary home, no worker: only the door is tried),
sends about 500 requests — nesting, size (declared and chunked), encodings, times, shapes, paths and
methods, with well-formed alerts among them — and counts the answers by status. Every refusal must be
a 4xx whose JSON names the field; a 5xx, a dropped connection or a traceback in the service's log
is a failure (exit 1).
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MATERIAL = ROOT / "cases" / "ALR-20260819-204" / "sources"
ALERT = {"status": "firing", "labels": {"alertname": "ProfileApiLatencyHigh", "service": "profile-api",
                                        "environment": "prod"},
         "annotations": {"summary": "p99 above 800 ms"}, "startsAt": "2026-08-19T14:10:00Z",
         "endsAt": "0001-01-01T00:00:00Z", "fingerprint": "f0"}


def webhook(n: int = 0, **alert: object) -> dict:
    a = copy.deepcopy(ALERT)
    a["fingerprint"] = f"f{n}"
    a.update(alert)
    return {"version": "4", "groupKey": "{}:{}", "status": "firing", "alerts": [a]}


def dumps(value: object) -> bytes:
    return json.dumps(value).encode()


Case = tuple[str, str, str, bytes | Iterator[bytes], dict[str, str]]  # group, what, method+path, body, headers


def cases() -> list[Case]:
    out: list[Case] = []

    def post(group: str, what: str, body: bytes | Iterator[bytes], **headers: str) -> None:
        out.append((group, what, "POST /api/alerts", body, {"content-type": "application/json", **headers}))

    n = iter(range(1, 10**6))
    # nesting: arrays, objects, inside a label, mixed; up to 200,000 deep
    for depth in [8, 16, 31, 32, 33, 40, 64, 100, 200, 500, 1000, 5000, 20000, 100000]:
        post("nesting", f"[] nested {depth}", b"[" * depth + b"]" * depth)
        post("nesting", f"{{}} nested {depth}", b'{"a":' * depth + b"1" + b"}" * depth)
        inner: object = "x"
        for _ in range(min(depth, 500)):
            inner = [inner]
        if depth <= 500:
            post("nesting", f"a label value nested {depth}", dumps(webhook(next(n), labels={**ALERT["labels"], "x": inner})))
        post("nesting", f"unclosed [ x{depth}", b"[" * depth)
        post("nesting", f"brackets in strings x{depth}", dumps(webhook(next(n), annotations={"summary": "[{" * depth})))
    # size: declared and chunked, around the 1 MB limit
    for size in [0, 1, 1023, 65536, 1048000, 1048576, 1048577, 2 * 1048576, 8 * 1048576]:
        post("size", f"{size} bytes of spaces", b" " * size)
        post("size", f"an alert padded to {size} bytes", dumps(webhook(next(n))) + b" " * size)
    for chunks in [1, 16, 255, 256, 257, 1024, 4096]:
        post("size", f"chunked, {chunks} x 4 KB", iter([b" " * 4096] * chunks))
    post("size", "chunked alert", iter([dumps(webhook(next(n)))[:10], dumps(webhook(999))[10:]]))
    for count in [1, 100, 999, 1000, 1001, 5000]:
        body = {"alerts": [webhook(next(n))["alerts"][0] for _ in range(1)] * count}
        post("size", f"{count} alerts in one body", dumps(body))
    for k in [100, 1000, 1001, 20000]:
        post("size", f"{k} labels", dumps(webhook(next(n), labels={**ALERT["labels"], **{f"l{i}": "v" for i in range(k)}})))
    for chars in [1000, 65536, 65537, 500000]:
        post("size", f"a summary of {chars} characters", dumps(webhook(next(n), annotations={"summary": "x" * chars})))
    # encodings
    good = json.dumps(webhook(next(n)))
    for enc in ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"]:
        post("encoding", f"an alert in {enc}", good.encode(enc))
    for raw in [b"\xff", b"\xff\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\x00" * 16, b"\xef\xbb\xbf", b"\x1b[31m",
                good.encode()[:-1] + b"\xff}", good.encode().replace(b"prod", b"pr\xc3od"), b"{\"alerts\": [\xff]}",
                b"\x80" * 100, "é".encode("latin-1") * 10]:
        post("encoding", f"bytes {raw[:12]!r}", raw)
    for text in ["\\u0000", "\\ud800", "\\udfff", "\\ud800\\udc00", "\\u202e", "\\ufeff", "\\u0007", "\\n\\r\\t"]:
        post("encoding", f"a label with {text}", good.replace('"prod"', f'"prod{text}"').encode())
        post("encoding", f"a summary with {text}", good.replace('"p99 above 800 ms"', f'"x{text}"').encode())
    for ctype in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "",
                  "application/json; charset=latin-1", "application/json; charset=utf-16"]:
        out.append(("encoding", f"content-type {ctype!r}", "POST /api/alerts", good.encode(), {"content-type": ctype}))
    post("encoding", "form body", b"alerts=1&labels=2", **{"content-type": "application/x-www-form-urlencoded"})
    # times
    starts = ["0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "1999-12-31T23:59:59Z", "2000-01-01T00:00:00Z",
              "9999-12-31T23:59:59Z", "2100-01-01T00:00:00Z", "2026-02-30T10:00:00Z", "2026-13-01T10:00:00Z",
              "2026-08-19T24:00:00Z", "2026-08-19T23:59:60Z", "2026-08-19T14:10:00", "2026-08-19 14:10:00+00:00",
              "2026-08-19T14:10:00+25:00", "2026-08-19T14:10:00-12:00", "2026-08-19T14:10:00+14:00", "yesterday",
              "now", "", " ", "0", "-1", "1e300", "NaN", "2026-08-19T14:10:00.123456789Z", "+002026-08-19T14:10:00Z",
              "2026-W34-3T14:10:00Z", "20260819T141000Z", "2026-08-19T14:10Z", "1786889400", "1786889400000"]
    for s in starts:
        post("times", f"startsAt {s!r}", dumps(webhook(next(n), startsAt=s)))
    for s in [0, -1, 1786889400, 1786889400000, 1e300, True, None, [], {}, ["2026-08-19T14:10:00Z"]]:
        post("times", f"startsAt {s!r} (not text)", dumps(webhook(next(n), startsAt=s)))
    ends = ["0001-01-01T00:00:00Z", "2026-08-19T14:00:00Z", "2026-08-19T14:10:00Z", "2026-08-19T14:20:00Z",
            "9999-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "soon", "", 5, None, [], {"a": 1}]
    for e in ends:
        post("times", f"endsAt {e!r}", dumps(webhook(next(n), endsAt=e)))
    future = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 7200))
    near = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 600))
    post("times", "startsAt two hours ahead", dumps(webhook(next(n), startsAt=future)))
    post("times", "startsAt ten minutes ahead (a clock's skew)", dumps(webhook(next(n), startsAt=near)))
    post("times", "resolved, endsAt before startsAt", dumps(webhook(next(n), status="resolved", endsAt="2000-01-01T00:00:00Z")))
    # shapes
    shapes: list[object] = [None, True, 0, -1, 1e308, "alert", [], [None], [1, 2], [[]], {}, {"alerts": None},
                            {"alerts": {}}, {"alerts": "x"}, {"alerts": [None]}, {"alerts": [[]]}, {"alerts": [1]},
                            {"alerts": [{}]}, {"labels": None}, {"labels": []}, {"labels": "x"}, {"labels": {"a": None}},
                            {"labels": {"a": []}}, {"labels": {"a": {}}}, {"labels": {"service": "profile-api"}},
                            {"labels": {"environment": "prod", "service": "nope"}}, {"groupKey": 5, "alerts": [ALERT]},
                            {"commonLabels": [], "alerts": [ALERT]}, {"commonLabels": {"a": [1]}, "alerts": [ALERT]},
                            {"alerts": [{**ALERT, "status": "pending"}]}, {"alerts": [{**ALERT, "status": 1}]},
                            {"alerts": [{**ALERT, "annotations": []}]}, {"alerts": [{**ALERT, "annotations": {"a": {}}}]},
                            {"alerts": [{**ALERT, "fingerprint": {}}]}, {"alerts": [{**ALERT, "generatorURL": []}]},
                            {"alerts": [{**ALERT, "labels": {**ALERT["labels"], "": "empty name"}}]},
                            {"alerts": [{**ALERT, "labels": {**ALERT["labels"], "alertname": "../../etc/passwd"}}]},
                            {"alerts": [{**ALERT, "labels": {**ALERT["labels"], "alertname": "<script>x</script>"}}]},
                            {"alerts": [{**ALERT, "labels": {**ALERT["labels"], "service": "../profile-api"}}]},
                            {"alerts": [{**ALERT, "labels": {"environment": "prod", "service": "profile-api",
                                                             "alertname": "x" * 5000}}]}]
    for i, body in enumerate(shapes):
        post("shape", f"shape {i}: {json.dumps(body)[:60]}", dumps(body))
    for raw in [b"", b" ", b"null", b"{", b"}", b"[", b"]", b'{"alerts": [}', b"{'alerts': []}", b"NaN", b"Infinity",
                b"-Infinity", b'{"alerts": [NaN]}', b"1" * 5000, b"9" * 100000, b'"' + b"x" * 100 + b'"',
                b'{"a": 1, "a": 2}', b"[1,]", b"{,}", b"\n\n\n", b"/* c */ {}", b"{\"alerts\":[]}garbage"]:
        post("shape", f"raw {raw[:30]!r}", raw)
    wrong: list[object] = [None, True, 0, 1.5, "x", [], {}, [1], {"a": []}]
    for field in ["status", "labels", "annotations", "startsAt", "endsAt", "generatorURL", "fingerprint"]:
        for value in wrong:
            post("shape", f"alert {field}: {json.dumps(value)}", dumps(webhook(next(n), **{field: value})))
    for field in ["version", "groupKey", "status", "receiver", "groupLabels", "commonLabels", "commonAnnotations",
                  "externalURL", "truncatedAlerts"]:
        for value in [None, 7, "x", [], {"a": {"b": 1}}, [[1]]]:
            body = webhook(next(n))
            body[field] = value
            post("shape", f"payload {field}: {json.dumps(value)}", dumps(body))
    for year in [2000, 2001, 2010, 2019, 2025, 2026]:
        for offset in ["Z", "+00:00", "+08:00", "-05:30", "+23:59", "-23:59", "+24:00", "+99:99"]:
            post("times", f"startsAt {year} with offset {offset}",
                 dumps(webhook(next(n), startsAt=f"{year}-08-19T14:10:00{offset}")))
    # paths, methods and query strings
    for path in ["/api/runs?limit=0", "/api/runs?limit=-1", "/api/runs?limit=1e9", "/api/runs?limit=99999999999999999999",
                 "/api/runs?limit=abc", "/api/runs?state=%00", "/api/runs?state=" + "x" * 5000, "/api/runs/..%2F..%2Fetc",
                 "/api/runs/%00", "/api/runs/" + "x" * 3000, "/api/runs/nope/report", "/runs/%3Cscript%3E",
                 "/runs/" + "%C3%A9" * 100, "/api/runs/nope", "/healthz", "/", "/api/alerts", "/nope", "/api/runs?limit=5000",
                 "/api/runs?state=queued,done", "/api/runs?limit=1", "/openapi.json", "/api/runs/%2e%2e", "/webhook",
                 "/api/runs?limit=1&limit=x"]:
        out.append(("paths", f"GET {path[:60]}", f"GET {path}", b"", {}))
    for method in ["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]:
        out.append(("paths", f"{method} /api/alerts", f"{method} /api/alerts", dumps(webhook(0)), {}))
    # well-formed alerts among them: the door still lets them in
    for i in range(40):
        post("control", f"a well-formed alert #{i}", dumps(webhook(10_000 + i)))
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def send(port: int, request: str, body: bytes | Iterator[bytes], headers: dict[str, str]) -> int | str:
    method, path = request.split(" ", 1)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        if isinstance(body, bytes):
            conn.request(method, path, body=body, headers=headers)
        else:  # chunked: no Content-Length
            conn.request(method, path, body=body, headers={**headers, "transfer-encoding": "chunked"},
                         encode_chunked=True)
        resp = conn.getresponse()
        data = resp.read()
        if 400 <= resp.status < 500 and resp.status not in (404, 405) and method == "POST":
            try:
                got = json.loads(data)
            except ValueError:
                return "4xx that is not JSON"
            if not (got.get("field") or got.get("detail")):  # our refusals name a field; FastAPI's `detail` names its loc
                return "4xx without a field"
        return resp.status
    except (ConnectionError, http.client.HTTPException, TimeoutError, OSError) as exc:
        return f"connection: {type(exc).__name__}"
    finally:
        conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--markdown", help="also write the table here")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hostile-service-"))
    (tmp / "service.json").write_text(json.dumps({"home": str(tmp / "home"),
                                                  "sources": {"by": "service", "roots": {"profile-api": str(MATERIAL)}}}))
    port = free_port()
    log = (tmp / "serve.log").open("w")
    proc = subprocess.Popen([sys.executable, "-m", "investigator.cli", "serve", "--config", str(tmp / "service.json"),
                             "--host", "127.0.0.1", "--port", str(port), "--no-worker", "--log-level", "info"],
                            cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"})
    try:
        t0 = time.monotonic()
        while send(port, "GET /healthz", b"", {}) != 200:
            if time.monotonic() - t0 > 60 or proc.poll() is not None:
                print((tmp / "serve.log").read_text(), file=sys.stderr)
                return 1
            time.sleep(0.3)
        results = []
        t0 = time.monotonic()
        for group, what, request, body, headers in cases():
            results.append((group, what, send(port, request, body, headers)))
        seconds = time.monotonic() - t0
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/refusals?limit=5000")
        in_ledger = len(json.loads(conn.getresponse().read())["refusals"])
        conn.close()
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    server_log = (tmp / "serve.log").read_text()
    by_status = Counter(r[2] for r in results)
    by_group: dict[str, Counter] = {}
    for group, _what, status in results:
        by_group.setdefault(group, Counter())[status] += 1
    fives = [r for r in results if isinstance(r[2], int) and r[2] >= 500]
    broken = [r for r in results if not isinstance(r[2], int)]
    refused_posts = sum(1 for (_g, _w, status), case in zip(results, cases())
                        if case[2] == "POST /api/alerts" and status in (400, 413, 422))
    lines = [f"Requests: {len(results)} to 127.0.0.1 in {seconds:.0f} s; 5xx: {len(fives)}; dropped or unclear: "
             f"{len(broken)}; tracebacks in the service log: {server_log.count('Traceback')}; refused posts named "
             f"in the ledger (GET /api/refusals): {in_ledger} of {refused_posts}", "",
             "| group | requests | " + " | ".join(str(s) for s in sorted(by_status, key=str)) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in by_status) + " |"]
    for group, counts in by_group.items():
        lines.append(f"| {group} | {sum(counts.values())} | "
                     + " | ".join(str(counts.get(s, 0)) for s in sorted(by_status, key=str)) + " |")
    lines.append(f"| all | {len(results)} | " + " | ".join(str(by_status[s]) for s in sorted(by_status, key=str)) + " |")
    for group, what, status in fives + broken:
        lines.append(f"- {group}: {what}: {status}")
    if os.environ.get("HOSTILE_LIST_ACCEPTED"):
        lines += [f"- accepted: {group}: {what}" for group, what, status in results if status == 202]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 1 if fives or broken or "Traceback" in server_log or in_ledger != refused_posts else 0


if __name__ == "__main__":
    sys.exit(main())
