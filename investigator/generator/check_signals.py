"""Anomalies re-derived from a generated case's metric and log files (deciding.md §3/§4).

Written from the docs for the generator's own checks: every intended anomaly must pass the
stricter reading of a rule, every intended normal must fail the looser one.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> object:
    """YAML text as Python values, with the safe loader (libyaml's when present)."""
    return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a safe loader (libyaml's when present)


def load(case_dir: Path) -> tuple[dict, list[dict], dict]:
    case = load_yaml((case_dir / "case.yaml").read_text())
    manifest = load_yaml((case_dir / "sources.yaml").read_text())["sources"]
    expected = load_yaml((case_dir / "expected.yaml").read_text())
    return case, manifest, expected


def readable(entry: dict, case: dict) -> bool:
    return bool(set(entry["groups"]) & set(case["principal"]["groups"]))


_ROLES = [("latency", r"latency|duration|response_time|p9[059]|_ms$|_seconds$"),
          ("errors", r"error|errors|5xx|fail|exception|fault"),
          ("saturation", r"cpu|memory|mem_|heap|disk|conn|connections|queue|lag|pool|threads|steal|load|iops|util|saturation|used"),
          ("traffic", r"request|requests|rps|qps|throughput|traffic|calls|ops"),
          ("availability", r"success|availability|apdex|uptime")]

ENTITY_LABELS = ["service", "service_name", "app", "app_kubernetes_io_name", "job", "deployment", "workload", "container",
                 "pod", "node", "instance", "host", "db", "database", "queue", "topic"]


# -- series and anomalies (deciding.md §3) -----------------------------------------------------

@dataclass
class Series:
    source: str
    entity: str
    metric: str
    role: str
    unit: str
    env: str
    points: list[tuple[datetime, float]]


def _role(metric: str, unit: str, sidecar_role: str | None) -> str:
    if sidecar_role:
        return sidecar_role
    for role, pat in _ROLES:
        if re.search(pat, metric):
            return role
    return "unknown"


def _ts(v: str) -> datetime:
    if re.fullmatch(r"\d+(\.\d+)?", v):
        return datetime.fromtimestamp(float(v), tz=timezone.utc)
    return datetime.fromisoformat(v.replace("Z", "+00:00"))


def series(case_dir: Path, manifest: list[dict]) -> list[Series]:
    known = {e["service"] for e in manifest}
    cat = next((e for e in manifest if e["kind"] == "catalog"), None)
    if cat:
        for s in load_yaml((case_dir / cat["path"]).read_text()).get("services", []):
            known.add(s["name"])
    out: list[Series] = []
    for e in manifest:
        if e["kind"] != "metric":
            continue
        f = case_dir / e["path"]
        meta_p = Path(str(f) + ".meta.yaml")
        meta = load_yaml(meta_p.read_text()) if meta_p.is_file() else {}
        text = f.read_text()
        if f.suffix == ".csv":
            pts = []
            for line in text.splitlines()[1:]:
                ts, v = line.split(",")
                pts.append((_ts(ts), float(v)))
            out.append(Series(e["id"], meta["service"], meta["metric"], _role(meta["metric"], meta.get("unit", ""), meta.get("role")),
                              meta.get("unit", ""), meta.get("environment", e["environment"]), pts))
            continue
        data = json.loads(text)
        for res in data["data"]["result"]:
            labels = res["metric"]
            metric = labels.get("__name__") or meta.get("metric")
            ent = e["service"]
            for lab in ENTITY_LABELS:
                if lab in labels:
                    v = labels[lab]
                    if lab == "pod":
                        v = v.rsplit("-", 2)[0]
                    if lab == "instance":
                        v = v.split(":")[0]
                    if v in known:
                        ent = v
                        break
            pts = [(datetime.fromtimestamp(float(t), tz=timezone.utc), float(v)) for t, v in res["values"]]
            unit = meta.get("unit") or ("s" if metric.endswith("_seconds") else "")
            out.append(Series(e["id"], ent, metric, _role(metric, unit, meta.get("role")), unit, e["environment"], pts))
    return out


@dataclass
class Anomaly:
    onset: datetime
    rise: float        # median after onset minus baseline median (in the series' unit)
    direction: str


def detect(points: list[tuple[datetime, float]], start: datetime, end: datetime, baseline_min: int, lead_min: int,
           min_ratio: float, direction: str, *, strict: bool) -> Anomaly | None | str:
    """The first sustained crossing (§3), or None; 'unreadable' with fewer than 3 baseline points.

    strict=True uses the stricter reading where the docs leave room (a drop by the ratio as
    `median·(ratio−1)`), strict=False the looser one (`median·(1−1/ratio)`): an intended anomaly
    must pass the strict test, an intended normal must not pass the loose one.
    """
    b0, b1 = start - timedelta(minutes=baseline_min), start - timedelta(minutes=lead_min)
    base = [v for t, v in points if b0 <= t < b1 and v == v and abs(v) != float("inf")]
    if len(base) < 3:
        return "unreadable"
    med = statistics.median(base)
    mad = statistics.median([abs(v - med) for v in base])
    sigma = 1.4826 * mad
    rng = [(t, v) for t, v in points if b1 <= t <= end and v == v]
    dirs = ["up", "down"] if direction == "either" else [direction]
    best: Anomaly | None = None
    for d in dirs:
        if d == "up":
            thr = med + max(abs(med) * (min_ratio - 1), 5 * sigma, 1e-9)
            beyond = [v > thr for _, v in rng]
        else:
            drop = abs(med) * ((min_ratio - 1) if strict else (1 - 1 / min_ratio))
            thr = med - max(min(drop, abs(med)), 5 * sigma, 1e-9)
            beyond = [v < thr for _, v in rng]
        for i, ok in enumerate(beyond):
            if not ok:
                continue
            nxt = beyond[i + 1:i + 4]
            if (len(nxt) >= 3 and sum(nxt) >= 2) or (len(nxt) < 3 and all(nxt)):
                after = [v for _, v in rng[i:]]
                a = Anomaly(rng[i][0], statistics.median(after) - med, d)
                if best is None or a.onset < best.onset:
                    best = a
                break
    return best


def _direction(role: str) -> str:
    return {"latency": "up", "errors": "up", "saturation": "up", "availability": "down"}.get(role, "either")


def _ms(s: Series, v: float) -> float:
    return v * 1000 if s.unit == "s" else v


# -- logs ------------------------------------------------------------------------------------

_WARN = {"WARN", "WARNING", "warn", "warning", "警告", "W"}
_ERR = {"ERROR", "ERR", "error", "err", "FATAL", "错误", "E", "CRIT"}
_MON = {m: i + 1 for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])}


def log_events(text: str, entry: dict, year: int) -> list[tuple[datetime, int]]:
    """(time, severity 0 info / 1 warning / 2 error) of each parseable event of a generated log."""
    tz = entry.get("timezone")
    tzinfo = None
    if tz:
        sign = -1 if tz.startswith("-") else 1
        h, m = tz[1:].split(":")
        tzinfo = timezone(sign * timedelta(hours=int(h), minutes=int(m)))
    out = []
    for line in text.splitlines():
        if not line or line[0] in " \t":
            continue
        try:
            if line.startswith("{"):
                o = json.loads(line)
                lv = o.get("level")
                sev = 2 if lv in ("error", 50, "fatal") else 1 if lv in ("warn", "warning", 40) else 0
                t = o.get("ts") or o.get("time")
                out.append((_ts(str(t)) if not isinstance(t, int) else datetime.fromtimestamp(t / 1000, tz=timezone.utc), sev))
            elif line.startswith("ts="):
                kv = dict(re.findall(r'(\w[\w.]*)=("[^"]*"|\S+)', line))
                lv = kv.get("level", "info")
                out.append((_ts(kv["ts"]), 2 if lv == "error" else 1 if lv in ("warn", "warning") else 0))
            elif line.startswith("<"):
                pri = int(line[1:line.index(">")])
                sev = pri % 8
                rest = line[line.index(">") + 1:]
                if rest.startswith("1 "):
                    t = _ts(rest.split()[1])
                else:
                    mon, day, hms = rest.split()[:3]
                    hh, mm, ss = hms.split(":")
                    t = datetime(year, _MON[mon], int(day), int(hh), int(mm), int(ss), tzinfo=tzinfo)
                out.append((t, 2 if sev <= 3 else 1 if sev == 4 else 0))
            elif re.match(r"\d{4}-\d\d-\d\dT", line):
                ts, word = line.split()[:2]
                out.append((_ts(ts), 2 if word in _ERR else 1 if word in _WARN else 0))
            elif re.match(r"\[?\d{4}-\d\d-\d\d ", line):
                parts = line.lstrip("[").split()
                stamp = (parts[0] + " " + parts[1]).rstrip("]").replace(",", ".")
                t = datetime.fromisoformat(stamp)
                if parts[2] == "UTC":
                    t = t.replace(tzinfo=timezone.utc)
                    word = parts[4].rstrip(":")
                else:
                    t = t.replace(tzinfo=tzinfo)
                    word = parts[2]
                out.append((t, 2 if word in _ERR or word in ("ERROR", "FATAL") else 1 if word in _WARN or word == "WARNING" else 0))
        except (ValueError, KeyError, IndexError, json.JSONDecodeError):
            continue
    return out


def burst_onset(events: list[tuple[datetime, int]], start: datetime, end: datetime, baseline_min: int,
                lead_min: int) -> datetime | None:
    b0, b1 = start - timedelta(minutes=baseline_min), start - timedelta(minutes=lead_min)
    base_rate = sum(1 for t, s in events if b0 <= t < b1 and s >= 1) / max(1.0, (b1 - b0).total_seconds() / 60)
    warns = sorted(t for t, s in events if b1 <= t <= end and s >= 1)
    for i, t in enumerate(warns):
        n = sum(1 for u in warns[i:] if u <= t + timedelta(minutes=5))
        if n >= 3 and n / 5.0 >= 3 * base_rate:
            return t
    return None


# -- semantics ---------------------------------------------------------------------------------

def signal_problems(case_dir: Path) -> list[str]:
    case, manifest, expected = load(case_dir)
    meta = expected["generator"]
    w = case["window"]
    start, end = _ts(w["start"]), _ts(w["end"])
    base_m, lead_m = int(w["baseline"][:-1]), int(w["onset_lead"][:-1])
    env = case["subject"].split("/")[0]
    intended = {k: _ts(v) for k, v in meta["onsets"].items()}
    late = dict(meta["late_anomalies"])
    out: list[str] = []
    measured: dict[str, datetime] = {}
    rises: dict[tuple[str, str], float] = {}
    hyp_metrics = {(h["predicts"].get("entity", case["subject"].split("/")[1]), h["predicts"]["metric"]): h
                   for h in case.get("hypotheses", [])}
    subject = case["subject"].split("/", 1)[1]
    sym = next(c for c in case["required_claims"] if c["kind"] in ("symptom", "metric_shift"))
    sym_want = expected["claims"][sym["id"]]["verdict"]
    seen_symptom = False
    for s in series(case_dir, manifest):
        if s.env != env:
            continue
        a = detect(s.points, start, end, base_m, lead_m, 1.5, _direction(s.role), strict=False)
        if a == "unreadable":
            out.append(f"{s.source}/{s.entity}: baseline has fewer than 3 points")
            continue
        if s.entity == subject and s.metric == sym.get("metric"):
            seen_symptom = True
            sa = detect(s.points, start, end, base_m, lead_m, sym.get("min_ratio", 1.5), sym.get("direction", "up"),
                        strict=sym_want == "confirmed")
            if (sym_want == "confirmed") != isinstance(sa, Anomaly):
                out.append(f"symptom {sym['id']}: expected {sym_want}, series {s.source} disagrees")
        if (s.entity, s.metric) in hyp_metrics:
            h = hyp_metrics[(s.entity, s.metric)]
            p = h["predicts"]
            ha = detect(s.points, start, end, base_m, lead_m, p["min_ratio"], p["direction"],
                        strict=expected["claims"][f"{h['id']}_check"]["verdict"] == "confirmed")
            want = expected["claims"][f"{h['id']}_check"]["verdict"]
            if (want == "confirmed") != isinstance(ha, Anomaly):
                out.append(f"hypothesis {h['id']}: expected {want}, series {s.source} says {'moved' if ha else 'flat'}")
        if s.entity not in intended:
            if isinstance(a, Anomaly):
                out.append(f"{s.source}/{s.entity}/{s.metric}: anomalous at {a.onset} but intended normal")
            continue
        if not isinstance(a, Anomaly):
            if (s.entity, s.metric) not in hyp_metrics and s.role != "traffic":
                continue          # a normal series of an anomalous entity (another signal carries it)
            continue
        t0 = intended[s.entity]
        if not (t0 - timedelta(seconds=59) <= a.onset <= t0 + timedelta(minutes=1, seconds=59)):
            out.append(f"{s.source}/{s.entity}/{s.metric}: onset {a.onset} but intended {t0}")
        measured[s.entity] = min(measured.get(s.entity, a.onset), a.onset)
        if s.role in ("latency", "errors"):
            rises[(s.entity, s.role)] = _ms(s, a.rise) if s.role == "latency" else a.rise
    if not seen_symptom:
        out.append(f"no series {sym.get('metric')} of {subject}")
    # logs: no burst where nothing is intended; bursts never before the intended onset
    year = start.year
    for e in manifest:
        if e["kind"] != "log" or e["environment"] != env:
            continue
        evs = log_events((case_dir / e["path"]).read_text(), e, year)
        b = burst_onset(evs, start, end, base_m, lead_m)
        x = e["service"]
        if b is not None and x not in intended:
            out.append(f"{e['id']}: warning burst at {b} but {x} is intended normal")
        elif b is not None and b < intended[x] - timedelta(seconds=1):
            out.append(f"{e['id']}: burst at {b} before the intended onset {intended[x]}")
        if b is not None:
            measured[x] = min(measured.get(x, b), b)
    # the path: onsets in order (within the tolerance) and rises that explain their callers
    path = meta["true_path"]
    for a_, b_ in zip(path, path[1:]):
        if a_ in measured and b_ in measured and measured[b_] > measured[a_] + timedelta(minutes=2):
            out.append(f"hop {a_} -> {b_}: onset {measured[b_]} after {measured[a_]} + 2m")
        for role in ("latency", "errors"):
            ra, rb = rises.get((a_, role)), rises.get((b_, role))
            if ra and rb and rb < 0.5 * ra:
                out.append(f"hop {a_} -> {b_}: {role} rise {rb:.1f} < half of {ra:.1f}")
    for x, c in late.items():
        if x in measured and c in measured and measured[x] <= measured[c] + timedelta(minutes=2):
            out.append(f"late anomaly {x} at {measured[x]} within the tolerance of {c} ({measured[c]})")
    return out
