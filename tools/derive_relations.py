"""The relations a source states (docs/deciding.md §2), only from its structure or from one sentence
that states them: a catalog's `depends_on`/`runs_on`/`talks_to`, a config value or key prefix that
names an entity, a change record's dependency changes, a trace's parent spans and peer attributes,
a log line's peer fields and relation phrases, a pod's placement on its node; and what one sentence
of prose states (a relation, a change of a key, an injected instruction).
"""

from __future__ import annotations

import re

from state import yamlio
from state.facts import EntityFact, InjectionFact, PlacementFact, RelationFact, StatementFact
from state.profile import Profile
from state.sources import PROSE_KINDS, Catalog
from state.span import Span
from tools.corpus import SourceDoc
from tools.derive import ENTITY_KINDS, Registry, span, writer_of
from tools.formats import catalogs as fcatalogs
from tools.formats.k8s import workload_of_pod

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n\s*\n|\n(?=\s*[|#*-])|(?<=[。！？])")


def _rel(a: str | None, b: str | None, kind: str, via: str, env: str, at: Span | None) -> RelationFact | None:
    if not a or not b or a == b:
        return None
    return RelationFact(source=a, target=b, relation=kind, via=via, environment=env, at=at)


def catalog_relations(doc: SourceDoc, reg: Registry) -> list:
    cat = doc.record
    if not isinstance(cat, Catalog):
        return []
    if doc.format in fcatalogs.FORMATS:  # a tool's own shape: the parser knows each entry's offsets
        nodes: list = [yamlio.Node(None, s, e) for s, e in fcatalogs.parse(doc.text, doc.format)[1]]
        comp_nodes: list = []
    else:
        root = yamlio.spans(doc.text)
        services = root.get("services") if root is not None else None
        components = root.get("components") if root is not None else None
        nodes = services.items() if services is not None else []
        comp_nodes = components.items() if components is not None else []
    out: list = []
    for svc, node in zip(cat.services, nodes):
        at = span(doc, node.start, node.end)
        env = svc.environment
        name = reg.resolve(svc.name) or svc.name
        out.append(EntityFact(name=name, entity_kind=svc.kind, aliases=svc.aliases, at=at))
        for dep in svc.depends_on:
            if r := _rel(name, reg.resolve(dep) or dep, "depends_on", "catalog depends_on", env, at):
                out.append(r)
        for n in svc.runs_on:
            if r := _rel(name, reg.resolve(n) or n, "runs_on", "catalog runs_on", env, at):
                out.append(r)
    for comp, node in zip(cat.components, comp_nodes):
        at = span(doc, node.start, node.end)
        name = reg.resolve(comp.name) or comp.name
        out.append(EntityFact(name=name, entity_kind="component", at=at))
        for t in comp.talks_to:
            if r := _rel(name, reg.resolve(t) or t, "talks_to", "catalog talks_to", "*", at):
                out.append(r)
    return out


def config_relations(doc: SourceDoc, reg: Registry) -> list:
    owner = reg.resolve(doc.about) or doc.about
    if not owner or owner == "*":
        return []
    env = doc.entry.environment
    out: list = []
    seen: set[tuple[str, str]] = set()
    for s in doc.settings:
        at = span(doc, s.start, s.end)
        for target in reg.entities_in_value(s.value):
            if (target, "configured") not in seen and (r := _rel(owner, target, "configured", f"config key {s.key}", env, at)):
                seen.add((target, "configured"))
                out.append(r)
        head = re.split(r"[.:/]", s.key, maxsplit=1)[0] if re.search(r"[.:/]", s.key) else None
        comp = reg.resolve(head) if head else None
        if comp and reg.kinds.get(comp) == "component" and (comp, "uses") not in seen:
            if r := _rel(owner, comp, "uses", f"config key prefix {head}.", env, at):
                seen.add((comp, "uses"))
                out.append(r)
    return out


def change_relations(doc: SourceDoc, reg: Registry) -> list:
    out: list = []
    for ch in doc.changes:
        svc = reg.resolve(ch.service) or ch.service
        at = span(doc, ch.start, ch.end)
        for dc in ch.dependency_changes:
            if r := _rel(svc, reg.resolve(dc.name) or dc.name, "uses", "change record dependency_changes",
                         ch.environment, at):
                out.append(r)
    return out


def trace_relations(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    by_id = {(s.trace_id, s.span_id): s for s in doc.spans}
    out: dict[tuple[str, str], RelationFact] = {}
    env = doc.entry.environment
    peer_fields = {f.lower() for f in profile.relation_fields}
    for s in doc.spans:
        me = reg.resolve(s.service) or s.service
        parent = by_id.get((s.trace_id, s.parent_id)) if s.parent_id else None
        if parent is not None:
            p = reg.resolve(parent.service) or parent.service
            if p != me and (p, me) not in out and (r := _rel(p, me, "calls", "trace child span", env, span(doc, s.start, s.end))):
                out[(p, me)] = r
        for k, v in s.attributes.items():
            if k.lower() in peer_fields:
                tgt = reg.resolve(v) or next(iter(reg.entities_in_value(v)), None)
                if tgt and (me, tgt) not in out and (r := _rel(me, tgt, "calls", f"span attribute {k}", env,
                                                                 span(doc, s.start, s.end))):
                    out[(me, tgt)] = r
    return list(out.values())


def log_relations(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    out: dict[tuple[str, str], RelationFact] = {}
    env = doc.entry.environment
    peer_fields = {f.lower() for f in profile.relation_fields}
    phrase = profile.relation_phrase_re
    for e in doc.events:
        me = writer_of(doc, e, reg)
        if not me:
            continue
        for k, v in e.fields.items():
            if k.lower() in peer_fields and k != "@after_level":
                tgt = reg.resolve(v) or next(iter(reg.entities_in_value(v)), None)
                if tgt and tgt != me and (me, tgt) not in out:
                    out[(me, tgt)] = _rel(me, tgt, "calls", f"log field {k}", env, span(doc, e.start, e.end))  # type: ignore[assignment]
        text = doc.text[e.start:e.end]
        for m in phrase.finditer(text):
            after = text[m.end():m.end() + 80]
            ments = [x for x in reg.mentions(after) if x.kind in ENTITY_KINDS and x.start <= 30]
            if ments:
                tgt = ments[0].name
                if tgt != me and (me, tgt) not in out:
                    out[(me, tgt)] = _rel(me, tgt, "calls", f"log phrase '{m.group(0).strip()}'", env,  # type: ignore[assignment]
                                          span(doc, e.start, e.end))
    return [r for r in out.values() if r is not None]


def stated_by(doc: SourceDoc, signal: str, entity: str, reg: Registry, profile: Profile) -> list:
    """The relations an entity's own log lines (`logs`) or spans (`traces`) state, with it as the caller."""
    if signal == "logs":
        rels = log_relations(doc, reg, profile)
    elif signal == "traces":
        rels = trace_relations(doc, reg, profile)
    else:
        return []
    return [r for r in rels if r.source == entity]


def placement_facts(doc: SourceDoc, reg: Registry) -> list:
    out: list = []
    env = doc.entry.environment
    for p in doc.placements:
        wl = reg.resolve(p.pod) or reg.resolve(p.workload) or p.workload or workload_of_pod(p.pod, p.template_hash)
        if not wl or not p.node:
            continue
        node = reg.resolve(p.node) or p.node
        at = span(doc, p.start, p.end)
        out.append(PlacementFact(workload=wl, node=node, pod=p.pod, at=at))
        if r := _rel(wl, node, "runs_on", "pod placement", env, at):
            out.append(r)
    return out


def sentences(text: str, start: int, end: int) -> list[tuple[int, int]]:
    out = []
    pos = start
    for m in _SENTENCE.finditer(text, start, end):
        if m.start() > pos:
            out.append((pos, m.start()))
        pos = m.end()
    if pos < end:
        out.append((pos, end))
    return [(s, e) for s, e in (yamlio.trim(text, a, b) for a, b in out) if e > s]


def _fronted(sent: str, s: int, ents: list, profile: Profile) -> list[tuple[str, str]]:
    """(a, b) where the sentence says name a stands in front of b (`a is b's VIP`, profile `front_phrases`):
    a's calls reach b, as a load balancer's do."""
    out = []
    for i, x in enumerate(ents):
        for y in ents[i + 1:]:
            if x.name == y.name or y.start < x.end:
                continue
            between, after = sent[x.end - s:y.start - s], sent[y.end - s:]
            if any(m.fullmatch(between) and t.match(after) for m, t in profile.front_templates):
                out.append((x.name, y.name))
    return out


def prose_facts(doc: SourceDoc, start: int, end: int, reg: Registry, profile: Profile) -> list:
    """Statements in a prose span: relations stated in one sentence, changes of keys, injected instructions."""
    out: list = []
    about = reg.resolve(doc.about) or doc.about
    env = doc.entry.environment
    seen_rel: set[tuple[str, str]] = set()
    for s, e in sentences(doc.text, start, end):
        sent = doc.text[s:e]
        ments = reg.mentions(sent, offset=s)
        ents = [m for m in ments if m.kind in ENTITY_KINDS]
        phrased: dict[tuple[str, str], str] = {}
        for m in profile.relation_phrase_re.finditer(sent):
            # the sentence's first entity is its subject: "A calls B", "A reaches B through C"; of several
            # phrases between the same two names, the one nearest the second says how they relate ("A's
            # calls to the partners go through B": through)
            before = [x for x in ents if x.end - s <= m.start()]
            after = [x for x in ents if x.start - s >= m.end()]
            if before and after and before[0].name != after[0].name and (before[0].name, after[0].name) not in seen_rel:
                phrased[(before[0].name, after[0].name)] = m.group(0).strip()
        for (a, b), phrase in phrased.items():
            if (r := _rel(a, b, "stated", f"sentence '{phrase}'", env, span(doc, s, e))):
                seen_rel.add((a, b))
                out.append(r)
        for a, b in _fronted(sent, s, ents, profile):
            if (a, b) not in seen_rel and (r := _rel(a, b, "stated", "sentence: a name in front of it", env,
                                                     span(doc, s, e))):
                seen_rel.add((a, b))
                out.append(r)
        keys = [m for m in ments if m.kind == "config_key"]
        change = profile.change_phrase_re.search(sent)
        if keys and change:
            versions = tuple(dict.fromkeys(v.group(0) for v in profile.version_re.finditer(sent)))
            for k in dict.fromkeys(m.name for m in keys):
                out.append(StatementFact(about=about, key=k, versions=versions, phrase=change.group(0),
                                         at=span(doc, s, e)))
        inj = profile.injection_re.search(sent)
        if inj:
            out.append(InjectionFact(phrase=inj.group(0), at=span(doc, s, e)))
    return out


def relations_of(doc: SourceDoc, reg: Registry, profile: Profile) -> list:
    """Every relation (and entity kind) a whole source states, for ingestion and structured reads."""
    if doc.kind == "catalog":
        return catalog_relations(doc, reg)
    if doc.kind == "config":
        return config_relations(doc, reg)
    if doc.kind == "change":
        return change_relations(doc, reg)
    if doc.kind == "trace":
        return trace_relations(doc, reg, profile)
    if doc.kind == "log":
        return log_relations(doc, reg, profile)
    if doc.kind == "kubernetes":
        return placement_facts(doc, reg)
    if doc.kind in PROSE_KINDS:
        return [f for f in prose_facts(doc, doc.body_start, len(doc.text), reg, profile) if f.kind == "relation"]
    return []
