"""The scaled mode: `serve` and `worker` processes on PostgreSQL and RabbitMQ, a worker SIGKILLed mid-run.

Each test creates its own PostgreSQL database and RabbitMQ virtual host and drops them. Skipped when
the servers (or rabbitmqctl) are not there.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from servicekit import settings_file, webhook

pytestmark = [pytest.mark.postgres, pytest.mark.slow]
ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def _rabbitmqctl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["rabbitmqctl", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def amqp_url():
    if shutil.which("rabbitmqctl") is None:
        pytest.skip("rabbitmqctl not found: RabbitMQ is not installed here")
    vhost = f"inv_svc_{uuid.uuid4().hex[:10]}"
    made = _rabbitmqctl("add_vhost", vhost)
    if made.returncode != 0:
        pytest.skip(f"RabbitMQ not usable: {made.stderr.strip()[:200]}")
    _rabbitmqctl("set_permissions", "-p", vhost, "guest", ".*", ".*", ".*")
    try:
        yield f"amqp://guest:guest@127.0.0.1:5672/{vhost}"
    finally:
        _rabbitmqctl("delete_vhost", vhost)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Processes:
    """The service and its workers as real processes, each in its own process group (killed whole)."""

    def __init__(self, tmp: Path, config: Path) -> None:
        self.tmp, self.config, self.procs = tmp, config, {}
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self, name: str, *args: str) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "w")  # noqa: SIM115 - closed with the process
        p = subprocess.Popen([sys.executable, "-m", "investigator.cli", *args, "--config", str(self.config)],
                             stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.procs[name] = p
        return p

    def serve(self) -> None:
        self.start("serve", "serve", "--no-worker", "--port", str(self.port))
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise AssertionError("serve did not answer: " + (self.tmp / "serve.log").read_text()[-2000:])

    def worker(self, name: str) -> None:
        self.start(name, "worker", "--name", f"{name}@test")

    def kill(self, name: str) -> None:
        os.killpg(self.procs[name].pid, signal.SIGKILL)
        self.procs[name].wait(30)

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text()

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture
def service(tmp_path, pg_url, amqp_url):
    config = settings_file(tmp_path, store=pg_url, broker=amqp_url)
    procs = Processes(tmp_path, config)
    try:
        procs.serve()
        yield procs, pg_url
    finally:
        procs.stop()


def _wait_done(url: str, run_ids: list[str], timeout: float = 400) -> dict[str, dict]:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        got = {r: httpx.get(f"{url}/api/runs/{r}", timeout=10).json() for r in run_ids}
        if all(g["state"] in ("done", "failed") for g in got.values()):
            return got
        time.sleep(1)
    raise AssertionError(f"not finished in {timeout} s: {json.dumps(got)[:2000]}")


def test_a_worker_killed_mid_run_is_resumed_from_its_checkpoint_by_another_and_nothing_is_done_twice(service):
    from sqlalchemy import create_engine, text

    procs, pg_url = service
    db = create_engine(pg_url)

    # ten posts of the same alert at once, over HTTP, against PostgreSQL: one run
    answers: list[dict] = []
    body = webhook(instance="pod-1")
    posts = [threading.Thread(target=lambda: answers.append(
        httpx.post(f"{procs.url}/api/alerts", json=body, timeout=60).json())) for _ in range(10)]
    for t in posts:
        t.start()
    for t in posts:
        t.join()
    assert sorted(a["accepted"] for a in answers) == [0] * 9 + [1]
    killed_run = answers[0]["alerts"][0]["run_id"]

    procs.worker("a")
    t0, steps = time.monotonic(), 0
    while time.monotonic() - t0 < 300:  # wait until worker a is inside the run: some steps recorded
        with db.connect() as c:
            has = c.execute(text("SELECT to_regclass('inv_step')")).scalar()
            steps = c.execute(text("SELECT count(*) FROM inv_step WHERE run_id = :r"), {"r": killed_run}).scalar() \
                if has else 0
        if steps >= 3:
            break
        time.sleep(0.05)
    procs.kill("a")
    with db.connect() as c:
        status = c.execute(text("SELECT status FROM inv_run WHERE run_id = :r"), {"r": killed_run}).scalar()
    assert steps >= 3 and status == "running", f"the kill came mid-run ({steps} steps, {status})"

    procs.worker("b")
    reference = httpx.post(f"{procs.url}/api/alerts", json=webhook(fingerprint="b0000002", instance="pod-2"),
                           timeout=60).json()["alerts"][0]["run_id"]
    done = _wait_done(procs.url, [killed_run, reference])

    k, r = done[killed_run], done[reference]
    assert k["state"] == r["state"] == "done", (k["error"], r["error"])
    assert k["attempts"] == 2 and k["worker"] == "b@test", "redelivered once, finished by the other worker"
    assert r["attempts"] == 1
    assert f"resume {killed_run}:" in procs.log("b"), "worker b continued from the LangGraph checkpoint"
    assert k["verdicts"] == r["verdicts"] and k["stop"]["kind"] == r["stop"]["kind"]
    with db.connect() as c:
        runs = c.execute(text("SELECT run_id FROM inv_run ORDER BY run_id")).scalars().all()
        per_run = dict(c.execute(text("SELECT run_id, count(*) FROM inv_evidence GROUP BY run_id")).all())
        dup_keys = c.execute(text("SELECT count(*) FROM (SELECT run_id, key FROM inv_evidence "
                                  "GROUP BY run_id, key HAVING count(*) > 1) d")).scalar()
    assert sorted(runs) == sorted([killed_run, reference]), "one run per distinct alert"
    assert dup_keys == 0 and per_run[killed_run] == per_run[reference], per_run
    rep_k = httpx.get(f"{procs.url}/api/runs/{killed_run}/report").json()
    rep_r = httpx.get(f"{procs.url}/api/runs/{reference}/report").json()
    spans = lambda rep: sorted((e["source_id"], json.dumps(e["span"], sort_keys=True)) for e in rep["evidence"])  # noqa: E731
    assert spans(rep_k) == spans(rep_r), "the resumed run cites exactly what an uninterrupted run cites"


@pytest.fixture
def redis_url():
    redis = pytest.importorskip("redis")
    client = redis.Redis(host="127.0.0.1", port=6379, socket_connect_timeout=3)
    try:
        client.ping()
    except redis.RedisError as exc:
        pytest.skip(f"Redis not reachable: {exc}")
    prefix = f"inv_svc_{uuid.uuid4().hex[:10]}:"
    try:
        yield "redis://127.0.0.1:6379/0", prefix
    finally:  # this test's keys only: the server is shared
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
        client.close()


def test_the_scaled_mode_runs_on_redis_too(tmp_path, pg_url, redis_url):
    url, prefix = redis_url
    config = settings_file(tmp_path, store=pg_url, broker=url, broker_options={"global_keyprefix": prefix})
    procs = Processes(tmp_path, config)
    try:
        procs.serve()
        procs.worker("r")
        answer = httpx.post(f"{procs.url}/api/alerts", json=webhook(), timeout=60).json()
        repeat = httpx.post(f"{procs.url}/api/alerts", json=webhook(), timeout=60).json()
        run_id = answer["alerts"][0]["run_id"]
        assert answer["accepted"] == 1 and repeat["duplicates"] == 1
        done = _wait_done(procs.url, [run_id])[run_id]
    finally:
        procs.stop()
    assert done["state"] == "done" and done["worker"] == "r@test" and done["attempts"] == 1, done
    assert done["verdicts"]["causal_attribution"] == "confirmed"
