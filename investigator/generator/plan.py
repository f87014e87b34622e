"""Which telemetry sources a case gets: metric series and their carriers, logs, traces, Kubernetes.

The plan guarantees what the expected answers assume: every entity the path needs has a
readable signal of its own (unless the variant removes or denies it), every stated hop has
its source, and every hypothesis has its metric.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .relations import near_entities
from .scenario import Scenario


@dataclass
class SeriesSpec:
    entity: str
    metric: str
    what: str                 # lat | err | avail | traffic | sat | hyp
    unit: str
    role: str
    carrier: str = "csv"      # csv | prom
    scale: float = 1.0        # value multiplier (ms -> s)
    env: str = ""
    denied: bool = False
    base: float = 0.0         # for hyp: the flat level
    mild: float = 1.0         # for hyp: a small rise that stays under the threshold
    capacity: float | None = None
    labels: str = ""          # prom label scheme
    follows: str = ""         # for hyp series that follow an entity's main signal


@dataclass
class LogSpec:
    entity: str
    fmt: str                  # plain | plain-nozone | plain-bracket | postgres | logfmt | zap | logrus | pino | bunyan | syslog5424 | syslog3164
    lang: str = "en"
    denied: bool = False
    env: str = ""
    stack: bool = False
    malformed: bool = False


@dataclass
class Plan:
    series: list[SeriesSpec] = field(default_factory=list)
    logs: dict[str, LogSpec] = field(default_factory=dict)
    trace_fmt: str | None = None
    trace_edges: list[tuple[str, str]] = field(default_factory=list)
    k8s_pods: str | None = None     # json | wide
    k8s_events: bool = False
    k8s_describe: str | None = None  # pod | node
    configs: dict[str, str] = field(default_factory=dict)   # entity -> format
    catalog: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)

    def main_series(self, entity: str) -> SeriesSpec | None:
        for s in self.series:
            if s.entity == entity and s.what in ("lat", "err", "avail", "traffic", "sat") and not s.env:
                return s
        return None


_LAT_NAMES = {"service": ["p95_latency_ms", "http_p95_ms", "latency_p95_ms", "server_duration_p95_ms"],
              "database": ["query_p95_ms", "db_query_latency_p95_ms", "statement_duration_p95_ms"],
              "cache": ["cmd_latency_p99_ms", "get_latency_p99_ms"]}
_LAT_PROM = {"service": ("http_server_duration_p95_seconds", "s", 0.001),
             "database": ("pg_query_duration_p95_seconds", "s", 0.001),
             "cache": ("cache_command_latency_p99_ms", "ms", 1.0)}
_ERR_NAMES = ["error_rate_pct", "http_5xx_pct", "errors_pct", "failure_rate_pct"]
_TRAFFIC = {"service": ["requests_per_second", "rps", "throughput_rps", "http_requests_rps"],
            "database": ["db_calls_per_second", "qps"], "cache": ["cache_ops_per_second"],
            "queue": ["produce_throughput"]}


def make_plan(sc: Scenario) -> Plan:
    r, topo, ents = sc.rng, sc.topo, sc.topo.entities
    plan = Plan()
    v = sc.variant
    root = topo.root
    denied = sc.denied_telemetry

    def add_series(entity: str, what: str, *, metric: str | None = None, carrier: str | None = None,
                   env: str = "", **kw) -> SeriesSpec:  # noqa: ANN003
        kind = ents[entity].kind
        carrier = carrier or ("csv" if r.random() < 0.55 else "prom")
        if entity == denied:
            carrier = "csv"
        unit, scale, role = "ms", 1.0, "latency"
        if what == "lat":
            k = kind if kind in _LAT_NAMES else "service"
            if carrier == "prom" and metric is None:
                metric, unit, scale = _LAT_PROM[k]
            metric = metric or r.choice(_LAT_NAMES[k])
        elif what == "err":
            metric, unit, role = metric or r.choice(_ERR_NAMES), "%", "errors"
        elif what == "avail":
            unit, role = "%", "availability"
        elif what == "traffic":
            k = kind if kind in _TRAFFIC else "service"
            metric, unit, role = metric or r.choice(_TRAFFIC[k]), "rps", "traffic"
        elif what == "sat":
            role = "saturation"
            if kind == "node":
                metric, unit = metric or "node_cpu_utilization_pct", "%"
            elif kind == "queue":
                metric, unit = metric or "consumer_lag_messages", "count"
            else:
                metric, unit = metric or "container_cpu_usage_cores", "cores"
        assert metric
        s = SeriesSpec(entity=entity, metric=metric, what=what, unit=unit, role=role, carrier=carrier,
                       scale=scale, env=env, denied=entity == denied and not env, **kw)
        plan.series.append(s)
        return s

    # the subject's symptom
    sym = sc.symptom
    add_series(sc.subject, sym["what"], metric=sym["metric"], carrier="csv" if r.random() < 0.7 else "prom")
    if r.random() < 0.5:
        add_series(sc.subject, "traffic")

    # the path: every entity with its own main signal (domains are seen by their callers)
    path = [x for x in topo.path if x != sc.subject]
    only_traces: set[str] = set()
    for x in path + list(topo.branch):
        kind = ents[x].kind
        if kind == "domain" or x in sc.no_telemetry:
            continue
        if x == topo.consumer:
            add_series(x, "sat" if topo.hot_node else "traffic")
            continue
        if kind == "node":
            add_series(x, "sat", carrier="prom")
            continue
        if kind == "queue" and x == root:
            add_series(x, "sat")
            continue
        intermediate = x in topo.chain and x != root
        into = (topo.chain[topo.chain.index(x) - 1], x) if intermediate else None
        if intermediate and sc.mode == "latency" and into != sc.prose_hop and into not in sc.never \
                and r.random() < 0.2:
            only_traces.add(x)
            continue
        if intermediate and r.random() < 0.12 and x != denied:
            plan.logs[x] = LogSpec(entity=x, fmt="")      # its log burst is its signal
            continue
        add_series(x, "lat" if sc.mode == "latency" or kind != "service" else "err")
    if sc.cause == "capacity" and v != "no_candidate" and root not in sc.no_telemetry:
        add_series(root, "traffic", carrier="csv" if root == denied else None)

    # other consumers of the root stay flat (so the noisy one, or none, is the only rise)
    for x in topo.consumers:
        if r.random() < (0.8 if sc.cause in ("noisy_neighbour", "capacity") else 0.3):
            add_series(x, "sat" if topo.hot_node else "traffic")
    # normal dependencies of path entities
    for _a, sibs in topo.siblings.items():
        for x in sibs:
            if x == sc.late_sibling or r.random() < 0.7:
                add_series(x, "lat")
    if sc.caller_anomaly:
        add_series(sc.caller_anomaly, "lat" if sc.mode == "latency" else "err")
    for n in topo.nodes:
        if n != topo.hot_node and r.random() < 0.3:
            add_series(n, "sat", carrier="prom")
    if r.random() < 0.4:
        add_series(sc.subject, sym["what"], metric=sym["metric"], env=sc.staging, carrier="csv",
                   mild=r.choice([1.0, 1.0, 3.5]))

    # hypotheses: a flat (or mildly rising) series on the subject, or the dependency's own signal
    for h in sc.hypotheses:
        if h.outcome == "confirmed":
            main = plan.main_series(h.entity)
            if main is None or main.denied or h.entity in only_traces:
                main = add_series(h.entity, "lat" if sc.mode == "latency" else "err", carrier="csv")
            h.metric = main.metric
            continue
        base = {"db_wait_ms": r.uniform(2, 9), "cpu_utilization_pct": r.uniform(20, 45), "gc_pause_ms": r.uniform(4, 20),
                "heap_used_pct": r.uniform(35, 60), "worker_threads_busy": r.uniform(10, 30),
                "requests_per_second": r.uniform(80, 900)}[h.metric]
        mild = 1.0
        if h.source_hint == "mild":
            mild = 1.0 + (h.min_ratio - 1.0) * 0.35
        role = "saturation" if h.metric in ("cpu_utilization_pct", "heap_used_pct", "worker_threads_busy") else \
            "traffic" if h.metric == "requests_per_second" else "latency"
        unit = {"latency": "ms", "saturation": "%", "traffic": "rps"}[role]
        if h.metric == "worker_threads_busy":
            unit = "count"
        existing = [s for s in plan.series if s.entity == h.entity and s.metric == h.metric]
        for s in existing:
            plan.series.remove(s)
        plan.series.append(SeriesSpec(entity=h.entity, metric=h.metric, what="hyp", unit=unit, role=role,
                                      carrier="csv" if r.random() < 0.6 else "prom", base=round(base, 2), mild=mild))

    # prom files need a label scheme each
    for s in plan.series:
        kind = ents[s.entity].kind
        if kind == "node":
            s.labels = r.choice(["node", "instance"])
        elif kind == "queue":
            s.labels = r.choice(["queue", "topic"])
        elif kind in ("database", "cache"):
            s.labels = r.choice(["db", "service"])
        elif s.what == "sat":
            s.labels = "pod"
        else:
            s.labels = r.choice(["service", "app", "job", "deployment", "pod"])

    # logs
    need_log = {a for (a, b), ch in sc.stated.items() if ch & {"log_phrase", "log_field"}}
    want = {sc.subject: 0.9, root: 0.7}
    if sc.implicate or v in ("two_changes_implicated",):
        want[root] = 1.0
    for x in topo.chain[1:]:
        want.setdefault(x, 0.4)
    if topo.consumer:
        want[topo.consumer] = 0.3
    for x in topo.branch:
        want[x] = 0.5
    for x, p in want.items():
        if x in ents and ents[x].kind in ("service", "database") and x not in sc.no_telemetry and r.random() < p:
            plan.logs.setdefault(x, LogSpec(entity=x, fmt=""))
    for a in sorted(need_log):
        if a in ents and ents[a].kind == "service" and a not in sc.no_telemetry:
            plan.logs.setdefault(a, LogSpec(entity=a, fmt=""))
    if sc.mode == "errors" and topo.domain_name:
        caller = topo.path[topo.path.index(topo.domain_name) - 1]
        plan.logs.setdefault(caller, LogSpec(entity=caller, fmt=""))
    for x, spec in plan.logs.items():
        kind = ents[x].kind
        if kind == "database":
            spec.fmt = "postgres"
        elif not spec.fmt:
            spec.fmt = r.choices(["plain", "plain-nozone", "plain-bracket", "logfmt", "zap", "logrus", "pino", "bunyan",
                                  "syslog5424", "syslog3164"], [14, 6, 4, 12, 8, 8, 7, 5, 6, 6])[0]
        spec.lang = r.choice(sc.langs) if spec.fmt.startswith("plain") and r.random() < 0.5 else "en"
        spec.denied = x == denied
        spec.stack = spec.fmt.startswith("plain") and r.random() < 0.7
        spec.malformed = r.random() < 0.35

    # traces: edges stated by traces (path hops and some normal dependencies)
    trace_edges = [(a, b) for (a, b), ch in sc.stated.items() if "trace" in ch]
    for a in topo.chain + list(topo.branch):
        if a in sc.no_telemetry or a == denied:
            continue
        for d in ents[a].deps:
            if (a, d) in sc.stated and (a, d) not in sc.never and (a, d) != sc.prose_hop \
                    and ents[d].kind in ("service", "database", "cache") \
                    and d not in sc.no_telemetry and d != denied and r.random() < 0.35:
                if not (d == root and v in ("root_telemetry_missing", "root_telemetry_denied", "relation_missing")):
                    sc.stated[(a, d)].add("trace")
                    trace_edges.append((a, d))
    if only_traces:
        for x in only_traces:
            i = topo.chain.index(x)
            sc.stated[(topo.chain[i - 1], x)].add("trace")
            trace_edges.append((topo.chain[i - 1], x))
    trace_edges = sorted(set(trace_edges), key=lambda e: (topo.path.index(e[0]) if e[0] in topo.path else 99, e))
    if trace_edges:
        plan.trace_edges = trace_edges
        plan.trace_fmt = r.choice(["otlp", "jaeger"])

    # Kubernetes
    k8s_needed = any("k8s" in ch for (a, b), ch in sc.stated.items() if b == topo.hot_node)
    if k8s_needed or r.random() < 0.7:
        plan.k8s_pods = r.choice(["json", "wide"])
    plan.k8s_events = r.random() < 0.6 or any(c.fmt == "rollout" for c in sc.changes)
    if topo.hot_node and r.random() < 0.6:
        plan.k8s_describe = "node"
    elif r.random() < 0.3:
        plan.k8s_describe = "pod"

    # configs: every entity whose config states a relation, and a few more
    for (a, _b), ch in sc.stated.items():
        if "config" in ch and a in ents and ents[a].kind in ("service", "database", "cache", "queue"):
            plan.configs.setdefault(a, "")
    if r.random() < 0.7:
        plan.configs.setdefault(sc.subject, "")
    cause = next((c for c in sc.changes if c.role == "cause" and c.type == "config_push" and c.fmt == "record"), None)
    if cause and cause.service in ents and r.random() < 0.7:
        plan.configs.setdefault(cause.service, "")
    for x in plan.configs:
        plan.configs[x] = r.choice(["record", "yaml", "json", "env", "properties", "configmap"])

    # the catalog: entities whose catalog entry states a relation, and others at random
    cat = {a for (a, b), ch in sc.stated.items() if "catalog" in ch and a in ents}
    for n, e in ents.items():
        if e.kind in ("service", "database", "cache", "queue", "cluster") and r.random() < 0.5:
            cat.add(n)
    # every entity near the path is named by the catalog (an entity the runtime knows), and so is
    # every node that has a series of its own (a Prometheus label resolves only to a known entity)
    near = near_entities(sc)
    cat |= {n for n in near if ents[n].kind not in ("domain", "component")}
    cat |= {s.entity for s in plan.series if ents[s.entity].kind == "node"}
    plan.catalog = [n for n in ents if n in cat]
    return plan
