"""Where the path ends and how it moves there (docs/deciding.md §4, the root; §5, its lookup order).

`trace` walks the path (`path.walk`), then chooses the root: the deepest anomalous entity nothing
below explains, earliest onset first, a queue only when nothing else is (§4); rival branches left
aside that explain their caller on their own keep the root from being the only candidate (§4).
At the root, once its changes are known and none acts at its onset, a consumer whose load rose
first becomes the root (§5, a noisy neighbour); a root only its callers see failing is looked at
through what stands in front of it, and left for its caller when nothing changed on the way (§5).
"""

from __future__ import annotations

from datetime import datetime

from graphs.rulebook.anomalies import EntityState, entity_state
from graphs.rulebook.knowledge import OBSERVABLE_KINDS, Knowledge, Ref
from graphs.rulebook.path import CONDUITS, Node, Trace, explains, users_read, walk


def trace(k: Knowledge, subject: str, max_hops: int, start: EntityState | None = None) -> Trace:
    """The anomalous path from `subject` to its root (§4), moved sideways at the root where §5 says so:
    `walk`, then the root chosen, then a consumer that loaded it or the caller's side of the call,
    then rival branches. Linear in the relations read; depth bounded by `max_hops`."""
    t = walk(k, subject, max_hops, start)
    if not t.nodes[subject].state.anomalous:
        return t
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
            elif _nothing_on_the_way(k, t, root) and (t.nodes[root].state.normal or _caller_changed(k, t, root)):
                # its own signals healthy, nothing changed on the way to it: what fails is its caller's
                # side of the call (a client setting, the caller's own release); the cause is looked for there.
                # With no signals of its own to read, only a change of the caller at its onset sends the
                # search back, and the cause found there stays in doubt (`unseen`)
                parent = t.nodes[root].parent
                if t.nodes[root].state.normal:
                    t.checked[root] = (f"{root}'s signals are healthy and nothing changed on the way to it; {parent}'s "
                                       f"errors naming it point at {parent}'s side of the call")
                else:
                    t.unseen.append(root)
                    t.checked[root] = (f"{root} has no signals of its own and nothing changed at it or on the way to "
                                       f"it, while {parent} changed at its onset: {parent}'s errors naming it are "
                                       f"looked at from {parent}'s side of the call")
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


def _sideways(k: Knowledge, t: Trace, x: str, node: Node) -> list[str]:
    if x == next(iter(t.nodes)):
        return []  # the subject's callers are its load: a traffic rise, decided at the cause
    if not k.searches.done("relations", x, direction="consumers"):
        t.need("consumers", x, f"what else uses {x} (a noisy neighbour)")
    out = []
    for c, refs, st in users_read(k, t, x, node, lambda c: f"whether {c}, which also uses {x}, put load on it first"):
        loads = [r for r in st.load if r[0].onset is not None and node.state.onset is not None
                 and r[0].onset <= node.state.onset + k.case.window.onset_tolerance]
        if loads:
            st2 = EntityState(c, "anomalous", loads[0][0].onset, "own", tuple(loads), st.normal, st.load)
            t.nodes[c] = Node(c, st2, x, tuple(refs), sideways=True, depth=node.depth + 1)
            out.append(c)
        else:
            t.checked[c] = f"{c} (also uses {x}) put no earlier load on it"
    return out


THIRD_PARTY = ("external",)
"""Entity kinds run outside the organisation: nothing of ours records their changes (§5)."""


def fronting(k: Knowledge, t: Trace) -> list[str]:
    """What stands on the way to a root that only its callers see failing (its own signals healthy), or to
    a third party (whose probe runs the same way our calls do): the entities with a stated relation to it
    that have no telemetry of their own — its load balancer, proxy, pooler, egress, DNS name,
    certificate. A change of those breaks the way to it."""
    root = t.root
    if root is None or (t.nodes[root].state.how != "callers" and k.kind(root) not in THIRD_PARTY):
        return []
    near = set(k.consumers_of(root))  # what forwards to it (stands in front), not what it depends on
    # what the caller's calls are stated to pass through on their way (`its calls to the partners go
    # through X`): an egress firewall or proxy stands on the way to everything behind it
    parent = t.nodes[root].parent
    near |= {x for x, refs in k.dependencies(parent).items()
             if any(k.profile.passes_through(rel.via) for rel, _e in refs)} if parent else set()
    return sorted(x for x in near if x not in t.nodes and not k.signals.get(x) and k.kind(x) != "component")


def _nothing_on_the_way(k: Knowledge, t: Trace, root: str) -> bool:
    """A root only its callers see failing (its own telemetry read and healthy), whose changes and whose
    front's changes were all looked up and none acts at its onset. (One with no telemetry at all — a
    vendor's API — stays the root: its failure is its own, unseen.)"""
    onset = t.nodes[root].state.onset
    return k.searches.done("changes", root) and not change_candidates(k, root, onset) and way_unchanged(k, t, onset)


def way_unchanged(k: Knowledge, t: Trace, onset: datetime | None) -> bool:
    """The changes of everything standing on the way to the root (`fronting`) were looked up, and none
    acts at `onset`."""
    return all(k.searches.done("changes", x) and not change_candidates(k, x, onset) for x in fronting(k, t))


def _caller_changed(k: Knowledge, t: Trace, root: str) -> bool:
    """A root of ours with no signals of its own (not a third party's), whose caller's changes are known
    and one acts at the root's onset."""
    parent = t.nodes[root].parent
    if parent is None or k.kind(root) in THIRD_PARTY or k.kind(root) not in OBSERVABLE_KINDS or k.signals.get(root):
        return False
    return k.searches.done("changes", parent) and bool(change_candidates(k, parent, t.nodes[root].state.onset))


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


