"""The service takes any body safely: too big, too deep, too wide, not text, or an alert no clock
could have made is refused at the door with 400 / 413 / 422 naming the field, never a 500; a job
that cannot succeed fails once with its reason; `serve` refuses a port or host it cannot listen on."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from investigator.service.alerts import MAX_DEPTH, MAX_ITEMS, parse_body
from investigator.service.app import create_app
from investigator.service.queue import publish
from investigator.service.settings import load_settings
from servicekit import SERVICE, settings_file, webhook

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def settings(tmp_path):
    return load_settings(settings_file(tmp_path, max_body_bytes=65536)).check()


@pytest.fixture
def client(settings):
    with TestClient(create_app(settings, in_process_worker=False), raise_server_exceptions=False) as c:
        yield c


def post(client: TestClient, body: bytes | str | dict, **headers: str):
    content = json.dumps(body) if isinstance(body, dict) else body
    return client.post("/api/alerts", content=content, headers={"content-type": "application/json", **headers})


def refused(got, status: int, field: str, says: str = "") -> None:
    assert got.status_code == status, got.text
    assert got.json()["field"] == field and says in got.json()["error"], got.text


def nothing_queued(client: TestClient) -> None:
    assert client.get("/api/runs").json()["runs"] == []


# --- size: counted while the body is read -------------------------------------------------------

def test_a_body_over_the_limit_is_refused_413_from_its_declared_length(client):
    refused(post(client, b"[" + b" " * 70000 + b"]"), 413, "body", "at most 65536 bytes")
    nothing_queued(client)


def test_a_chunked_body_over_the_limit_is_refused_before_it_is_all_read():
    """A body without Content-Length is counted while it arrives: reading stops at the first chunk past it."""
    import asyncio

    from starlette.requests import Request

    from investigator.service.alerts import AlertError
    from investigator.service.app import _read_body

    asked = []

    async def receive() -> dict:
        asked.append(1)
        return {"type": "http.request", "body": b" " * 4096, "more_body": len(asked) < 1000}

    request = Request({"type": "http", "method": "POST", "headers": []}, receive)
    with pytest.raises(AlertError) as err:
        asyncio.run(_read_body(request, 65536))
    assert err.value.status == 413 and err.value.field == "body"
    assert len(asked) == 17, "sixteen chunks of 4 KB fill 64 KB; the seventeenth is past it and the last read"


# --- shape: depth, width, text ---------------------------------------------------------------------

@pytest.mark.parametrize("body", [
    "[" * 30000 + "]" * 30000,
    '{"a":' * 5000 + "1" + "}" * 5000,
    json.dumps({"alerts": [{"labels": {"x": json.loads("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))}}]}),
])
def test_deeply_nested_json_is_refused_422_not_a_500(client, body):
    refused(post(client, body), 422, "body", f"nested at most {MAX_DEPTH} deep")
    nothing_queued(client)


def test_brackets_inside_strings_do_not_count_as_nesting(client):
    body = webhook()
    body["alerts"][0]["annotations"]["summary"] = "[[[[" * 100 + '{"\\"' * 50
    assert post(client, body).status_code == 202


@pytest.mark.parametrize("where, change", [
    ("alerts[0].labels", lambda a: a["labels"].update({f"l{i}": "v" for i in range(MAX_ITEMS + 1)})),
    ("alerts[0].annotations.summary", lambda a: a["annotations"].update(summary="x" * 70000)),
])
def test_a_too_wide_body_is_refused_naming_the_field(tmp_path, where, change):
    big = load_settings(settings_file(tmp_path, max_body_bytes=4 * 1024 * 1024)).check()
    with TestClient(create_app(big, in_process_worker=False), raise_server_exceptions=False) as c:
        body = webhook()
        change(body["alerts"][0])
        refused(post(c, body), 422, where, "at most")


@pytest.mark.parametrize("value", ["a\x00b", "\ud800"])
def test_label_text_with_nul_or_an_unpaired_surrogate_is_refused(client, value):
    body = webhook()
    body["alerts"][0]["labels"]["team"] = value
    refused(post(client, json.dumps(body)), 422, "alerts[0].labels.team", "without NUL")


@pytest.mark.parametrize("body", [b"\xff\xfe\x00", b"\x00\x00", b"{\"alerts\": [}", b""])
def test_a_body_that_is_not_json_text_is_400(client, body):
    refused(post(client, body), 400, "body", "JSON")


# --- times no alert can have ---------------------------------------------------------------------

@pytest.mark.parametrize("starts, ends, field, says", [
    ("0001-01-01T00:00:00Z", None, "alerts[0].startsAt", "on or after 2000-01-01"),
    ("1970-01-01T00:00:00Z", None, "alerts[0].startsAt", "on or after 2000-01-01"),
    ("9999-12-31T23:59:59Z", None, "alerts[0].startsAt", "no later than an hour from now"),
    ("2026-08-19T14:10:00Z", "2026-08-19T14:00:00Z", "alerts[0].endsAt", "a time after startsAt"),
    ("2026-08-19T14:10:00Z", "soon", "alerts[0].endsAt", "a timestamp with a zone"),
    ("2026-08-19T14:10:00+25:00", None, "alerts[0].startsAt", "a timestamp with a zone"),
])
def test_an_alert_with_impossible_times_is_refused_at_the_door(client, starts, ends, field, says):
    body = webhook(starts=starts)
    if ends is not None:
        body["alerts"][0]["endsAt"] = ends
    refused(post(client, body), 422, field, says)
    nothing_queued(client)


@pytest.mark.parametrize("field, value", [("startsAt", ["2026-08-19T14:10:00Z"]), ("startsAt", 0), ("startsAt", ""),
                                          ("startsAt", {}), ("fingerprint", {"a": 1}), ("fingerprint", True)])
def test_a_start_or_fingerprint_that_is_not_text_is_refused(client, field, value):
    body = webhook()
    body["alerts"][0][field] = value
    refused(post(client, body), 422, f"alerts[0].{field}")


def test_alertmanagers_zero_end_time_of_a_firing_alert_is_accepted(client):
    body = webhook()
    assert body["alerts"][0]["endsAt"] == "0001-01-01T00:00:00Z"
    assert post(client, body).status_code == 202


def test_an_alert_no_source_root_takes_is_refused_naming_the_label(client):
    body = webhook()
    body["alerts"][0]["labels"]["service"] = "billing"
    refused(post(client, body), 422, "alerts[0].labels.service", "no source root for it")


def test_every_refused_post_is_named_in_the_ledger_without_its_content(client):
    post(client, b"[" * 30000 + b"]" * 30000)
    post(client, webhook(starts="0001-01-01T00:00:00Z"))
    body = webhook()
    body["alerts"][0]["labels"]["team"] = "CANARY\x00"
    post(client, json.dumps(body))
    post(client, b"{CANARY")
    post(client, b" " * 70000)
    got = client.get("/api/refusals").json()["refusals"]
    assert [(r["status"], r["field"]) for r in reversed(got)] == [
        (422, "body"), (422, "alerts[0].startsAt"), (422, "alerts[0].labels.team"), (400, "body"), (413, "body")]
    assert all(r["expected"] and r["received_at"] for r in got)
    assert "CANARY" not in json.dumps(got)
    nothing_queued(client)


def test_a_query_parameter_out_of_range_is_422_not_a_500(client):
    for limit in ("0", "-1", str(10**30), "many"):
        assert client.get(f"/api/runs?limit={limit}").status_code == 422


# --- a job that cannot succeed -------------------------------------------------------------------

def _one_job(settings, alert) -> dict:
    with TestClient(create_app(settings)) as c:
        svc = c.app.state.service
        row, _new = svc.ledger.admit(alert, SERVICE)
        svc.ledger.claim_publish(row.key)
        publish(svc.celery, row.key)
        t0 = time.monotonic()
        while (got := c.get(f"/api/runs/{row.run_id}").json())["state"] not in ("done", "failed"):
            assert time.monotonic() - t0 < 60, got
            time.sleep(0.3)
    return got


def test_a_job_whose_alert_cannot_make_a_case_fails_once_with_its_reason(settings):
    """An alert admitted before the door checked its times (dated year 1): the job fails on its first
    delivery, naming the field, instead of being retried until its budget of attempts runs out."""
    alert = parse_body(json.dumps(webhook(fingerprint="admitted-earlier"))).alerts[0]
    payload = json.loads(alert.payload)
    payload["alerts"][0]["startsAt"] = "0001-01-01T00:00:00Z"
    got = _one_job(settings, alert.model_copy(update={"payload": json.dumps(payload)}))
    assert got["state"] == "failed" and got["attempts"] == 1, got
    assert "alerts[0].startsAt: a start time on or after 2000-01-01" in got["error"], got


def test_a_job_that_fails_the_same_way_every_time_is_not_retried(settings, monkeypatch):
    """A value the code cannot take (an OverflowError, a ValueError…) recurs on every delivery: failed
    at once, naming the error and where it came from — never its message, which may quote a source."""
    from investigator.service import work

    def overflow(self, key, worker):
        self.ledger.begin(key, worker)
        raise OverflowError("date value out of range: CANARY-from-a-source")

    monkeypatch.setattr(work.Work, "investigate", overflow)
    got = _one_job(settings, parse_body(json.dumps(webhook(fingerprint="overflows"))).alerts[0])
    assert got["state"] == "failed" and got["attempts"] == 1, got
    assert got["error"].startswith("not retried") and "OverflowError" in got["error"], got
    assert "CANARY" not in got["error"]


# --- serve: port and host ---------------------------------------------------------------------------

@pytest.mark.parametrize("args, says", [
    (["--port", "70000"], "argument --port: a port number from 1 to 65535 (got '70000')"),
    (["--port", "0"], "argument --port"),
    (["--port", "-1"], "argument --port"),
    (["--host", "not a host"], "argument --host: an IP address or a host name"),
    (["--host", "999.1.1.1"], "argument --host"),
    (["--host", "-bad-.example"], "argument --host"),
])
def test_serve_refuses_a_port_or_host_it_cannot_listen_on(tmp_path, args, says):
    proc = subprocess.run([sys.executable, "-m", "investigator.cli", "serve", "--config",
                           str(settings_file(tmp_path)), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, check=False)
    assert proc.returncode == 2 and says in proc.stderr, proc.stderr
    assert not (tmp_path / "home").exists(), "refused before anything is created"
