"""Competing hypotheses: refuted ones the documents push, and one that holds (not a competitor)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .model import Hypothesis

if TYPE_CHECKING:
    from .incident import Scenario


# -- hypotheses -----------------------------------------------------------------------------

_HYPS = [
    ("db_pool_exhausted", "db_wait_ms", "latency", "ms", 2.0,
     {"en": "The database connection pool of {s} is exhausted, so requests queue for a connection.",
      "zh": "{s} 的数据库连接池耗尽，请求排队等待连接。", "de": "Der Datenbank-Verbindungspool von {s} ist erschöpft."},
     ["connection pool", "连接池", "Verbindungspool"]),
    ("cpu_saturation", "cpu_utilization_pct", "saturation", "%", 1.5,
     {"en": "{s} is CPU-bound: its pods saturate their CPU.", "zh": "{s} CPU 打满，处理变慢。",
      "de": "{s} ist CPU-gebunden; die Pods sind ausgelastet."},
     ["CPU saturation", "CPU 打满", "CPU-Auslastung"]),
    ("gc_pauses", "gc_pause_ms", "latency", "ms", 2.0,
     {"en": "Long garbage-collection pauses in {s} stall requests.", "zh": "{s} 的 GC 停顿过长导致请求卡顿。",
      "de": "Lange GC-Pausen in {s} blockieren Anfragen."},
     ["GC pause", "GC 停顿", "GC-Pausen"]),
    ("heap_pressure", "heap_used_pct", "saturation", "%", 1.4,
     {"en": "{s} runs out of heap and thrashes.", "zh": "{s} 堆内存不足。", "de": "{s} hat zu wenig Heap."},
     ["heap", "堆内存", "Heap"]),
    ("thread_starvation", "worker_threads_busy", "saturation", "count", 1.8,
     {"en": "The worker thread pool of {s} is starved.", "zh": "{s} 的工作线程池被占满。",
      "de": "Der Worker-Thread-Pool von {s} ist voll."},
     ["thread pool", "线程池", "Thread-Pool"]),
    ("traffic_surge", "requests_per_second", "traffic", "rps", 2.0,
     {"en": "A traffic surge on {s} overloads it.", "zh": "{s} 流量突增导致过载。",
      "de": "Ein Lastanstieg auf {s} überlastet den Dienst."},
     ["traffic spike", "流量突增", "Lastspitze"]),
]


def plan_hypotheses(sc: Scenario) -> None:
    r = sc.rng
    s = sc.subject
    pool = list(_HYPS)
    r.shuffle(pool)
    n_ref = r.choice([1, 1, 2])
    out: list[Hypothesis] = []
    for hid, metric, _role, _unit, ratio, text, phrases in pool[:n_ref]:
        ent = s
        out.append(Hypothesis(id=hid, statement=text["en"].format(s=s), mentioned_by=list(phrases),
                              metric=metric, entity=ent, direction="up", min_ratio=ratio,
                              outcome="refuted", competitor=True))
    if "mild_rise_hypothesis" in sc.red_herrings and out:
        out[0].min_ratio = max(out[0].min_ratio, 2.0)
        out[0].source_hint = "mild"
    elif "mild_rise_hypothesis" in sc.red_herrings:
        sc.red_herrings.remove("mild_rise_hypothesis")
    # a hypothesis that holds (not a competitor): a dependency on the path did slow down
    obs = sc.observed_path()
    cands = [x for x in obs[1:] if sc.topo.entities[x].kind in ("service", "database", "cache")
             and sc.behaviour[x].onset is not None and x != sc.denied_telemetry]
    if cands and r.random() < 0.45 and sc.variant not in ("root_telemetry_denied",):
        x = cands[0]
        m = "dep_latency_ms" if sc.mode == "latency" else "dep_error_pct"
        out.append(Hypothesis(id=f"{x.split('-')[0]}_degraded", statement=f"{x} degraded before {s} did.",
                              mentioned_by=[x], metric=m, entity=x, direction="up", min_ratio=1.5,
                              outcome="confirmed", competitor=False))
    sc.hypotheses = out


