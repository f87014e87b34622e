"""§6 of docs/deciding.md, Sources that apply: does a prose source apply to what is deployed.

A prose source counts for a hop or a refinement only when it is current, verified, maps to the
deployed version (its `applies_to_versions`, the deployment mapping) and, when the claim asks for
it, carries an owner verification for that version. Structured sources apply as read.
"""

from __future__ import annotations

from fnmatch import fnmatch
from typing import Literal

from graphs.rulebook.knowledge import Knowledge, Ref
from state.facts import DocumentFact, RelationFact


def version_matches(deployed: str, pattern: str) -> bool:
    """`2.4.0` matches `2.4.*`, `2.4`, `2.4.0`; `12.4` never matches `2.4` (whole dot-separated tokens)."""
    d, p = deployed.strip().lstrip("vV"), pattern.strip().lstrip("vV")
    if any(ch in p for ch in "*?["):
        return fnmatch(d, p)
    if d == p:
        return True
    return d.startswith(p + ".") or d.startswith(p + "-") or p.startswith(d + ".")


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

