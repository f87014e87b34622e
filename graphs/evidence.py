"""Turning a read-back source into evidence: the span to cite and the facts it establishes."""

from __future__ import annotations

from datetime import datetime

from state import stable_id
from state.case import Case
from state.evidence import Evidence, Finding, Hit, Scope
from state.facts import Fact, StatementFact
from state.profile import Profile
from state.sources import PROSE_KINDS
from state.span import Span
from tools import derive, derive_relations, derive_signals
from tools.corpus import SourceDoc
from tools.entities import EntityExtractor
from tools.signals import Range


def evidence_key(source_id: str, revision: str, start: int, end: int, focus: str = "") -> str:
    return stable_id(source_id, revision, start, end, focus)


def _within(f: Fact, start: int, end: int) -> bool:
    at = getattr(f, "at", None)
    return at is None or (start <= at.start and at.end <= end)


def anchor(doc: SourceDoc, hit: Hit, indexed_text: str | None) -> tuple[int, int] | None:
    """Where the hit is in the source now; re-anchored by its indexed text when the source changed."""
    if hit.revision and hit.revision != doc.revision:
        if not indexed_text:
            return None
        pos = doc.text.find(indexed_text)
        return (pos, pos + len(indexed_text)) if pos >= 0 else None
    if hit.end > len(doc.text) or hit.start > hit.end:
        return None
    return hit.start, hit.end


def read_facts(doc: SourceDoc, hit: Hit, start: int, end: int, reg: EntityExtractor, profile: Profile,
               case: Case) -> tuple[Span, list[Fact]]:
    """The span to cite and the facts of one hit, derived from the source as it is now."""
    rng = Range.of(case.window)
    channel, focus = hit.channel, hit.focus
    whole = derive.span(doc, start, end) if end > start else derive.span(doc, 0, len(doc.text))
    facts: list[Fact] = []
    if channel == "telemetry":
        signal, _, key = focus.partition("|")
        if signal == "metric":
            s = next((x for x in doc.series if x.key == key), None)
            entity = derive.series_entity(doc, s, reg, profile) if s is not None else None
        else:
            entity = key.split(":", 1)[1] if ":" in key else None
        if entity:
            facts = derive_signals.signal_facts(doc, key, entity, reg, profile, rng)
            # the lines and spans the entity wrote state whom it calls (a relation field, a child
            # span): reading its telemetry shows where its errors go without a separate lookup
            facts += derive_relations.stated_by(doc, signal, entity, reg, profile)
        cite = next((f.at for f in facts if f.kind == "signal" and f.at is not None), None)
        return cite or whole, facts
    return whole, local_facts(doc, start, end, reg, profile)


def local_facts(doc: SourceDoc, start: int, end: int, reg: EntityExtractor, profile: Profile) -> list[Fact]:
    """Every fact a span of a record, history, placement or prose source states by itself."""
    if doc.front is not None:
        doc_fact = derive.document_fact(doc, reg)
        return [*([doc_fact] if doc_fact else []), *derive_relations.prose_facts(doc, start, end, reg, profile)]
    facts: list[Fact] = [f for f in derive_relations.relations_of(doc, reg, profile) if _within(f, start, end)]
    facts += [f for f in derive.change_facts(doc, reg, profile) if _within(f, start, end)]
    facts += [f for f in derive_relations.change_relations(doc, reg) if _within(f, start, end) and f not in facts]
    facts += [f for f in derive.rollout_dates(doc, reg) if _within(f, start, end)]
    covers = (end - start) >= 0.5 * len(doc.text.strip())
    if covers:
        facts += derive.record_facts(doc, reg)
        snap = derive.snapshot_fact(doc, reg)
        if snap is not None:
            facts.append(snap)
    return facts


def page_statements(doc: SourceDoc, start: int, end: int, reg: EntityExtractor, profile: Profile,
                    known: frozenset[str] = frozenset()) -> list[tuple[Span, list[Fact]]]:
    """What else a prose page says changed, outside the span `start:end` a search returned: for
    each key not in `known` (the keys the hit itself states), its first sentence's span and facts
    (with the page's own front matter, which says what the page is and which version it applies to).

    A search hit is a chunk of a page; an engineer who opens a release note for one line reads
    the whole list of what changed on it. Each sentence found is cited by its own span."""
    if doc.front is None and doc.kind not in PROSE_KINDS:
        return []
    page = derive.document_fact(doc, reg)
    by_span: dict[Span, list[Fact]] = {}
    seen = set(known)
    for f in derive_relations.prose_facts(doc, 0, len(doc.text), reg, profile):
        if (isinstance(f, StatementFact) and f.at is not None and f.key not in seen
                and not (start <= f.at.start and f.at.end <= end)):
            seen.add(f.key)
            by_span.setdefault(f.at, [*([page] if page else [])]).append(f)
    return list(by_span.items())


def make_evidence(*, eid: str, doc: SourceDoc, hit: Hit, query: str, span: Span, facts: list[Fact], claim_id: str,
                  watermark: str, round_: int, read_at: datetime) -> Evidence:
    return Evidence(
        id=eid, kind="read", source_id=doc.id, source_kind=doc.kind, version=doc.version, revision=doc.revision,
        span=span, found=Finding(tool=hit.tool, query=query, channel=hit.channel, rank=hit.rank, score=hit.score),
        read_at=read_at, watermark=watermark, trust=doc.entry.trust,
        scope=Scope(environment=doc.entry.environment, service=doc.entry.service), claim_ids=(claim_id,),
        facts=tuple(facts), round=round_,
    )
