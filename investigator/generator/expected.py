"""The gold answers of a generated case, derived from the scenario by the rules of deciding.md.

Nothing here reads a written source: the verdicts follow from what the scenario put in
(onsets, rises, relations, changes, access); the quotes come from the writers' anchors,
each checked to be an exact substring of its source.
"""

from __future__ import annotations

from datetime import timedelta

from .bundle import Anchor, Bundle
from .model import Change
from .plan import Plan
from .relations import PROSE_KIND
from .scenario import Scenario

_VIA_KIND = {"catalog": "catalog", "config": "config", "trace": "trace", "log_phrase": "log", "log_field": "log",
             "k8s": "kubernetes", "prose": "runbook"}


def _hop_anchor(sc: Scenario, bundle: Bundle, a: str, b: str) -> Anchor | None:
    """A quote that states a -> b, from the source kind the scenario chose for it (else any)."""
    anchors = bundle.anchors.get(f"hop:{a}:{b}", [])
    via = sc.hop_via.get((a, b))
    kind = PROSE_KIND[sc.prose_carrier] if via == "prose" else _VIA_KIND.get(via or "", "")
    for an in anchors:
        if bundle.by_id(an.source).kind == kind:
            return an
    return anchors[0] if anchors else None


def _in_window(sc: Scenario, c: Change) -> bool:
    return sc.start - timedelta(minutes=sc.lookback) <= c.completed <= sc.end


def change_in_window(sc: Scenario, scope_entities: list[str], types: list[str] | None) -> tuple[str, list[Change]]:
    rel = [c for c in sc.changes if c.env == sc.env and (c.service in scope_entities or c.target in scope_entities)]
    found = [c for c in rel if not c.denied and _in_window(sc, c) and (types is None or c.type in types)]
    if found:
        return "confirmed", found
    if any(c.denied for c in rel):          # an unreadable record's type is unknown: it may be one of `types`
        return "insufficient", []
    return "refuted", []


def _element(sc: Scenario, c: Change, bundle: Bundle) -> str | None:
    implicated = sc.implicate == c.key and bundle.first("implicate") is not None
    if c.type == "feature_flag" and c.flag:
        return c.flag[0]
    if c.type == "config_push":
        if c.fmt == "snapshot":
            if len(c.config_changes) == 1 or implicated:
                return c.ref.get("element")
            return None
        if c.config_changes and (len(c.config_changes) == 1 or implicated):
            return c.config_changes[0][0]
    return None


def _root_cause(sc: Scenario, bundle: Bundle, verdict: str) -> dict | None:
    if verdict == "insufficient":
        return None
    topo = sc.topo
    path = sc.observed_path()
    out: dict = {"entity": path[-1]}
    if sc.cause == "noisy_neighbour":
        ch = next((c for c in sc.changes if c.role == "cause" and c.service == topo.consumer), None)
        out.update(kind=ch.type if ch else "noisy_neighbour", change=ch.id if ch else None)
        if ch is not None and ch.id is None:
            out["change_ref"] = _ref(ch)
    elif sc.cause == "capacity":
        out.update(kind="capacity", change=None)
    else:
        causes = [c for c in sc.changes if c.role == "cause"]
        if sc.variant == "two_changes_unimplicated":
            cands = [c for c in sc.changes if c.role == "candidate"]
            out["candidates"] = [c.id for c in cands]
        else:
            c = causes[0]
            out.update(kind=c.type, change=c.id)
            if c.id is None:
                out["change_ref"] = _ref(c)
            el = _element(sc, c, bundle)
            if el:
                out["element"] = el
    out["path"] = path
    if sc.variant == "two_roots":
        out["other_roots"] = list(topo.branch)
    return out


def _ref(c: Change) -> dict:
    ref = {"format": c.fmt, "source": c.ref.get("source")}
    for k in ("revision", "history_id", "pod_template_hash", "at", "flag", "captured_at"):
        if c.ref.get(k) is not None:
            ref[k] = c.ref[k]
    return ref


def causal_verdict(sc: Scenario) -> str:
    v = sc.variant
    if v in ("two_changes_unimplicated", "two_roots"):
        return "inferred"
    if v in ("root_telemetry_missing", "relation_missing", "no_candidate", "decisive_change_denied",
             "root_telemetry_denied", "false_alarm"):
        return "insufficient"
    return "confirmed"


def stop_reason(sc: Scenario) -> str:
    if sc.variant in ("decisive_change_denied", "root_telemetry_denied"):
        return "awaiting_permission" if sc.may_request else "permission_denied"
    if causal_verdict(sc) == "insufficient" and sc.variant != "false_alarm":
        return "no_new_progress"  # deciding.md §8: an insufficient cause with nothing left to read
    return "evidence_ready"


def build_expected(sc: Scenario, plan: Plan, bundle: Bundle, canaries: list[str]) -> dict:
    ids = sc.claim_ids
    claims: dict[str, dict] = {}

    # symptom
    sym = sc.symptom
    sym_anchor = bundle.first(f"series:{sc.subject}:{sym['metric']}:")
    claims[ids["symptom"]] = {"verdict": "refuted" if sc.variant == "false_alarm" else "confirmed",
                              "evidence": [_q(sym_anchor)] if sym_anchor else []}

    # change in window
    scope_entities = [sc.subject] if sc.scope == "subject" else (sc.observed_path() or [sc.subject])
    verdict, found = change_in_window(sc, scope_entities, sc.change_types)
    ev = []
    for c in found[:2]:
        for an in bundle.anchors.get(f"change:{c.key}", [])[:2]:
            ev.append(_q(an))
    claims[ids["change"]] = {"verdict": verdict, "evidence": ev}

    # hypotheses
    for h in sc.hypotheses:
        an = bundle.first(f"series:{h.entity}:{h.metric}:")
        claims[f"{h.id}_check"] = {"verdict": h.outcome, "evidence": [_q(an)] if an else []}

    # the causal chain
    cv = causal_verdict(sc)
    causal: dict = {"verdict": cv}
    path = sc.observed_path()
    hops = []
    if cv != "insufficient" or sc.variant in ("root_telemetry_missing", "root_telemetry_denied", "relation_missing",
                                                "no_candidate", "decisive_change_denied"):
        for a, b in zip(path, path[1:]):
            rel = (b, a) if b == sc.topo.consumer else (a, b)
            an = _hop_anchor(sc, bundle, *rel)
            if an is not None:
                hops.append({"from": a, "to": b, "source": an.source, "quote": an.quote})
    if hops:
        causal["bridge_path"] = hops
    cev = []
    if cv != "insufficient":
        for c in sc.changes:
            if c.role in ("cause", "candidate") and not c.denied:
                for an in bundle.anchors.get(f"change:{c.key}", [])[:1]:
                    cev.append(_q(an))
        if sc.cause in ("noisy_neighbour", "capacity"):
            x = sc.topo.consumer if sc.cause == "noisy_neighbour" else sc.topo.root
            m = plan.main_series(x)
            if m is not None:
                an = bundle.first(f"series:{x}:{m.metric}:")
                if an:
                    cev.append(_q(an))
            if sc.cause == "capacity":
                tr = next((s for s in plan.series if s.entity == x and s.what == "traffic"), None)
                an = bundle.first(f"series:{x}:{tr.metric}:") if tr else None
                if an:
                    cev.append(_q(an))
        imp = bundle.first("implicate")
        if imp is not None:
            cev.append(_q(imp))
    if cev:
        causal["evidence"] = cev
    claims[ids["causal"]] = causal

    out: dict = {"format": "investigator/expected@1", "stop_reason": stop_reason(sc), "claims": claims}
    rc = _root_cause(sc, bundle, cv)
    if rc is not None:
        out["root_cause"] = rc
    out["canaries"] = canaries
    return out


def _q(an: Anchor) -> dict:
    return {"source": an.source, "quote": an.quote}
