"""Log files in every documented format, with bursts at the scenario's onsets.

A line states a relation only where the scenario says so (a relation phrase before the
entity, or a relation field); warning lines name an entity only when it is the next hop
(which has telemetry of its own, or is the domain seen by its callers); the root's
errors name what a change changed only when the scenario implicates that change.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from . import vocab
from .bundle import Bundle, Source, epoch, iso, iso_offset, utc
from .plan import LogSpec, Plan
from .model import onset_of
from .scenario import Scenario

LEVELS = {"info": 0, "warn": 1, "error": 2}


@dataclass
class Ev:
    t: datetime
    level: str
    msg: str
    fields: dict[str, str] = field(default_factory=dict)
    tags: list[str] = field(default_factory=list)
    stack: list[str] = field(default_factory=list)


_ROUTES = ["/v1/items", "/v2/search", "/v1/orders", "/api/v3/sessions", "/v1/quotes", "/internal/sync", "/v1/events",
           "/v2/accounts", "/v1/ledger/entries", "/v1/devices/state"]
_REL_FIELDS = {"service": ["upstream", "peer.service", "callee", "downstream", "remote_service"],
               "database": ["db", "db.name", "db.instance"], "cache": ["db", "peer.service"],
               "queue": ["messaging.destination"]}


def _ms(v: float) -> str:
    return str(int(round(v)))


class _Background:
    """One entity's ordinary lines: startup, requests, stats, health, a rare benign warning, and the
    lines that state whom it calls (a relation phrase or field), before any anomaly."""

    def __init__(self, sc: Scenario, plan: Plan, spec: LogSpec) -> None:
        self.sc, self.plan, self.spec = sc, plan, spec
        self.r = sc.rng
        self.x = spec.entity
        self.ents = sc.topo.entities
        self.b = sc.behaviour[self.x]
        self.zh = spec.lang == "zh"
        self.postgres = spec.fmt == "postgres"
        self.fields_ok = spec.fmt in ("logfmt", "zap", "logrus", "pino", "bunyan")

    # -- relations -------------------------------------------------------------------------
    def named(self, channel: str) -> list[str]:
        sc = self.sc
        out = [d for d in self.ents[self.x].deps if sc.states(self.x, d, channel) and (self.x, d) not in sc.never]
        return out

    def rel_line(self, d: str, t: datetime, *, level: str = "info", fail: str | None = None) -> Ev:
        """A line stating x -> d: a relation phrase, or a relation field where the format has fields."""
        kind = self.ents[d].kind
        lat = self.sc.behaviour[d].lat_base * self.r.uniform(0.9, 1.1) if d in self.sc.behaviour else 5.0
        use_field = self.sc.states(self.x, d, "log_field") and self.fields_ok and not \
            (self.sc.states(self.x, d, "log_phrase") and self.r.random() < 0.5)
        if use_field:
            f = self.r.choice(_REL_FIELDS.get(kind, _REL_FIELDS["service"]))
            msg = fail or ("outbound call ok" if kind == "service" else "query ok")
            return Ev(t, level, msg, {f: d, "latency_ms": _ms(lat)}, tags=[f"rel:{d}"])
        if kind in ("database", "cache"):
            text = fail and f"connect to {d} failed: {fail}" or self.r.choice(
                [f"connect to {d} ok, pool {self.r.randint(2, 20)}/64 active", f"reads from {d} ok in {_ms(lat)} ms"])
        elif kind == "queue":
            text = fail and f"writes to {d} failed: {fail}" or self.r.choice(
                [f"writes to {d}: batch of {self.r.randint(5, 200)} messages", f"reads from {d}: {self.r.randint(1, 90)} messages"])
        elif self.zh:
            text = fail and f"调用 {d} 失败：{fail}" or f"调用 {d} 成功，耗时 {_ms(lat)} ms"
        else:
            text = fail and f"call {d} failed: {fail}" or self.r.choice(
                [f"call {d} ok in {_ms(lat)} ms", f"calling {d} GET {self.r.choice(_ROUTES)}: 200 ({_ms(lat)} ms)"])
        return Ev(t, level, text, tags=[f"rel:{d}"])

    # -- background ------------------------------------------------------------------------
    def background(self) -> list[Ev]:
        sc, r = self.sc, self.r
        out: list[Ev] = []
        t = sc.start - timedelta(minutes=sc.baseline) + timedelta(seconds=r.randint(0, 50))
        named = sorted(set(self.named("log_phrase") + self.named("log_field")))
        out.append(Ev(t, "info", self._startup()))
        quiet_until = sc.start - timedelta(minutes=sc.onset_lead + 2)
        warned: list[datetime] = []
        while t < sc.end:
            t += timedelta(seconds=r.randint(50, 140), milliseconds=r.randint(0, 999))
            roll = r.random()
            if named and roll < 0.35:
                d = r.choice(named)
                od = sc.behaviour[d].onset if d in sc.behaviour else None
                out.append(self.rel_line(d, t) if od is None or t < od else Ev(t, "info", self._request_line(t)))
            elif roll < 0.75:
                out.append(Ev(t, "info", self._request_line(t)))
            elif roll < 0.9:
                out.append(Ev(t, "info", self._stats_line()))
            elif t < quiet_until and len(warned) < 2 and all(t - w > timedelta(minutes=15) for w in warned) and r.random() < 0.3:
                out.append(Ev(t, "warn", self._benign_warning()))
                warned.append(t)
            else:
                out.append(Ev(t, "info", self._health_line()))
        return out

    def _startup(self) -> str:
        if self.postgres:
            return "database system is ready to accept connections"
        v = self.ents[self.x].version
        return f"{self.x} started (pid {self.r.randint(1, 999)}), listening on :8080" + (f", version {v}" if self.r.random() < 0.3 and v else "")

    def _request_line(self, t: datetime) -> str:
        if self.postgres:
            return f"duration: {self.r.uniform(0.4, 9):.3f} ms  statement: SELECT id, state FROM t_{self.r.randint(1, 9)} WHERE id = $1"
        lat = self._lat(t)
        route = self.r.choice(_ROUTES)
        if self.zh:
            return f"请求 GET {route} 完成 200，耗时 {_ms(lat)} ms"
        return self.r.choice([f"GET {route} 200 in {_ms(lat)} ms", f"POST {route} 201 {_ms(lat)}ms",
                              f"handled GET {route} status=200 took={_ms(lat)}ms"])

    def _lat(self, t: datetime) -> float:
        b = self.b
        on = b.onset is not None and t >= b.onset and b.lat_delta > 0
        return (b.lat_base + (b.lat_delta if on else 0)) * self.r.uniform(0.85, 1.15)

    def _stats_line(self) -> str:
        if self.postgres:
            return f"checkpoint complete: wrote {self.r.randint(50, 4000)} buffers ({self.r.uniform(0.1, 3):.1f}%)"
        return self.r.choice([f"worker stats: busy={self.r.randint(1, 12)}/32 queued=0",
                              f"gc: heap {self.r.randint(120, 900)}MB, pause {self.r.randint(1, 9)}ms",
                              f"cache stats: hit_ratio=0.{self.r.randint(80, 99)}"])

    def _health_line(self) -> str:
        if self.postgres:
            return "automatic vacuum of table \"app.public.t_3\": index scans: 0"
        return "GET /healthz 200 in 1 ms"

    def _benign_warning(self) -> str:
        if self.postgres:
            return "there is already a transaction in progress"
        return self.r.choice(["deprecated setting ignored: legacy_mode", "slow disk flush took 180 ms",
                              "certificate for the admin endpoint expires in 29 days",
                              "retrying metrics push after a short delay"])


class _Gen(_Background):
    """One entity's log: its ordinary lines, the anomaly's burst (its own failures and what it blames
    downstream), and stack traces under some errors."""

    def burst(self) -> list[Ev]:
        sc, r, b, x = self.sc, self.r, self.b, self.x
        if b.onset is None or (b.lat_delta == 0 and b.err_delta == 0 and self.ents[x].kind != "domain"):
            return []
        nxts = self._next_hops()
        t = b.onset + timedelta(seconds=r.randint(2, 25), milliseconds=r.randint(0, 999))
        dom = next((n for n in nxts if self.ents[n].kind == "domain"), None)
        if dom:
            t = sc.behaviour[dom].onset
        out: list[Ev] = []
        first = True
        while t < sc.end:
            out.append(self._burst_line(t, nxts, dom, first))
            first = False
            t += timedelta(seconds=r.randint(9, 32), milliseconds=r.randint(0, 999))
        return out

    def _next_hops(self) -> list[str]:
        sc, topo = self.sc, self.sc.topo
        path = topo.path
        out = []
        if self.x in path:
            i = path.index(self.x)
            if i + 1 < len(path) and path[i + 1] != topo.consumer:
                out.append(path[i + 1])
        if self.x == topo.subject and topo.branch:
            out.append(topo.branch[0])
        # a hop the docs cannot see is never named in a warning
        return [n for n in out if (self.x, n) not in sc.never or self.ents[n].kind == "domain"]

    def _burst_line(self, t: datetime, nxts: list[str], dom: str | None, first: bool) -> Ev:
        sc, r, x = self.sc, self.r, self.x
        lat = self._lat(t)
        errors = self.b.err_delta > 0 and self.b.mode == "errors"
        level = "error" if errors or r.random() < 0.3 else "warn"
        if self.postgres:
            return self._pg_burst(t, first)
        if x == sc.topo.root or (sc.topo.branch and x == sc.topo.branch[0]):
            return self._root_line(t, level, lat, errors)
        if dom:
            return self._domain_line(t, dom)
        if nxts and (first or r.random() < 0.7):
            n = r.choice(nxts)
            if self.ents[n].kind in ("database", "cache", "queue") or not (
                    sc.states(x, n, "log_phrase") or sc.states(x, n, "log_field")):
                return Ev(t, level, self._generic(lat, errors))
            fail = (self.r.choice(["503 Service Unavailable", "502 Bad Gateway", "deadline exceeded"]) if errors
                    else f"timed out after {_ms(lat)} ms")
            if self.zh and not errors:
                fail = f"超时，耗时 {_ms(lat)} ms"
            return self.rel_line(n, t, level=level, fail=fail)
        return Ev(t, level, self._generic(lat, errors), tags=["burst"])

    def _generic(self, lat: float, errors: bool) -> str:
        route = self.r.choice(_ROUTES)
        if self.zh:
            return f"请求 {route} 失败，返回 500" if errors else f"请求 {route} 过慢，耗时 {_ms(lat)} ms"
        if errors:
            return self.r.choice([f"request {route} failed with 500: internal error", f"POST {route} 500 in {_ms(lat)} ms",
                                  "handler returned an error: upstream dependency unavailable"])
        return self.r.choice([f"slow request GET {route} took {_ms(lat)} ms", f"request {route} exceeded its budget: {_ms(lat)} ms",
                              f"worker queue wait {_ms(lat * 0.6)} ms"])

    def _domain_line(self, t: datetime, dom: str) -> Ev:
        sc, r = self.sc, self.r
        phrase = sc.states(self.x, dom, "log_phrase") and (self.x, dom) not in sc.never
        if sc.cause == "certificate":
            why = r.choice(["x509: certificate signed by unknown authority", "x509: certificate has expired or is not yet valid",
                            f"x509: certificate is valid for *.legacy-{dom.split('.')[1]}.net, not {dom}"])
            text = f"call https://{dom}/v1/charges failed: {why}" if phrase else f"TLS handshake failed for {dom}: {why}"
        else:
            why = r.choice([f"dial tcp: lookup {dom} on 10.0.0.10:53: no such host",
                            "dial tcp 203.0.113.40:443: connect: connection refused", "i/o timeout after 5000 ms"])
            text = f"call https://{dom}/v2/verify failed: {why}" if phrase else f"request for {dom} failed: {why}"
        return Ev(t, "error", text, tags=[f"rel:{dom}"] if phrase else ["domain"])

    def _root_line(self, t: datetime, level: str, lat: float, errors: bool) -> Ev:
        sc, r = self.sc, self.r
        impl = next((c for c in sc.changes if c.key == sc.implicate), None)
        if self.x != sc.topo.root:       # the second root names its own change at times
            impl = next((c for c in sc.changes if c.role == "cause2"), None) if r.random() < 0.5 else None
        if impl is not None and r.random() < 0.6:
            return Ev(t, level, self._implicating(impl, lat, errors), tags=["implicate"])
        return Ev(t, level, self._generic(lat, errors), tags=["burst"])

    def _implicating(self, ch, lat: float, errors: bool) -> str:  # noqa: ANN001
        r = self.r
        if ch.type == "feature_flag" and ch.flag:
            f = ch.flag[0]
            return (f"flag {f}={ch.flag[2]}: new code path failed: NullPointerException in handler" if errors
                    else f"flag {f}={ch.flag[2]}: fallback path took {_ms(lat)} ms")
        if ch.config_changes:
            k, _frm, to = ch.config_changes[0]
            words = ch.ref.get("words", [[k]])[0]
            style = r.choice([s for s in ("snake", "camel", "upper", "dotted") if vocab.key_style(words, s) != k] or ["snake"])
            key = vocab.key_style(words, style) if len(words) > 1 else k
            return (f"rejecting request: {key}={to} exceeded" if errors
                    else f"requests queued behind {key}={to}: waited {_ms(lat)} ms")
        if ch.version_to:
            return (f"unhandled exception in release {ch.version_to}: index out of range" if errors
                    else f"slow path in release {ch.version_to}: {_ms(lat)} ms")
        return self._generic(lat, errors)

    def _pg_burst(self, t: datetime, first: bool) -> Ev:
        sc, r = self.sc, self.r
        impl = next((c for c in sc.changes if c.key == sc.implicate), None) if self.x == sc.topo.root else None
        if impl is not None and impl.config_changes and r.random() < 0.6:
            k, _f, to = impl.config_changes[0]
            return Ev(t, "error", f"FATAL:  remaining connection slots are reserved ({k}={to})", tags=["implicate"])
        lat = self._lat(t)
        return r.choice([Ev(t, "warn", f"WARNING:  lock wait exceeded, waited {_ms(lat)} ms"),
                         Ev(t, "error", "ERROR:  canceling statement due to statement timeout"),
                         Ev(t, "warn", f"WARNING:  slow statement: duration {_ms(lat)} ms")])

    def events(self) -> list[Ev]:
        evs = self.background() + self.burst()
        evs.sort(key=lambda e: e.t)
        if self.spec.stack:
            errs = [e for e in evs if e.level == "error"]
            for e in errs[: self.r.randint(1, 3)]:
                e.stack = self._stack()
        return evs

    def _stack(self) -> list[str]:
        r = self.r
        pkg = self.x.split("-")[0]
        if r.random() < 0.5:
            return ["java.util.concurrent.TimeoutException: request did not complete in time",
                    f"\tat com.acme.{pkg}.web.Handler.handle(Handler.java:{r.randint(40, 400)})",
                    f"\tat com.acme.{pkg}.web.Router.dispatch(Router.java:{r.randint(40, 400)})",
                    "Caused by: java.net.SocketTimeoutException: Read timed out",
                    "\tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:288)",
                    "\t... 12 more"]
        return ["Traceback (most recent call last):",
                f'  File "/app/{pkg}/handlers.py", line {r.randint(20, 300)}, in handle',
                "    resp = await self.client.send(req)",
                f'  File "/app/{pkg}/client.py", line {r.randint(20, 300)}, in send',
                "    raise TimeoutError(\"request timed out\")",
                "TimeoutError: request timed out"]


# -- rendering -------------------------------------------------------------------------------

_PINO = {"info": 30, "warn": 40, "error": 50}
_SYS = {"info": 6, "warn": 4, "error": 3}
_MON = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _render(sc: Scenario, spec: LogSpec, ev: Ev, ctx: dict) -> list[str]:
    fmt, x = spec.fmt, spec.entity
    lvl = ev.level
    if fmt.startswith("plain"):
        word = {"info": "INFO", "warn": ctx["warn"], "error": ctx["error"]}[lvl]
        if spec.lang == "zh" and lvl != "info":
            word = {"warn": "警告", "error": "错误"}[lvl]
        if fmt == "plain":
            ts = iso(utc(ev.t), ms=True) if ctx["utc"] else iso_offset(ev.t, ms=True)
        elif fmt == "plain-nozone":
            ts = ev.t.strftime("%Y-%m-%d %H:%M:%S,") + f"{ev.t.microsecond // 1000:03d}"
        else:
            ts = "[" + ev.t.strftime("%Y-%m-%d %H:%M:%S.") + f"{ev.t.microsecond // 1000:03d}]"
        who = f"{x} " if ctx["writer"] else ""
        fields = "".join(f" {k}={v}" for k, v in ev.fields.items() if k == "latency_ms")
        msg = ev.msg
        if ev.fields and any(k != "latency_ms" for k in ev.fields):
            d = next(v for k, v in ev.fields.items() if k != "latency_ms")
            msg = f"{ev.msg}: call {d}"
        return [f"{ts} {word} {who}[{ctx['logger']}] {msg}{fields}"] + ev.stack
    if fmt == "postgres":
        t = utc(ev.t)
        ts = t.strftime("%Y-%m-%d %H:%M:%S.") + f"{t.microsecond // 1000:03d} UTC"
        if ev.msg.startswith(("WARNING:", "ERROR:", "FATAL:")):
            return [f"{ts} [{ctx['pid']}] {ev.msg}"]
        return [f"{ts} [{ctx['pid']}] LOG:  {ev.msg}"]
    if fmt == "logfmt":
        ts = iso(utc(ev.t), ms=True) if ctx["utc"] else iso_offset(ev.t, ms=True)
        parts = [f"ts={ts}", f"level={ {'info': 'info', 'warn': 'warn', 'error': 'error'}[lvl]}",
                 f"{ctx['wfield']}={x}", f'msg="{ev.msg}"'] + [f"{k}={v}" for k, v in ev.fields.items()]
        return [" ".join(parts)]
    if fmt in ("zap", "logrus", "pino", "bunyan"):
        if fmt == "zap":
            obj = {"level": lvl, "ts": round(epoch(ev.t), 6), "caller": f"{ctx['logger']}/handler.go:{ctx['line']}",
                   "msg": ev.msg, "service": x}
        elif fmt == "logrus":
            obj = {"level": {"info": "info", "warn": "warning", "error": "error"}[lvl], "msg": ev.msg,
                   "time": iso_offset(ev.t), "app": x}
        elif fmt == "pino":
            obj = {"level": _PINO[lvl], "time": int(epoch(ev.t) * 1000), "pid": ctx["pid"], "hostname": ctx["host"],
                   "name": x, "msg": ev.msg}
        else:
            obj = {"name": x, "hostname": ctx["host"], "pid": ctx["pid"], "level": _PINO[lvl], "msg": ev.msg,
                   "time": iso(utc(ev.t), ms=True), "v": 0}
        obj.update(ev.fields)
        if ev.stack:
            obj["stack"] = "\n".join(ev.stack)
        return [json.dumps(obj, ensure_ascii=False, separators=(",", ":"))]
    if fmt == "syslog5424":
        pri = ctx["facility"] * 8 + _SYS[lvl]
        return [f"<{pri}>1 {iso_offset(ev.t, ms=True)} {ctx['host']} {x} {ctx['pid']} - - {_sys_msg(ev)}"]
    if fmt == "syslog3164":
        pri = ctx["facility"] * 8 + _SYS[lvl]
        stamp = f"{_MON[ev.t.month - 1]} {ev.t.day:>2} {ev.t:%H:%M:%S}"
        return [f"<{pri}>{stamp} {ctx['host']} {x}[{ctx['pid']}]: {_sys_msg(ev)}"]
    raise ValueError(fmt)


def _sys_msg(ev: Ev) -> str:
    if ev.fields and any(k != "latency_ms" for k in ev.fields):
        d = next(v for k, v in ev.fields.items() if k != "latency_ms")
        return f"{ev.msg}: call {d}"
    return ev.msg


def _malformed(sc: Scenario, spec: LogSpec, t: datetime) -> str:
    if spec.fmt in ("zap", "logrus", "pino", "bunyan"):
        return '{"level":"info","msg":"flushing buffered spans to the coll'
    if spec.fmt == "logfmt":
        return f'ts={iso(utc(t))} level=info msg="rotating log file'
    if spec.fmt.startswith("syslog"):
        return "-- MARK --"
    return "2026-13-45T99:99:99 heartbeat"


def write_logs(sc: Scenario, plan: Plan, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    for x in sorted(plan.logs):
        spec = plan.logs[x]
        gen = _Gen(sc, plan, spec)
        evs = gen.events()
        ctx = {"warn": r.choice(["WARN", "WARNING", "warn"]), "error": r.choice(["ERROR", "ERROR", "error", "ERR"]),
               "utc": r.random() < 0.3, "writer": r.random() < 0.5, "logger": r.choice(["http", "worker", "client", "main"]),
               "pid": r.randint(7, 65000), "host": sc.pod_name(x) if x in sc.pods else f"{x}-host-1",
               "facility": r.choice([1, 16, 17, 20]), "line": r.randint(20, 400),
               "wfield": r.choice(["service", "app", "service.name"])}
        lines: list[str] = []
        spans: list[tuple[Ev, str]] = []
        mal_at = r.randint(3, max(4, len(evs) // 4)) if spec.malformed else -1
        for i, ev in enumerate(evs):
            if i == mal_at:
                lines.append(_malformed(sc, spec, ev.t))
            rendered = _render(sc, spec, ev, ctx)
            lines.extend(rendered)
            spans.append((ev, rendered[0]))
        text = "\n".join(lines) + "\n"
        tz = None
        if spec.fmt in ("plain-nozone", "plain-bracket", "syslog3164"):
            tz = sc.tz_text
        if spec.fmt == "postgres":
            tz = "+00:00"
        ext = "jsonl" if spec.fmt in ("zap", "logrus", "pino", "bunyan") else "log"
        sid = f"{x}-{sc.env}-log"
        doc_fmt = {"plain-nozone": "plain", "plain-bracket": "plain", "postgres": "plain", "zap": "json", "logrus": "json",
                   "pino": "json", "bunyan": "json", "syslog5424": "syslog", "syslog3164": "syslog"}.get(spec.fmt, spec.fmt)
        tags = [f"log/{spec.fmt}"]
        if any(ev.stack for ev in evs):
            tags.append("log/multiline")
        if spec.malformed:
            tags.append("log/malformed")
        if spec.lang == "zh":
            tags.append("lang/zh-log")
        src = bundle.add(Source(id=sid, path=f"sources/logs/{x}-{sc.env}.{ext}", kind="log", fmt=doc_fmt, service=x,
                                env=sc.env, text=text, groups=groups_for(x, denied=spec.denied), timezone=tz,
                                explicit_format=doc_fmt == "plain" or r.random() < 0.5, tags=tags))
        done: set[str] = set()
        for ev, line in spans:
            for tag in ev.tags:
                if tag.startswith("rel:"):
                    name = f"hop:{x}:{tag[4:]}"
                    if name not in done:
                        bundle.anchor(name, src, line)
                        done.add(name)
                elif tag == "implicate" and "implicate" not in bundle.anchors:
                    bundle.anchor("implicate", src, line)
            if LEVELS[ev.level] >= 1 and ev.t >= (onset_of(sc, x) or sc.end) and f"burst:{x}" not in bundle.anchors:
                bundle.anchor(f"burst:{x}", src, line)
