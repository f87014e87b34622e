"""Hypotheses that blame a change, tested the way people test them (docs/deciding.md §7).

"The in-window deploy caused it" is refuted the way an on-call engineer refutes it: the anomaly
began before the change did, it did not end when the change was rolled back, instances still on
the old version fail the same way, the change record does not exist, or the anomaly is
explained by a dependency whose own cause was found. It is confirmed when the causal chain
ends at that very change.

A hypothesis states what it blames in `blames` (entity, change id, version, types). A
hypothesis written only as "the subject's own symptom metric rises" cannot tell causes apart
(whatever the cause, the symptom is there); when its statement names a change of an entity (an
entity, and a change word or a version), the change it names is tested instead.

A hypothesis that blames a change *and* predicts a series other than the symptom's says how the
change did it ("the upgrade lowered a timeout, so timeout errors rise"). Finding the change at the
end of the path is then not enough: the mechanism must be seen too. While its series is unread the
hypothesis stays open; read and flat, it is refuted — the change may well be the cause, by another
mechanism (docs/deciding.md §7).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphs.rulebook.anomalies import BAD_DIRECTION, entity_state
from graphs.rulebook.cause import cause_at
from graphs.rulebook.knowledge import Knowledge, Ref
from graphs.rulebook.path import Trace
from graphs.rulebook.anomalies import moved
from graphs.rulebook.changes import puts_back
from state.case import Blame, Case, Hypothesis, Prediction, SymptomClaim
from state.facts import ChangeFact, SignalFact, VersionSeenFact
from state.profile import Profile
from tools.entities import EntityExtractor

ENTITY_KINDS = frozenset({"service", "database", "cache", "queue", "cluster", "node", "host", "external",
                          "workload", "domain"})


def restates_symptom(h: Hypothesis, case: Case, profile: Profile) -> bool:
    """The prediction is the subject's own health metric getting worse: true whatever the cause."""
    p = h.predicts
    if p is None or (p.entity or case.subject.service) != case.subject.service:
        return False
    role = profile.role_of(p.metric, "") or ""
    if BAD_DIRECTION.get(role) != p.direction:
        return False
    # against the symptom the case asks about: a saturating resource is no restatement of a latency
    # symptom (it says what ran out), though it is a health metric getting worse
    metrics = {c.metric for c in case.required_claims if isinstance(c, SymptomClaim) and c.metric}
    roles = {profile.role_of(m, "") for m in metrics} - {None, ""}
    return p.metric in metrics or not roles or role in roles


def telling_prediction(h: Hypothesis, case: Case) -> Prediction | None:
    """The hypothesis's prediction when it is on a series no symptom claim is about: what it says
    the cause did, which other causes would not do (None when it only restates the symptom)."""
    p = h.predicts
    if p is None:
        return None
    symptoms = {c.metric for c in case.required_claims if isinstance(c, SymptomClaim) and c.metric}
    return None if p.metric in symptoms else p


def predicted_series(p: Prediction, k: Knowledge) -> list[Ref]:
    """The read series of the metric a prediction names, on its entity (default: the subject)."""
    entity = p.entity or k.case.subject.service
    return [(f, e) for f, e in k.signals.get(entity, []) if f.signal == "metric" and f.name == p.metric]


def observed(p: Prediction, k: Knowledge) -> tuple[list[str], list[str]]:
    """(evidence where the predicted series moved as predicted, evidence where it was read and did not)."""
    verdicts = [(e, moved(f, k, p.direction, p.min_ratio)) for f, e in predicted_series(p, k)]
    return [e for e, m in verdicts if m], [e for e, m in verdicts if m is False]


def _type_words(profile: Profile) -> re.Pattern[str]:
    words = sorted({w for ws in profile.change_types.values() for w in ws if len(w) > 2}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in words) + r")(?![\w-])", re.IGNORECASE)


def read_blame(h: Hypothesis, case: Case, reg: EntityExtractor, profile: Profile) -> Blame | None:
    """What change a hypothesis blames: its `blames`, else — when its prediction only restates the
    symptom — the entity, change words and versions its statement names."""
    if h.blames is not None:
        return h.blames
    if not restates_symptom(h, case, profile):
        return None
    text = h.statement
    ents = [m for m in reg.mentions(text) if m.kind in ENTITY_KINDS]
    if not ents:
        return None
    types = tuple(dict.fromkeys(profile.change_type(m.group(1)) for m in _type_words(profile).finditer(text)))
    versions = tuple(dict.fromkeys(v.group(0).lstrip("vV") for v in profile.version_re.finditer(text)))
    if not types and not versions:
        return None
    return Blame(entity=ents[0].name, types=types, versions=versions)


def read_blames(case: Case, reg: EntityExtractor, profile: Profile) -> dict[str, Blame]:
    return {h.id: b for h in case.hypotheses if (b := read_blame(h, case, reg, profile)) is not None}


@dataclass(frozen=True)
class Verdict:
    verdict: str  # confirmed | refuted | insufficient
    why: str
    supporting: tuple[str, ...] = ()
    opposing: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def _blamed(k: Knowledge, b: Blame) -> list[Ref]:
    w = k.case.window
    types = {k.profile.change_type(x) for x in b.types}
    out = [(c, e) for c, e in k.changes_of(b.entity) if c.type != "rollback" and c.effective is not None
           and w.change_from <= c.effective <= w.end and (not types or c.type in types)]
    if b.change:
        return [(c, e) for c, e in out if c.id == b.change]
    wanted = (b.version,) if b.version else b.versions
    if wanted:
        named = [(c, e) for c, e in out if {c.version_to, c.revision} & set(wanted)]
        if named or b.version:
            return named
    return out


def _rollback(k: Knowledge, c: ChangeFact) -> Ref | None:
    """The change that undid `c`: a rollback of it, or a later change back to the version it replaced."""
    if c.effective is None:
        return None
    dated = [(r, e) for r, e in k.changes_of(c.entity) if r.effective is not None]
    for r, e in sorted(dated, key=lambda x: x[0].effective):
        if r.id == c.id or r.effective <= c.effective:
            continue
        if puts_back(r, c):
            return r, e
    return None


def _unrelated(k: Knowledge, t: Trace, c: ChangeFact) -> bool:
    """Nothing `c` is about is on the anomalous path or related, by any relation read, to an entity on it."""
    path = set(t.path()) if t.root else set(t.nodes)
    for x in (c.entity, *c.about):
        if x in t.nodes or path & (set(k.dependencies(x)) | set(k.consumers_of(x))):
            return False
    return not any(x in path for p in path for x in (*k.dependencies(p), *k.consumers_of(p)) if x in (c.entity, *c.about))


def _refutations(k: Knowledge, t: Trace, c: ChangeFact, eid: str, cause_below: str | None,
                 tied: tuple[str, tuple[str, ...]] | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """Why `c` did not cause the anomaly, each with the evidence that shows it. `cause_below` is the
    cause the path settled on below: a change id, or what it is when no change is (a neighbour's load).
    `tied`: the change the path settled on because the anomaly itself names it or ended with its rollback,
    with that evidence."""
    if tied is not None and tied[0] != c.id and _unrelated(k, t, c):
        return [(f"the anomaly is tied to {tied[0]} (its own lines name it, or it ended when {tied[0]} was undone), and "
                 f"{c.entity} is neither on the anomalous path nor related to anything on it", (eid, *tied[1]))]
    w = k.case.window
    tol = w.onset_tolerance
    e = c.entity if c.entity in t.nodes else next((x for x in c.about if x in t.nodes), c.entity)
    node = t.nodes.get(e)
    st = node.state if node is not None else entity_state(k, e)
    out: list[tuple[str, tuple[str, ...]]] = []
    if node is None and st.status == "normal":
        out.append((f"{e} shows no anomaly in the window", (eid, *st.evidence)))
        return out
    onset = st.onset
    if onset is not None and c.started_at is not None and onset + tol < c.started_at:
        out.append((f"{e}'s anomaly began at {k.clock(onset)}, before {c.id} started at {k.clock(c.started_at)}",
                    (eid, *st.evidence[:2])))
    path = t.path() if t.root else []
    if e in path and e != t.root:
        below = path[path.index(e) + 1]
        bst = t.nodes[below].state
        if cause_below != c.id and (cause_below is not None or (bst.onset is not None and c.started_at is not None
                                                                    and bst.onset + tol < c.started_at)):
            out.append((f"{e}'s anomaly is explained by {below}, anomalous since {k.clock(bst.onset)}"
                        + (f", whose cause is {cause_below}" if cause_below else f", before {c.id} started"),
                        (eid, *bst.evidence[:3])))
    rb = _rollback(k, c)
    if rb is not None and onset is not None:
        r, reid = rb
        recovered = [f.recovered_at for f, _x in st.anomalies if isinstance(f, SignalFact) and f.recovered_at]
        if r.effective is not None and r.effective + 2 * tol < w.end and (
                not recovered or min(recovered) > r.effective + 2 * tol):
            out.append((f"{r.id} rolled {c.id} back at {k.clock(r.effective)} and {e}'s anomaly did not end",
                        (eid, reid, *st.evidence[:2])))
    if onset is not None:
        level = k.profile.anomaly.log_burst_min
        for v, veid in k.versions.get(e, []):
            if not isinstance(v, VersionSeenFact) or v.version in (c.version_to, c.revision) or v.bad < level:
                continue
            if c.version_from and v.version != c.version_from:
                continue
            if v.first_bad is not None and v.first_bad + tol >= onset:
                out.append((f"instances of {e} still on {v.version} fail the same way ({v.bad} warning/error lines "
                            f"in the window), so {c.version_to or c.id} is not what fails", (eid, veid)))
                break
    return out


def change_hypothesis(h: Hypothesis, b: Blame, k: Knowledge, t: Trace) -> Verdict:
    """Decide a hypothesis that blames a change of `b.entity`."""
    what = f"a change of {b.entity}" + (f" ({b.change or b.version})" if b.change or b.version else "")
    blamed = _blamed(k, b)
    if not blamed:
        searched = k.searches.done("changes", b.entity)
        denied = k.searches.denied("changes", b.entity)
        failed = k.searches.failed("changes", b.entity)
        if searched and not denied and not failed:
            w = k.case.window
            return Verdict("refuted", f"no change of {b.entity}" + (f" ({b.change or b.version})" if b.change or b.version
                                                                   else "")
                           + f" took effect in {k.clock(w.change_from, '%H:%M')}–{k.clock(w.end, '%H:%M')}: every readable change source of "
                             f"{b.entity} was searched")
        why = f"change records of {b.entity} in the window"
        if denied:
            why += f" (denied: {', '.join(denied)})"
        if failed:
            why += f" (failed: {', '.join(failed)})"
        return Verdict("insufficient", f"{what} not yet looked up", missing=(why,))
    cres = cause_at(k, t) if t.root is not None else None
    # only a cause the path settles on (not one picked by timing among several, nor at the subject by
    # timing alone) confirms or refutes by itself
    cause_change = (cres.cause.change.change.id if cres and cres.cause and cres.cause.change and not cres.ambiguous
                    else None)
    # a neighbour's load the path settles on explains what lies above it as well as a change would: it
    # came from beside the path, not through it (load or a limit reached may come from above: not those)
    settled = (cres.cause if cres and cres.cause and not cres.ambiguous and cres.cause.change is None
               and cres.cause.kind == "noisy_neighbour" else None)
    cause_below = cause_change or (f"{settled.kind.replace('_', ' ')} at {settled.entity}" if settled else None)
    chosen = cres.cause.change if cause_change and cres and cres.cause else None
    tied = ((chosen.change.id, tuple(dict.fromkeys([chosen.evidence, *(e for _x, _h, e in chosen.implicated)])))
            if chosen is not None and chosen.implicated else None)
    reasons: list[tuple[str, tuple[str, ...]]] = []
    for c, eid in blamed:
        if cause_change == c.id:
            ev = tuple(dict.fromkeys([eid, *(x for f in t.path() for x in t.nodes[f].state.evidence[:1])]))
            p = telling_prediction(h, k.case)
            if p is None:
                return Verdict("confirmed", f"the anomalous path ends at {c.id}: it is the cause found", supporting=ev)
            entity = p.entity or k.case.subject.service
            held, flat = observed(p, k)
            said = f"{p.metric} of {entity} {p.direction} (×{p.min_ratio:g})"
            if held:
                return Verdict("confirmed", f"the anomalous path ends at {c.id} and what {h.id} says it did is "
                                            f"observed: {said}", supporting=(*ev, *held))
            if flat:
                return Verdict("refuted", f"the anomalous path ends at {c.id}, but not the way {h.id} says: "
                                          f"{said} is not observed", supporting=ev, opposing=tuple(flat))
            return Verdict("insufficient", f"the anomalous path ends at {c.id}; whether it did what {h.id} says "
                                           f"({said}) is not read yet", supporting=ev,
                           missing=(k.searches.why_unread(entity, p.metric, p.metric),))
        mine = _refutations(k, t, c, eid, cause_below, tied)
        if not mine:
            return Verdict("insufficient", f"nothing read yet rules out {c.id}", supporting=(eid,),
                           missing=(f"what would rule out {c.id}: the anomaly beginning before it, a rollback that did "
                                    f"not end it, instances on the old version failing too, or the cause found "
                                    f"below {c.entity}",))
        reasons += mine
    ev = tuple(dict.fromkeys(x for _w, ids in reasons for x in ids))
    return Verdict("refuted", "; ".join(dict.fromkeys(w for w, _ids in reasons)), opposing=ev)


__all__ = ["change_hypothesis", "observed", "predicted_series", "read_blame", "read_blames", "restates_symptom", "telling_prediction",
           "Verdict"]
