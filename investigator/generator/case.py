"""Write one generated case folder: case.yaml, sources.yaml, sources/..., expected.yaml."""

from __future__ import annotations

from pathlib import Path

import yaml

from .bundle import Bundle, iso_offset, num
from .changes import write_changes
from .configs import write_configs
from .expected import build_expected, causal_verdict, stop_reason
from .kube import write_kube
from .logs import write_logs
from .metrics import write_metrics
from .plan import Plan, make_plan
from .prose import write_catalog, write_prose
from .model import onset_of
from .scenario import Scenario
from .traces import write_traces


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)   # libyaml's emitter writes the same text, faster


def _dump(data: object) -> str:
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, allow_unicode=True, width=4096, default_flow_style=False)


def assemble(sc: Scenario) -> tuple[Plan, Bundle, dict, dict, list[str]]:
    """Render every source of the scenario; return the plan, the sources, case.yaml, expected.yaml, canaries."""
    plan = make_plan(sc)
    bundle = Bundle()
    ents = sc.topo.entities
    readable = [sc.groups[0], "engineering"]

    def groups_for(entity: str, denied: bool = False) -> list[str]:
        team = ents[entity].team if entity in ents else None
        if denied:
            return [team or sc.restricted[0], sc.restricted[0]] if team else [sc.restricted[0]]
        return [sc.groups[0]] + ([team] if team else [])

    canaries = list(sc.canaries)
    denied_canary = None
    if any(c.denied for c in sc.changes):
        alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
        denied_canary = "CANARY-" + "".join(sc.rng.choice(alphabet) for _ in range(4)) + "-CHG"
        canaries.append(denied_canary)

    write_catalog(sc, plan.catalog, bundle, readable)
    write_changes(sc, bundle, groups_for, denied_canary)
    write_configs(sc, plan.configs, bundle, groups_for)
    write_metrics(sc, plan, bundle, groups_for)
    write_logs(sc, plan, bundle, groups_for)
    write_traces(sc, plan, bundle, groups_for)
    write_kube(sc, plan, bundle, groups_for)
    write_prose(sc, bundle, groups_for, readable)
    expected = build_expected(sc, plan, bundle, canaries)
    case = _case_yaml(sc, plan, bundle)
    return plan, bundle, case, expected, canaries


def _case_yaml(sc: Scenario, plan: Plan, bundle: Bundle) -> dict:
    r = sc.rng
    s = sc.subject
    b = sc.behaviour[s]
    sym = sc.symptom
    ids = sc.claim_ids
    what = sym["what"]
    if what == "lat":
        before, after = b.lat_base, b.lat_base + b.lat_delta
        desc = "P95 latency"
    elif what == "err":
        before, after = b.err_base, b.err_base + b.err_delta
        desc = "error rate"
    else:
        before, after = 100 - b.err_base, 100 - b.err_base - b.err_delta
        desc = "availability"
    if sc.variant == "false_alarm":
        after = before * 3.2
    unit = "ms" if what == "lat" else "%"
    title = f"{sc.env}/{s} {desc} {num(before)} {unit} -> {num(after)} {unit}"
    alert = {"id": sc.case_id, "rule": f"{s}-{sym['metric'].replace('_', '-')}-{'low' if sym['direction'] == 'down' else 'high'}",
             "fired_at": iso_offset(sc.fired_at),
             "text": f"[FIRING] {sc.env}/{s} {desc} {'low' if sym['direction'] == 'down' else 'high'}: {sym['metric']} "
                     f"{num(before)} {unit} -> {num(after)} {unit} since about {sc.start:%H:%M}",
             "labels": {"severity": r.choice(["page", "critical", "warning"]), "service": s, "env": sc.env}}
    window = {"start": iso_offset(sc.start), "end": iso_offset(sc.end), "change_lookback": f"{sc.lookback}m",
              "baseline": f"{sc.baseline}m", "onset_lead": f"{sc.onset_lead}m"}
    if r.random() < 0.5:
        window["onset_tolerance"] = "2m"
    hyps = []
    for h in sc.hypotheses:
        pred = {"metric": h.metric}
        if h.entity != s or r.random() < 0.3:
            pred["entity"] = h.entity
        pred.update(direction=h.direction, min_ratio=h.min_ratio)
        hyps.append({"id": h.id, "statement": h.statement, "mentioned_by": h.mentioned_by, "predicts": pred})
    claims: list[dict] = []
    sym_claim = {"id": ids["symptom"], "kind": "symptom",
                 "statement": f"The {desc} of {sc.env}/{s} {'dropped' if sym['direction'] == 'down' else 'rose'} in the window compared with its baseline.",
                 "signal": "metric", "metric": sym["metric"], "direction": sym["direction"], "min_ratio": sym["min_ratio"]}
    if r.random() < 0.15:
        sym_claim = {k: v for k, v in sym_claim.items() if k != "signal"}
        sym_claim["kind"] = "metric_shift"
    claims.append(sym_claim)
    chg = {"id": ids["change"], "kind": "change_in_window",
           "statement": f"A change to {sc.env}/{s}" + (" or to an entity on the anomalous path" if sc.scope == "path" else "")
                        + " completed shortly before or during the window."}
    if sc.change_types:
        chg["change_types"] = sc.change_types
    if sc.scope == "path":
        if r.random() < 0.3:
            chg["include_dependencies"] = True
        else:
            chg["scope"] = "path"
    elif r.random() < 0.5:
        chg["scope"] = "subject"
    claims.append(chg)
    for h in sc.hypotheses:
        claims.append({"id": f"{h.id}_check", "kind": "counter_evidence",
                       "statement": f"The hypothesis '{h.id}' is checked against the metric it predicts.", "hypothesis": h.id})
    hops = len(sc.path) - 1
    causal = {"id": ids["causal"], "kind": "causal_chain",
              "statement": f"The {desc} change of {s} is traced along stated relations to its root and the cause there.",
              "competitors": [h.id for h in sc.hypotheses if h.competitor]}
    if hops >= 5 or r.random() < 0.3:
        causal["max_hops"] = min(8, max(6, hops + 1))
    if r.random() < 0.35:
        causal["requires_owner_verification"] = True
    claims.append(causal)
    n_src = len(bundle.sources)
    case: dict = {
        "format": "investigator/case@1", "id": sc.case_id, "run_id": f"run-{sc.case_id.lower()}", "title": title,
        "alert": alert,
        "question": f"Why did the {desc} of {sc.env}/{s} change around {sc.start:%H:%M} ({sc.tz_text}) on {sc.start:%Y-%m-%d}, and what caused it?",
        "subject": f"{sc.env}/{s}", "window": window,
        "principal": {"id": sc.principal, "groups": sc.groups, "may_request_access": sc.may_request},
        "budgets": {"rounds": min(120, 24 + 8 * hops), "reads": min(800, 60 + 2 * n_src + 25 * hops),
                    "reads_per_round": r.choice([4, 5, 6])},
        "hypotheses": hyps, "required_claims": claims,
        "initial_evidence": [{"id": "E1", "claim": ids["symptom"], "trust": "unverified",
                              "text": f"{sym['metric']} {num(before)} {unit} -> {num(after)} {unit} (alert payload)",
                              "origin": "alert"}],
    }
    if sc.prose_hop and sc.prose_lang == "de":
        case["profile"] = {"relation_phrases": {"extend": ["nutzt"]}}
    return case


def _manifest(bundle: Bundle) -> str:
    lines = ["format: investigator/sources@1", "sources:"]
    for s in bundle.sources:
        lines.append(f"  - id: {s.id}")
        lines.append(f"    path: {s.path}")
        lines.append(f"    kind: {s.kind}")
        if s.explicit_format:
            lines.append(f"    format: {s.fmt}")
        lines.append(f'    environment: "{s.env}"' if s.env == "*" else f"    environment: {s.env}")
        lines.append(f'    service: "{s.service}"' if s.service == "*" else f"    service: {s.service}")
        lines.append(f"    groups: [{', '.join(s.groups)}]")
        lines.append(f"    trust: {s.trust}")
        if s.timezone:
            lines.append(f'    timezone: "{s.timezone}"')
        if s.captured_at:
            lines.append(f"    captured_at: {iso_offset(s.captured_at)}")
        if s.version:
            lines.append(f'    version: "{s.version}"')
    return "\n".join(lines) + "\n"


def metadata(sc: Scenario, plan: Plan, bundle: Bundle) -> dict:
    tags = sorted({t for s in bundle.sources for t in s.tags if not t.startswith(("herring/", "lang/"))})
    langs = sorted({t[5:] for s in bundle.sources for t in s.tags if t.startswith("lang/")})
    return {"seed": sc.seed, "index": sc.index, "cause_kind": sc.cause, "root_kind": sc.root_kind, "depth": len(sc.path) - 1,
            "variant": sc.variant, "root_entity": sc.topo.root if sc.variant != "false_alarm" else None,
            "consumer": sc.topo.consumer, "mode": sc.mode, "red_herrings": sorted(sc.red_herrings), "formats": tags,
            "languages": langs, "true_path": sc.path, "true_root": sc.path[-1] if sc.path else None,
            "scope": sc.scope, "services": sum(1 for e in sc.topo.entities.values() if e.kind == "service"),
            "sources": len(bundle.sources), "causal_verdict": causal_verdict(sc), "stop_reason": stop_reason(sc),
            "onsets": {x: iso_offset(t) for x in sc.topo.entities if (t := onset_of(sc, x)) is not None},
            "late_anomalies": ({sc.late_sibling: sc.late_parent} if sc.late_sibling else {}),
            "caller_anomaly": sc.caller_anomaly}


def write_case(sc: Scenario, out: Path) -> Path:
    plan, bundle, case, expected, _canaries = assemble(sc)
    root = out / sc.case_id
    for s in bundle.sources:
        p = root / s.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(s.text, encoding="utf-8")
        if s.sidecar:
            (root / (s.path + ".meta.yaml")).write_text(s.sidecar, encoding="utf-8")
    (root / "case.yaml").write_text(_dump(case), encoding="utf-8")
    (root / "sources.yaml").write_text(_manifest(bundle), encoding="utf-8")
    meta = metadata(sc, plan, bundle)
    header = (f"# Gold answers for {sc.case_id} (generated; never read by the runtime).\n"
              f"# cause: {sc.cause} at {sc.topo.root}; variant: {sc.variant}; true path: {' -> '.join(sc.path)}\n")
    expected["generator"] = meta
    (root / "expected.yaml").write_text(header + _dump(expected), encoding="utf-8")
    return root
