"""Load benchmark of `investigator serve` + `investigator worker` (a script, not a test).

    .venv/bin/python bench/service_load.py                      # 300 alerts, 30 % repeats, 4 workers, 5 SIGKILLs
    .venv/bin/python bench/service_load.py --alerts 30 --kills 1   # a quick look

What it does, all on this machine:
  - creates a PostgreSQL database and a RabbitMQ virtual host (dropped at the end unless --keep);
  - one folder of material per service: copies of shipped cases' sources (--cases), and for each an
    alert derived from that case's own alert (rule, subject, firing time, text);
  - starts one real `serve` process (uvicorn, --no-worker) and --workers real `worker` processes;
  - posts --alerts alerts to /api/alerts from 8 client threads as fast as they answer: (1 - repeats)
    of them distinct (pods of the services: an `instance` label and a fingerprint each), the rest
    repeats of alerts already sent; a fifth of the distinct ones as plain JSON alerts, the others as
    Alertmanager webhook payloads;
  - SIGKILLs a random busy worker (its whole process group) --kills times, at random points between 5 %
    and 80 % of the distinct alerts finished, and restarts it under the same name;
  - waits for every distinct alert to be done, then checks from the database: every distinct alert has
    exactly one ledger row and one run, finished; no evidence key twice in a run; every run of the same
    material has the same evidence (count and cited spans) as the others, killed or not;
  - writes bench/results/service-load.json and .md: exactly-once figures, alert -> report p50/p95,
    throughput per worker, redeliveries, what each kill hit, wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def alert_of(case_dir: Path) -> dict:
    """An Alertmanager alert for the case's own alert: its rule, subject, firing time and text."""
    case = yaml.safe_load((case_dir / "case.yaml").read_text())
    env, service = case["subject"].split("/", 1)
    fired = case["alert"]["fired_at"]
    return {"status": "firing", "labels": {"alertname": case["alert"]["rule"], "service": service,
                                           "environment": env, "severity": "page"},
            "annotations": {"summary": " ".join(str(case["alert"].get("text", "")).split())[:300]},
            "startsAt": fired if isinstance(fired, str) else fired.isoformat(),
            "endsAt": "0001-01-01T00:00:00Z"}


def make_alerts(bases: list[dict], total: int, repeat_share: float, rng: random.Random) -> tuple[list[dict], int]:
    """(posts in order, number of distinct alerts): every repeat re-sends an alert already posted."""
    distinct = round(total * (1 - repeat_share))
    made = []
    for i in range(distinct):
        base = bases[i % len(bases)]
        a = json.loads(json.dumps(base))
        a["labels"]["instance"] = f"pod-{i:04d}"
        plain = i % 5 == 4
        if plain:
            body = a  # a plain JSON alert: fingerprint computed from its labels
        else:
            a["fingerprint"] = uuid.UUID(int=rng.getrandbits(128)).hex[:16]
            body = {"version": "4", "groupKey": f"{{}}:{{alertname=\"{a['labels']['alertname']}\"}}",
                    "status": "firing", "receiver": "oncall", "groupLabels": {"alertname": a["labels"]["alertname"]},
                    "commonLabels": {"alertname": a["labels"]["alertname"]}, "commonAnnotations": {},
                    "externalURL": "http://alertmanager.invalid:9093", "alerts": [a]}
        made.append(body)
    posts = list(made)
    for _ in range(total - distinct):  # repeats, interleaved after their first post
        i = rng.randrange(len(posts))
        posts.insert(rng.randrange(i + 1, len(posts) + 1), posts[i])
    return posts, distinct


class Cluster:
    def __init__(self, work: Path, config: Path, port: int) -> None:
        self.work, self.config, self.port = work, config, port
        self.url = f"http://127.0.0.1:{port}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.starts: Counter = Counter()

    def start(self, name: str, *args: str) -> None:
        self.starts[name] += 1
        logf = open(self.work / f"{name}.{self.starts[name]}.log", "w")  # noqa: SIM115
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "investigator.cli", *args, "--config", str(self.config)],
            stdout=logf, stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)})

    def serve(self) -> None:
        self.start("serve", "serve", "--no-worker", "--port", str(self.port))
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.3)
        raise SystemExit("serve did not start; see " + str(self.work / "serve.1.log"))

    def worker(self, name: str) -> None:
        self.start(name, "worker", "--name", name, "--log-level", "info")

    def kill(self, name: str) -> None:
        p = self.procs[name]
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(30)

    def stop(self) -> None:
        for p in self.procs.values():
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return round(s[min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))], 2) if s else float("nan")


def main() -> int:  # noqa: PLR0915 - one script, top to bottom
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alerts", type=int, default=300)
    ap.add_argument("--repeats", type=float, default=0.30, help="share of posts that repeat an earlier alert")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--cases", nargs="+", default=["ALR-20260819-204", "INC-20260611-042", "ALR-20260429-017"],
                    help="shipped cases whose sources (and alert) make each service's material")
    ap.add_argument("--broker", default="amqp://guest:guest@127.0.0.1:5672", help="RabbitMQ (a vhost is added)")
    ap.add_argument("--timeout", type=float, default=5400)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "service-load"))
    ap.add_argument("--keep", action="store_true", help="keep the database, vhost and work folder")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    import psycopg
    from sqlalchemy import create_engine, text

    work = Path(tempfile.mkdtemp(prefix="inv-svc-load-"))
    db_name, vhost = f"inv_load_{uuid.uuid4().hex[:8]}", f"inv_load_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(ADMIN, autocommit=True)
    admin.execute(f'CREATE DATABASE "{db_name}"')
    subprocess.run(["rabbitmqctl", "add_vhost", vhost], check=True, capture_output=True)
    subprocess.run(["rabbitmqctl", "set_permissions", "-p", vhost, "guest", ".*", ".*", ".*"], check=True,
                   capture_output=True)
    store = f"postgresql+psycopg://postgres@127.0.0.1:5432/{db_name}"
    roots, bases = {}, []
    for cid in args.cases:
        base = alert_of(ROOT / "cases" / cid)
        service = base["labels"]["service"]
        shutil.copytree(ROOT / "cases" / cid / "sources", work / "material" / service)
        roots[service] = str(work / "material" / service)
        bases.append(base)
    config = work / "service.yaml"
    config.write_text(yaml.safe_dump({"home": str(work / "home"), "store": store, "broker": f"{args.broker}/{vhost}",
                                      "sources": {"by": "service", "roots": roots}}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cluster = Cluster(work, config, port)
    db = create_engine(store)
    names = [f"w{i + 1}" for i in range(args.workers)]
    posts, distinct = make_alerts(bases, args.alerts, args.repeats, rng)
    kill_at = sorted(rng.uniform(0.05, 0.80) for _ in range(args.kills))
    kills: list[dict] = []
    answers: list[dict] = []
    post_errors: list[str] = []
    started = datetime.now(timezone.utc)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    try:
        cluster.serve()
        for n in names:
            cluster.worker(n)
        log(f"serve on {cluster.url}, {len(names)} workers; posting {len(posts)} alerts ({distinct} distinct)")
        t0 = time.monotonic()
        queue = list(enumerate(posts))
        lock = threading.Lock()

        def client() -> None:
            with httpx.Client(timeout=120) as http:
                while True:
                    with lock:
                        if not queue:
                            return
                        _i, body = queue.pop(0)
                    r = http.post(cluster.url + "/api/alerts", json=body)
                    if r.status_code != 202:
                        post_errors.append(f"{r.status_code} {r.text[:200]}")
                    else:
                        answers.append(r.json())

        clients = [threading.Thread(target=client) for _ in range(8)]
        for c in clients:
            c.start()
        for c in clients:
            c.join()
        post_seconds = time.monotonic() - t0
        log(f"posted in {post_seconds:.1f} s ({len(post_errors)} errors)")

        def done_count() -> int:
            with db.connect() as c:
                return c.execute(text("SELECT count(*) FROM svc_alert WHERE state IN ('done', 'failed')")).scalar()

        last = -1
        while time.monotonic() - t0 < args.timeout:
            finished = done_count()
            if kill_at and finished >= kill_at[0] * distinct:
                kill_at.pop(0)
                with db.connect() as c:
                    busy = c.execute(text("SELECT a.worker, a.run_id, r.status FROM svc_alert a LEFT JOIN inv_run r "
                                          "ON r.run_id = a.run_id WHERE a.state = 'running'")).all()
                live = [b for b in busy if b[0] in cluster.procs]
                victim = rng.choice(live) if live else (rng.choice(names), None, None)
                cluster.kill(victim[0])
                kills.append({"at_finished": finished, "seconds": round(time.monotonic() - t0, 1),
                              "worker": victim[0], "run_id": victim[1],
                              "hit": "mid-run" if victim[2] == "running" else
                                     ("before the run existed (init/index)" if victim[1] else "an idle worker")})
                log(f"SIGKILL {victim[0]} at {finished}/{distinct} finished ({kills[-1]['hit']}: {victim[1]})")
                cluster.worker(victim[0])
            if finished >= distinct:
                break
            if finished != last and finished % 10 == 0:
                log(f"{finished}/{distinct} finished")
            last = finished
            time.sleep(0.5)
        wall = time.monotonic() - t0
        log(f"all finished in {wall:.1f} s" if done_count() >= distinct else f"timed out after {wall:.1f} s")
    finally:
        cluster.stop()

    # figures from the database -------------------------------------------------------------
    with db.connect() as c:
        rows = [dict(r._mapping) for r in c.execute(text(
            "SELECT key, run_id, root, state, error, repeats, attempts, worker, received_at, started_at, finished_at "
            "FROM svc_alert"))]
        runs = c.execute(text("SELECT run_id, status, stop_kind FROM inv_run")).all()
        dup_keys = c.execute(text("SELECT count(*) FROM (SELECT run_id, key FROM inv_evidence GROUP BY run_id, key "
                                  "HAVING count(*) > 1) d")).scalar()
        ev = defaultdict(list)
        for run_id, source_id, payload in c.execute(text("SELECT run_id, source_id, payload FROM inv_evidence")):
            span = json.loads(payload).get("span")
            ev[run_id].append((source_id, json.dumps(span, sort_keys=True) if span else ""))
    by_run = {r["run_id"]: r for r in rows}
    signature = {run: tuple(sorted(items)) for run, items in ev.items()}
    per_root: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        per_root[r["root"]][len(signature.get(r["run_id"], ()))] += 1
    sigs_per_root = {root: len({signature.get(r["run_id"]) for r in rows if r["root"] == root}) for root in per_root}
    killed_runs = {k["run_id"] for k in kills if k["run_id"]}
    killed_same = all(signature.get(rid) == next(signature.get(r["run_id"]) for r in rows
                                                 if r["root"] == by_run[rid]["root"] and r["run_id"] not in killed_runs)
                      for rid in killed_runs if rid in by_run)
    latencies = [(r["finished_at"] - r["received_at"]).total_seconds() for r in rows if r["state"] == "done"]
    work_s = [(r["finished_at"] - r["started_at"]).total_seconds() for r in rows
              if r["state"] == "done" and r["attempts"] == 1]
    logs = "".join(p.read_text(errors="replace") for p in work.glob("w*.log"))
    engine_retries = logs.count("] retry: ")
    first_post = min(r["received_at"] for r in rows)
    last_done = max((r["finished_at"] for r in rows if r["finished_at"]), default=first_post)
    span_s = (last_done - first_post).total_seconds()
    per_worker = Counter(r["worker"] for r in rows if r["state"] == "done")
    accepted = sum(a["accepted"] for a in answers)
    duplicates = sum(a["duplicates"] for a in answers)
    result = {
        "command": "python bench/service_load.py " + " ".join(sys.argv[1:]),
        "commit": commit,
        "started": started.isoformat(timespec="seconds"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "host": platform.node(),
                    "note": f"shared with other engineers' work; {args.workers} worker processes, serve and the clients on them"},
        "setup": {
            "alerts_posted": len(posts), "distinct_alerts": distinct, "repeats_posted": len(posts) - distinct,
            "workers": args.workers, "kills_planned": args.kills,
            "engine": "Celery 5 on RabbitMQ (vhost per run), acks_late + reject_on_worker_lost, prefetch 1, prefork x1",
            "store": "PostgreSQL (store, alert ledger and LangGraph checkpoints)",
            "material": {b["labels"]["service"]: f"cases/{cid}/sources" for cid, b in zip(args.cases, bases)},
            "per_alert_work": "init a case from the service's material (copy + detect + validate), copy the "
                              "service's seed index (the first alert of each service builds it), run the "
                              "deterministic investigation (basic retrieval) to a stop reason, write report.json/md/html",
        },
        "posting": {"seconds": round(post_seconds, 1), "http_errors": len(post_errors), "accepted": accepted,
                    "duplicates_answered": duplicates},
        "exactly_once": {
            "ledger_rows": len(rows), "runs_in_store": len(runs), "distinct_alerts": distinct,
            "done": sum(r["state"] == "done" for r in rows), "failed": sum(r["state"] == "failed" for r in rows),
            "runs_stopped": sum(r[1] == "stopped" for r in runs),
            "every_distinct_alert_one_run": len(rows) == distinct == len(runs) and all(r["run_id"] in by_run
                                                                                         for r in [dict(x._mapping) for x in runs]),
            "repeats_counted": sum(r["repeats"] for r in rows),
            "evidence_keys_twice_in_a_run": dup_keys,
            "evidence_count_per_run_by_material": {k: dict(v) for k, v in per_root.items()},
            "distinct_evidence_sets_per_material": sigs_per_root,
            "killed_runs_cite_what_uninterrupted_runs_cite": killed_same,
            "errors": sorted({r["error"] for r in rows if r["error"]}),
        },
        "redeliveries": {"alerts_with_more_than_one_attempt": sum(r["attempts"] > 1 for r in rows),
                         "attempts_histogram": dict(Counter(r["attempts"] for r in rows)),
                         "engine_retries_logged": engine_retries},
        "kills": kills,
        "latency_alert_to_report_s": {"p50": pct(latencies, 0.50), "p95": pct(latencies, 0.95),
                                      "max": round(max(latencies), 2) if latencies else None,
                                      "mean": round(statistics.mean(latencies), 2) if latencies else None},
        "work_per_alert_s": {"p50": pct(work_s, 0.50), "p95": pct(work_s, 0.95),
                             "note": "a worker's time on one alert delivered once (taken -> report written)"},
        "throughput": {"wall_seconds_first_alert_to_last_report": round(span_s, 1),
                       "investigations_per_minute": round(len(latencies) / span_s * 60, 2) if span_s else None,
                       "per_worker": {w: {"done": n, "per_minute": round(n / span_s * 60, 2)}
                                      for w, n in sorted(per_worker.items())}},
        "stop_reasons": dict(Counter(r[2] for r in runs)),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2, default=str))
    out.with_suffix(".md").write_text(to_markdown(result))
    print(to_markdown(result))
    if not args.keep:
        admin.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        subprocess.run(["rabbitmqctl", "delete_vhost", vhost], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    else:
        log(f"kept: {work}, database {db_name}, vhost {vhost}")
    ok = result["exactly_once"]
    return 0 if (ok["every_distinct_alert_one_run"] and ok["evidence_keys_twice_in_a_run"] == 0
                 and ok["done"] == distinct) else 1


def to_markdown(r: dict) -> str:
    e, lat, th, s = r["exactly_once"], r["latency_alert_to_report_s"], r["throughput"], r["setup"]
    lines = [
        "# Service load benchmark", "",
        f"`{r['command']}` at commit {r['commit']} — started {r['started']} on {r['machine']['cores']} cores "
        f"({r['machine']['note']}).", "",
        f"- {s['alerts_posted']} alerts posted ({s['distinct_alerts']} distinct, {s['repeats_posted']} repeats) "
        f"in {r['posting']['seconds']} s, {r['posting']['http_errors']} HTTP errors; "
        f"{s['workers']} workers; {len(r['kills'])} SIGKILLs of a worker's process group (restarted at once).",
        f"- Engine: {s['engine']}. Store: {s['store']}.",
        f"- Material per service: " + ", ".join(f"{k} ← {v}" for k, v in s["material"].items()) + ".",
        f"- Per alert: {s['per_alert_work']}.", "",
        "## Exactly once", "",
        "| figure | value |", "| --- | --- |",
        f"| distinct alerts / ledger rows / runs in the store | {e['distinct_alerts']} / {e['ledger_rows']} / {e['runs_in_store']} |",
        f"| done / failed / runs stopped | {e['done']} / {e['failed']} / {e['runs_stopped']} |",
        f"| every distinct alert investigated exactly once | {e['every_distinct_alert_one_run']} |",
        f"| repeats recorded on the ledger (posted) | {e['repeats_counted']} ({s['repeats_posted']}) |",
        f"| evidence keys twice in one run | {e['evidence_keys_twice_in_a_run']} |",
        f"| evidence items per run, by material (count: runs) | {e['evidence_count_per_run_by_material']} |",
        f"| distinct cited-evidence sets per material (1 = every run the same) | {e['distinct_evidence_sets_per_material']} |",
        f"| killed runs cite exactly what uninterrupted runs of the same material cite | {e['killed_runs_cite_what_uninterrupted_runs_cite']} |",
        f"| alerts delivered more than once (redelivery/retry) | {r['redeliveries']['alerts_with_more_than_one_attempt']} "
        f"(attempts: {r['redeliveries']['attempts_histogram']}; engine retries logged: "
        f"{r['redeliveries']['engine_retries_logged']}) |",
        "", "## Kills", "", "| # | after finished | s | worker | what it hit | run |", "| --- | --- | --- | --- | --- | --- |",
    ]
    for i, k in enumerate(r["kills"], 1):
        lines.append(f"| {i} | {k['at_finished']} | {k['seconds']} | {k['worker']} | {k['hit']} | {k['run_id'] or '—'} |")
    lines += ["", "## Time and throughput", "",
              f"- Alert → report: p50 {lat['p50']} s, p95 {lat['p95']} s, max {lat['max']} s, mean {lat['mean']} s "
              "(received by the endpoint → report written; includes the wait in the queue).",
              f"- A worker's time on one alert (taken → report written, alerts delivered once): "
              f"p50 {r['work_per_alert_s']['p50']} s, p95 {r['work_per_alert_s']['p95']} s.",
              f"- First alert → last report: {th['wall_seconds_first_alert_to_last_report']} s; "
              f"{th['investigations_per_minute']} investigations/min overall.",
              "- Per worker (a worker slot across its restarts): " + ", ".join(
                  f"{w} {v['done']} done ({v['per_minute']}/min)" for w, v in th["per_worker"].items()) + ".",
              f"- Stop reasons: {r['stop_reasons']}."]
    if e["errors"]:
        lines += ["", "Errors: " + "; ".join(e["errors"])]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
