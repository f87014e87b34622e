"""§4 of docs/deciding.md, The anomalous path: from the subject along stated relations, hop by hop.

`explains` says whether a dependency's anomaly explains its caller's (onset order, and magnitude in
comparable units); `walk` follows explaining dependencies best first, the anomaly's own lines
leading, and records on a `Trace` what it could not decide yet (the lookups that could extend or
cut the path). Where the path ends, and how it moves at its end, is `root.py`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from graphs.rulebook.anomalies import EntityState, entity_state, is_bad
from graphs.rulebook.knowledge import HOST_KINDS, Knowledge, Ref
from state.facts import UPSTREAM, SignalFact
from state.telemetry import SEVERITY_RANK

TIME_UNITS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "millis": 1.0, "milliseconds": 1.0, "s": 1000.0,
              "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0}
LINE_SIGNALS = ("logs", "events", "traces")
"""Signals made of lines (a burst of bad lines, sampled spans), as against a measured series."""

SHARE_UNITS = {"%": 0.01, "percent": 0.01, "pct": 0.01, "share": 1.0, "ratio": 1.0, "fraction": 1.0}
"""Units in which two anomalies compare (§4: latency in time units, error shares), with the factor to
a common unit. The time units overlap the profile's `unit_roles.latency`, which has no factors."""

MACHINES = ("node", "host")
"""A machine depends on nothing the path could follow: what matters there is who else runs on it
(its consumers, §5), never what it "depends on"."""

BAD_ANSWERS = ("latency", "errors", "availability")
"""Roles of signals that measure how a thing answers (as against how much work waits on it)."""

CONDUITS = ("queue",)
"""Kinds that only carry work between others: a queue's backlog or lag grows because its consumers
slowed down or its producers surged, so it is a root only when nothing else is."""


# --- explanation between two anomalies ---------------------------------------------------------

def comparable(sig: SignalFact) -> tuple[str, float] | None:
    """(comparable family, factor to a common unit) for latency in time units and error shares."""
    unit = sig.unit.strip().lower().split(" ", 1)[0]
    if sig.role == "latency" and unit in TIME_UNITS:
        return "latency", TIME_UNITS[unit]
    if sig.role == "errors" and unit in SHARE_UNITS:
        return "errors", SHARE_UNITS[unit]
    return None


@dataclass(frozen=True)
class Explanation:
    observed: bool
    explains: bool
    why: str


def onset_along(k: Knowledge, upper: EntityState, lower: str) -> datetime | None:
    """When `upper` began to fail as seen along its hop to `lower` (§4): where its bursting bad lines
    name `lower`, their onset, unless a measured (non-line) anomaly of `upper` began earlier; bad lines
    of its that named only other things before then are another branch's. Else `upper`'s onset."""
    if upper.how != "own" or upper.onset is None:
        return upper.onset
    named = [m.ts for m, _e in k.mentions.get(upper.entity, []) if m.anomalous and m.name == lower]
    if not named:
        return upper.onset
    measured = [f.onset for f, _e in upper.anomalies
                if isinstance(f, SignalFact) and f.signal not in LINE_SIGNALS and f.onset is not None]
    return max(upper.onset, min([min(named), *measured]))


def explains(k: Knowledge, upper: EntityState, lower: EntityState) -> Explanation:
    tol = k.case.window.onset_tolerance
    start = onset_along(k, upper, lower.entity)
    if not lower.anomalous or start is None or lower.onset is None:
        return Explanation(False, False, f"{lower.entity} shows no anomaly")
    if lower.onset > start + tol:
        return Explanation(False, False, f"{lower.entity}'s onset {k.clock(lower.onset)} is after "
                                         f"{upper.entity}'s {k.clock(start)} (+{int(tol.total_seconds())} s)")
    best: tuple[float, float, SignalFact, SignalFact] | None = None
    for uf, _ue in upper.anomalies:
        if not isinstance(uf, SignalFact) or uf.delta is None:
            continue
        nu = comparable(uf)
        for lf, _le in lower.anomalies:
            if not isinstance(lf, SignalFact) or lf.delta is None:
                continue
            nl = comparable(lf)
            if nu and nl and nu[0] == nl[0]:
                du, dl = abs(uf.delta) * nu[1], abs(lf.delta) * nl[1]
                if best is None or dl / max(du, 1e-12) > best[1] / max(best[0], 1e-12):
                    best = (du, dl, uf, lf)
    # the fraction rule weighs like against like: a dependency whose anomaly shows in another kind of
    # signal (evictions, misses, saturation, a queue, errors) explains its caller's slowdown even if its
    # own latency barely moved (the caller recomputes, retries or waits)
    other_kind = any(isinstance(lf, SignalFact) and comparable(lf) is None and lf.signal == "metric"
                     for lf, _le in lower.anomalies)
    if best is not None and not other_kind:
        du, dl, uf, lf = best
        frac = k.profile.anomaly.explain_fraction
        if dl < frac * du:
            return Explanation(True, False, f"{lower.entity}'s {lf.name} rose by {lf.delta:g} {lf.unit}, less than "
                                            f"{int(frac * 100)} % of {upper.entity}'s {uf.name} rise ({uf.delta:g} {uf.unit}):"
                                            f" {upper.entity} amplified it")
    return Explanation(True, True, f"{lower.entity} anomalous since {k.clock(lower.onset)}, not after "
                                   f"{upper.entity}'s onset {k.clock(start)}")


# --- the path ----------------------------------------------------------------------------------

@dataclass
class Node:
    entity: str
    state: EntityState
    parent: str | None
    via: tuple[Ref, ...] = ()
    """The relation refs that state parent -> entity (or, sideways, entity -> parent)."""
    sideways: bool = False
    depth: int = 0
    via_named: bool = False
    """Its caller's bursting error lines name it: the anomaly itself points along this hop."""
    drains: bool = False
    """Reached from a conduit (its parent) as what drains it: the relation states entity -> parent."""


@dataclass
class Trace:
    nodes: dict[str, Node] = field(default_factory=dict)
    pending: list[tuple[str, str, str]] = field(default_factory=list)
    """(action, entity, why): lookups that could extend or cut the path."""
    later: list[tuple[str, str, str]] = field(default_factory=list)
    """(action, entity, why): lookups that only complete the picture around a hop the anomaly's own
    lines already point along (the other dependencies of a caller whose errors name the next hop)."""
    named: set[str] = field(default_factory=set)
    """Entities the anomalous lines of an entity on the path name: where its errors point."""
    aside: dict[str, str] = field(default_factory=dict)
    """Dependencies (-> the entity on the path that has them) left aside because that entity's
    errors point elsewhere; any that are anomalous and never joined the path are listed."""
    blocked: dict[str, str] = field(default_factory=dict)
    """Denied sources a lookup for an entity on the path returned -> that entity (the first to meet it)."""
    beside: list[str] = field(default_factory=list)
    """Denied sources of an entity that left the path because its own signals are healthy and
    nothing changed on the way to it (its caller's side of the call failed): they could only say
    something stands in front of it, which matters while the anomaly does not name the cause."""
    failed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: dict[str, str] = field(default_factory=dict)
    """Dependencies ruled out, and why."""
    roots: list[str] = field(default_factory=list)
    root: str | None = None
    ambiguous: list[str] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)
    """Roots left for their caller's side of the call though their own health could not be read (no
    signals of their own): the cause found at the caller stays in doubt."""
    rivals: set[str] = field(default_factory=set)
    """Dependencies left aside that explain their caller on the path on their own, with an onset no later
    than the root's plus the tolerance: rival branches, so the root found is not the only one."""

    def path(self, entity: str | None = None) -> list[str]:
        out = []
        cur = entity or self.root
        while cur is not None:
            out.append(cur)
            cur = self.nodes[cur].parent
        return list(reversed(out))

    def block(self, entity: str, sources: list[str] | tuple[str, ...]) -> None:
        for d in sources:
            self.blocked.setdefault(d, entity)

    def need(self, action: str, entity: str, why: str) -> None:
        if (action, entity, why) not in self.pending and not any(p[:2] == (action, entity) for p in self.pending):
            self.pending.append((action, entity, why))
        self.later = [p for p in self.later if p[:2] != (action, entity)]

    def unread_dependencies(self) -> list[tuple[str, str]]:
        """(entity, why): known dependencies of the path its errors did not name, not read yet; read
        before a cause is confirmed, since one may be a rival branch (docs/deciding.md §4)."""
        return [(e, why) for act, e, why in self.later if act == "telemetry" and e not in self.checked]

    def defer(self, action: str, entity: str, why: str) -> None:
        if not any(p[:2] == (action, entity) for p in (*self.pending, *self.later)):
            self.later.append((action, entity, why))


def _deps(k: Knowledge, entity: str) -> dict[str, list[Ref]]:
    return k.dependencies(entity)


def named_by(k: Knowledge, entity: str) -> set[str]:
    """Entities the bursting warning/error lines (spans, events) of `entity` name: where its errors point.
    Where its bursting error lines name something, those names are where they point; a name only its
    warnings carry is a side note then (§4)."""
    said = [m for m, _e in k.mentions.get(entity, []) if m.anomalous and m.name not in (entity, UPSTREAM)]
    errors = {m.name for m in said if SEVERITY_RANK.get(m.severity, 0) >= SEVERITY_RANK["error"]}
    return errors or {m.name for m in said}


def blames_upstream(k: Knowledge, entity: str) -> bool:
    """The bursting bad lines of `entity` blame something below it without naming it."""
    return any(m.anomalous and m.name == UPSTREAM for m, _e in k.mentions.get(entity, []))


def walk(k: Knowledge, subject: str, max_hops: int, start: EntityState | None = None) -> Trace:
    """Best-first over stated relations: each entity is expanded once, so the work is linear in the
    relations read (no path enumeration); depth is bounded by `max_hops`.

    The anomaly's own lines lead: a dependency that an entity's bursting error lines name is
    followed first, and while one of those explains it, its other dependencies and relations are
    only looked up to complete the picture (`later`), never before the path reaches its end."""
    t = Trace()
    s = start or entity_state(k, subject)
    t.nodes[subject] = Node(subject, s, None)
    if not s.anomalous:
        if s.status == "unknown":
            t.need("telemetry", subject, f"the anomaly of {subject}")
        return t
    if not k.searches.done_full(subject):
        # its own lines, spans and events name what its errors involve (implication, callers' view)
        t.need("telemetry", subject, f"every signal of {subject}, whose own lines name where its errors come from")
    frontier: deque[str] = deque([subject])
    drained: set[str] = set()
    while frontier:
        x = frontier.popleft()
        node = t.nodes[x]
        if node.depth >= max_hops:
            t.notes.append(f"stopped at {x}: max_hops {max_hops}")
            t.roots.append(x)
            continue
        if x != subject and not k.searches.done_full(x) and k.kind(x) != "component":
            # its own lines name what its errors involve: callers' view of what lies below, implication
            t.need("telemetry", x, f"every signal of {x}, whose own lines name where its errors come from")
        if (x != subject and k.kind(x) in HOST_KINDS and any(getattr(r, "relation", "runs_on") != "runs_on" for r, _e in node.via)
                and not k.searches.done("relations", x, direction="consumers")):
            # a call that names a host reaches what listens there: what runs on it says which service that is
            t.need("consumers", x, f"what runs on {x}, which its caller calls")
        named = named_by(k, x)
        t.named |= named
        unknown: list[tuple[str, str]] = []
        deps = _deps(k, x)
        # what the errors name first: while one of those explains x, the path goes on along it only
        children = _expand(k, t, x, node, {d: r for d, r in deps.items() if d in named}, named=named, unknown=unknown)
        led = bool(children)
        rest = {d: r for d, r in deps.items() if d not in named}
        if led:
            for d in sorted(rest):
                if d in t.nodes or d in t.checked:
                    continue
                if entity_state(k, d).status == "unknown":
                    t.defer("telemetry", d, f"whether {d} (a dependency of {x}) shows an anomaly too "
                                            f"(not named by {x}'s errors)")
                else:
                    t.aside.setdefault(d, x)
        else:
            children += _expand(k, t, x, node, rest, named=named, unknown=unknown)
        for d, why in unknown:
            if d in named or not led:
                t.need("telemetry", d, why)
            else:
                t.defer("telemetry", d, why + f" (not named by {x}'s errors)")
        if not led:
            # what x depends on, where nothing it names explains it, may be in a source it cannot read
            t.block(x, k.searches.denied("relations", x))
        if not k.searches.done("relations", x, direction="dependencies") and k.kind(x) not in (*CONDUITS, *MACHINES):
            if led:
                t.defer("relations", x, f"what else {x} depends on (its errors already point along the path)")
            else:
                t.need("relations", x, f"what {x} depends on")
        frontier.extend(sorted(children, key=lambda e: (t.nodes[e].state.onset, e)))
        if not children:
            t.roots.append(x)
        if not frontier and t.roots and all(k.kind(r) in CONDUITS and r != subject for r in t.roots):
            # every branch ends at a queue, which is a root only when nothing else is: what drains it is
            # looked at (once per queue; the branches it opens are walked like any other)
            for r in [r for r in t.roots if r not in drained and not _failing_itself(t.nodes[r].state)]:
                drained.add(r)
                kids = _drains(k, t, r, t.nodes[r])
                if kids:
                    t.roots.remove(r)
                    frontier.extend(sorted(kids, key=lambda e: (t.nodes[e].state.onset, e)))
    return t


def users_read(k: Knowledge, t: Trace, x: str, node: Node, why: Callable[[str], str],
               skip: frozenset[str] | set[str] = frozenset()) -> list[tuple[str, tuple[Ref, ...], EntityState]]:
    """The users of `x` other than the caller the path came from (and anything already on it or in
    `skip`), each with its state once its telemetry is read: an unread one is asked for (`why(name)`),
    an unreadable one blocks."""
    out = []
    for c, refs in sorted(k.consumers_of(x).items()):
        if c == node.parent or c in t.nodes or c in skip or k.kind(c) == "component":
            continue
        st = entity_state(k, c)
        if st.status == "unknown":
            t.need("telemetry", c, why(c))
            continue
        if st.status == "denied":
            t.block(c, st.denied)
            continue
        out.append((c, tuple(refs), st))
    return out


def _drains(k: Knowledge, t: Trace, x: str, node: Node) -> list[str]:
    """What drains the conduit `x` (§4): a backlog grows when what takes work off it slows down, so a user
    of `x` (other than the caller the path came from) whose processing rate fell, or whose own signals
    went bad, no later than `x`'s onset is where the path goes on."""
    if not k.searches.done("relations", x, direction="consumers"):
        t.need("consumers", x, f"what drains {x}: its backlog grows when they slow down")
        return []
    onset, tol = node.state.onset, k.case.window.onset_tolerance
    if onset is None:
        return []
    out = []
    for c, refs, st in users_read(k, t, x, node, lambda c: f"whether {c}, which uses {x}, slowed down before its backlog grew",
                                  skip=set(t.checked)):
        slowed = sorted((r for r in (*st.anomalies, *st.normal) if isinstance(r[0], SignalFact) and r[0].onset is not None
                         and r[0].onset <= onset + tol and (is_bad(r[0]) or _fell(r[0]))), key=lambda r: r[0].onset)
        if not slowed:
            t.checked[c] = f"{c} (also uses {x}) shows no slowdown before {x}'s onset {k.clock(onset)}"
            continue
        rest = tuple(r for r in (*st.anomalies, *st.normal) if r not in slowed)
        state = EntityState(c, "anomalous", slowed[0][0].onset, "own", tuple(slowed), rest, st.load)
        t.nodes[c] = Node(c, state, x, refs, depth=node.depth + 1, drains=True)
        out.append(c)
    return out


def _failing_itself(state: EntityState) -> bool:
    """A conduit whose own answers went bad (its latency, errors or availability, not only its backlog)
    is failing itself, not only filling: its users slow with it, and it stays the root."""
    return any(isinstance(f, SignalFact) and f.role in BAD_ANSWERS for f, _e in state.anomalies)


def _fell(sig: SignalFact) -> bool:
    """Work done fell: a traffic series (messages processed, requests served) departed down."""
    return sig.anomalous and sig.decidable and sig.role == "traffic" and sig.direction == "down"


def _expand(k: Knowledge, t: Trace, x: str, node: Node, deps: dict[str, list[Ref]],
            through: tuple[Ref, ...] = (), seen: frozenset[str] = frozenset(), *, named: frozenset[str] | set[str] = frozenset(),
            unknown: list[tuple[str, str]] | None = None) -> list[str]:
    out: list[str] = []
    unknown = unknown if unknown is not None else []
    for d in sorted(deps):
        refs = tuple((*through, *deps[d]))
        if d in t.nodes or d in seen:
            continue
        kind = k.kind(d)
        st = entity_state(k, d, caller=x)
        if kind == "component" and not k.signals.get(d):
            # a library runs inside its caller: look through it to what it talks to
            inner = {n: r for n, r in _deps(k, d).items() if n not in t.nodes}
            if not k.searches.done("relations", d, direction="dependencies"):
                t.need("relations", d, f"what {d} talks to")
            out += _expand(k, t, x, node, inner, refs, seen | {d}, named=named | ({*inner} if d in named else set()),
                           unknown=unknown)
            continue
        if st.status == "unknown":
            unknown.append((d, f"whether {d} (a dependency of {x}) shows an anomaly"))
            continue
        if st.status == "denied":
            t.block(d, st.denied)
            t.checked[d] = f"{d}'s telemetry is not readable ({', '.join(st.denied)})"
            continue
        if st.status == "failed":
            t.failed.append(d)
            continue
        if st.status != "anomalous":
            t.checked[d] = {"normal": f"{d} shows no anomaly in the window",
                            "no_telemetry": f"{d} has no telemetry and no caller names it in errors",
                            "undecidable": f"{d}'s telemetry has too thin a baseline to decide"}[st.status]
            continue
        ex = explains(k, node.state, st)
        if not ex.explains:
            t.checked[d] = ex.why
            if ex.observed:
                t.notes.append(ex.why)
            continue
        t.nodes[d] = Node(d, st, x, refs, depth=node.depth + 1, via_named=d in named)
        out.append(d)
    return out

