"""More hostile inputs (issue 19): vocabularies, every structured format's shapes, outputs and arguments.

The formats tools export (ledgers, ECS, CloudTrail, Route 53, cert-manager, migrations, Backstage,
registries, chat) each have malformed files (broken JSON or YAML, text no tool writes) and wrong shapes;
the containers a format reads its records from (`items`, `status.history`, `resourceSpans` …) are tried
with values of another shape, which must be refused naming their path, never read as empty.

Each structured-format entry starts from a well-formed sample, puts one value of the wrong shape in
it (a list where an object is, an object where text or a number is) with a CANARY beside it, and adds
it as a finance-only source (the principal holds sre-oncall only): the expected outcome is one line
naming the file, the JSON path (or line) and the shape expected, quoting nothing. Line formats keep
what they cannot read as unparsed text (docs/case-format.md §4): those entries expect acceptance.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.hostile.catalogue import C_, F_, INIT, S_, X_, Entry, add, alert, alert_with, both, fin, raw, text
from bench.hostile.catalogue import C as edit_case
from bench.hostile.catalogue import S as edit_sources

V_ = "vocabulary"

POD = {"metadata": {"name": "web-7f6d4c8b95-h8zkt", "namespace": "prod",
                    "labels": {"app": "web", "pod-template-hash": "7f6d4c8b95"},
                    "ownerReferences": [{"kind": "ReplicaSet", "name": "web-7f6d4c8b95"}]},
       "spec": {"nodeName": "node-1"}}
EVENT = {"metadata": {"name": "web.1", "namespace": "prod"}, "involvedObject": {"kind": "Pod", "name": "web-1"},
         "reason": "BackOff", "message": "Back-off restarting", "type": "Warning", "count": 3,
         "firstTimestamp": "2026-04-29T02:40:00Z"}
HELM = [{"revision": 57, "updated": "2026-04-28T13:41:09Z", "status": "superseded", "chart": "c-0.31.0",
         "app_version": "4.6.0", "description": "Upgrade complete"},
        {"revision": 58, "updated": "2026-04-29T02:15:37Z", "status": "deployed", "chart": "c-0.31.1",
         "app_version": "4.6.1", "description": "Upgrade complete"}]
ARGO = {"kind": "Application", "status": {"history": [
    {"id": 1, "revision": "e915f4d5", "deployStartedAt": "2026-04-29T02:10:00Z", "deployedAt": "2026-04-29T02:12:00Z",
     "source": {"repoURL": "https://git.example.com/x.git", "targetRevision": "main"}}]}}
FLAG = {"at": "2026-04-29T02:20:00Z", "flag": "batch-writes", "service": "order-service", "environment": "prod",
        "from": True, "to": False}
OTLP = {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "web"}}]},
                           "scopeSpans": [{"scope": {"name": "http"}, "spans": [
                               {"traceId": "1c", "spanId": "ce", "name": "GET /", "kind": 2,
                                "startTimeUnixNano": "1777430100000000000", "endTimeUnixNano": "1777430100100000000",
                                "attributes": [{"key": "http.status_code", "value": {"stringValue": "200"}}],
                                "status": {"code": 1}}]}]}]}
JAEGER = {"data": [{"traceID": "1c", "processes": {"p1": {"serviceName": "web"}}, "spans": [
    {"traceID": "1c", "spanID": "ce", "operationName": "GET /", "processID": "p1", "startTime": 1777430100000000,
     "duration": 1000, "tags": [{"key": "span.kind", "value": "server"}], "references": []}]}]}
PROM = {"status": "success", "data": {"resultType": "matrix", "result": [
    {"metric": {"__name__": "m", "service": "order-service"}, "values": [[1777430100, "1"], [1777430160, "2"]]}]}}

C = "CANARY"


def put(sample: Any, path: tuple, value: Any) -> str:
    """The sample as JSON with `value` at `path` (a key or index per step; a new key is added)."""
    data = copy.deepcopy(sample)
    node = data
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return json.dumps(data)


def shaped(prefix: str, kind: str, fmt: str, ext: str, sample: Any, cases: list[tuple]) -> list[Entry]:
    """One entry per (what, path, wrong value[, why it is accepted]) in a finance-only file of the format:
    refused, unless a reason to accept it is given (a value the format does not read, kept as unparsed)."""
    return [Entry(f"{prefix}-{i}", F_, f"finance-only {fmt} with {case[0]}",
                  fin(kind, fmt, f"{prefix}{i}.{ext}", put(sample, case[1], case[2])),
                  expect="accept" if len(case) > 3 else "refuse", why=case[3] if len(case) > 3 else "")
            for i, case in enumerate(cases, 1)]


def fin_ok(eid: str, what: str, kind: str, fmt: str, name: str, content: str, why: str) -> Entry:
    return Entry(eid, F_, what, fin(kind, fmt, name, content), expect="accept", why=why)


def claim(i: int, **update: Any) -> Callable[[Path, Path], None]:
    return edit_case(lambda c: c["required_claims"][i].update(update))


def profile(value: dict) -> Callable[[Path, Path], None]:
    return edit_case(lambda c: c.update(profile=value))


def blame(types: list) -> Callable[[Path, Path], None]:
    return edit_case(lambda c: c["hypotheses"][0].update(blames={"entity": "order-service", "types": types}))


def record_type(value: str) -> Callable[[Path, Path], None]:
    return fin("change", "record", "t.yaml", f"id: x\ntype: {value}\nservice: s\nenvironment: prod\n"
               "started_at: 2026-04-29T10:00:00Z\n")


def file_out(name: str) -> Callable[[Path, Path], None]:
    return lambda case, work: (work / name).write_text("a file, not a folder\n")


VOCABULARY = [
    Entry("v-type-teleport", V_, "change_types: [teleport] in a required claim", claim(1, change_types=["teleport"])),
    Entry("v-type-second", V_, "a typo as the second of three change types",
          claim(1, change_types=["deployment", "deploymnet", "config_push"])),
    Entry("v-type-empty", V_, "an empty change type", claim(1, change_types=[""])),
    Entry("v-type-space", V_, "a change type of spaces", claim(1, change_types=["   "])),
    Entry("v-type-int", V_, "a change type that is a number", claim(1, change_types=[7])),
    Entry("v-type-str", V_, "change_types: a string, not a list", claim(1, change_types="deployment")),
    Entry("v-type-nested", V_, "change_types: a list of lists", claim(1, change_types=[["deployment"]])),
    Entry("v-blame-typo", V_, "a hypothesis blaming change type deploymnet", blame(["deploymnet"])),
    Entry("v-blame-empty", V_, "a hypothesis blaming change type ''", blame([""])),
    Entry("v-direction", V_, "a claim direction sideways", claim(0, direction="sideways")),
    Entry("v-direction-case", V_, "a claim direction UP (upper case)", claim(0, direction="UP")),
    Entry("v-signal", V_, "a symptom signal smell", claim(0, signal="smell")),
    Entry("v-scope", V_, "a change claim scope everywhere", claim(1, scope="everywhere")),
    Entry("v-predicts-dir", V_, "a hypothesis predicting direction left",
          edit_case(lambda c: c["hypotheses"][0]["predicts"].update(direction="left"))),
    Entry("v-kind-case", V_, "a claim kind Symptom (capitalised)", claim(0, kind="Symptom")),
    Entry("v-role-profile", V_, "profile metric_roles with a role speed", profile({"metric_roles": {"speed": "fast"}})),
    Entry("v-role-unit", V_, "profile unit_roles extended with a role speed",
          profile({"unit_roles": {"extend": {"speed": ["km/h"]}}})),
    Entry("v-severity", V_, "profile severity with a level fatal", profile({"severity": {"fatal": ["FATAL"]}})),
    Entry("v-numeric-level", V_, "profile numeric_levels 70: catastrophe", profile({"numeric_levels": {70: "catastrophe"}})),
    Entry("v-syslog-level", V_, "profile syslog_severity 0: emergency", profile({"syslog_severity": {0: "emergency"}})),
    Entry("v-change-type-name", V_, "profile change type named 'Big Bang'", profile({"change_types": {"Big Bang": ["x"]}})),
    Entry("v-trust", V_, "initial evidence trust: gospel",
          edit_case(lambda c: c["initial_evidence"][0].update(trust="gospel"))),
    Entry("v-source-kind", V_, "a source of kind Log (capitalised)", edit_sources(lambda m: m["sources"][0].update(kind="Log"))),
    Entry("v-source-format", V_, "a metric source of format influx", edit_sources(
        lambda m: next(s for s in m["sources"] if s["kind"] == "metric").update(format="influx"))),
    Entry("v-source-trust", V_, "a source trust: unverified (case-level word)",
          edit_sources(lambda m: m["sources"][0].update(trust="unverified"))),
    Entry("v-record-type", V_, "finance-only change record type: CANARY-teleport", record_type("CANARY-teleport")),
    Entry("v-record-type-int", V_, "finance-only change record type: 17", record_type("17")),
    Entry("v-record-type-empty", V_, "finance-only change record type: ''", record_type("''")),
    Entry("v-sidecar-role", V_, "finance-only sidecar role: Latency (capitalised)",
          fin("metric", "csv", "rl.csv", "ts,value\n", **{"rl.csv.meta.yaml": "metric: m\nrole: Latency\n"})),
    Entry("v-catalog-kind", V_, "finance-only catalog kind: CANARY-mainframe",
          fin("catalog", "record", "k.yaml", "services:\n  - name: x\n    kind: CANARY-mainframe\n")),
    Entry("v-ok-spelling", V_, "change_types [release, Config-Push, flag] (spellings the profile maps)",
          claim(1, change_types=["release", "Config-Push", "flag"]), expect="accept",
          why="spellings the profile's change_types map to a type (docs/profile.md)"),
    Entry("v-ok-profile-type", V_, "a change type the case's profile adds",
          edit_case(lambda c: (c["required_claims"][1].update(change_types=["quota_change"]),
                               c.update(profile={"change_types": {"quota_change": ["quota"]}}))),
          expect="accept", why="the profile is the vocabulary; a case may extend it"),
    Entry("v-ok-record-spelling", V_, "a change record of type release", record_type("release"), expect="accept",
          why="`release` is a spelling of deployment in the profile"),
]

PODS = shaped("k-pods", "kubernetes", "pods", "json", {"kind": "List", "items": [POD]}, [
    ("labels a list", ("items", 0, "metadata", "labels"), [C]),
    ("labels a string", ("items", 0, "metadata", "labels"), C),
    ("labels a number", ("items", 0, "metadata", "labels"), 7),
    ("ownerReferences of strings", ("items", 0, "metadata", "ownerReferences"), [C]),
    ("ownerReferences an object", ("items", 0, "metadata", "ownerReferences"), {"kind": C}),
    ("ownerReferences a number", ("items", 0, "metadata", "ownerReferences"), 5),
    ("metadata a list", ("items", 0, "metadata"), [C]),
    ("metadata a string", ("items", 0, "metadata"), C),
    ("spec a list", ("items", 0, "spec"), [C]),
    ("spec.nodeName an object", ("items", 0, "spec", "nodeName"), {C: 1}),
    ("an owner reference name that is a list", ("items", 0, "metadata", "ownerReferences", 0, "name"), [C]),
    ("a pod-template-hash that is a list", ("items", 0, "metadata", "labels", "pod-template-hash"), [C]),
])
EVENTS = shaped("k-events", "kubernetes", "events", "json", {"kind": "List", "items": [EVENT]}, [
    ("count a string", ("items", 0, "count"), C),
    ("count a list", ("items", 0, "count"), [1]),
    ("count of 401 digits", ("items", 0, "count"), 10**400,
     "a number past 400 characters is no JSON the reader takes: the line is unparsed text (§4)"),
    ("involvedObject a list", ("items", 0, "involvedObject"), [C]),
    ("involvedObject a string", ("items", 0, "involvedObject"), C),
    ("metadata a list", ("items", 0, "metadata"), [C],
     "an event with its own reason and time does not read metadata (only its creationTimestamp, as a fallback)"),
])
HELMS = shaped("c-helm", "change", "helm", "json", HELM, [
    ("revision a word", (1, "revision"), C),
    ("revision a list", (1, "revision"), [58]),
    ("revision an object", (1, "revision"), {C: 1}),
    ("revision true", (1, "revision"), True),
    ("revision -3", (1, "revision"), -3),
    ("revision 1.5", (1, "revision"), 1.5),
    ("revision of 400 digits", (1, "revision"), int("9" * 400), "a whole number, however long, is a revision"),
])
ARGOS = shaped("c-argo", "change", "argocd", "json", ARGO, [
    ("source a list", ("status", "history", 0, "source"), [C]),
    ("source a string", ("status", "history", 0, "source"), C),
    ("history entries that are lists", ("status", "history", 0), [C],
     "an entry without deployedAt is unparsed text (§4)"),
])
FLAGS = [Entry(f"c-flags-{i}", F_, f"finance-only flag audit (JSON lines) with {what}",
               fin("change", "flags", f"flags{i}.jsonl", json.dumps({**FLAG, **change})))
         for i, (what, change) in enumerate([
             ("service an object", {"service": {C: 1}}), ("environment a list", {"environment": [C]}),
             ("id a list", {"id": [C]})], 1)]
TRACES = shaped("t-otlp", "trace", "otlp", "json", OTLP, [
    ("resource a list", ("resourceSpans", 0, "resource"), [C]),
    ("resource a string", ("resourceSpans", 0, "resource"), C),
    ("resource.attributes an object", ("resourceSpans", 0, "resource", "attributes"), {C: 1},
     "attributes that are not {key, value} objects are none: spans without a service are unparsed text"),
    ("a span status that is a list", ("resourceSpans", 0, "scopeSpans", 0, "spans", 0, "status"), [C]),
    ("an arrayValue that is a list", ("resourceSpans", 0, "resource", "attributes", 0, "value"), {"arrayValue": [C]}),
]) + shaped("t-jaeger", "trace", "jaeger", "json", JAEGER, [
    ("a process that is a list", ("data", 0, "processes", "p1"), [C]),
    ("tags an object", ("data", 0, "spans", 0, "tags"), {C: 1}, "tags that are not {key, value} objects are none"),
    ("references a string", ("data", 0, "spans", 0, "references"), C,
     "references that are not objects name no parent: a root span"),
    ("startTime a word", ("data", 0, "spans", 0, "startTime"), C),
    ("startTime 1e30", ("data", 0, "spans", 0, "startTime"), 10**30),
    ("duration a list", ("data", 0, "spans", 0, "duration"), [C]),
    ("process a list", ("data", 0, "spans", 0, "process"), [C],
     "`process` is read only when processID names none: this span's does"),
])
PROMS = shaped("m-prom", "metric", "prometheus", "json", PROM, [
    ("metric a list", ("data", "result", 0, "metric"), [C]),
    ("metric a string", ("data", "result", 0, "metric"), C),
    ("a result that is a number", ("data", "result", 0), 5, "a result without metric or values is a series with no points"),
])

ACCEPTED_LINES = [
    fin_ok("l-json-inf-level", "a JSON log with level Infinity", "log", "json", "inf.jsonl",
           '{"ts": "2026-04-29T02:40:00Z", "level": Infinity, "msg": "x"}\n',
           "a level that names no level is `unknown` (§4); the line keeps its time and text"),
    fin_ok("l-json-big-level", "a JSON log with a level of 399 digits", "log", "json", "big.jsonl",
           '{"ts": "2026-04-29T02:40:00Z", "level": ' + "9" * 399 + ', "msg": "x"}\n',
           "a level that names no level is `unknown`"),
    fin_ok("l-json-nested-level", "a JSON log with level an object", "log", "json", "obj.jsonl",
           '{"ts": "2026-04-29T02:40:00Z", "level": {"CANARY": 1}, "msg": "x"}\n', "flattened fields; the level is unknown"),
    fin_ok("l-zone-25", "a JSON log stamped with offset +25:00", "log", "json", "z.jsonl",
           '{"ts": "2026-04-29T02:40:00+25:00", "level": "error", "msg": "CANARY"}\n',
           "an offset of a day or more is no zone: the line has no usable time and is unparsed text (§4)"),
    fin_ok("l-syslog-pri", "a syslog line with PRI <99999>", "log", "syslog", "s.log",
           "<99999>1 2026-04-29T02:40:00Z host app - - - CANARY\n", "a line that is not syslog is kept as unparsed text (§4)"),
    fin_ok("l-logfmt-quotes", "a logfmt line with unbalanced quotes", "log", "logfmt", "q.log",
           'ts=2026-04-29T02:40:00Z level=error msg="CANARY\n', "kept as unparsed text, or read as far as it goes (§4)"),
    fin_ok("l-plain-nul", "a plain log with NUL bytes and no times", "log", "plain", "n.log", "\x00\x00CANARY\x00\n",
           "kept as unparsed text (§4)"),
    fin_ok("k-wide-garbage", "kubectl get pods -o wide with garbage rows", "kubernetes", "pods-wide", "w.txt",
           "NAME READY STATUS RESTARTS AGE IP NODE\nCANARY\n\x01\x02\n", "rows it cannot read are unparsed text (§4)"),
    fin_ok("c-rollout-garbage", "a rollout history with rows that are not revisions", "change", "rollout", "r.txt",
           "deployment.apps/web\nREVISION  CHANGE-CAUSE\nCANARY x\n2 <none>\n", "rows it cannot read are unparsed text"),
    fin_ok("c-flags-no-time", "a flag audit line without a time", "change", "flags", "nt.jsonl",
           '{"flag": "CANARY"}\n', "a toggle without a zoned time is unparsed text"),
    fin_ok("c-helm-not-objects", "a Helm history of numbers", "change", "helm", "hn.json", "[1, 2, 3]\n",
           "entries without revision and updated are unparsed text"),
    fin_ok("k-events-no-reason", "events without reason or time", "kubernetes", "events", "e0.json",
           '{"items": [{"message": "CANARY"}]}\n', "events without reason or time are unparsed text"),
    fin_ok("m-prom-bad-pairs", "Prometheus values that are not pairs", "metric", "prometheus", "bp.json",
           '{"data": {"result": [{"metric": {}, "values": [[1], "CANARY", [1, 2, 3]]}]}}',
           "pairs it cannot read are unparsed text"),
    fin_ok("c-config-env-garbage", "an .env config with lines that are not KEY=value", "config", "env", "g.env",
           "CANARY\n=\nA=1\n", "lines it cannot read are unparsed text"),
    fin_ok("c-config-props-garbage", "a .properties config with junk lines", "config", "properties", "g.properties",
           "!CANARY\n\\\nkey\n", "comments and keys without values are read as what they are"),
]

CONFIGS = [
    Entry("c-configmap-data-list", F_, "finance-only ConfigMap whose data is a list",
          fin("config", "configmap", "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: [CANARY]\n")),
    Entry("c-config-json-deep", F_, "a JSON config nested 100,000 deep",
          fin("config", "json", "deep.json", "[" * 100000 + "]" * 100000)),
    Entry("c-config-yaml-tag", F_, "a YAML config with a !!python tag",
          fin("config", "yaml", "tag.yaml", "a: !!python/object/apply:os.system [CANARY]\n")),
    Entry("c-record-settings-list", F_, "a config record whose settings are a list",
          fin("config", "record", "sl.yaml", "service: s\nenvironment: e\nsettings: [CANARY]\n")),
    Entry("c-mapping-docs-str", F_, "a deployment mapping whose documents hold a string",
          fin("mapping", "record", "md.yaml", "service: s\nenvironment: e\ndeployed_version: 1\ndocuments: [CANARY]\n")),
    Entry("c-ownership-list", F_, "an ownership record that is a list", fin("ownership", "record", "ol.yaml", "- CANARY\n")),
    Entry("c-catalog-depends", F_, "a catalog whose depends_on is an object",
          fin("catalog", "record", "cd.yaml", "services:\n  - name: x\n    depends_on: {CANARY: 1}\n")),
    Entry("c-record-completed", F_, "a change record with completed_at a list",
          fin("change", "record", "cl.yaml", "id: x\ntype: deployment\nservice: s\nenvironment: prod\n"
              "started_at: 2026-04-29T10:00:00Z\ncompleted_at: [CANARY]\n")),
    Entry("c-record-targets", F_, "a change record whose targets are objects",
          fin("change", "record", "tg.yaml", "id: x\ntype: deployment\nservice: s\nenvironment: prod\n"
              "started_at: 2026-04-29T10:00:00Z\ntargets: [{CANARY: 1}]\n")),
    Entry("c-record-flag", F_, "a change record whose flag is a string",
          fin("change", "record", "fl.yaml", "id: x\ntype: feature_flag\nservice: s\nenvironment: prod\n"
              "started_at: 2026-04-29T10:00:00Z\nflag: CANARY\n")),
    Entry("m-csv-meta-list", F_, "a CSV sidecar that is a list",
          fin("metric", "csv", "ml.csv", "ts,value\n", **{"ml.csv.meta.yaml": "- CANARY\n"})),
    Entry("m-csv-meta-capacity", F_, "a CSV sidecar with capacity -1",
          fin("metric", "csv", "mc.csv", "ts,value\n", **{"mc.csv.meta.yaml": "metric: m\ncapacity: -1\n"})),
    Entry("n-front-list", F_, "security-only note whose front matter is a list",
          text("sources/notes/order-service-security-review-2026q2.md", lambda t: "---\n- CANARY\n---\n" + t)),
]

# --- the formats tools export (ledgers, ECS, CloudTrail, Route 53, cert-manager, migrations, Backstage,
# registries, chat): malformed files and wrong shapes, each with a CANARY the message must not quote ---------
LEDGER = {"export_scope": "prod", "entries": [
    {"id": "PL-101", "service": "order-service", "type": "release", "started_at": "2026-04-29T02:20:00Z",
     "summary": "order-service 4.18.2 -> 4.19.0"}]}
ECS = {"services": [{"serviceName": "order-service-prod", "deployments": [
    {"id": "ecs-svc/1234567890", "status": "PRIMARY", "taskDefinition": "arn:aws:ecs:eu-west-1:1:task-definition/o:83",
     "createdAt": "2026-04-29T02:20:00.1+00:00", "updatedAt": "2026-04-29T02:31:00.2+00:00",
     "rolloutState": "COMPLETED"}]}], "failures": []}
TRAIL = {"Records": [{"eventVersion": "1.09", "eventTime": "2026-04-29T02:02:39Z",
                      "eventSource": "elasticloadbalancing.amazonaws.com", "eventName": "ModifyListener",
                      "requestParameters": {"listenerArn": "arn:aws:elasticloadbalancing:eu-west-1:1:listener/app/lb/a/b",
                                            "sslPolicy": "P2"}}]}
R53 = {"ChangeInfo": {"Id": "/change/C0ABC", "Status": "INSYNC", "SubmittedAt": "2026-04-29T02:00:00Z", "Comment": "shift"},
       "ChangeBatch": {"Changes": [{"Action": "UPSERT", "ResourceRecordSet": {
           "Name": "payments.internal.example.", "Type": "CNAME", "TTL": 30, "ResourceRecords": [{"Value": "lb-1"}]}}]}}
CERTS = {"apiVersion": "v1", "items": [
    {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "web-tls"},
     "spec": {"dnsNames": ["web.prod.example"]}, "status": {"notBefore": "2026-04-29T02:00:00Z", "revision": 3}},
    {"apiVersion": "cert-manager.io/v1", "kind": "CertificateRequest",
     "metadata": {"name": "web-tls-3", "creationTimestamp": "2026-04-29T01:59:58Z"},
     "spec": {"issuerRef": {"kind": "ClusterIssuer", "name": "new-ca"}}}]}
REGISTRY = {"services": [{"name": "order-service", "type": "svc", "depends_on": ["payment-service"]},
                         {"name": "payment-service", "type": "svc", "depends_on": []}]}
SLACK = [{"type": "message", "user": "a.b", "ts": "1777430100.000100", "text": "order-service looks slow"}]
BACKSTAGE = ("apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata:\n  name: order-service\nspec:\n"
             "  type: service\n  dependsOn: [component:payment-service]\n")

MALFORMED = [
    Entry("t-ledger-json-syntax", F_, "finance-only ledger that is broken JSON",
          fin("change", "ledger", "bj.json", '{"entries": [{"id": "CANARY", "started_at": ')),
    Entry("t-ledger-yaml-syntax", F_, "finance-only ledger that is broken YAML",
          fin("change", "ledger", "by.yaml", "entries:\n  - id: CANARY\n    started_at: [2026\n")),
    Entry("t-ledger-yaml-dup", F_, "finance-only YAML ledger with a key twice",
          fin("change", "ledger", "dk.yaml", "entries:\n  - id: CANARY\n    id: CANARY-2\n")),
    Entry("t-ledger-words", F_, "finance-only ledger that is a line of words",
          fin("change", "ledger", "w.yaml", "CANARY deployed on tuesday\n")),
    Entry("t-ecs-syntax", F_, "finance-only ECS describe-services that is broken JSON",
          fin("change", "ecs", "e.json", '{"services": [{"serviceName": "CANARY"')),
    Entry("t-cloudtrail-syntax", F_, "finance-only CloudTrail log that is broken JSON",
          fin("change", "cloudtrail", "ct.json", '{"Records": [{"eventName": "CANARY"')),
    Entry("t-route53-syntax", F_, "finance-only Route 53 change that is broken JSON",
          fin("change", "route53", "r.json", '{"ChangeInfo": {"Comment": "CANARY"')),
    Entry("t-certs-syntax", F_, "finance-only cert-manager list that is broken JSON",
          fin("change", "certificates", "c.json", '{"items": [{"kind": "CANARY"')),
    Entry("t-migrations-json", F_, "finance-only migration history that is a JSON object, not tool output",
          fin("change", "migrations", "m.txt", '{"CANARY": "Running"}\n')),
    Entry("t-migrations-words", F_, "finance-only migration history of words no tool writes",
          fin("change", "migrations", "mw.txt", "CANARY upgraded the schema yesterday\n")),
    Entry("t-backstage-syntax", F_, "finance-only Backstage descriptor that is broken YAML",
          fin("catalog", "backstage", "b.yaml", "apiVersion: backstage.io/v1alpha1\nmetadata: {name: [CANARY\n")),
    Entry("t-backstage-dup", F_, "a second Backstage document with a key twice",
          fin("catalog", "backstage", "bd.yaml", BACKSTAGE + "---\nkind: CANARY\nkind: Component\n")),
    Entry("t-registry-syntax", F_, "finance-only registry that is broken YAML",
          fin("catalog", "registry", "rg.yaml", "services:\n  - name: [CANARY\n")),
    Entry("t-registry-json-syntax", F_, "finance-only registry that is broken JSON",
          fin("catalog", "registry", "rg.json", '[{"name": "CANARY"')),
    Entry("t-chat-syntax", F_, "finance-only chat export that is broken JSON",
          fin("note", "chat", "ch.json", '[{"type": "message", "text": "CANARY"')),
]

SHAPES = [
    *shaped("t-ledger", "change", "ledger", "json", LEDGER, [
        ("entries a number", ("entries",), 7),
        ("entries a string", ("entries",), C),
        ("entries null", ("entries",), None,
         "a null container holds no entries (an export with none), as an empty list does"),
        ("an entry without a start time", ("entries", 0, "started_at"), C,
         "an entry without a usable time is unparsed text, named in the report (§4)"),
    ]),
    Entry("t-ledger-yaml-str", F_, "finance-only YAML ledger with entries a string",
          fin("change", "ledger", "ys.yaml", f"export_scope: prod\nentries: {C}\n")),
    Entry("t-ledger-no-container", F_, "finance-only ledger object with no list of changes and no record field",
          fin("change", "ledger", "nc.json", json.dumps({C: {C: 1}}))),
    fin_ok("t-ledger-empty", "finance-only ledger with an empty list of entries", "change", "ledger", "em.yaml",
           f"export_scope: {C}\nentries: []\n", "an export with no entries is an export"),
    *shaped("t-ecs", "change", "ecs", "json", ECS, [
        ("services a number", ("services",), 5),
        ("services a string", ("services",), C),
        ("a service that is a string", ("services", 0), C),
        ("deployments an object", ("services", 0, "deployments"), {C: 1}),
        ("a deployment without createdAt", ("services", 0, "deployments", 0, "createdAt"), C,
         "a deployment without a usable time is unparsed text (§4)"),
    ]),
    Entry("t-ecs-list", F_, "finance-only ECS file that is a list, not describe-services output",
          fin("change", "ecs", "el.json", json.dumps([C]))),
    *shaped("t-cloudtrail", "change", "cloudtrail", "json", TRAIL, [
        ("Records a number", ("Records",), 7),
        ("Records a string", ("Records",), C),
        ("Records an object", ("Records",), {C: 1}),
        ("a record without eventTime", ("Records", 0, "eventTime"), C, "a call without a usable time is unparsed text"),
    ]),
    Entry("t-cloudtrail-none", F_, "finance-only CloudTrail file with no Records",
          fin("change", "cloudtrail", "cn.json", json.dumps({C: [C]}))),
    *shaped("t-route53", "change", "route53", "json", R53, [
        ("ChangeInfo a list", ("ChangeInfo",), [C]),
        ("ChangeBatch a string", ("ChangeBatch",), C),
        ("ChangeBatch.Changes a string", ("ChangeBatch", "Changes"), C),
        ("a change that is a string", ("ChangeBatch", "Changes", 0), C),
        ("ResourceRecords a number", ("ChangeBatch", "Changes", 0, "ResourceRecordSet", "ResourceRecords"), 7),
    ]),
    Entry("t-route53-none", F_, "finance-only Route 53 file without ChangeInfo",
          fin("change", "route53", "rn.json", json.dumps({"Comment": C, "Changes": []}))),
    *shaped("t-certs", "change", "certificates", "json", CERTS, [
        ("items a string", ("items",), C),
        ("an item that is a number", ("items", 0), 7),
        ("dnsNames a string", ("items", 0, "spec", "dnsNames"), C),
        ("metadata a list", ("items", 1, "metadata"), [C]),
        ("a request without creationTimestamp", ("items", 1, "metadata", "creationTimestamp"), C,
         "a request without a usable time is unparsed text"),
    ]),
    Entry("t-certs-none", F_, "finance-only cert-manager file that is no List and no certificate",
          fin("change", "certificates", "cx.json", json.dumps({"kind": C}))),
    fin_ok("t-migrations-sqitch-undated", "a sqitch Deploy block without a Date", "change", "migrations", "sq.txt",
           f"On database db:pg:orders\nDeploy 6c2f28d125aff1deea615f8de774599c6aea1e1b\nName:      {C}\n\n",
           "a block without a usable time is unparsed text (§4)"),
    fin_ok("t-migrations-nothing", "Alembic output with nothing to upgrade", "change", "migrations", "al.txt",
           "2026-04-29T02:15:00Z INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n",
           "a migration run with nothing to upgrade changes nothing"),
    Entry("t-backstage-meta-list", F_, "finance-only Backstage entity whose metadata is a list",
          fin("catalog", "backstage", "bm.yaml", f"apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: [{C}]\n")),
    Entry("t-backstage-doc-list", F_, "a second Backstage document that is a list",
          fin("catalog", "backstage", "bl.yaml", BACKSTAGE + f"---\n- {C}\n")),
    Entry("t-backstage-no-name", F_, "a Backstage entity without metadata.name",
          fin("catalog", "backstage", "bn.yaml", f"apiVersion: backstage.io/v1alpha1\nkind: Component\nmetadata: {{title: {C}}}\n")),
    *shaped("t-registry", "catalog", "registry", "json", REGISTRY, [
        ("services a string", ("services",), C),
        ("services 1.5", ("services",), 1.5),
        ("services an object", ("services",), {C: {"depends_on": []}}),
        ("an entry that is a string", ("services", 0), C),
        ("an entry without a name", ("services", 1, "name"), None),
    ]),
    Entry("t-registry-auto", F_, "finance-only catalog (format auto) with services 1.5",
          fin("catalog", "auto", "ra.json", json.dumps({"services": 1.5, "owner": C}))),
    *shaped("t-chat", "note", "chat", "json", {"messages": SLACK}, [
        ("messages a number", ("messages",), 7),
        ("messages a string", ("messages",), C),
        ("a message that is a string", ("messages", 0), C),
    ]),
    Entry("t-chat-none", F_, "finance-only chat export with no list of messages",
          fin("note", "chat", "cn.json", json.dumps({"channel": C}))),
]

# the containers the audit found read as nothing when they had another shape
CONTAINERS = [
    *shaped("w-pods", "kubernetes", "pods", "json", {"kind": "List", "items": [POD]}, [("items 7", ("items",), 7),
                                                                                      ("items a string", ("items",), C)]),
    *shaped("w-events", "kubernetes", "events", "json", {"kind": "List", "items": [EVENT]}, [
        ("items 7", ("items",), 7), ("items an object", ("items",), {C: 1})]),
    Entry("w-helm-none", F_, "finance-only Helm history that is an object with no history",
          fin("change", "helm", "hx.json", json.dumps({"x": 1, C: C}))),
    *shaped("w-helm", "change", "helm", "json", {"history": HELM}, [("history a string", ("history",), C)]),
    *shaped("w-argo", "change", "argocd", "json", ARGO, [("status.history 7", ("status", "history"), 7),
                                                        ("status a string", ("status",), C)]),
    Entry("w-argo-none", F_, "finance-only Argo CD file that is no Application and no history",
          fin("change", "argocd", "ax.json", json.dumps({C: 1}))),
    *shaped("w-otlp", "trace", "otlp", "json", OTLP, [
        ("resourceSpans 7", ("resourceSpans",), 7),
        ("scopeSpans a string", ("resourceSpans", 0, "scopeSpans"), C),
        ("spans an object", ("resourceSpans", 0, "scopeSpans", 0, "spans"), {C: 1}),
    ]),
    *shaped("w-jaeger", "trace", "jaeger", "json", JAEGER, [
        ("data 7", ("data",), 7),
        ("spans a string", ("data", 0, "spans"), C),
        ("a trace that is a number", ("data", 0), 7),
    ]),
    *shaped("w-prom", "metric", "prometheus", "json", PROM, [
        ("data.result a string", ("data", "result"), C),
        ("values an object", ("data", "result", 0, "values"), {C: 1}),
    ]),
    Entry("w-flags-events", F_, "finance-only YAML flag audit whose events are a string",
          fin("change", "flags", "fe.yaml", f"events: {C}\n")),
    Entry("w-flags-items", F_, "finance-only JSON flag audit whose items are a number",
          fin("change", "flags", "fi.json", json.dumps({"items": 7, "note": C}))),
    fin_ok("w-pods-empty", "kubectl pods JSON with an empty items list", "kubernetes", "pods", "pe.json",
           json.dumps({"kind": "List", "items": [], "metadata": {"resourceVersion": C}}),
           "a list with no pods is an export with none"),
]

OUTPUTS = [
    Entry("x-out-file", X_, "run --out an existing file", file_out("a-file"),
          argv=["--home", "home", "run", "case", "--out", "a-file"]),
    Entry("x-out-under-file", X_, "run --out a folder under a file", file_out("a-file"),
          argv=["--home", "home", "run", "case", "--out", "a-file/report"]),
    Entry("x-out-proc", X_, "run --out a place nobody may write (/proc)",
          argv=["--home", "home", "run", "case", "--out", "/proc/no/such"]),
    Entry("x-resume-out-file", X_, "resume --out an existing file", file_out("a-file"),
          argv=["--home", "home", "resume", "some-run", "--out", "a-file"]),
    Entry("x-serve-port-big", X_, "serve --port 70000", argv=["serve", "--port", "70000"]),
    Entry("x-serve-port-0", X_, "serve --port 0", argv=["serve", "--port", "0"]),
    Entry("x-serve-port-neg", X_, "serve --port -1", argv=["serve", "--port=-1"]),
    Entry("x-serve-port-word", X_, "serve --port http", argv=["serve", "--port", "http"]),
    Entry("x-serve-host-space", X_, "serve --host 'a b'", argv=["serve", "--host", "a b"]),
    Entry("x-serve-host-ip", X_, "serve --host 999.1.1.1", argv=["serve", "--host", "999.1.1.1"]),
    Entry("x-serve-host-dash", X_, "serve --host -bad-.example", argv=["serve", "--host=-bad-.example"]),
    Entry("x-worker-no-settings", X_, "worker --config a file that does not exist",
          argv=["worker", "--config", "nowhere.yaml"]),
]

INITS = [
    Entry("i-starts-zero", "init", "startsAt 0001-01-01T00:00:00Z (Alertmanager's zero time)",
          alert({"alerts": [{"labels": {"env": "prod", "service": "order-service"},
                             "startsAt": "0001-01-01T00:00:00Z"}]}), argv=INIT),
    Entry("i-labels-nested", "init", "a label value that is an object", alert(alert_with(team={"a": 1})), argv=INIT,
          expect="accept", may_write=("new-case",),
          why="init takes labels and annotations as text (investigator/init.py); the service refuses them at the door"),
    Entry("i-material-pods", "init", "material with kubectl pods JSON whose labels are a list",
          alert(alert_with(), lambda m: (m / "pods.json").write_text(
              json.dumps({"kind": "List", "items": [{**POD, "metadata": {**POD["metadata"], "labels": [C]}}]}))),
          argv=INIT),
]

SOURCES = [
    Entry("s-kind-format-mismatch", S_, "a trace with format prometheus",
          edit_sources(lambda m: m["sources"].append({"id": "tp", "path": "sources/t.json", "kind": "trace",
                                                      "format": "prometheus", "groups": ["sre-oncall"]}))),
    Entry("s-tz-word", S_, "timezone UTC+8 (not an offset)", edit_sources(lambda m: m["sources"][0].update(timezone="UTC+8"))),
    Entry("s-tz-range", S_, "timezone +99:00 (no such offset)", edit_sources(lambda m: m["sources"][0].update(timezone="+99:00"))),
    Entry("s-groups-str", S_, "groups: a string", edit_sources(lambda m: m["sources"][0].update(groups="sre-oncall"))),
    Entry("s-env-list", S_, "environment: a list", edit_sources(lambda m: m["sources"][0].update(environment=["prod"]))),
]

# a file the other entries do not write: a raw JSON body that `add` cannot express (a BOM and UTF-16 JSON)
ENCODINGS = [
    Entry("f-utf16-json", F_, "a UTF-16 Helm history", add(
        {"id": "h16", "path": "sources/h16.json", "kind": "change", "format": "helm", "groups": ["finance"]},
        {"sources/h16.json": json.dumps(HELM).encode("utf-16")})),
    Entry("f-bom-json", F_, "a Helm history with a UTF-8 byte order mark", add(
        {"id": "hb", "path": "sources/hb.json", "kind": "change", "format": "helm"},
        {"sources/hb.json": b"\xef\xbb\xbf" + json.dumps(HELM).encode()}), expect="accept",
          why="the mark is dropped (editors on Windows write it)"),
    Entry("f-pods-trailing", F_, "kubectl pods JSON with a broken second document after it",
          fin("kubernetes", "pods", "two.json", json.dumps({"items": [POD]}) + " {CANARY"), expect="accept",
          why="a file that is not one JSON document is read line by line; a line that is not JSON is unparsed (§4)"),
    Entry("f-pods-empty-case", F_, "a case.yaml replaced by kubectl pods JSON",
          both(raw("case.yaml", json.dumps({"items": [POD]})))),
]


def more_entries() -> list[Entry]:
    return [*VOCABULARY, *PODS, *EVENTS, *HELMS, *ARGOS, *FLAGS, *TRACES, *PROMS, *ACCEPTED_LINES, *CONFIGS,
            *MALFORMED, *SHAPES, *CONTAINERS, *OUTPUTS, *INITS, *SOURCES, *ENCODINGS]


__all__ = ["more_entries", "C_"]
