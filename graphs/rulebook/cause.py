"""§5 of docs/deciding.md, The cause at the root: the change, consumer, load or limit that explains it.

`cause_at` lists the root's change candidates (and those of what stands in front of it), picks the
one the anomaly implicates, else falls back to a noisy neighbour, load or a configured limit
(`limits.py`); `_refine` narrows a changed component to the key its applicable documents state a
change of (§5, Changed element), leaving the claim contested when they disagree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import get_args

from graphs.rulebook.anomalies import moved
from graphs.rulebook.applicability import applicability, version_matches
from graphs.rulebook.changes import puts_back
from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.limits import at_limit
from graphs.rulebook.path import Trace
from graphs.rulebook.root import THIRD_PARTY, fronting, way_unchanged
from state.claims import CauseKind
from state.facts import ChangeFact, MentionFact, SignalFact
from state.keys import canon_key


@dataclass(frozen=True)
class Candidate:
    change: ChangeFact
    evidence: str
    implicated: tuple[tuple[str, str, str], ...] = ()
    """(element, how it is named, mention evidence id)."""


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class CauseResult:
    cause: Cause | None
    candidates: tuple[Candidate, ...] = ()
    rejected: tuple[tuple[str, str, str, tuple[str, ...]], ...] = ()
    """(what, status, why, evidence): changes after the onset, unimplicated, refuted by a rollback."""
    ambiguous: bool = False
    missing: tuple[str, ...] = ()


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
                    out.append((written, f"named by {entity}'s {m.severity} event at {k.clock(m.ts)}", eid))
    return out


def cause_at(k: Knowledge, t: Trace) -> CauseResult:
    root = t.root
    if root is None:
        return CauseResult(None, missing=("an anomalous path from the subject",))
    node = t.nodes[root]
    onset = node.state.onset
    w = k.case.window
    assert onset is not None
    lo, hi = onset - w.change_lookback, onset + w.onset_tolerance
    path = t.path()
    candidates: list[Candidate] = []
    rejected: list[tuple[str, str, str, tuple[str, ...]]] = []
    missing: list[str] = []
    ambiguous = False

    def result(cause: Cause | None = None) -> CauseResult:
        return CauseResult(cause, tuple(candidates), tuple(rejected), ambiguous, tuple(missing))

    rollbacks = {c.rollback_of: (c, e) for c, e in k.changes if c.type == "rollback" and c.rollback_of}
    for ch, _e in k.changes:
        # a change undone by a later one of its own (the flag set back, the old version redeployed)
        back = sorted(((r, e) for r, e in k.changes_of(ch.entity) if ch.id not in rollbacks and puts_back(r, ch)),
                      key=lambda x: (x[0].effective, x[0].id))
        if back:
            rollbacks[ch.id] = back[0]
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
                rejected.append((ch.id, "after_onset", f"{ch.id} took effect at {k.clock(at)}, after {root}'s onset "
                                                       f"{k.clock(onset)}", (eid,)))
            continue
        if at < lo:
            continue
        rb = rollbacks.get(ch.id)
        if rb is not None and rb[0].effective is not None and rb[0].effective + w.onset_tolerance < w.end:
            recovered = [f.recovered_at for f, _e in node.state.anomalies if isinstance(f, SignalFact) and f.recovered_at]
            if not recovered or min(recovered) > rb[0].effective + 2 * w.onset_tolerance:
                rejected.append((ch.id, "refuted", f"{rb[0].id} rolled {ch.id} back at {k.clock(rb[0].effective)} "
                                                   f"and {root}'s anomaly did not end", (eid, rb[1])))
                continue
            ended[ch.id] = rb[1]
        named_in = implicated(k, ch, path)
        if ch.id in ended:
            named_in.append((ch.id, f"{root}'s anomaly ended after {rollbacks[ch.id][0].id} rolled it back",
                             ended[ch.id]))
        candidates.append(Candidate(ch, eid, tuple(named_in)))
    for c, e in k.undated:
        if root in c.about:
            rejected.append((c.id, "unchecked", f"no source dates {c.id} (no ScalingReplicaSet scale-up of its "
                                               f"pod-template hash, no history time): it cannot be placed in time", (e,)))
    chosen: Candidate | None = None
    if len(candidates) == 1:
        chosen = candidates[0]
    elif len(candidates) > 1:
        named = [c for c in candidates if c.implicated]
        if len(named) == 1:
            chosen = named[0]
            for c in candidates:
                if c is not chosen:
                    rejected.append((c.change.id, "not_implicated",
                                     f"{c.change.id} also precedes the onset but nothing in {root}'s anomaly names "
                                     f"what it changed", (c.evidence,)))
        else:
            ambiguous = True
            missing.append(f"which of {', '.join(c.change.id for c in candidates)} caused it: an error line, "
                           f"span or event of {root} naming what one of them changed, or a rollback that ended it")
            pool = named or candidates
            # named while in doubt: the latest, but never a record whose run spans another's of the same
            # type (a pipeline run around the deployment it drove: the inner record is what took effect)
            chosen = [c for c in pool if not any(_wraps(c.change, o.change) for o in pool)][-1]
    if chosen is not None and len(path) == 1 and not chosen.implicated and not ambiguous:
        # the subject is the root only because nothing below it shows an anomaly: timing alone is not enough
        ambiguous = True
        missing.append(f"an observation tying {chosen.change.id} to {root}'s anomaly: {root}'s error lines, "
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
            cause = replace(cause, evidence=tuple(dict.fromkeys((*cause.evidence, *rel))),
                            summary=f"{front}, on the way to {root}: " + cause.summary)
        if chosen.implicated:
            cause = replace(cause, element=chosen.implicated[0][0],
                            element_evidence=tuple(dict.fromkeys(i[2] for i in chosen.implicated)))
        elif len(_elements(ch)) == 1:
            cause = replace(cause, element=next(iter(_elements(ch).values())))
        return result(_refine(k, cause))
    loads = [r for r in node.state.load if r[0].role == "traffic" and r[0].onset <= hi]
    if node.sideways and node.parent is not None:
        its_cause = Cause(entity=root, kind="noisy_neighbour", evidence=tuple(e for _f, e in node.state.anomalies),
                          summary=f"{root}'s load rose on {node.parent}, which {path[-2] if len(path) > 1 else root} shares")
        return result(its_cause)
    if loads:
        its_cause = Cause(entity=root, kind="capacity", evidence=tuple(e for _f, e in loads),
                          summary=f"{root}'s own traffic rose ({loads[0][0].name}) with no change before its onset")
        return result(its_cause)
    full = at_limit(k, root)
    if full:
        a = full[0]
        its_cause = Cause(entity=root, kind="capacity", evidence=tuple(dict.fromkeys((a.evidence, a.config_evidence))),
                          element=a.key, summary=f"{root}'s {a.signal.name} reached its configured limit "
                                                 f"{a.key} = {a.limit:g} at {k.clock(a.reached)} with no change "
                                                 f"before its onset")
        return result(its_cause)
    if (k.kind(root) in THIRD_PARTY and node.state.how == "own" and k.searches.done("changes", root)
            and way_unchanged(k, t, onset)):
        # a third party failing on its own signals (a probe of it, its own status), with nothing of ours
        # changed at it, no load of ours on it and no limit of ours reached: its own failure is the cause
        its_cause = Cause(entity=root, kind="external", evidence=tuple(e for _f, e in node.state.anomalies),
                          summary=f"{root}, run outside the organisation, failed on its own (anomalous since "
                                  f"{k.clock(onset)}) with no change, load or limit of ours before its onset")
        # a claim of absence: a change of ours at the onset that no stated relation places could still
        # be on the way (a network path nobody wrote down), so it keeps the cause in doubt
        stray = sorted({ch.id for ch, _e in k.changes if ch.type != "rollback" and ch.effective is not None
                        and lo <= ch.effective <= hi and not any(x in path for x in ch.about)})
        if stray:
            ambiguous = True
            missing.append(f"whether {', '.join(stray)} (changes of ours at {root}'s onset that no stated "
                           f"relation places off the way to it) broke our way to {root}")
        return result(its_cause)
    missing.append(f"a change, a consumer's load, a traffic rise or a configured limit reached that explains "
                   f"{root}'s anomaly (onset {k.clock(onset)}): {root}'s changes in {k.clock(lo, '%H:%M')}–{k.clock(hi, '%H:%M')}")
    return result()


CHANGE_KINDS = frozenset(get_args(CauseKind)) - {"noisy_neighbour", "capacity", "external", "other"}
"""The change types a root cause names as its kind (§9); any other type is `other`. Taken from the
report's `CauseKind`, not from the profile's `change_types`, which a case may extend."""


def _wraps(a: ChangeFact, b: ChangeFact) -> bool:
    """`a`'s run spans `b`'s, of the same type, and they are not the same span."""
    if a.id == b.id or a.type != b.type or None in (a.started_at, b.started_at, a.effective, b.effective):
        return False
    return (a.started_at <= b.started_at and b.effective <= a.effective  # type: ignore[operator]
            and (a.started_at, a.effective) != (b.started_at, b.effective))


def _cause_kind(change_type: str) -> str:
    return change_type if change_type in CHANGE_KINDS else "other"


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


def _unprefixed(key: str, component: str) -> str:
    """A setting written with its library's name in front (an environment variable) as the library
    names it: `dbkit_pool_max_conns` of `dbkit` -> `pool_max_conns`."""
    head = canon_key(component) + "_"
    return key[len(head):] if key.startswith(head) and len(key) > len(head) else key


def _series_named(k: Knowledge, entity: str, keys: list[str]) -> list[str]:
    """The keys (of two words or more) that a metric series of `entity` is named after and that
    departed from its baseline, up or down: a gauge of the setting shows which setting changed."""
    ratio = k.profile.anomaly.min_ratio
    series = [f for f, _e in k.signals.get(entity, []) if isinstance(f, SignalFact) and f.signal == "metric"]
    out = []
    for key in keys:
        words = [w for w in re.split(r"[_.\-]+", canon_key(key)) if w]
        if len(words) < 2:
            continue
        pattern = re.compile(r"(?<![a-z0-9])" + "_".join(words) + r"(?![a-z0-9])")
        if any(pattern.search(canon_key(f.name)) and (moved(f, k, "up", ratio) or moved(f, k, "down", ratio))
               for f in series):
            out.append(key)
    return out


def _refine(k: Knowledge, cause: Cause) -> Cause:
    """A component the change upgraded, refined to the key its applicable docs state a change of."""
    ch = cause.change.change if cause.change else None
    if ch is None or cause.element is None:
        return cause
    dep = next((d for d in ch.dependency_changes if d.name == cause.element), None)
    if dep is None:
        return cause
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
        return replace(cause, refined_note=f"no sentence read in documentation of {dep.name} {dep.to} that states what "
                                           f"it changed")
    # `DBKIT_POOL_MAX_CONNS` and `pool_max_conns` in one library's notes are one setting
    found = [(_unprefixed(key, dep.name), e) for key, e in found]
    keys = list(dict.fromkeys(key for key, _e in found))
    # the anomaly's own words pick among several stated changes
    named = [key for key in keys if any(_names(m, canon_key(key)) for ms in k.mentions.values() for m, _e in ms)]
    if len(named) != 1 and len(keys) > 1:
        # else a series of the root named after one of them (`…_pool_max_conns`) that departed
        shown = _series_named(k, cause.entity, keys)
        named = shown if len(shown) == 1 else named
    if len(named) != 1 and len(keys) > 1:
        # sources disagree (or one lists several) and the telemetry names no single one: a document's
        # word alone, however trusted, never picks the cause (docs/deciding.md §5)
        contested = tuple((key, tuple(dict.fromkeys(e for kk, e in found if kk == key))) for key in (named or keys))
        return replace(cause, contested=contested,
                       refined_note=f"the documentation read states different changes of {dep.name} {dep.to} "
                                    f"({', '.join(k_ for k_, _e in contested)}) and nothing in the anomaly names one")
    pick = named[0] if named else keys[0]
    return replace(cause, refined=pick, refined_evidence=tuple(dict.fromkeys(e for key, e in found if key == pick)))


