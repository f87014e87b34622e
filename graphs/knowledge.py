"""What the evidence read so far establishes: deployed versions, verifications, changes, hops.

Everything here is derived from active (not revoked) evidence only, so a revocation on
resume removes the facts that depended on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatch
from typing import Literal

import networkx as nx
import yaml

from state.case import _LOADER
from pydantic import ValidationError

from state.case import Case, CausalChainClaim
from state.evidence import BridgeOccurrence, Evidence
from state.sources import PROSE_KINDS, Catalog, ChangeRecord, DeploymentMapping, OwnershipRecord

Applicability = Literal["applicable", "unknown", "inapplicable", "untrusted"]

FIRST_HOP_KINDS = frozenset({"log", "runbook", "postmortem", "doc", "note"})
"""A chain starts at the symptom: its first hop is read in the subject's own observations
(logs) or in a document that explains its behaviour, never only in a config or catalog."""
NO_HOP_KINDS = frozenset({"change", "metric"})
"""A change record says what changed, not how things relate: it marks changed entities."""


def _record(ev: Evidence, model: type) -> object | None:
    if ev.span is None:
        return None
    try:
        return model.model_validate(yaml.load(ev.span.quote, Loader=_LOADER))
    except (yaml.YAMLError, ValidationError, TypeError):
        return None


def node_key(name: str, environment: str, subject_env: str) -> str:
    """Same string in another environment is another entity; `*` sources join any environment."""
    return name if environment in (subject_env, "*") else f"{environment}:{name}"


@dataclass
class Knowledge:
    case: Case
    evidence: dict[str, Evidence]
    deployed: dict[str, str] = field(default_factory=dict)
    """service or component -> deployed version in the subject's environment."""
    deployed_from: dict[str, str] = field(default_factory=dict)
    """service or component -> evidence id that says so."""
    mappings: dict[str, tuple[DeploymentMapping, str]] = field(default_factory=dict)
    verifications: list[tuple[str, str, tuple[str, ...], str]] = field(default_factory=list)
    """(doc_id, version, for_versions, evidence id)."""
    changes: list[tuple[ChangeRecord, str]] = field(default_factory=list)
    """In-window change records of the subject (or its dependencies), with evidence ids."""
    graph: nx.Graph = field(default_factory=nx.Graph)
    kinds: dict[str, str] = field(default_factory=dict)
    dependencies: tuple[str, ...] | None = None
    """The subject's `depends_on` from a read service catalog (None until one is read)."""

    @classmethod
    def build(cls, case: Case, evidence: list[Evidence], hops: list[tuple[str, str, str]],
              bridges: list[BridgeOccurrence]) -> "Knowledge":
        active = {e.id: e for e in evidence if e.status == "active"}
        k = cls(case=case, evidence=active)
        env = case.subject.environment
        w = case.window
        for ev in sorted(active.values(), key=lambda e: (e.round, e.id)):
            if ev.scope.environment not in (env, "*"):
                continue
            if ev.source_kind == "change":
                rec = _record(ev, ChangeRecord)
                if isinstance(rec, ChangeRecord) and rec.environment == env:
                    in_window = any(t is not None and w.change_from <= t <= w.end
                                    for t in (rec.started_at, rec.completed_at))
                    done = rec.completed_at or rec.started_at
                    if in_window:
                        k.changes.append((rec, ev.id))
                    if done <= w.end:
                        if rec.version_to:
                            k.deployed.setdefault(rec.service, rec.version_to)
                            k.deployed_from.setdefault(rec.service, ev.id)
                        for dep in rec.dependency_changes:
                            k.deployed[dep.name] = dep.to
                            k.deployed_from[dep.name] = ev.id
            elif ev.source_kind == "mapping":
                rec = _record(ev, DeploymentMapping)
                if isinstance(rec, DeploymentMapping):
                    k.mappings[rec.service] = (rec, ev.id)
                    k.deployed[rec.service] = rec.deployed_version
                    k.deployed_from[rec.service] = ev.id
            elif ev.source_kind == "catalog":
                rec = _record(ev, Catalog)
                if isinstance(rec, Catalog):
                    deps = [d for svc in rec.services if svc.name == case.subject.service
                            and svc.environment in (env, "*") for d in svc.depends_on]
                    k.dependencies = tuple(dict.fromkeys((*(k.dependencies or ()), *deps)))
            elif ev.source_kind == "ownership":
                rec = _record(ev, OwnershipRecord)
                if isinstance(rec, OwnershipRecord):
                    k.verifications += [(v.doc_id, v.version, v.for_versions, ev.id) for v in rec.verifications]
        for occ in bridges:
            if occ.evidence_id in active:
                k.kinds[node_key(occ.entity, occ.scope.environment, env)] = occ.kind
        for a, b, eid in hops:
            if eid in active and active[eid].source_kind not in NO_HOP_KINDS:
                if k.graph.has_edge(a, b):
                    k.graph[a][b]["evidence"].append(eid)
                else:
                    k.graph.add_edge(a, b, evidence=[eid])
        return k

    def subject_changes(self, services: set[str] | None = None) -> list[tuple[ChangeRecord, str]]:
        services = services or {self.case.subject.service}
        return [(rec, eid) for rec, eid in self.changes if rec.service in services]

    def changed_by(self, services: set[str] | None = None) -> dict[str, list[str]]:
        """Entity -> ids of the in-window change records (of `services`) that changed it."""
        out: dict[str, list[str]] = {}
        for rec, eid in self.subject_changes(services):
            names = {d.name for d in rec.dependency_changes}
            names |= {c.key.rsplit(".", 1)[-1] for c in rec.config_changes}
            names |= {c.key.split(".", 1)[0] for c in rec.config_changes if "." in c.key}
            if rec.service != self.case.subject.service:
                names.add(rec.service)  # a dependency service that was changed is itself a changed entity
            for name in names:
                out.setdefault(name, []).append(eid)
        return out

    def applicability(self, ev: Evidence, claim: CausalChainClaim) -> tuple[Applicability, str]:
        """Whether a source applies to what is deployed now, and why (or what is missing)."""
        if ev.trust == "untrusted":
            return "untrusted", f"{ev.source_id} is untrusted: its text never counts as a hop"
        if ev.trust == "unverified":
            return "unknown", f"{ev.source_id} is unverified"
        if ev.source_kind not in PROSE_KINDS:
            return "applicable", "observation of the subject's environment"
        meta = ev.meta
        doc, version, status = meta.get("doc_id", ev.source_id), ev.version, meta.get("status", "current")
        if status != "current":
            return "inapplicable", f"{doc} {version} is {status}"
        service = meta.get("service", "*")
        applies = tuple(meta.get("applies_to_versions") or ())
        deployed = self.deployed.get(service)
        mapping = self.mappings.get(service)
        if mapping is not None:
            listed = [d for d in mapping[0].documents if d.doc_id == doc]
            if listed:
                mine = [d for d in listed if d.version == version]
                if not mine or not any(fnmatch(mapping[0].deployed_version, p) for d in mine for p in d.applies_to):
                    return "inapplicable", (f"deployment mapping ({mapping[1]}) does not map {doc} {version} "
                                            f"to deployed {service} {mapping[0].deployed_version}")
        if applies:
            if deployed is None:
                return "unknown", f"deployed version of {service} not read (needed for {doc} {version})"
            if not any(fnmatch(deployed, p) for p in applies):
                return "inapplicable", f"{doc} {version} applies to {list(applies)}, deployed {service} is {deployed}"
        if claim.requires_owner_verification and ev.source_kind == "runbook":
            target = deployed or ""
            ok = [v for v in self.verifications
                  if v[0] == doc and v[1] == version and (not v[2] or any(fnmatch(target, p) for p in v[2]))]
            if not ok:
                return "unknown", f"owner verification of {doc} {version} for deployed {service} {target or '?'} not read"
        return "applicable", f"{doc} {version} applies to deployed {service} {deployed or ''}".strip()
