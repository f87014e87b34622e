"""A small, independent loader of case folders for the metric-based RCA baselines.

It reads only what the baselines are given -- the metric series and the call graph -- from a
case folder in the documented format (docs/case-format.md):

* ``case.yaml``: subject (``env/service``), window start/end, baseline length, alert time,
  the principal's groups;
* ``sources.yaml``: the manifest (kind, format, path, environment, service, groups);
* metrics: CSV ``ts,value`` with a ``<file>.meta.yaml`` sidecar, or Prometheus range-query
  JSON with labelled series (entity from the labels, docs/profile.md ``entity_labels``);
* the call graph: catalog ``services[].depends_on`` / ``runs_on`` / ``aliases``,
  ``components[].talks_to``; OTLP / Jaeger traces (parent span's service -> child span's
  service, ``peer.service``); Kubernetes pods (``-o json`` or ``-o wide``: pod -> workload,
  workload -> node);
* ``expected.yaml``: the gold ``root_cause`` and the generator's metadata.

It deliberately does not import the runtime's parsers (tools/, graphs/): the harness must
stay independent of the system it is compared with. It needs only NumPy and PyYAML, so it
runs both in the project's venv (the tests) and in bench/baselines/.venv.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import yaml

# docs/profile.md: `entity_labels` (in order) and `host_suffixes`
ENTITY_LABELS = ("service", "service_name", "app", "app_kubernetes_io_name", "job", "deployment",
                 "workload", "container", "pod", "node", "instance", "host", "db", "database",
                 "queue", "topic")
HOST_SUFFIXES = (".svc.cluster.local", ".svc", ".cluster.local", ".internal", ".local")
# docs/profile.md: `metric_roles` (regular expressions on metric names and units); checked in
# this order so that `error_rate` is an error series, not traffic
ROLE_PATTERNS = (
    ("errors", r"error|errors|5xx|fail|exception|fault"),
    ("availability", r"success|availability|apdex|uptime"),
    ("latency", r"latency|duration|response_time|p9[059]|_ms$|_seconds$"),
    ("saturation", r"cpu|memory|mem_|heap|disk|conn|connections|queue|lag|pool|threads|steal|load"
                   r"|iops|util|saturation|used"),
    ("traffic", r"request|requests|rps|qps|throughput|traffic|calls|ops"),
)
# docs/profile.md: `relation_fields` that a span may carry (A depends on the entity named)
SPAN_RELATION_FIELDS = ("peer.service", "db.name", "db.instance", "db", "messaging.destination",
                        "messaging.destination.name", "server.address", "net.peer.name", "upstream",
                        "callee", "target", "remote_service")
STEP = 60  # seconds: the common minute grid


class CaseError(Exception):
    """A case folder the loader cannot use (the message says which file and why)."""


# --------------------------------------------------------------------------- small parsers

def parse_time(value: Any, tz: str | None = None) -> float:
    """ISO 8601 (with offset or Z; `tz` for stamps without a zone) or epoch s/ms/us/ns -> epoch s."""
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return _epoch(float(value))
    else:
        text = str(value).strip()
        if re.fullmatch(r"-?\d+(\.\d+)?", text):
            return _epoch(float(text))
        if text.endswith("Z"):
            text = text[:-1] + "+00:00"
        dt = datetime.fromisoformat(text.replace(" ", "T", 1) if "T" not in text else text)
    if dt.tzinfo is None:
        if not tz:
            raise ValueError(f"timestamp {value!r} has no zone")
        dt = dt.replace(tzinfo=_zone(tz))
    return dt.timestamp()


def _epoch(x: float) -> float:
    # seconds < 1e11 (year 5138); then ms, us, ns
    for div in (1.0, 1e3, 1e6, 1e9):
        if abs(x) / div < 1e11:
            return x / div
    return x / 1e9


def _zone(tz: str) -> timezone:
    m = re.fullmatch(r"([+-])(\d{2}):?(\d{2})", tz.strip())
    if tz.strip().upper() in ("Z", "UTC"):
        return timezone.utc
    if not m:
        raise ValueError(f"unsupported timezone {tz!r}")
    sign = 1 if m.group(1) == "+" else -1
    return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))


def parse_duration(value: Any, default: float) -> float:
    """`45m`, `2h`, `90s`, `1h30m`, `1d` -> seconds."""
    if value is None:
        return default
    if isinstance(value, (int, float)):
        return float(value)
    total, text = 0.0, str(value).strip()
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd])", text)
    if not parts or "".join(a + b for a, b in parts) != re.sub(r"\s+", "", text):
        raise ValueError(f"bad duration {value!r}")
    for num, unit in parts:
        total += float(num) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]
    return total


def guess_role(metric: str, unit: str | None = None) -> str:
    name = metric.lower()
    for role, pattern in ROLE_PATTERNS:
        if re.search(pattern, name):
            return role
    u = (unit or "").strip().lower()
    if u in ("ms", "s", "us", "seconds", "milliseconds"):
        return "latency"
    if u in ("rps", "qps", "requests/s", "req/s"):
        return "traffic"
    return "saturation"


def _load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise CaseError(f"{path}: missing") from exc
    except yaml.YAMLError as exc:
        raise CaseError(f"{path}: not YAML ({exc})") from exc


def _load_json_any(text: str) -> list[Any]:
    """One JSON document, or one per line (the OTLP file exporter)."""
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        out = []
        for line in text.splitlines():
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
        return out


# --------------------------------------------------------------------------- the case

@dataclass
class Series:
    entity: str
    metric: str
    role: str
    unit: str | None
    source: str
    points: list[tuple[float, float]]


@dataclass
class Case:
    case_id: str
    path: str
    subject_env: str
    subject: str
    window_start: float
    window_end: float
    baseline_s: float
    onset_lead_s: float
    fired_at: float | None
    grid: np.ndarray                    # epoch seconds, one a minute, baseline + window
    n_baseline: int                     # rows before window_start - onset_lead (normal)
    columns: list[dict]                 # {name, entity, metric, role, unit, sources}
    values: np.ndarray                  # len(grid) x len(columns)
    entities: list[str]                 # every known entity
    dependencies: list[tuple[str, str, str]]   # (dependent, dependency, origin): A depends on B
    aliases: dict[str, str]
    gold: dict | None
    scored: bool
    notes: list[str] = field(default_factory=list)

    # --- derived views -------------------------------------------------------------
    @property
    def metric_entities(self) -> list[str]:
        seen: dict[str, None] = {}
        for c in self.columns:
            seen.setdefault(c["entity"], None)
        return list(seen)

    def canonical(self, name: str | None) -> str | None:
        if name is None:
            return None
        return self.aliases.get(name, self.aliases.get(name.lower(), name))

    def causal_entity_edges(self) -> list[tuple[str, str]]:
        """Cause -> effect between entities: a dependency's fault reaches its dependents."""
        return sorted({(b, a) for a, b, _ in self.dependencies if a != b})

    def to_summary(self) -> dict:
        return {
            "case_id": self.case_id, "path": self.path, "subject": f"{self.subject_env}/{self.subject}",
            "window": [_iso(self.window_start), _iso(self.window_end)],
            "fired_at": _iso(self.fired_at) if self.fired_at else None,
            "grid": {"start": _iso(float(self.grid[0])) if len(self.grid) else None,
                     "points": int(len(self.grid)), "baseline_points": int(self.n_baseline),
                     "abnormal_from": _iso(self.window_start - self.onset_lead_s)},
            "n_columns": len(self.columns), "metric_entities": self.metric_entities,
            "entities": len(self.entities), "dependency_edges": len(self.dependencies),
            "notes": self.notes,
        }


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def find_cases(roots: Iterable[str | Path]) -> list[Path]:
    """Every folder under the roots (or a root itself) that has a case.yaml."""
    out: list[Path] = []
    for root in roots:
        root = Path(root)
        if (root / "case.yaml").is_file():
            out.append(root)
            continue
        out.extend(sorted(p.parent for p in root.rglob("case.yaml")))
    seen, uniq = set(), []
    for p in out:
        if p.resolve() not in seen:
            seen.add(p.resolve())
            uniq.append(p)
    return uniq


def load_case(case_dir: str | Path, *, respect_access: bool = True, trace_metrics: bool = True,
              gold_override: dict | None = None) -> Case:
    case_dir = Path(case_dir)
    case = _load_yaml(case_dir / "case.yaml") or {}
    manifest = _load_yaml(case_dir / "sources.yaml") or {}
    notes: list[str] = []

    case_id = str(case.get("id") or case_dir.name)
    subject = str(case.get("subject") or "")
    if "/" not in subject:
        raise CaseError(f"{case_dir}/case.yaml: subject {subject!r} is not env/service")
    subject_env, subject_svc = subject.split("/", 1)
    window = case.get("window") or {}
    try:
        w_start = parse_time(window["start"])
        w_end = parse_time(window["end"])
    except (KeyError, ValueError) as exc:
        raise CaseError(f"{case_dir}/case.yaml: window.start/end: {exc}") from exc
    baseline = parse_duration(window.get("baseline"), 30 * 60)
    onset_lead = parse_duration(window.get("onset_lead"), 10 * 60)
    fired = (case.get("alert") or {}).get("fired_at")
    fired_at = parse_time(fired) if fired else None
    groups = set((case.get("principal") or {}).get("groups") or [])

    sources = [s for s in (manifest.get("sources") or []) if isinstance(s, dict)]
    usable: list[dict] = []
    for s in sources:
        env = str(s.get("environment", "*"))
        if env not in ("*", subject_env):
            continue
        sg = s.get("groups")
        if respect_access and sg is not None and groups and not (set(sg) & groups):
            if s.get("kind") in ("metric", "trace", "catalog", "kubernetes"):
                notes.append(f"source {s.get('id')}: not readable by the principal, left out")
            continue
        usable.append(s)

    # 1. the call graph: catalog, placement, traces
    deps: set[tuple[str, str, str]] = set()
    aliases: dict[str, str] = {}
    known: set[str] = set()
    pods: dict[str, tuple[str, str | None]] = {}      # pod name -> (workload, node)
    trace_spans: list[tuple[str, float, float, bool]] = []   # service, start, duration ms, error
    soft: set[tuple[str, str]] = set()                        # span attributes naming a peer

    for s in usable:
        if s.get("kind") == "catalog":
            _read_catalog(case_dir / s["path"], deps, aliases, known, notes)
        elif s.get("service") not in (None, "*"):
            known.add(str(s["service"]))
    known.add(subject_svc)
    for s in usable:
        if s.get("kind") == "kubernetes":
            _read_pods(case_dir / s["path"], s, pods, known, notes)
    for pod, (workload, node) in pods.items():
        known.add(workload)
        if node:
            known.add(node)
            deps.add((workload, node, "placement"))
    for s in usable:
        if s.get("kind") == "trace":
            _read_traces(case_dir / s["path"], s, deps, soft, known, trace_spans, notes)

    def resolve(name: str) -> str:
        n = str(name)
        if n in aliases:
            return aliases[n]
        if n in pods:
            return pods[n][0]
        host = n.rsplit(":", 1)[0] if re.search(r":\d+$", n) else n
        for suf in HOST_SUFFIXES:
            if host.endswith(suf):
                host = host[: -len(suf)]
                break
        if host in aliases:
            return aliases[host]
        if host in known:
            return host
        # `svc.namespace` host names
        head = host.split(".")[0]
        if head in known:
            return head
        # a pod or ReplicaSet name not listed in a pods source
        for cand in _workload_candidates(n, [], {}):
            if cand in known:
                return cand
        return aliases.get(n, n)

    deps |= {(a, b, "trace") for a, b in soft if resolve(b) in known}
    deps = {(resolve(a), resolve(b), o) for a, b, o in deps}
    deps = {(a, b, o) for a, b, o in deps if a != b}

    # 2. metric series
    series: list[Series] = []
    for s in usable:
        if s.get("kind") != "metric":
            continue
        path = case_dir / str(s.get("path", ""))
        try:
            series.extend(_read_metric(path, s, known, resolve, subject_env, notes))
        except (OSError, ValueError, KeyError, TypeError, CaseError) as exc:
            notes.append(f"source {s.get('id')}: unreadable metric ({exc})")
    if trace_metrics and trace_spans:
        series.extend(_span_series(trace_spans, resolve))

    # 3. the minute grid: baseline + window
    g0 = math.floor((w_start - baseline) / STEP) * STEP
    g1 = math.floor(w_end / STEP) * STEP
    grid = np.arange(g0, g1 + STEP, STEP, dtype=float)
    # docs/deciding.md §3: the baseline is [start - baseline, start - onset_lead), the search
    # range [start - onset_lead, end]: the same normal/abnormal split for every method
    split = w_start - onset_lead
    n_base = int(np.sum(grid < split))
    columns, values = _align(series, grid, notes)

    # 4. gold
    gold, scored = _read_gold(case_dir, gold_override.get(case_id) if gold_override else None)
    entities = sorted(known | {a for a, _, _ in deps} | {b for _, b, _ in deps}
                      | {c["entity"] for c in columns})
    c = Case(case_id=case_id, path=str(case_dir), subject_env=subject_env, subject=resolve(subject_svc),
             window_start=w_start, window_end=w_end, baseline_s=baseline, onset_lead_s=onset_lead,
             fired_at=fired_at,
             grid=grid, n_baseline=n_base, columns=columns, values=values, entities=entities,
             dependencies=sorted(deps), aliases=aliases, gold=gold, scored=scored, notes=notes)
    if gold and gold.get("entity"):
        gold["entity"] = c.canonical(resolve(gold["entity"]))
    return c


def _read_catalog(path: Path, deps: set, aliases: dict, known: set, notes: list) -> None:
    try:
        data = _load_yaml(path) or {}
    except CaseError as exc:
        notes.append(str(exc))
        return
    for svc in data.get("services") or []:
        if not isinstance(svc, dict) or not svc.get("name"):
            continue
        name = str(svc["name"])
        known.add(name)
        for a in svc.get("aliases") or []:
            aliases[str(a)] = name
        for d in svc.get("depends_on") or []:
            deps.add((name, str(d), "catalog"))
            known.add(str(d))
        for n in svc.get("runs_on") or []:
            deps.add((name, str(n), "placement"))
            known.add(str(n))
    for comp in data.get("components") or []:
        if not isinstance(comp, dict) or not comp.get("name"):
            continue
        name = str(comp["name"])
        known.add(name)
        for a in comp.get("aliases") or []:
            aliases[str(a)] = name
        for t in comp.get("talks_to") or []:
            deps.add((name, str(t), "catalog"))
            known.add(str(t))


_POD_SUFFIX = re.compile(r"-[a-z0-9]{5}$")        # the pod's own random suffix
_RS_HASH = re.compile(r"-[a-z0-9]{6,10}$")        # a ReplicaSet's pod-template hash


def _workload_candidates(pod: str, owners: list[dict], labels: dict) -> list[str]:
    """Names the pod's workload may have, most trusted first; the caller keeps the first
    that is a known entity (so a plain name such as `fleet-manager` stays whole)."""
    cands = [labels.get("app.kubernetes.io/name"), labels.get("app"), labels.get("k8s-app")]
    for o in owners:
        name = str(o.get("name", ""))
        if o.get("kind") == "ReplicaSet":
            h = labels.get("pod-template-hash")
            cands.append(name[: -len(h) - 1] if h and name.endswith("-" + h) else _RS_HASH.sub("", name))
        elif name:
            cands.append(name)
    base = _POD_SUFFIX.sub("", pod)
    cands += [pod, base, _RS_HASH.sub("", base), re.sub(r"-\d+$", "", pod)]
    return [c for c in cands if c]


def _guess_workload(pod: str) -> str:
    return _RS_HASH.sub("", _POD_SUFFIX.sub("", pod))


def _pick(cands: list[str], known: set, fallback: str) -> str:
    for c in cands:
        if c in known:
            return c
    return fallback


def _read_pods(path: Path, s: dict, pods: dict, known: set, notes: list) -> None:
    fmt = str(s.get("format") or "auto")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        notes.append(f"source {s.get('id')}: {exc}")
        return
    doc = None
    if fmt in ("auto", "pods"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            try:
                doc = yaml.safe_load(text)
            except yaml.YAMLError:
                doc = None
    if isinstance(doc, dict) and isinstance(doc.get("items"), list):
        items = doc["items"]
        if not any(isinstance(i, dict) and (i.get("spec") or {}).get("nodeName") for i in items) \
                and doc.get("kind") != "PodList":
            return  # events or something else
        for it in items:
            meta, spec = it.get("metadata") or {}, it.get("spec") or {}
            name = str(meta.get("name") or "")
            if not name:
                continue
            labels = meta.get("labels") or {}
            cands = _workload_candidates(name, meta.get("ownerReferences") or [], labels)
            workload = _pick(cands, known, cands[0] if cands[0] != name else _guess_workload(name))
            pods[name] = (workload, spec.get("nodeName"))
        return
    if fmt in ("auto", "pods-wide"):
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not lines or not re.match(r"^(NAMESPACE\s+)?NAME\s", lines[0]):
            return
        header = lines[0]
        m_name = re.search(r"\bNAME\b", header)
        m_node = re.search(r"(?<!NOMINATED )\bNODE\b", header)
        if not m_node or not m_name:
            return
        for ln in lines[1:]:
            name = ln[m_name.start():].split()[0] if len(ln) > m_name.start() else ""
            node = ln[m_node.start():].split()[0] if len(ln) > m_node.start() else ""
            if name:
                pods[name] = (_pick(_workload_candidates(name, [], {}), known, _guess_workload(name)),
                              node if node and node != "<none>" else None)


def _attr_map(attrs: Any) -> dict:
    out = {}
    if isinstance(attrs, dict):
        return attrs
    for a in attrs or []:
        if isinstance(a, dict) and "key" in a:
            v = a.get("value")
            if isinstance(v, dict):
                v = next(iter(v.values()), None) if v else None
            out[a["key"]] = v
    return out


def _read_traces(path: Path, s: dict, deps: set, soft: set, known: set, spans_out: list,
                 notes: list) -> None:
    """Parent span's service -> child span's service; a span attribute naming a peer
    (`soft`: kept by the caller only when it names a known entity)."""
    try:
        docs = _load_json_any(path.read_text(encoding="utf-8"))
    except OSError as exc:
        notes.append(f"source {s.get('id')}: {exc}")
        return
    by_id: dict[tuple[str, str], str] = {}
    parents: list[tuple[str, str, str]] = []   # (trace, parent span, child service)
    for doc in docs:
        if not isinstance(doc, dict):
            continue
        for rs in doc.get("resourceSpans") or []:                    # OTLP
            svc = _attr_map((rs.get("resource") or {}).get("attributes")).get("service.name")
            svc = str(svc or s.get("service") or "unknown")
            known.add(svc)
            for ss in (rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []):
                for sp in ss.get("spans") or []:
                    tid, sid = str(sp.get("traceId", "")), str(sp.get("spanId", ""))
                    by_id[(tid, sid)] = svc
                    if sp.get("parentSpanId"):
                        parents.append((tid, str(sp["parentSpanId"]), svc))
                    attrs = _attr_map(sp.get("attributes"))
                    for f in SPAN_RELATION_FIELDS:
                        if attrs.get(f):
                            soft.add((svc, str(attrs[f])))
                    try:
                        t0 = int(sp.get("startTimeUnixNano")) / 1e9
                        t1 = int(sp.get("endTimeUnixNano")) / 1e9
                    except (TypeError, ValueError):
                        continue
                    code = (sp.get("status") or {}).get("code")
                    err = code in (2, "2", "STATUS_CODE_ERROR")
                    spans_out.append((svc, t0, (t1 - t0) * 1000.0, err))
        jaeger = doc.get("data")
        for tr in jaeger if isinstance(jaeger, list) else []:                     # Jaeger
            if not isinstance(tr, dict):
                continue
            procs = {k: (v or {}).get("serviceName") for k, v in (tr.get("processes") or {}).items()}
            for sp in tr.get("spans") or []:
                tid = str(sp.get("traceID", tr.get("traceID", "")))
                sid = str(sp.get("spanID", ""))
                svc = str(procs.get(sp.get("processID")) or s.get("service") or "unknown")
                known.add(svc)
                by_id[(tid, sid)] = svc
                for ref in sp.get("references") or []:
                    if ref.get("refType", "CHILD_OF") == "CHILD_OF" and ref.get("spanID"):
                        parents.append((str(ref.get("traceID", tid)), str(ref["spanID"]), svc))
                tags = _attr_map(sp.get("tags"))
                for f in SPAN_RELATION_FIELDS:
                    if tags.get(f):
                        soft.add((svc, str(tags[f])))
                try:
                    t0 = float(sp["startTime"]) / 1e6
                    dur = float(sp["duration"]) / 1e3
                except (KeyError, TypeError, ValueError):
                    continue
                err = tags.get("error") in (True, "true", "True", 1)
                spans_out.append((svc, t0, dur, err))
    for tid, psid, child in parents:
        parent = by_id.get((tid, psid))
        if parent and parent != child:
            deps.add((parent, child, "trace"))


def _span_series(spans: list[tuple[str, float, float, bool]], resolve) -> list[Series]:
    """Per service and minute: p95 span duration (ms) and error share, as the runtime derives."""
    buckets: dict[str, dict[float, list[tuple[float, bool]]]] = {}
    for svc, t0, dur, err in spans:
        buckets.setdefault(resolve(svc), {}).setdefault(math.floor(t0 / STEP) * STEP, []).append((dur, err))
    out = []
    for svc, per_min in buckets.items():
        mins = sorted(per_min)
        p95 = [(m, float(np.percentile([d for d, _ in per_min[m]], 95))) for m in mins]
        errs = [(m, sum(e for _, e in per_min[m]) / len(per_min[m])) for m in mins]
        out.append(Series(svc, "span_p95_ms", "latency", "ms", "traces", p95))
        out.append(Series(svc, "span_error_share", "errors", "ratio", "traces", errs))
    return out


def _read_metric(path: Path, s: dict, known: set, resolve, subject_env: str, notes: list) -> list[Series]:
    sidecar_path = path.with_name(path.name + ".meta.yaml")
    meta = (_load_yaml(sidecar_path) or {}) if sidecar_path.is_file() else {}
    fmt = str(s.get("format") or "auto")
    if fmt == "auto":
        fmt = "csv" if path.suffix.lower() in (".csv", ".tsv") else "prometheus"
    tz = s.get("timezone")
    if fmt == "csv":
        metric = str(meta.get("metric") or s.get("id"))
        entity = str(meta.get("service") or s.get("service") or "")
        env = str(meta.get("environment") or s.get("environment") or "*")
        if env not in ("*", subject_env):
            return []
        if not entity or entity == "*":
            notes.append(f"source {s.get('id')}: no entity (sidecar/manifest service), left out")
            return []
        pts = []
        lines = path.read_text(encoding="utf-8").splitlines()
        header = [h.strip().lower() for h in lines[0].split(",")] if lines else []
        its = header.index("ts") if "ts" in header else 0
        ival = header.index("value") if "value" in header else 1
        for ln in lines[1:]:
            parts = ln.split(",")
            if len(parts) <= max(its, ival):
                continue
            try:
                pts.append((parse_time(parts[its].strip(), tz), float(parts[ival])))
            except ValueError:
                continue
        unit = meta.get("unit")
        return [Series(resolve(entity), metric, str(meta.get("role") or guess_role(metric, unit)),
                       unit, str(s.get("id")), pts)]
    if fmt != "prometheus":
        notes.append(f"source {s.get('id')}: metric format {fmt!r} not supported, left out")
        return []
    doc = json.loads(path.read_text(encoding="utf-8"))
    result = ((doc.get("data") or {}).get("result")) if isinstance(doc, dict) else None
    if not isinstance(result, list):
        raise CaseError(f"{path}: no data.result")
    out = []
    for r in result:
        labels = {str(k): str(v) for k, v in (r.get("metric") or {}).items()}
        env = labels.get("environment") or labels.get("env")
        if env and env not in (subject_env, "*"):
            continue
        metric = labels.get("__name__") or meta.get("metric") or str(s.get("id"))
        entity = None
        for lab in ENTITY_LABELS:
            if lab in labels:
                cand = resolve(labels[lab])
                if cand in known:
                    entity = cand
                    break
        if entity is None:
            svc = meta.get("service") or s.get("service")
            if svc and svc != "*":
                entity = resolve(str(svc))
            else:
                first = next((labels[lab] for lab in ENTITY_LABELS if lab in labels), None)
                if first is None:
                    notes.append(f"source {s.get('id')}: a series without an entity label, left out")
                    continue
                entity = resolve(first)
        raw = r.get("values") or ([r["value"]] if r.get("value") else [])
        pts = []
        for t, v in raw:
            try:
                pts.append((parse_time(t, tz), float(v)))
            except (TypeError, ValueError):
                continue
        unit = meta.get("unit")
        out.append(Series(entity, metric, str(meta.get("role") or guess_role(metric, unit)), unit,
                          str(s.get("id")), pts))
    return out


def _align(series: list[Series], grid: np.ndarray, notes: list) -> tuple[list[dict], np.ndarray]:
    """Mean per minute bucket, gaps interpolated linearly (ends held); one column per
    (entity, metric) -- several series of the same pair (pods of a workload) are averaged."""
    if len(grid) == 0:
        return [], np.zeros((0, 0))
    groups: dict[tuple[str, str], list[Series]] = {}
    for s in series:
        groups.setdefault((s.entity, s.metric), []).append(s)
    cols, mats = [], []
    lo, hi = grid[0], grid[-1] + STEP
    for (entity, metric), group in groups.items():
        aligned = []
        for s in group:
            acc = np.zeros(len(grid))
            cnt = np.zeros(len(grid))
            for t, v in s.points:
                if lo <= t < hi and math.isfinite(v):
                    i = int((t - lo) // STEP)
                    acc[i] += v
                    cnt[i] += 1
            if cnt.sum() == 0:
                continue
            col = np.where(cnt > 0, acc / np.maximum(cnt, 1), np.nan)
            idx = np.flatnonzero(cnt > 0)
            col = np.interp(np.arange(len(grid)), idx, col[idx])
            aligned.append((col, float((cnt > 0).mean())))
        if not aligned:
            notes.append(f"series {entity}/{metric}: no point in baseline+window, left out")
            continue
        values = np.mean([a for a, _ in aligned], axis=0)
        cols.append({"name": f"{entity}|{metric}", "entity": entity, "metric": metric,
                     "role": group[0].role, "unit": group[0].unit,
                     "sources": sorted({s.source for s in group}), "series": len(aligned),
                     "coverage": round(max(c for _, c in aligned), 3)})
        mats.append(values)
    if not cols:
        return [], np.zeros((len(grid), 0))
    return cols, np.column_stack(mats)


def _read_gold(case_dir: Path, override: dict | None) -> tuple[dict | None, bool]:
    path = case_dir / "expected.yaml"
    exp = (_load_yaml(path) or {}) if path.is_file() else {}
    gen = exp.get("generator") if isinstance(exp.get("generator"), dict) else {}
    rc = exp.get("root_cause") if isinstance(exp.get("root_cause"), dict) else None
    gold_src = "expected.yaml root_cause"
    if rc is None and override:
        rc, gold_src = dict(override), str(override.get("gold_source", "gold override file"))
    if not rc or not rc.get("entity"):
        return ({"generator": gen} if gen else None), False
    path_list = rc.get("path") or None
    depth = gen.get("depth")
    depth_src = "generator.depth"
    if depth is None and path_list:
        depth, depth_src = len(path_list) - 1, "len(root_cause.path) - 1"
    kind = gen.get("cause_kind")
    kind_src = "generator.cause_kind"
    if kind is None and rc.get("kind"):
        kind, kind_src = rc.get("kind"), "root_cause.kind"
    return ({"entity": str(rc["entity"]), "kind": rc.get("kind"), "change": rc.get("change"),
             "path": path_list, "cause_kind": kind, "cause_kind_from": kind_src if kind else None,
             "depth": depth, "depth_from": depth_src if depth is not None else None,
             "source": gold_src, "generator": gen}, True)
