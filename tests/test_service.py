"""`investigator serve`: alerts in by webhook, one investigation per distinct alert, reports out.

Fast tests: the ASGI app in-process (Starlette's test client), the default queue (a SQLite file)
and, where a run is needed, the default single in-process worker. The scaled mode with real
worker processes, PostgreSQL, RabbitMQ and a SIGKILL is in test_service_scaled.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from fastapi.testclient import TestClient

from investigator.service.alerts import AlertError, parse_body
from investigator.service.app import create_app
from investigator.service.ledger import Ledger
from investigator.service.queue import worker_work
from investigator.service.settings import load_settings
from state.errors import ConfigError
from servicekit import PAYLOAD, SERVICE, settings_file, wait_done, webhook


@pytest.fixture
def settings(tmp_path):
    return load_settings(settings_file(tmp_path)).check()


@pytest.fixture
def queue_only(settings):
    """The app with its queue but no worker: alerts are recorded and queued, nothing is investigated."""
    with TestClient(create_app(settings, in_process_worker=False)) as client:
        yield client


def test_an_alertmanager_webhook_is_investigated_once_and_its_report_served(settings):
    with TestClient(create_app(settings)) as client:
        first = client.post("/api/alerts", json=PAYLOAD)
        assert first.status_code == 202, first.text
        assert first.json()["accepted"] == 1 and first.json()["duplicates"] == 0
        run_id = first.json()["alerts"][0]["run_id"]
        repeat = client.post("/api/alerts", json=PAYLOAD)  # Alertmanager's repeat_interval resend
        assert repeat.json()["duplicates"] == 1 and repeat.json()["alerts"][0]["run_id"] == run_id

        done = wait_done(client, run_id)
        assert done["state"] == "done", done["error"]
        assert done["stop"]["kind"] and done["verdicts"]["causal_attribution"] == "confirmed"
        assert done["alert"]["repeats"] == 1 and done["attempts"] == 1
        assert done["seconds_to_report"] > 0

        report = client.get(f"/api/runs/{run_id}/report").json()
        causal = next(c for c in report["claims"] if c["kind"] == "causal_chain")
        assert (causal["root_cause"]["entity"], causal["root_cause"]["change"]) == ("search-indexer",
                                                                                    "DEP-20260819-0731")
        listed = client.get("/api/runs").json()["runs"]
        assert [r["run_id"] for r in listed] == [run_id]

        again = client.post("/api/alerts", json=PAYLOAD)  # a repeat after the report: still the same run
        assert again.json()["alerts"][0] == {**again.json()["alerts"][0], "duplicate": True, "state": "done"}
    inv_store = client.app.state.service.inv.store
    assert [r.run_id for r in inv_store.runs()] == [run_id], "one run in the store for one distinct alert"
    assert (settings.service_dir / "reports" / run_id / "report.json").exists()

    evidence = inv_store.evidence(run_id, include_inactive=True)
    again = worker_work(settings).investigate(done["alert"]["key"], "late-redelivery")
    assert (again.state, again.attempts, again.worker) == ("done", 1, done["worker"]), "a redelivered job does nothing"
    assert inv_store.evidence(run_id, include_inactive=True) == evidence


@pytest.mark.slow
def test_alerts_queued_when_the_service_died_are_investigated_after_a_restart(settings):
    """The SQLite queue forgets a job its consumer took before dying: the restart publishes it again."""
    from sqlalchemy import create_engine, text

    with TestClient(create_app(settings, in_process_worker=False)) as client:
        run_id = client.post("/api/alerts", json=PAYLOAD).json()["alerts"][0]["run_id"]
    queue = create_engine(settings.broker_url.removeprefix("sqla+"))
    with queue.begin() as c:  # what a consumer killed mid-job leaves: the message taken, never acknowledged
        assert c.execute(text("UPDATE kombu_message SET visible = 0")).rowcount == 1
    with TestClient(create_app(settings)) as client:
        done = wait_done(client, run_id)
    assert done["state"] == "done" and done["verdicts"]["causal_attribution"] == "confirmed"


def test_a_plain_json_alert_without_fingerprint_is_keyed_by_its_labels(queue_only):
    alert = {"labels": {"alertname": "ProfileApiLatencyHigh", "service": SERVICE, "environment": "prod"},
             "annotations": {"summary": "slow"}, "startsAt": "2026-08-19T14:10:00Z"}
    first = queue_only.post("/api/alerts", json=alert).json()
    same_labels_other_order = {**alert, "labels": dict(reversed(list(alert["labels"].items())))}
    second = queue_only.post("/api/alerts", json=[same_labels_other_order]).json()
    other = queue_only.post("/api/alerts", json={**alert, "labels": {**alert["labels"], "instance": "b"}}).json()
    assert first["accepted"] == 1 and second["duplicates"] == 1 and other["accepted"] == 1
    assert first["alerts"][0]["run_id"] == second["alerts"][0]["run_id"] != other["alerts"][0]["run_id"]
    rows = queue_only.get("/api/runs").json()["runs"]
    assert sorted(r["state"] for r in rows) == ["queued", "queued"]
    assert all(r["links"]["page"].startswith("/runs/") for r in rows)


def test_the_same_alert_firing_again_after_it_resolved_is_a_new_investigation(queue_only):
    first = queue_only.post("/api/alerts", json=webhook()).json()
    resolved = webhook()
    resolved["alerts"][0]["status"] = "resolved"
    gone = queue_only.post("/api/alerts", json=resolved).json()
    later = queue_only.post("/api/alerts", json=webhook(starts="2026-08-19T18:00:00Z")).json()
    assert gone == {**gone, "accepted": 0, "duplicates": 0, "resolved": 1}
    assert later["accepted"] == 1 and later["alerts"][0]["run_id"] != first["alerts"][0]["run_id"]


def test_many_alerts_in_one_notification_are_one_investigation_each_or_one_per_group(tmp_path):
    body = webhook()
    body["alerts"].append({**body["alerts"][0], "fingerprint": "ffff0001",
                           "labels": {**body["alerts"][0]["labels"], "instance": "pod-2"}})
    per_alert = parse_body(json.dumps(body))
    per_group = parse_body(json.dumps(body), dedupe="group")
    assert len({a.key for a in per_alert.alerts}) == 2
    assert len({a.key for a in per_group.alerts}) == 1 and per_group.alerts[0].key.startswith("group:")


def test_two_posts_of_the_same_alert_at_once_make_one_run(settings, queue_only):
    """The unique key in the store decides, not a process: eight clients with their own engines race."""
    from sqlmodel import create_engine

    body = json.dumps(webhook(fingerprint="race0001"))
    results: list[bool] = []
    barrier = threading.Barrier(8)

    def post() -> None:
        ledger = Ledger(create_engine(settings.store_url, connect_args={"timeout": 30}))
        alert = parse_body(body).alerts[0]
        barrier.wait()
        results.append(ledger.admit(alert, SERVICE)[1])

    threads = [threading.Thread(target=post) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 7 + [True]
    rows = queue_only.get("/api/runs").json()["runs"]
    assert len(rows) == 1 and rows[0]["alert"]["repeats"] == 7


@pytest.mark.parametrize("body, status, says", [
    (b"{not json", 400, "body: JSON"),
    (b"[]", 422, "non-empty list"),
    (json.dumps({"alerts": []}).encode(), 422, "alerts: a non-empty list"),
    (json.dumps({"alerts": [{"labels": {"alertname": "X"}, "startsAt": "2026-08-19T14:10:00Z"}]}).encode(), 422,
     "alerts[0].labels: an environment"),
    (json.dumps({"labels": {"alertname": "X", "service": SERVICE, "environment": "prod"},
                 "startsAt": "yesterday"}).encode(), 422, "alert.startsAt: a timestamp with a zone"),
    (json.dumps({"labels": ["service", SERVICE]}).encode(), 422, "alert.labels: an object of label names"),
    (json.dumps({"labels": {"alertname": "X", "service": "billing", "environment": "prod"}}).encode(), 422,
     "alert label service='billing': no source root for it (configured: profile-api"),
])
def test_a_bad_payload_is_refused_with_what_was_expected_and_nothing_is_queued(queue_only, body, status, says):
    got = queue_only.post("/api/alerts", content=body, headers={"content-type": "application/json"})
    assert got.status_code == status and says in got.json()["error"], got.text
    assert queue_only.get("/api/runs").json()["runs"] == []


def test_one_bad_alert_in_a_notification_admits_none_of_it(queue_only):
    body = webhook()
    body["alerts"].append({**body["alerts"][0], "fingerprint": "x", "labels": {"service": "billing",
                                                                               "environment": "prod"}})
    got = queue_only.post("/api/alerts", json=body)
    assert got.status_code == 422 and "billing" in got.json()["error"]
    assert queue_only.get("/api/runs").json()["runs"] == []


def test_an_unknown_run_is_404_and_a_queued_run_has_no_report_yet(queue_only):
    assert queue_only.get("/api/runs/nope").status_code == 404
    assert "no run 'nope'" in queue_only.get("/api/runs/nope").json()["error"]
    run_id = queue_only.post("/api/alerts", json=webhook()).json()["alerts"][0]["run_id"]
    got = queue_only.get(f"/api/runs/{run_id}/report")
    assert got.status_code == 409 and "is queued: no report yet" in got.json()["error"]
    page = queue_only.get(f"/runs/{run_id}")
    assert page.status_code == 200 and "Queued: the report appears here" in page.text
    assert queue_only.get("/runs/nope").status_code == 404


def test_alert_text_is_escaped_on_the_pages(queue_only):
    body = webhook(instance="<script>alert(1)</script>")
    run_id = queue_only.post("/api/alerts", json=body).json()["alerts"][0]["run_id"]
    for page in (queue_only.get("/").text, queue_only.get(f"/runs/{run_id}").text):
        assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page


def test_settings_name_the_file_the_field_and_what_was_expected(tmp_path, monkeypatch):
    bad = settings_file(tmp_path, dedupe="sometimes")
    with pytest.raises(ConfigError, match=r"service.yaml: dedupe: Input should be 'fingerprint' or 'group'"):
        load_settings(bad)
    missing = settings_file(tmp_path, sources={"roots": {SERVICE: "no/such/folder"}})
    with pytest.raises(ConfigError, match=rf"sources.roots.{SERVICE}: .*no/such/folder: expected an existing folder"):
        load_settings(missing).check()
    with pytest.raises(ConfigError, match="sources: expected at least one folder of material"):
        load_settings(None, home=str(tmp_path)).check()
    monkeypatch.setenv("INVESTIGATOR_SOURCE_ROOTS", "payments")
    with pytest.raises(ConfigError, match="INVESTIGATOR_SOURCE_ROOTS: 'payments': expected name=/path"):
        load_settings(None)
    monkeypatch.setenv("INVESTIGATOR_SOURCE_ROOTS", f"{SERVICE}={tmp_path / 'material' / SERVICE}")
    monkeypatch.setenv("INVESTIGATOR_BROKER_URL", "amqp://guest:guest@127.0.0.1:5672//")
    env = load_settings(None).check()
    assert env.sources.roots[SERVICE].is_dir() and env.broker_url.startswith("amqp://") and not env.local_queue


def test_the_default_queue_is_a_sqlite_file_in_the_home(settings):
    assert settings.broker_url == f"sqla+sqlite:///{(settings.home / 'queue.db').resolve()}"
    assert settings.local_queue and settings.store_url.startswith("sqlite:///")


def test_serve_with_a_bad_settings_file_exits_2_with_one_line(tmp_path):
    bad = settings_file(tmp_path, sources={"roots": {SERVICE: "no/such/folder"}})
    got = subprocess.run([sys.executable, "-m", "investigator.cli", "serve", "--config", str(bad)],
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 2
    assert got.stderr.strip().splitlines()[-1].startswith(f"error: sources.roots.{SERVICE}:")


def test_an_alert_error_is_an_investigator_error_with_exit_code_2():
    with pytest.raises(AlertError) as exc:
        parse_body(b"nope")
    assert exc.value.exit_code == 2 and exc.value.status == 400


def test_a_repeat_posted_while_the_first_post_is_publishing_queues_no_second_job(settings, queue_only):
    """Found by the load benchmark: a repeat arriving between the first post's insert and its publish
    published the job again (one alert delivered twice, though investigated once)."""
    from sqlalchemy import create_engine, text

    from investigator.service.app import Service

    body = json.dumps(webhook(fingerprint="race0002")).encode()
    barrier = threading.Barrier(8)
    services = [Service(settings) for _ in range(8)]
    answers: list[dict] = []

    def post(svc: Service) -> None:
        barrier.wait()
        answers.append(svc.submit(body)[1])

    threads = [threading.Thread(target=post, args=(svc,)) for svc in services]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(a["accepted"] for a in answers) == [0] * 7 + [1]
    with create_engine(settings.broker_url.removeprefix("sqla+")).connect() as c:
        assert c.execute(text("SELECT count(*) FROM kombu_message")).scalar() == 1, "one job for one alert"


def test_a_post_the_broker_refused_is_published_by_the_next_repeat(settings):
    from investigator.service.app import Service

    svc = Service(settings)
    down = Service(settings.model_copy(update={"broker": "amqp://guest:guest@127.0.0.1:1//"}))
    down.celery.conf.broker_connection_timeout = 1
    down.celery.conf.broker_connection_max_retries = 0
    down.celery.conf.broker_transport_options = {"max_retries": 0}
    status, out = down.submit(json.dumps(webhook()).encode())
    assert status == 503 and "broker unreachable" in out["error"] and out["accepted"] == 1
    assert [r.key for r in svc.ledger.unpublished()] == [out["alerts"][0]["key"]]
    status, again = svc.submit(json.dumps(webhook()).encode())
    assert status == 202 and again["duplicates"] == 1 and svc.ledger.unpublished() == []


def test_with_a_token_set_only_a_bearer_of_it_may_post_alerts(tmp_path):
    settings = load_settings(settings_file(tmp_path, token="s3cret")).check()
    with TestClient(create_app(settings, in_process_worker=False)) as client:
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "Basic s3cret"}):
            got = client.post("/api/alerts", json=webhook(), headers=headers)
            assert got.status_code == 401 and "Bearer <token>" in got.json()["error"]
        assert client.get("/api/runs").json()["runs"] == []
        ok = client.post("/api/alerts", json=webhook(), headers={"authorization": "Bearer s3cret"})
        assert ok.status_code == 202 and ok.json()["accepted"] == 1


def test_two_services_in_one_process_each_run_their_own_jobs_and_a_poison_job_is_failed(tmp_path):
    """Found when the restart test followed another in one session: the job of the second service ran
    against the first service's store (Celery shares a task, and its settings, with every later app;
    the worker's state was cached per process, not per service)."""
    from sqlalchemy import update

    from investigator.service.ledger import AlertRow
    from investigator.service.queue import MAX_DELIVERIES

    def poison_job_fails(settings) -> dict:
        with TestClient(create_app(settings, in_process_worker=False)) as client:
            run_id = client.post("/api/alerts", json=webhook()).json()["alerts"][0]["run_id"]
            with client.app.state.service.ledger.engine.begin() as c:
                c.execute(update(AlertRow).values(attempts=MAX_DELIVERIES))
        with TestClient(create_app(settings)) as client:
            t0 = time.monotonic()
            while client.get(f"/api/runs/{run_id}").json()["state"] == "queued" and time.monotonic() - t0 < 30:
                time.sleep(0.3)
            return client.get(f"/api/runs/{run_id}").json()

    for home in ("a", "b"):
        got = poison_job_fails(load_settings(settings_file(tmp_path / home)).check())
        assert got["state"] == "failed" and f"delivered {MAX_DELIVERIES} times" in got["error"], (home, got)


@pytest.mark.slow
def test_a_job_whose_run_another_live_worker_holds_waits_in_the_queue_and_finishes_when_it_is_free(settings):
    """Found by the load benchmark: a job redelivered while its killed worker was not yet reaped met
    the run held, and waited a whole lease at the back of the queue, its alert still shown running."""
    import socket
    from datetime import datetime, timedelta, timezone

    from sqlalchemy import update

    from investigator.service.ledger import AlertRow
    from investigator.service.queue import publish
    from state.store import RunRow

    with TestClient(create_app(settings)) as client:
        run_id = client.post("/api/alerts", json=PAYLOAD).json()["alerts"][0]["run_id"]
        assert wait_done(client, run_id)["state"] == "done"
        svc = client.app.state.service
        other = f"{socket.gethostname()}:1:other"  # pid 1 is alive: a live worker on this host
        with svc.inv.store.engine.begin() as c:
            c.execute(update(RunRow).where(RunRow.run_id == run_id).values(
                owner=other, lease_until=datetime.now(timezone.utc) + timedelta(minutes=5)))
        with svc.ledger.engine.begin() as c:  # the job delivered again before the run finished
            c.execute(update(AlertRow).values(state="queued"))
        publish(svc.celery, svc.ledger.by_run(run_id).key)
        t0 = time.monotonic()
        while client.get(f"/api/runs/{run_id}").json()["attempts"] < 2 and time.monotonic() - t0 < 60:
            time.sleep(0.2)
        time.sleep(0.5)
        waiting = client.get(f"/api/runs/{run_id}").json()
        assert waiting["state"] == "queued" and waiting["attempts"] == 2, "back in the queue, not shown running"
        svc.inv.store.release(run_id, other)
        t0 = time.monotonic()
        while client.get(f"/api/runs/{run_id}").json()["state"] != "done" and time.monotonic() - t0 < 30:
            time.sleep(0.2)
        done = client.get(f"/api/runs/{run_id}").json()
    assert done["state"] == "done" and done["attempts"] >= 3, done
    assert time.monotonic() - t0 < 30, "retried within seconds of the run being free, not after a whole lease"
