"""Self-checks of generated cases, from the written files only.

`structure_problems` checks the case-format contract (documented files, manifest paths,
parsable files, exact gold quotes, vocabularies, canaries only in unreadable sources).
`signal_problems` re-derives anomalies from the metric and log files with the rules of
deciding.md §3/§4 (written from the docs for the generator's own use) and checks them
against what the generator intended: the path's onsets in order, rises that explain their
callers, and no anomaly anywhere else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml

from .check_signals import load, load_yaml, readable, series, signal_problems

VERDICTS = {"confirmed", "inferred", "insufficient", "refuted"}
STOPS = {"evidence_ready", "budget_exhausted", "permission_denied", "awaiting_permission", "source_failure",
         "no_new_progress"}
ROOT_KINDS = {"deployment", "config_push", "feature_flag", "certificate", "dns", "rollback", "infrastructure",
              "noisy_neighbour", "capacity"}
FORMATS = {"runbook": {"markdown"}, "postmortem": {"markdown"}, "doc": {"markdown"}, "note": {"markdown", "chat"},
           "log": {"plain", "logfmt", "json", "syslog"}, "trace": {"otlp", "jaeger"}, "metric": {"csv", "prometheus"},
           "kubernetes": {"events", "pods", "pods-wide", "describe"},
           "change": {"record", "helm", "argocd", "rollout", "flags"},
           "config": {"record", "yaml", "json", "env", "properties", "configmap"},
           "mapping": {"record"}, "ownership": {"record"}, "catalog": {"record"}}


# -- structure ------------------------------------------------------------------------------

def structure_problems(case_dir: Path) -> list[str]:
    out: list[str] = []
    for name in ("case.yaml", "sources.yaml", "expected.yaml"):
        if not (case_dir / name).is_file():
            return [f"{name} missing"]
    case, manifest, expected = load(case_dir)
    texts: dict[str, str] = {}
    ids = set()
    for e in manifest:
        if e["id"] in ids:
            out.append(f"duplicate source id {e['id']}")
        ids.add(e["id"])
        p = e["path"]
        if p.startswith("/") or ".." in Path(p).parts:
            out.append(f"{e['id']}: path not inside the case: {p}")
            continue
        f = case_dir / p
        if not f.is_file():
            out.append(f"{e['id']}: {p} does not exist")
            continue
        text = f.read_text(encoding="utf-8")
        texts[e["id"]] = text
        fmt = e.get("format")
        if fmt is not None and fmt not in FORMATS[e["kind"]]:
            out.append(f"{e['id']}: format {fmt} not documented for kind {e['kind']}")
        out += [f"{e['id']}: {m}" for m in _parse_problems(text, e, f)]
    for claim_id, claim in expected["claims"].items():
        if claim["verdict"] not in VERDICTS:
            out.append(f"{claim_id}: verdict {claim['verdict']}")
        for q in claim.get("evidence", []) + claim.get("bridge_path", []):
            if q["source"] not in texts:
                out.append(f"{claim_id}: quote from unknown source {q['source']}")
            elif q["quote"] not in texts[q["source"]]:
                out.append(f"{claim_id}: quote not in {q['source']}: {q['quote'][:60]!r}")
    if expected["stop_reason"] not in STOPS:
        out.append(f"stop {expected['stop_reason']}")
    rc = expected.get("root_cause")
    if rc is not None and "kind" in rc and rc["kind"] not in ROOT_KINDS:
        out.append(f"root_cause kind {rc['kind']}")
    claim_ids = {c["id"] for c in case["required_claims"]}
    if set(expected["claims"]) != claim_ids:
        out.append(f"expected claims {sorted(expected['claims'])} != case claims {sorted(claim_ids)}")
    for canary in expected.get("canaries", []):
        for e in manifest:
            if e["id"] in texts and canary in texts[e["id"]] and readable(e, case):
                out.append(f"canary {canary} in readable source {e['id']}")
        for name in ("case.yaml", "sources.yaml"):
            if canary in (case_dir / name).read_text():
                out.append(f"canary {canary} in {name}")
        if not any(canary in t for t in texts.values()):
            out.append(f"canary {canary} in no source")
    return out


def _parse_problems(text: str, entry: dict, path: Path) -> list[str]:
    kind, name = entry["kind"], path.name
    try:
        if name.endswith((".yaml", ".yml")):
            load_yaml(text)
        elif name.endswith(".json"):
            json.loads(text)
        elif name.endswith(".jsonl") and kind == "trace":
            for line in text.splitlines():
                json.loads(line)
        elif name.endswith(".md"):
            if not text.startswith("---\n"):
                return ["no front matter"]
            front = load_yaml(text.split("---\n")[1])
            for k in ("doc_id", "title", "version", "service", "environment", "owner", "updated_at", "status"):
                if k not in front:
                    return [f"front matter lacks {k}"]
            if "groups" in front and set(front["groups"]) != set(entry["groups"]):
                return ["front matter groups disagree with the manifest"]
        elif name.endswith(".csv"):
            meta = Path(str(path) + ".meta.yaml")
            if not meta.is_file():
                return ["csv without sidecar"]
            load_yaml(meta.read_text())
            if text.splitlines()[0] != "ts,value":
                return ["csv header"]
        meta = Path(str(path) + ".meta.yaml")
        if meta.is_file():
            load_yaml(meta.read_text())
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        return [f"does not parse: {exc}"]
    return []


# -- relations and withheld telemetry ----------------------------------------------------------

def variant_problems(case_dir: Path) -> list[str]:
    """The facts a variant rests on: hops quoted, the missing relation or telemetry truly missing."""
    case, manifest, expected = load(case_dir)
    meta = expected["generator"]
    out: list[str] = []
    texts = {e["id"]: (case_dir / e["path"]).read_text() for e in manifest}
    by_id = {e["id"]: e for e in manifest}
    causal_id = next(c["id"] for c in case["required_claims"] if c["kind"] == "causal_chain")
    causal = expected["claims"][causal_id]
    rc = expected.get("root_cause")
    if causal["verdict"] in ("confirmed", "inferred"):
        hops = causal.get("bridge_path", [])
        if rc is None or len(hops) != len(rc["path"]) - 1:
            out.append(f"bridge path has {len(hops)} hops for path {rc and rc['path']}")
        for h in hops:
            if not readable(by_id[h["source"]], case):
                out.append(f"hop {h['from']} -> {h['to']} quoted from unreadable {h['source']}")
    v = meta["variant"]
    root = meta["root_entity"]
    path = meta["true_path"]
    if v in ("root_telemetry_missing", "root_telemetry_denied"):
        for e in manifest:
            t = texts[e["id"]]
            own = e["service"] == root and e["kind"] in ("metric", "log", "trace")
            if own and (v == "root_telemetry_missing" or readable(e, case)):
                out.append(f"{v}: {e['id']} is telemetry of {root}")
            if e["kind"] == "trace" and (f'"stringValue":"{root}"' in t or f'"serviceName":"{root}"' in t):
                out.append(f"{v}: traces carry spans of {root}")
            if e["kind"] == "kubernetes" and e["path"].endswith("events-" + e["environment"] + ".json"):
                if re.search(rf'"name":"{re.escape(root)}-[a-z0-9]+-[a-z0-9]+"[^}}]*}},"reason":"Unhealthy"', t):
                    out.append(f"{v}: warning events for {root}")
        for s in series(case_dir, manifest):
            if s.entity == root and readable(by_id[s.source], case):
                out.append(f"{v}: readable series {s.source} of {root}")
        caller = path[path.index(root) - 1]
        for e in manifest:
            if e["kind"] == "log" and e["service"] == caller and root in texts[e["id"]]:
                out.append(f"{v}: the caller's log names {root}")
    if v == "hop_in_prose":
        prose_hops = [h for h in causal.get("bridge_path", []) if by_id[h["source"]]["kind"] in ("runbook", "doc", "note")]
        if len(prose_hops) != 1:
            out.append(f"hop_in_prose: {len(prose_hops)} hops quoted from prose")
        for h in prose_hops:
            a, b = h["from"], h["to"]
            for e in manifest:
                t = texts[e["id"]]
                if e["service"] == a and e["kind"] in ("config", "log") and b in t:
                    out.append(f"hop_in_prose: {e['id']} of {a} names {b}")
                if e["kind"] == "trace" and (a, b) in trace_edges(t):
                    out.append(f"hop_in_prose: traces state {a} -> {b}")
                if e["kind"] == "catalog":
                    for s_ in load_yaml(t).get("services", []):
                        if s_["name"] == a and b in (s_.get("depends_on") or []):
                            out.append(f"hop_in_prose: the catalog states {a} -> {b}")
    if v in ("two_changes_implicated", "two_changes_unimplicated"):
        out += _implication_problems(case_dir, case, manifest, expected, texts, root)
    if v == "relation_missing":
        a, b = (meta["consumer"], root) if meta["consumer"] else (path[path.index(root) - 1], root)
        for e in manifest:
            t = texts[e["id"]]
            named = b in t if "." not in b else re.search(rf"(call|calls|calling|connect to|via|upstream)\s+\S*{re.escape(b)}", t)
            if e["service"] == a and e["kind"] in ("config", "log", "runbook", "change") and named:
                out.append(f"relation_missing: {e['id']} of {a} names {b}")
            if e["kind"] == "trace" and (a, b) in trace_edges(t):
                out.append(f"relation_missing: traces state {a} -> {b}")
            if e["kind"] == "catalog":
                for s in load_yaml(t).get("services", []):
                    if s["name"] == a and (b in s.get("depends_on", []) or b in s.get("runs_on", [])):
                        out.append(f"relation_missing: the catalog states {a} -> {b}")
            if e["kind"] == "kubernetes" and meta["consumer"] and a in t and b in t:
                out.append(f"relation_missing: {e['id']} places {a} on {b}")
    return out


def trace_edges(text: str) -> set[tuple[str, str]]:
    """(parent service, child service or db/destination) pairs of a generated OTLP or Jaeger file."""
    spans: dict[str, tuple[str, str, dict]] = {}    # span id -> (service, parent id, attributes)
    if text.startswith('{"data"'):
        for tr in json.loads(text)["data"]:
            procs = {k: v["serviceName"] for k, v in tr["processes"].items()}
            for sp in tr["spans"]:
                parent = sp["references"][0]["spanID"] if sp["references"] else ""
                spans[sp["spanID"]] = (procs[sp["processID"]], parent, {t["key"]: t["value"] for t in sp["tags"]})
    else:
        for line in text.splitlines():
            for rs in json.loads(line)["resourceSpans"]:
                svc = rs["resource"]["attributes"][0]["value"]["stringValue"]
                for ss in rs["scopeSpans"]:
                    for sp in ss["spans"]:
                        attrs = {a["key"]: a["value"]["stringValue"] for a in sp["attributes"]}
                        spans[sp["spanId"]] = (svc, sp.get("parentSpanId", ""), attrs)
    out = set()
    for svc, parent, attrs in spans.values():
        if parent in spans:
            out.add((spans[parent][0], svc))
        for k in ("db.name", "messaging.destination", "peer.service"):
            if k in attrs:
                out.add((svc, attrs[k]))
    return out


def _names_of_change(rec: dict) -> list[str]:
    """What a change record changed, as the words an error line could name (keys in every style)."""
    out = []
    for c in rec.get("config_changes") or []:
        k = str(c["key"])
        words = re.split(r"[._-]|(?<=[a-z])(?=[A-Z])", k)
        words = [w.lower() for w in words if w]
        out += [k, "_".join(words), "-".join(words), ".".join(words), "_".join(words).upper(),
                words[0] + "".join(w.capitalize() for w in words[1:])]
    if rec.get("flag"):
        out.append(str(rec["flag"]["name"]))
    if rec.get("version_to"):
        out.append(str(rec["version_to"]))
    for d in rec.get("dependency_changes") or []:
        out.append(str(d["name"]))
    return out


def _implication_problems(case_dir: Path, case: dict, manifest: list[dict], expected: dict, texts: dict,
                          root: str) -> list[str]:
    """The root's warning/error lines name the implicated change only (or, unimplicated, neither)."""
    out = []
    recs = {}
    for e in manifest:
        if e["kind"] == "change" and e["service"] == root and e["environment"] == case["subject"].split("/")[0] \
                and e["path"].endswith(".yaml"):
            rec = load_yaml(texts[e["id"]])
            if isinstance(rec, dict) and "id" in rec:
                recs[rec["id"]] = rec
    rc = expected.get("root_cause") or {}
    cause = rc.get("change")
    warn_lines = []
    for e in manifest:
        if e["kind"] == "log" and e["service"] == root:
            for line in texts[e["id"]].splitlines():
                if re.search(r"WARN|ERROR|ERR\b|warn|error|FATAL|警告|错误|\"level\":[45]0|^<\d*[34]>|^<\d+>", line):
                    warn_lines.append(line)
    named = {cid: any(n in ln for ln in warn_lines for n in _names_of_change(r) if len(n) > 2)
             for cid, r in recs.items()}
    in_window = [cid for cid in recs if cid in (rc.get("candidates") or []) or cid == cause]
    for cid in in_window:
        if cid == cause and not named.get(cid):
            out.append(f"the implicated change {cid} is not named by {root}'s warnings")
        if cid != cause and named.get(cid):
            out.append(f"change {cid} is named by {root}'s warnings but is not the cause")
    return out

__all__ = ["structure_problems", "signal_problems", "variant_problems", "series", "load", "readable"]
