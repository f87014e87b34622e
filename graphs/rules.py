"""The causal rules of docs/deciding.md as pure functions of `Knowledge`.

- `entity_state`: is an entity anomalous, since when, on which evidence (§3);
- `explains`: does a dependency's anomaly explain its caller's (onset order, magnitude) (§4);
- `trace`: the anomalous path from the subject to its root, best first and bounded (§4);
- `cause_at`: the change, consumer or load that explains the root (§5);
- `applicability`: does a prose source apply to what is deployed (§6).

Every function returns values that name the evidence ids they rest on, so a decision can
cite them; none reads a source or the store.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fnmatch import fnmatch
from typing import Literal

from graphs.knowledge import Knowledge, Ref
from state.facts import UPSTREAM, ChangeFact, DocumentFact, MentionFact, RelationFact, SignalFact
from tools.entities import canon_key
from tools.signals import Range, series_verdict

BAD_UP = ("latency", "errors", "saturation")
TIME_UNITS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "millis": 1.0, "milliseconds": 1.0, "s": 1000.0,
              "sec": 1000.0, "secs": 1000.0, "seconds": 1000.0}
SHARE_UNITS = {"%": 0.01, "percent": 0.01, "pct": 0.01, "share": 1.0, "ratio": 1.0, "fraction": 1.0}

Status = Literal["anomalous", "normal", "unknown", "no_telemetry", "undecidable", "denied", "failed"]


# --- signals ---------------------------------------------------------------------------------

def is_bad(sig: SignalFact) -> bool:
    """An anomaly that hurts (latency/errors/saturation up, availability down; unknown role: either)."""
    if not sig.anomalous or not sig.decidable:
        return False
    if sig.role in BAD_UP:
        return sig.direction == "up"
    if sig.role == "availability":
        return sig.direction == "down"
    if sig.role == "traffic":
        return False
    return sig.direction in ("up", "down")


def is_load(sig: SignalFact) -> bool:
    """A rise of demand or resource use: traffic or saturation up."""
    return sig.anomalous and sig.decidable and sig.direction == "up" and sig.role in ("traffic", "saturation")


def moved(sig: SignalFact, k: Knowledge, direction: str, min_ratio: float) -> bool | None:
    """Re-decide a series with a claim's own direction and ratio; None when it cannot be decided."""
    if not sig.decidable:
        return None
    if sig.signal in ("logs", "events"):
        return sig.anomalous and direction == "up"
    if not sig.points:
        return None
    v = series_verdict(list(sig.points), Range.of(k.case.window), k.profile.anomaly, (direction,), min_ratio,
                       sig.capacity)
    return v.anomalous if v.decidable else None


@dataclass(frozen=True)
class EntityState:
    entity: str
    status: Status
    onset: datetime | None = None
    how: Literal["own", "callers", ""] = ""
    anomalies: tuple[Ref, ...] = ()
    """Bad anomalous signals (or caller mentions), earliest first."""
    normal: tuple[Ref, ...] = ()
    load: tuple[Ref, ...] = ()
    denied: tuple[str, ...] = ()

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e for _f, e in (*self.anomalies, *self.normal)))

    @property
    def anomalous(self) -> bool:
        return self.status == "anomalous"


def entity_state(k: Knowledge, entity: str, caller: str | None = None) -> EntityState:
    """How `entity` stands in the window. With `caller`, an entity whose own signals look healthy
    (or that has none) counts as anomalous only as *that* caller sees it: a hop follows the errors
    of the entity it starts from, not anybody's."""
    own = [(f, e) for f, e in k.signals.get(entity, [])]
    bad = sorted(((f, e) for f, e in own if is_bad(f)), key=lambda r: r[0].onset)
    load = tuple(sorted(((f, e) for f, e in own if is_load(f)), key=lambda r: r[0].onset))
    if bad:
        # sampled spans time an onset only as well as their density allows: a metric or the lines, when
        # there is one, say when the anomaly began
        dense = [r for r in bad if r[0].signal != "traces"]
        return EntityState(entity, "anomalous", (dense or bad)[0][0].onset, "own", tuple(bad),
                           tuple(r for r in own if not is_bad(r[0])), load)
    denied = tuple(k.searches.denied("telemetry", entity))
    done = k.searches.done("telemetry", entity)
    if own and not done and k.searches.looked("telemetry", entity):
        return EntityState(entity, "unknown")  # streams left unread could still show the anomaly
    if any(f.decidable for f, _e in own):
        normal = tuple(r for r in own if r[0].decidable)
        # its own signals look healthy, yet its callers' errors naming it burst: the failure is on
        # the way to it (a certificate, a DNS record, a limit that refuses connections) and shows
        # only where it is called from
        seen = callers_seeing(k, entity, caller)
        if seen:
            return EntityState(entity, "anomalous", seen[0][0].ts, "callers", tuple(seen), normal, load)
        return EntityState(entity, "normal", None, "own", (), normal, load, denied=denied)
    if own:
        return EntityState(entity, "undecidable", normal=tuple(own), denied=denied)
    if denied:
        return EntityState(entity, "denied", denied=denied)
    if k.searches.failed("telemetry", entity):
        return EntityState(entity, "failed")
    if not done:
        return EntityState(entity, "unknown")
    if k.kind(entity) == "component":
        return EntityState(entity, "no_telemetry")  # a library runs inside its callers: their anomaly is its
    # no telemetry of its own: anomalous as its callers see it (their bad lines name it)
    seen = callers_seeing(k, entity, caller)
    if seen:
        return EntityState(entity, "anomalous", seen[0][0].ts, "callers", tuple(seen))
    return EntityState(entity, "no_telemetry")


def callers_seeing(k: Knowledge, entity: str, caller: str | None = None) -> list[Ref]:
    """The bursting bad lines of anomalous callers (or of one `caller`) that name `entity`, earliest first."""
    out = []
    for writer, refs in k.mentions.items():
        if caller is not None and writer != caller:
            continue
        if writer == entity or not any(is_bad(f) for f, _e in k.signals.get(writer, [])):
            continue
        out += [(m, e) for m, e in refs if m.name == entity and m.anomalous]
    return sorted(out, key=lambda r: r[0].ts)


# --- explanation between two anomalies ---------------------------------------------------------

def _norm(sig: SignalFact) -> tuple[str, float] | None:
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


def explains(k: Knowledge, upper: EntityState, lower: EntityState) -> Explanation:
    tol = k.case.window.onset_tolerance
    if not lower.anomalous or upper.onset is None or lower.onset is None:
        return Explanation(False, False, f"{lower.entity} shows no anomaly")
    if lower.onset > upper.onset + tol:
        return Explanation(False, False, f"{lower.entity}'s onset {lower.onset:%H:%M:%S} is after "
                                         f"{upper.entity}'s {upper.onset:%H:%M:%S} (+{int(tol.total_seconds())} s)")
    best: tuple[float, float, SignalFact, SignalFact] | None = None
    for uf, _ue in upper.anomalies:
        if not isinstance(uf, SignalFact) or uf.delta is None:
            continue
        nu = _norm(uf)
        for lf, _le in lower.anomalies:
            if not isinstance(lf, SignalFact) or lf.delta is None:
                continue
            nl = _norm(lf)
            if nu and nl and nu[0] == nl[0]:
                du, dl = abs(uf.delta) * nu[1], abs(lf.delta) * nl[1]
                if best is None or dl / max(du, 1e-12) > best[1] / max(best[0], 1e-12):
                    best = (du, dl, uf, lf)
    # the fraction rule weighs like against like: a dependency whose anomaly shows in another kind of
    # signal (evictions, misses, saturation, a queue, errors) explains its caller's slowdown even if its
    # own latency barely moved (the caller recomputes, retries or waits)
    other_kind = any(isinstance(lf, SignalFact) and _norm(lf) is None and lf.signal == "metric"
                     for lf, _le in lower.anomalies)
    if best is not None and not other_kind:
        du, dl, uf, lf = best
        frac = k.profile.anomaly.explain_fraction
        if dl < frac * du:
            return Explanation(True, False, f"{lower.entity}'s {lf.name} rose by {lf.delta:g} {lf.unit}, less than "
                                            f"{int(frac * 100)} % of {upper.entity}'s {uf.name} rise ({uf.delta:g} {uf.unit}):"
                                            f" {upper.entity} amplified it")
    return Explanation(True, True, f"{lower.entity} anomalous since {lower.onset:%H:%M:%S}, not after "
                                   f"{upper.entity}'s onset {upper.onset:%H:%M:%S}")


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
    """Entities the bursting warning/error lines (spans, events) of `entity` name: where its errors point."""
    return {m.name for m, _e in k.mentions.get(entity, []) if m.anomalous and m.name not in (entity, UPSTREAM)}


def blames_upstream(k: Knowledge, entity: str) -> bool:
    """The bursting bad lines of `entity` blame something below it without naming it."""
    return any(m.anomalous and m.name == UPSTREAM for m, _e in k.mentions.get(entity, []))


def trace(k: Knowledge, subject: str, max_hops: int, start: EntityState | None = None) -> Trace:
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
    _choose_root(k, t)
    # sideways, from the chosen root only: a consumer of what it is whose load rose first. Only once
    # its changes are known and none explains it: a change of the root is looked for first
    while t.root is not None and not t.pending and t.nodes[t.root].depth < max_hops:
        root = t.root
        if not k.searches.done("changes", root) or change_candidates(k, root, t.nodes[root].state.onset):
            break
        if t.nodes[root].state.how == "callers":
            # healthy on its own, failing on the way to it: no neighbour loaded it; what stands in front
            # of it (a load balancer, a proxy, a DNS name) is found among what relates to it
            if not k.searches.done("relations", root, direction="consumers"):
                t.need("consumers", root, f"what stands on the way to {root} (a load balancer, a proxy)")
            elif t.nodes[root].state.normal and _nothing_on_the_way(k, t, root):
                # its own signals healthy, nothing changed on the way to it: what fails is its caller's
                # side of the call (a client setting, the caller's own release); the cause is looked for there
                parent = t.nodes[root].parent
                t.checked[root] = (f"{root}'s signals are healthy and nothing changed on the way to it; {parent}'s "
                                   f"errors naming it point at {parent}'s side of the call")
                del t.nodes[root]
                t.beside += [d for d, at in t.blocked.items() if at == root and d not in t.beside]
                t.blocked = {d: at for d, at in t.blocked.items() if at != root}
                t.roots = [r for r in t.roots if r != root]
                if parent is not None and not any(n.parent == parent for n in t.nodes.values()):
                    t.roots.append(parent)
                t.root, t.ambiguous = None, []
                _choose_root(k, t)
                continue
            break
        side = _sideways(k, t, root, t.nodes[root])
        if not side:
            break
        t.roots = [r for r in t.roots if r != root] + side
        _choose_root(k, t)
    _rival_branches(k, t)
    return t


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


def _sideways(k: Knowledge, t: Trace, x: str, node: Node) -> list[str]:
    if x == next(iter(t.nodes)):
        return []  # the subject's callers are its load: a traffic rise, decided at the cause
    if not k.searches.done("relations", x, direction="consumers"):
        t.need("consumers", x, f"what else uses {x} (a noisy neighbour)")
    consumers = {c: refs for c, refs in k.consumers_of(x).items()
                 if c != node.parent and c not in t.nodes and k.kind(c) != "component"}
    out = []
    for c, refs in sorted(consumers.items()):
        st = entity_state(k, c)
        if st.status == "unknown":
            t.need("telemetry", c, f"whether {c}, which also uses {x}, put load on it first")
            continue
        if st.status == "denied":
            t.block(c, st.denied)
            continue
        loads = [r for r in st.load if r[0].onset is not None and node.state.onset is not None
                 and r[0].onset <= node.state.onset + k.case.window.onset_tolerance]
        if loads:
            st2 = EntityState(c, "anomalous", loads[0][0].onset, "own", tuple(loads), st.normal, st.load)
            t.nodes[c] = Node(c, st2, x, tuple(refs), sideways=True, depth=node.depth + 1)
            out.append(c)
        else:
            t.checked[c] = f"{c} (also uses {x}) put no earlier load on it"
    return out


MACHINES = ("node", "host")
"""A machine depends on nothing the path could follow: what matters there is who else runs on it
(its consumers, §5), never what it "depends on"."""

CONDUITS = ("queue",)
"""Kinds that only carry work between others: a queue's backlog or lag grows because its consumers
slowed down or its producers surged, so it is a root only when nothing else is."""


def fronting(k: Knowledge, t: Trace) -> list[str]:
    """What stands on the way to a root that only its callers see failing (its own signals healthy): the
    entities with a stated relation to it that have no telemetry of their own — its load balancer,
    proxy, pooler, DNS name, certificate. A change of those breaks the way to it."""
    root = t.root
    if root is None or t.nodes[root].state.how != "callers":
        return []
    near = set(k.consumers_of(root))  # what forwards to it (stands in front), not what it depends on
    return sorted(x for x in near if x not in t.nodes and not k.signals.get(x) and k.kind(x) != "component")


def _nothing_on_the_way(k: Knowledge, t: Trace, root: str) -> bool:
    """A root only its callers see failing (its own telemetry read and healthy), whose changes and whose
    front's changes were all looked up and none acts at its onset. (One with no telemetry at all — a
    vendor's API — stays the root: its failure is its own, unseen.)"""
    onset = t.nodes[root].state.onset
    way = fronting(k, t)
    if not k.searches.done("changes", root) or not all(k.searches.done("changes", x) for x in way):
        return False
    return not change_candidates(k, root, onset) and not any(change_candidates(k, x, onset) for x in way)


def change_candidates(k: Knowledge, entity: str, onset: datetime | None) -> list[Ref]:
    """Changes of `entity` acting on it at `onset`: taken effect in `[onset − change_lookback,
    onset + onset_tolerance]`, or started by then and still under way."""
    if onset is None:
        return []
    w = k.case.window
    lo, hi = onset - w.change_lookback, onset + w.onset_tolerance
    out = []
    for ch, eid in k.changes_of(entity):
        at = ch.effective
        if ch.type == "rollback" or at is None:
            continue
        if lo <= at <= hi or (ch.started_at is not None and ch.started_at <= hi < at):
            out.append((ch, eid))
    return out


def _rival_branches(k: Knowledge, t: Trace) -> None:
    """A dependency left aside because its caller's errors name another one is a rival branch when it
    explains that caller on its own (anomalous no later than it, by enough of its rise), no stated
    relation ties it to the path below its caller (it is not another victim of the same root), and
    its onset is within the tolerance of the root's or earlier: whatever lies below it started no
    later than it did, so the root found is not the only candidate (docs/deciding.md §4)."""
    root_onset = t.nodes[t.root].state.onset if t.root is not None else None
    if root_onset is None:
        return
    tol = k.case.window.onset_tolerance
    path = t.path()
    for d, x in t.aside.items():
        if d in t.nodes or d in t.ambiguous or x not in path:
            continue
        st = entity_state(k, d, caller=x)
        if not st.anomalous or st.onset is None or st.onset > root_onset + tol:
            continue
        if not explains(k, t.nodes[x].state, st).explains:
            continue
        below = set(path[path.index(x) + 1:])
        if _reaches(k, d, below):
            continue
        t.ambiguous.append(d)
        t.rivals.add(d)


def _reaches(k: Knowledge, entity: str, targets: set[str]) -> bool:
    """A chain of stated relations leads from `entity` to one of `targets`."""
    seen, todo = {entity}, [entity]
    while todo:
        for d in k.dependencies(todo.pop()):
            if d in targets:
                return True
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return False


def _choose_root(k: Knowledge, t: Trace) -> None:
    roots = [r for r in dict.fromkeys(t.roots) if r in t.nodes]
    if not roots:
        return
    conduits = [r for r in roots if k.kind(r) in CONDUITS and not t.nodes[r].sideways]
    if conduits and len(conduits) < len(roots):
        for r in conduits:
            t.checked.setdefault(r, f"{r} is a {k.kind(r)}: its backlog grows when what consumes it slows down, "
                                    f"which the path follows instead")
        roots = [r for r in roots if r not in conduits]
    tol = k.case.window.onset_tolerance
    roots.sort(key=lambda r: (t.nodes[r].state.onset or datetime.max.replace(tzinfo=None), -t.nodes[r].depth, r))
    best = roots[0]
    t.root = best
    onset = t.nodes[best].state.onset
    for r in roots[1:]:
        o = t.nodes[r].state.onset
        if onset is not None and o is not None and o - onset <= tol and r not in t.path(best) and best not in t.path(r):
            t.ambiguous.append(r)


# --- limits -------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z]+|[^\x00-\x7f]+")


def _words(text: str) -> set[str]:
    """Lower-case words of a name, a plural `s` folded (`connections` ~ `connection`)."""
    out = set()
    for w in _WORD.findall(text.lower().replace("_", " ")):
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return out


@dataclass(frozen=True)
class AtLimit:
    signal: SignalFact
    evidence: str
    key: str
    limit: float
    config_evidence: str
    reached: datetime


def at_limit(k: Knowledge, entity: str) -> list[AtLimit]:
    """Series of `entity` that reached a limit configured for it in the search range (≥
    `saturation_level` of it) after a baseline below it. A setting bounds a series when its key
    shares a word with the series' name, unit or source (the profile's limit words aside):
    `max_connections: 300` bounds `…connections.prom.json`, `worker-threads: 96` bounds `workers`."""
    limit_words = {w for x in k.profile.limit_words for w in _words(x)}
    own = _words(entity)
    out: list[AtLimit] = []
    level = k.profile.anomaly.saturation_level
    settings = [(key, value, eid) for snap, eid in k.configs.get(entity, []) for key, value in snap.settings.items()]
    for sig, eid in k.signals.get(entity, []):
        if sig.signal != "metric" or not sig.points or sig.role in ("latency", "availability"):
            continue
        ev = k.evidence.get(eid.split("+")[0])
        words = _words(" ".join([sig.name, sig.unit, sig.series, ev.source_id if ev else ""])) - limit_words - own
        for key, value, ceid in settings:
            try:
                limit = float(str(value).strip())
            except ValueError:
                continue
            if not math.isfinite(limit) or limit <= 0 or not (_words(key) - limit_words - own) & words:
                continue
            w = k.case.window
            base = [v for t, v in sig.points if t < w.search_from]
            hits = [(t, v) for t, v in sig.points if w.search_from <= t <= w.end and v >= level * limit]
            if hits and base and statistics.median(base) < level * limit:
                out.append(AtLimit(sig, eid, key, limit, ceid, hits[0][0]))
                break
    return sorted(out, key=lambda a: a.reached)


# --- the cause at the root ---------------------------------------------------------------------

@dataclass
class Candidate:
    change: ChangeFact
    evidence: str
    implicated: list[tuple[str, str, str]] = field(default_factory=list)
    """(element, how it is named, mention evidence id)."""


@dataclass
class Cause:
    entity: str
    kind: str
    change: Candidate | None = None
    element: str | None = None
    element_evidence: tuple[str, ...] = ()
    refined: str | None = None
    refined_evidence: tuple[str, ...] = ()
    refined_note: str = ""
    contested: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(key, evidence) of each change the documentation read states, when they disagree and the
    anomaly names none of them: no refinement is chosen, the claim is conflicted."""
    evidence: tuple[str, ...] = ()
    summary: str = ""


@dataclass
class CauseResult:
    cause: Cause | None
    candidates: list[Candidate] = field(default_factory=list)
    rejected: list[tuple[str, str, str, tuple[str, ...]]] = field(default_factory=list)
    """(what, status, why, evidence): changes after the onset, unimplicated, refuted by a rollback."""
    ambiguous: bool = False
    missing: list[str] = field(default_factory=list)


def _elements(ch: ChangeFact) -> dict[str, str]:
    """What a change changed, canonical -> as written (keys, components, flag, target)."""
    out: dict[str, str] = {}
    for cc in ch.config_changes:
        out[canon_key(cc.key)] = cc.key
    for dc in ch.dependency_changes:
        out[dc.name.lower()] = dc.name
    if ch.flag is not None:
        out[canon_key(ch.flag.name)] = ch.flag.name
    if ch.target:
        out[ch.target.lower()] = ch.target
    return out


def _names(mention: MentionFact, element: str) -> bool:
    m = mention.name.lower()
    if m == element:
        return True
    if mention.name_kind in ("config_key", "flag"):
        return m.endswith("_" + element) or element.endswith("_" + m)
    return False


def implicated(k: Knowledge, ch: ChangeFact, path: list[str]) -> list[tuple[str, str, str]]:
    """Elements of the change that bad events of the path's entities name in the search range."""
    out: list[tuple[str, str, str]] = []
    elems = _elements(ch)
    for entity in path:
        for m, eid in k.mentions.get(entity, []):
            if not m.anomalous:
                continue
            for c, written in elems.items():
                if _names(m, c) and not any(o[0] == written for o in out):
                    out.append((written, f"named by {entity}'s {m.severity} event at {m.ts:%H:%M:%S}", eid))
    return out


def cause_at(k: Knowledge, t: Trace) -> CauseResult:
    root = t.root
    if root is None:
        return CauseResult(None, missing=["an anomalous path from the subject"])
    node = t.nodes[root]
    onset = node.state.onset
    w = k.case.window
    assert onset is not None
    lo, hi = onset - w.change_lookback, onset + w.onset_tolerance
    path = t.path()
    res = CauseResult(None)
    rollbacks = {c.rollback_of: (c, e) for c, e in k.changes if c.type == "rollback" and c.rollback_of}
    ended: dict[str, str] = {}
    way = {c.id: (c, e) for x in fronting(k, t) for c, e in k.changes_of(x)}
    mine = {c.id: (c, e) for c, e in k.changes_of(root)}
    for ch, eid in sorted({**way, **mine}.values(), key=lambda r: (r[0].effective, r[0].id)):
        at = ch.effective
        if ch.type == "rollback":
            continue
        under_way = ch.started_at is not None and ch.started_at <= hi < at
        """Started before the onset and still going (a migration, a rolling deploy, a push to a fleet):
        such changes take effect as they progress, so it was acting on the root when the anomaly began."""
        if at > hi and not under_way:
            if at <= w.end:
                res.rejected.append((ch.id, "after_onset", f"{ch.id} took effect at {at:%H:%M:%S}, after {root}'s onset "
                                                           f"{onset:%H:%M:%S}", (eid,)))
            continue
        if at < lo:
            continue
        rb = rollbacks.get(ch.id)
        if rb is not None and rb[0].effective is not None and rb[0].effective + w.onset_tolerance < w.end:
            recovered = [f.recovered_at for f, _e in node.state.anomalies if isinstance(f, SignalFact) and f.recovered_at]
            if not recovered or min(recovered) > rb[0].effective + 2 * w.onset_tolerance:
                res.rejected.append((ch.id, "refuted", f"{rb[0].id} rolled {ch.id} back at {rb[0].effective:%H:%M:%S} "
                                                       f"and {root}'s anomaly did not end", (eid, rb[1])))
                continue
            ended[ch.id] = rb[1]
        cand = Candidate(ch, eid, implicated(k, ch, path))
        if ch.id in ended:
            cand.implicated.append((ch.id, f"{root}'s anomaly ended after {rollbacks[ch.id][0].id} rolled it back",
                                    ended[ch.id]))
        res.candidates.append(cand)
    for c, e in k.undated:
        if root in c.about:
            res.rejected.append((c.id, "unchecked", f"no source dates {c.id} (no ScalingReplicaSet scale-up of its "
                                                   f"pod-template hash, no history time): it cannot be placed in time", (e,)))
    chosen: Candidate | None = None
    if len(res.candidates) == 1:
        chosen = res.candidates[0]
    elif len(res.candidates) > 1:
        named = [c for c in res.candidates if c.implicated]
        if len(named) == 1:
            chosen = named[0]
            for c in res.candidates:
                if c is not chosen:
                    res.rejected.append((c.change.id, "not_implicated",
                                         f"{c.change.id} also precedes the onset but nothing in {root}'s anomaly names "
                                         f"what it changed", (c.evidence,)))
        else:
            res.ambiguous = True
            res.missing.append(f"which of {', '.join(c.change.id for c in res.candidates)} caused it: an error line, "
                               f"span or event of {root} naming what one of them changed, or a rollback that ended it")
            chosen = (named or res.candidates)[-1]
    if chosen is not None and len(path) == 1 and not chosen.implicated and not res.ambiguous:
        # the subject is the root only because nothing below it shows an anomaly: timing alone is not enough
        res.ambiguous = True
        res.missing.append(f"an observation tying {chosen.change.id} to {root}'s anomaly: {root}'s error lines, "
                           f"spans or events naming what it changed, or recovery after a rollback (a cause at the "
                           f"subject itself is known otherwise only by the absence of anomalies below it)")
    if chosen is not None:
        ch = chosen.change
        # a consumer that loaded what the path shares is a noisy neighbour, whatever change made it one
        cause = Cause(entity=root, kind="noisy_neighbour" if node.sideways else _cause_kind(ch.type), change=chosen,
                      evidence=(chosen.evidence, *(e for _f, e in node.state.anomalies)) if node.sideways
                      else (chosen.evidence,),
                      summary=(f"{root}'s load rose on {node.parent} after " if node.sideways else "") + _describe(ch))
        front = next((x for x in ch.about if x in fronting(k, t)), None) if root not in ch.about else None
        if front is not None:
            # the change is of what stands on the way to the root: cite the source that says so
            rel = [e for _r, e in (*k.consumers_of(root).get(front, []), *k.dependencies(root).get(front, []))]
            cause.evidence = tuple(dict.fromkeys((*cause.evidence, *rel)))
            cause.summary = f"{front}, on the way to {root}: " + cause.summary
        if chosen.implicated:
            cause.element = chosen.implicated[0][0]
            cause.element_evidence = tuple(dict.fromkeys(i[2] for i in chosen.implicated))
        elif len(_elements(ch)) == 1:
            cause.element = next(iter(_elements(ch).values()))
        _refine(k, cause)
        res.cause = cause
        return res
    loads = [r for r in node.state.load if r[0].role == "traffic" and r[0].onset <= hi]
    if node.sideways and node.parent is not None:
        res.cause = Cause(entity=root, kind="noisy_neighbour", evidence=tuple(e for _f, e in node.state.anomalies),
                          summary=f"{root}'s load rose on {node.parent}, which {path[-2] if len(path) > 1 else root} shares")
        return res
    if loads:
        res.cause = Cause(entity=root, kind="capacity", evidence=tuple(e for _f, e in loads),
                          summary=f"{root}'s own traffic rose ({loads[0][0].name}) with no change before its onset")
        return res
    full = at_limit(k, root)
    if full:
        a = full[0]
        res.cause = Cause(entity=root, kind="capacity", evidence=tuple(dict.fromkeys((a.evidence, a.config_evidence))),
                          element=a.key, summary=f"{root}'s {a.signal.name} reached its configured limit "
                                                 f"{a.key} = {a.limit:g} at {a.reached:%H:%M:%S} with no change "
                                                 f"before its onset")
        return res
    res.missing.append(f"a change, a consumer's load, a traffic rise or a configured limit reached that explains "
                       f"{root}'s anomaly (onset {onset:%H:%M:%S}): {root}'s changes in {lo:%H:%M}–{hi:%H:%M}")
    return res


def _cause_kind(change_type: str) -> str:
    known = {"deployment", "config_push", "feature_flag", "certificate", "dns", "rollback", "infrastructure",
             "schema_migration"}
    return change_type if change_type in known else "other"


def _describe(ch: ChangeFact) -> str:
    parts = [f"{ch.type} {ch.id} of {ch.entity}"]
    if ch.version_from or ch.version_to:
        parts.append(f"{ch.version_from or '?'} → {ch.version_to or '?'}")
    if ch.config_changes:
        parts.append("; ".join(f"{c.key}: {c.from_} → {c.to}" for c in ch.config_changes[:4]))
    if ch.dependency_changes:
        parts.append("; ".join(f"{d.name} {d.from_ or '?'} → {d.to}" for d in ch.dependency_changes[:4]))
    if ch.flag is not None:
        parts.append(f"flag {ch.flag.name}: {ch.flag.from_} → {ch.flag.to}")
    if ch.target:
        parts.append(f"target {ch.target}")
    when = ch.effective
    return ", ".join(parts) + (f", at {when:%Y-%m-%d %H:%M:%S%z}" if when else "")


def version_matches(deployed: str, pattern: str) -> bool:
    """`2.4.0` matches `2.4.*`, `2.4`, `2.4.0`; `12.4` never matches `2.4` (whole dot-separated tokens)."""
    d, p = deployed.strip().lstrip("vV"), pattern.strip().lstrip("vV")
    if any(ch in p for ch in "*?["):
        return fnmatch(d, p)
    if d == p:
        return True
    return d.startswith(p + ".") or d.startswith(p + "-") or p.startswith(d + ".")


def _refine(k: Knowledge, cause: Cause) -> None:
    """A component the change upgraded, refined to the key its applicable docs state a change of."""
    ch = cause.change.change if cause.change else None
    if ch is None or cause.element is None:
        return
    dep = next((d for d in ch.dependency_changes if d.name == cause.element), None)
    if dep is None:
        return
    found: list[tuple[str, str]] = []
    for st, eid in k.statements:
        if st.about != dep.name:
            continue
        doc = k.documents.get(eid)
        if doc is None:
            continue
        status, note = applicability(k, eid, requires_owner=False, deployed=dep.to)
        if status != "applicable":
            continue
        if st.versions and not any(version_matches(dep.to, v) for v in st.versions):
            continue
        found.append((st.key, eid))
    if not found:
        cause.refined_note = (f"no sentence read in documentation of {dep.name} {dep.to} that states what it changed")
        return
    keys = list(dict.fromkeys(key for key, _e in found))
    # the anomaly's own words pick among several stated changes
    named = [key for key in keys if any(_names(m, canon_key(key)) for ms in k.mentions.values() for m, _e in ms)]
    if len(named) != 1 and len(keys) > 1:
        # sources disagree (or one lists several) and the telemetry names no single one: a document's
        # word alone, however trusted, never picks the cause (docs/deciding.md §5)
        cause.contested = tuple((key, tuple(dict.fromkeys(e for kk, e in found if kk == key))) for key in (named or keys))
        cause.refined_note = (f"the documentation read states different changes of {dep.name} {dep.to} "
                              f"({', '.join(k_ for k_, _e in cause.contested)}) and nothing in the anomaly names one")
        return
    pick = named[0] if named else keys[0]
    cause.refined = pick
    cause.refined_evidence = tuple(dict.fromkeys(e for key, e in found if key == pick))


# --- applicability of prose sources -------------------------------------------------------------

Applicability = Literal["applicable", "unknown", "inapplicable", "untrusted"]


def applicability(k: Knowledge, eid: str, *, requires_owner: bool, deployed: str | None = None
                  ) -> tuple[Applicability, str]:
    """Whether a source applies to what is deployed now, and why (or what is missing)."""
    ev = k.evidence[eid.split("+")[0]]
    if ev.trust == "untrusted":
        return "untrusted", f"{ev.source_id} is untrusted: its text never counts"
    if ev.trust == "unverified":
        return "unknown", f"{ev.source_id} is unverified"
    doc: DocumentFact | None = k.documents.get(ev.id)
    if doc is None:
        return "applicable", "an observation or record of the subject's environment"
    if doc.status != "current":
        return "inapplicable", f"{doc.doc_id} {doc.version} is {doc.status}"
    service = doc.service
    version = deployed or (k.deployed.get(service, (None, ""))[0])
    maps = [m for m, _e in k.doc_mappings if m.doc_id == doc.doc_id and m.service == service]
    if maps and version:
        mine = [m for m in maps if m.version == doc.version]
        if not mine or not any(version_matches(version, p) for m in mine for p in m.applies_to):
            return "inapplicable", f"the deployment mapping does not map {doc.doc_id} {doc.version} to deployed {service} {version}"
    if doc.applies_to_versions:
        if version is None:
            return "unknown", f"deployed version of {service} not read (needed for {doc.doc_id} {doc.version})"
        if not any(version_matches(version, p) for p in doc.applies_to_versions):
            return "inapplicable", (f"{doc.doc_id} {doc.version} applies to {list(doc.applies_to_versions)}, "
                                    f"deployed {service} is {version}")
    if requires_owner and ev.source_kind == "runbook":
        ok = [v for v, _e in k.verifications if v.doc_id == doc.doc_id and v.version == doc.version
              and (not v.for_versions or (version and any(version_matches(version, p) for p in v.for_versions)))]
        if not ok:
            return "unknown", f"owner verification of {doc.doc_id} {doc.version} for deployed {service} {version or '?'} not read"
    return "applicable", f"{doc.doc_id} {doc.version} applies to deployed {service} {version or ''}".strip()


def relation_status(k: Knowledge, refs: tuple[Ref, ...], requires_owner: bool) -> tuple[Applicability, list[str], str]:
    """The best applicability among the sources stating a relation (structured sources apply)."""
    order = {"applicable": 0, "unknown": 1, "inapplicable": 2, "untrusted": 3}
    judged = []
    for rel, eid in refs:
        if isinstance(rel, RelationFact) and rel.relation == "stated":
            judged.append((applicability(k, eid, requires_owner=requires_owner), eid))
        else:
            ev = k.evidence.get(eid.split("+")[0])
            trust = ev.trust if ev else "verified"
            judged.append((("untrusted", "untrusted source") if trust == "untrusted" else
                           ("applicable", rel.via if isinstance(rel, RelationFact) else ""), eid))
    if not judged:
        return "unknown", [], "no source states it"
    best = min(order[s] for (s, _n), _e in judged)
    status = [s for s, v in order.items() if v == best][0]
    ids = [e for (s, _n), e in judged if s == status]
    notes = sorted({n for (s, n), _e in judged if s == status})
    return status, ids, "; ".join(notes)  # type: ignore[return-value]


def within(ts: datetime | None, lo: datetime, hi: datetime) -> bool:
    return ts is not None and lo <= ts <= hi


__all__ = ["EntityState", "entity_state", "explains", "trace", "Trace", "cause_at", "CauseResult", "Cause",
           "applicability", "relation_status", "version_matches", "moved", "is_bad", "is_load", "implicated"]
_ = (re, timedelta)
