"""Formats material arrives in as tools export it: ledgers, vendor records, audits, migration
histories, ECS, CloudTrail, Route 53, cert-manager, Backstage and registry catalogs.

Each sample is shaped like the real tool's output; each change keeps the offsets of the text
that states it."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from tools.detect import detect
from tools.formats import catalogs, controlplane, ledgers

UTC = timezone.utc


def _cites(text: str, ch) -> None:
    assert 0 <= ch.start < ch.end <= len(text)
    assert text[ch.start:ch.end].strip()


LEDGER = """# prod change ledger (UTC)
export_scope: every pipeline change to prod
entries:
  - id: PL-101
    service: checkout
    type: release
    started_at: 2026-04-29T10:20:00Z
    completed_at: 2026-04-29T10:31:00Z
    summary: "checkout 4.18.2 -> 4.19.0"
  - id: PL-102
    service: payments
    type: config-only
    started_at: 2026-04-29T10:40:00Z
    summary: "raise pool size"
"""


def test_a_ledger_gives_one_change_per_entry_with_its_own_id_service_and_versions():
    changes, bad = ledgers.parse_ledger(LEDGER, "*", "prod")
    assert not bad and [c.id for c in changes] == ["PL-101", "PL-102"]
    first = changes[0]
    assert (first.service, first.type, first.environment) == ("checkout", "release", "prod")
    assert (first.version_from, first.version_to) == ("4.18.2", "4.19.0")
    assert first.completed_at == datetime(2026, 4, 29, 10, 31, tzinfo=UTC)
    assert "PL-101" in LEDGER[first.start:first.end] and "PL-102" not in LEDGER[first.start:first.end]
    assert detect(Path("ledger.yaml"), LEDGER) == ("change", "ledger")


PUSH = """# settings push record
push_id: CFG-PUSH-7
system: settingsd
environment: production
target_group: cache-tier2
targets:
  - sessions-cache
submitted_at: 2026-04-29T10:02:00Z
applied_at: 2026-04-29T10:05:00Z
changes:
  maxmemory: {from: 24gb, to: 12gb}
"""


def test_a_config_push_record_in_a_tools_shape_is_a_config_push_of_its_target():
    changes, _ = ledgers.parse_ledger(PUSH, "*", "prod")
    (c,) = changes
    assert (c.id, c.type, c.service, c.environment) == ("CFG-PUSH-7", "config_push", "sessions-cache", "prod")
    assert [(x.key, x.from_, x.to) for x in c.config_changes] == [("maxmemory", "24gb", "12gb")]
    assert c.started_at == datetime(2026, 4, 29, 10, 2, tzinfo=UTC)
    assert detect(Path("CFG-PUSH-7.yaml"), PUSH) == ("change", "ledger")


UNLEASH = json.dumps({"events": [
    {"id": 9001, "type": "feature-environment-enabled", "createdBy": "a.b", "createdAt": "2026-04-29T10:10:00.000Z",
     "featureName": "new_pricing", "environment": "Production", "project": "pricing"}]}, indent=2)
FLAGSMITH = json.dumps({"count": 1, "results": [
    {"id": 4711, "created_date": "2026-04-29T10:11:00.5+00:00", "log": "Flag state updated for feature: fast_path",
     "environment": {"name": "production"}, "project": {"name": "search"}}]}, indent=2)


def test_vendor_flag_audits_are_feature_flag_changes():
    (u,), _ = ledgers.parse_ledger(UNLEASH, "*", "prod")
    assert (u.id, u.type, u.service, u.environment, u.flag.name, u.flag.to) == (
        "9001", "feature_flag", "pricing", "prod", "new_pricing", "true")
    (f,), _ = ledgers.parse_ledger(FLAGSMITH, "*", "prod")
    assert (f.id, f.service, f.environment, f.flag.name) == ("4711", "search", "prod", "fast_path")
    _cites(UNLEASH, u)


def test_a_flag_audit_listed_for_one_service_is_that_services_whatever_project_files_the_flags():
    """A project groups flags (or repositories); it names the subject only when the manifest names none."""
    (u,), _ = ledgers.parse_ledger(UNLEASH, "pricing-api", "prod")
    assert (u.service, u.flag.name) == ("pricing-api", "new_pricing")
    (f,), _ = ledgers.parse_ledger(FLAGSMITH, "search-api", "prod")
    assert f.service == "search-api"
    named = UNLEASH.replace('"project": "pricing"', '"project": "pricing", "service": "quotes-api"')
    (n,), _ = ledgers.parse_ledger(named, "pricing-api", "prod")
    assert n.service == "quotes-api", "a record that names its service keeps it"


FLYWAY = json.dumps({"schemaVersion": "12", "database": "orders", "flywayVersion": "10.15.2", "migrations": [
    {"category": "Versioned", "version": "11", "description": "add index", "type": "SQL",
     "installedOnUTC": "2026-04-20T02:00:00.000Z", "state": "Success", "executionTime": 120},
    {"category": "Versioned", "version": "12", "description": "drop column", "type": "SQL",
     "installedOnUTC": "2026-04-29T10:15:00.000Z", "state": "Success", "executionTime": 3000}]}, indent=2)
LIQUIBASE = json.dumps([{"ID": "20260429-1", "AUTHOR": "a.b", "FILENAME": "db/changelog/1.yaml",
                         "DATEEXECUTED": "2026-04-29 10:15:00", "ORDEREXECUTED": 7, "EXECTYPE": "EXECUTED",
                         "MD5SUM": "9:abc", "DESCRIPTION": "sql", "DEPLOYMENT_ID": "123"}], indent=2)
ALEMBIC = ("2026-04-29T10:15:00.100Z INFO  [alembic.runtime.migration] Context impl PostgresqlImpl.\n"
           "2026-04-29T10:15:01.000Z INFO  [alembic.runtime.migration] Running upgrade a1b2c3 -> d4e5f6, add trigger\n"
           "2026-04-29T10:15:09.000Z INFO  [alembic.runtime.migration] upgrade d4e5f6 done\n")


def test_migration_histories_are_schema_migrations_of_the_database():
    got, _ = ledgers.parse_ledger(FLYWAY, "orders-db", "prod")
    assert [c.id for c in got] == ["orders-db-flyway-V11", "orders-db-flyway-V12"]
    assert {c.type for c in got} == {"schema_migration"} and got[1].service == "orders-db"
    assert (got[1].started_at, got[1].completed_at) == (datetime(2026, 4, 29, 10, 14, 57, tzinfo=UTC),
                                                        datetime(2026, 4, 29, 10, 15, tzinfo=UTC)), "installedOn − executionTime"
    (lq,), _ = ledgers.parse_ledger(LIQUIBASE, "orders-db", "prod")
    assert lq.id == "orders-db-liquibase-20260429-1" and lq.started_at == datetime(2026, 4, 29, 10, 15, tzinfo=UTC)
    (al,), _ = ledgers.parse_migrations(ALEMBIC, "orders-db", "prod")
    assert (al.id, al.version_from, al.version_to) == ("orders-db-alembic-d4e5f6", "a1b2c3", "d4e5f6")
    assert al.completed_at == datetime(2026, 4, 29, 10, 15, 9, tzinfo=UTC)
    assert detect(Path("upgrade.txt"), ALEMBIC) == ("change", "migrations")
    assert detect(Path("flyway.json"), FLYWAY) == ("change", "ledger")
    assert detect(Path("changelog.json"), LIQUIBASE) == ("change", "ledger")


ECS = json.dumps({"services": [{"serviceName": "checkout-prod", "deployments": [
    {"id": "ecs-svc/1234567890", "status": "PRIMARY", "taskDefinition":
     "arn:aws:ecs:eu-west-1:1:task-definition/checkout-prod:83", "createdAt": "2026-04-29T10:20:00.1+00:00",
     "updatedAt": "2026-04-29T10:31:00.2+00:00", "rolloutState": "COMPLETED"}], "events": []}], "failures": []},
    indent=2)


def test_ecs_describe_services_gives_each_deployment():
    (c,), _ = controlplane.parse_ecs(ECS, "*", "prod")
    assert (c.id, c.type, c.service, c.version_to) == ("1234567890", "deployment", "checkout", "83")
    assert c.completed_at is not None and c.completed_at > c.started_at
    assert detect(Path("ecs.json"), ECS) == ("change", "ecs")


CLOUDTRAIL = json.dumps({"Records": [
    {"eventVersion": "1.09", "eventTime": "2026-04-29T09:00:00Z", "eventSource": "elasticloadbalancing.amazonaws.com",
     "eventName": "DescribeListeners", "requestParameters": {}},
    {"eventVersion": "1.09", "eventTime": "2026-04-29T10:02:39Z", "eventSource": "elasticloadbalancing.amazonaws.com",
     "eventName": "ModifyListener", "requestParameters": {
         "listenerArn": "arn:aws:elasticloadbalancing:eu-west-1:1:listener/app/web-lb/abc/def", "sslPolicy": "P2"},
     "responseElements": {"listeners": [{"sslPolicy": "P2", "previousSslPolicy": "P1"}]}}]}, indent=2)


def test_cloudtrail_keeps_calls_that_change_something():
    (c,), _ = controlplane.parse_cloudtrail(CLOUDTRAIL, "web", "prod")
    assert c.id == "cloudtrail-ModifyListener-2026-04-29T100239Z" and c.type == "certificate"
    assert c.target == "web-lb" and [(x.key, x.from_, x.to) for x in c.config_changes] == [("sslPolicy", "P1", "P2")]
    assert detect(Path("trail.json"), CLOUDTRAIL) == ("change", "cloudtrail")



def _trail(*records: dict) -> str:
    return json.dumps({"Records": [{"eventVersion": "1.09", "eventSource": "rds.amazonaws.com", **r} for r in records]})


def test_a_cloudtrail_call_acts_on_the_resource_its_identifier_parameter_names_for_the_calls_own_type():
    """Without an ARN, the call's resource is the `<type>Identifier`/`Id`/`Name` parameter of the type its
    name acts on (ModifyDBInstance → dBInstanceIdentifier), not another resource it mentions."""
    text = _trail(
        {"eventTime": "2026-05-02T08:00:00Z", "eventName": "ModifyDBInstance", "eventID": "e1",
         "requestParameters": {"dBParameterGroupName": "pg15-tuned", "dBInstanceIdentifier": "ledger-db-main"}},
        {"eventTime": "2026-05-02T08:00:05Z", "eventName": "ModifyDBParameterGroup", "eventID": "e2",
         "requestParameters": {"dBParameterGroupName": "pg15-tuned", "parameters": [{"parameterName": "work_mem"}]}},
        {"eventTime": "2026-05-02T08:00:09Z", "eventName": "RebootDBInstance", "eventID": "e3",
         "requestParameters": {"forceFailover": True}})
    changes, _ = controlplane.parse_cloudtrail(text, "ledger-db", "prod")
    assert [(c.id, c.target, c.service) for c in changes] == [
        ("e1", "ledger-db-main", "ledger-db-main"), ("e2", "pg15-tuned", "pg15-tuned"), ("e3", None, "ledger-db")]


def test_a_cloudtrail_call_the_service_refused_changed_nothing():
    text = _trail(
        {"eventTime": "2026-05-02T08:00:00Z", "eventName": "DeleteDBParameterGroup", "eventID": "e1",
         "errorCode": "InvalidDBParameterGroupState", "requestParameters": {"dBParameterGroupName": "pg14-old"}},
        {"eventTime": "2026-05-02T08:00:30Z", "eventName": "DeleteDBParameterGroup", "eventID": "e2",
         "requestParameters": {"dBParameterGroupName": "pg14-old"}})
    changes, bad = controlplane.parse_cloudtrail(text, "ledger-db", "prod")
    assert [c.id for c in changes] == ["e2"] and not bad

ROUTE53 = json.dumps({"ChangeInfo": {"Id": "/change/C0ABC", "Status": "INSYNC", "SubmittedAt": "2026-04-29T10:00:00Z",
                                     "Comment": "shift traffic"},
                      "ChangeBatch": {"Changes": [{"Action": "UPSERT", "ResourceRecordSet": {
                          "Name": "payments.internal.example.", "Type": "CNAME", "SetIdentifier": "blue", "Weight": 50,
                          "TTL": 30, "ResourceRecords": [{"Value": "lb-1.example"}]}}]}}, indent=2)


def test_a_route53_change_is_a_dns_change_of_the_record_name():
    (c,), _ = controlplane.parse_route53(ROUTE53, "*", "prod")
    assert (c.id, c.type, c.service, c.target) == ("C0ABC", "dns", "payments", "payments.internal.example")
    assert detect(Path("r53.json"), ROUTE53) == ("change", "route53")


CERTS = json.dumps({"apiVersion": "v1", "items": [
    {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "web-tls", "namespace": "web"},
     "spec": {"dnsNames": ["web.prod.example"], "secretName": "web-tls"},
     "status": {"notBefore": "2026-04-29T10:00:00Z", "revision": 3}},
    {"apiVersion": "cert-manager.io/v1", "kind": "CertificateRequest",
     "metadata": {"name": "web-tls-3", "creationTimestamp": "2026-04-29T09:59:58Z"},
     "spec": {"issuerRef": {"kind": "ClusterIssuer", "name": "new-ca"}}}]}, indent=2)


def test_cert_manager_requests_are_certificate_changes_of_the_named_host():
    (c,), _ = controlplane.parse_certificates(CERTS, "*", "prod")
    assert (c.id, c.type, c.service, c.target) == ("web-tls-3", "certificate", "web", "web.prod.example")
    assert detect(Path("certs.json"), CERTS) == ("change", "certificates")


BACKSTAGE = """apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: checkout
spec:
  type: service
  owner: team-a
  dependsOn:
  - component:payments
  - resource:orders-db
---
apiVersion: backstage.io/v1alpha1
kind: Resource
metadata:
  name: orders-db
spec:
  type: database
  owner: team-b
"""
REGISTRY = json.dumps({"generated_at": "2026-04-29T00:00:00Z", "services": [
    {"name": "checkout", "type": "svc", "depends_on": ["payments", "sessions-cache"]},
    {"name": "sessions-cache", "type": "redis", "depends_on": []}]}, indent=2)


def test_backstage_and_registry_catalogs_become_the_catalog_with_entry_offsets():
    cat, spans = catalogs.parse(BACKSTAGE, "backstage")
    assert [(s.name, s.kind, s.depends_on) for s in cat.services] == [
        ("checkout", "service", ("payments", "orders-db")), ("orders-db", "database", ())]
    assert "checkout" in BACKSTAGE[spans[0][0]:spans[0][1]] and "orders-db" not in BACKSTAGE[spans[1][0]:spans[1][0] + 5]
    assert detect(Path("catalog-info.yaml"), BACKSTAGE) == ("catalog", "backstage")
    cat, spans = catalogs.parse(REGISTRY, "registry")
    assert [(s.name, s.kind) for s in cat.services] == [("checkout", "service"), ("sessions-cache", "cache")]
    assert json.loads(REGISTRY[spans[1][0]:spans[1][1]])["name"] == "sessions-cache"
    assert detect(Path("registry.json"), REGISTRY) == ("catalog", "registry")


LAUNCHDARKLY = json.dumps({"items": [{"_id": "5f1e2d3c4b5a69788796a5b4", "date": 1777457400000, "kind": "flag",
                                      "name": "fast-checkout", "title": "a.b turned on the flag fast-checkout in production",
                                      "titleVerb": "turned on the flag",
                                      "target": {"resources": ["proj/checkout:env/production:flag/fast-checkout"]}}]},
                          indent=2)


def test_a_launchdarkly_audit_log_gives_its_toggles_by_their_own_ids():
    assert detect(Path("audit.json"), LAUNCHDARKLY) == ("change", "ledger")
    (c,), _ = ledgers.parse_ledger(LAUNCHDARKLY, "checkout", "prod")
    assert (c.id, c.type, c.service, c.flag.name, c.flag.to) == (
        "5f1e2d3c4b5a69788796a5b4", "feature_flag", "checkout", "fast-checkout", "true")
    assert c.started_at == datetime(2026, 4, 29, 10, 10, tzinfo=UTC)


LB_INVENTORY = """# load balancer inventory
load_balancers:
  - name: web-internal-12
    dns_name: web.prod.example
  - name: api-internal-7
    dns_name: api.prod.example
"""


def test_a_load_balancer_inventory_makes_each_balancer_an_alias_of_what_it_fronts():
    assert detect(Path("lbs.yaml"), LB_INVENTORY) == ("catalog", "registry")
    cat, _ = catalogs.parse(LB_INVENTORY, "registry")
    assert [(s.name, s.aliases) for s in cat.services] == [("web", ("web-internal-12", "web.prod.example")),
                                                           ("api", ("api-internal-7", "api.prod.example"))]


SLACK = json.dumps([
    {"type": "message", "user": "alertmanager", "ts": "1777457100.000100", "text": "[FIRING] checkout 5xx"},
    {"type": "message", "user": "a.b", "ts": "1777457400.000200", "text": "payments deploy looks suspicious"}], indent=2)


def test_a_slack_export_is_a_note_whose_front_matter_comes_from_the_export(tmp_path):
    from tools.corpus import load_source
    from state.sources import SourceEntry

    assert detect(Path("inc.json"), SLACK) == ("note", "chat")
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "inc.json").write_text(SLACK)
    doc = load_source(tmp_path, SourceEntry(id="inc", path="sources/inc.json", kind="note", format="chat",
                                            groups=("sre",), trust="untrusted"))
    assert doc.front.updated_at == datetime(2026, 4, 29, 10, 10, 0, 200, tzinfo=UTC) and doc.body_start == 0
    assert doc.text[doc.body_start:] == SLACK


DB_LOG = ("2026-04-29T10:15:00.123456Z 12 [Warning] [MY-010055] [Server] IP address could not be resolved\n"
          "2026-04-29T10:15:01.000000Z 0 [ERROR] [MY-013183] [InnoDB] Assertion failure\n"
          "2026-04-29 10:15:02 UTC:10.46.9.145(43610):app@orders:[27531]:FATAL:  remaining connection slots are reserved\n"
          "2026-04-29 10:15:03.120 UTC [887] LOG:  checkpoint starting: time\n"
          "2026-04-29 10:15:04.120 UTC [888] ERROR:  canceling statement due to statement timeout\n")


def test_mysql_and_postgresql_server_logs_are_plain_logs_with_their_severities():
    from tools.formats import logs
    from tools.profile import default_profile

    assert detect(Path("orders.postgresql.log"), DB_LOG) == ("log", "plain")
    fmt, events, bad = logs.parse_logs(DB_LOG, "auto", default_profile())
    assert not bad and [e.severity for e in events] == ["warning", "error", "error", "info", "error"]
    assert events[2].ts == datetime(2026, 4, 29, 10, 15, 2, tzinfo=UTC)


def test_a_documented_change_record_stays_a_record():
    record = ("id: DEP-1\ntype: deployment\nservice: checkout\nenvironment: prod\nstarted_at: 2026-04-29T10:22:00Z\n"
              "flag: {name: new-pricing, from: false, to: true}\n")
    assert detect(Path("DEP-1.yaml"), record) == ("change", "record")


def test_a_library_in_a_catalog_is_a_component_that_runs_inside_its_callers_not_a_service():
    """A library has no telemetry and no deploys of its own: it changes when a service that links it
    is deployed, so the walk looks for its changes there, not for its own health."""
    text = BACKSTAGE + """---
apiVersion: backstage.io/v1alpha1
kind: Component
metadata:
  name: dbkit
spec:
  type: library
  owner: team-c
"""
    cat, _ = catalogs.parse(text, "backstage")
    assert {s.name: s.kind for s in cat.services} == {"checkout": "service", "orders-db": "database",
                                                      "dbkit": "component"}
    reg = json.dumps({"services": [{"name": "http-sdk", "type": "sdk"}, {"name": "web", "type": "svc"}]})
    cat, _ = catalogs.parse(reg, "registry")
    assert [(s.name, s.kind) for s in cat.services] == [("http-sdk", "component"), ("web", "service")]


def test_a_flag_audit_entry_with_the_flags_state_before_and_after_says_what_was_set():
    """Unleash writes a strategy update as `preData`/`data`: the setting that differs is the change
    (rollout 10 → 100), and a later entry setting it back reads as the reverse."""
    def entry(eid: int, when: str, was: str, now: str) -> dict:
        strategy = lambda r: {"id": "s-1", "name": "flexibleRollout", "constraints": [],  # noqa: E731
                              "parameters": {"groupId": "similar-v2", "rollout": r, "stickiness": "sessionId"}}
        return {"id": eid, "type": "feature-strategy-updated", "createdAt": when, "featureName": "similar-v2",
                "project": "web", "environment": "production", "preData": strategy(was), "data": strategy(now)}
    text = json.dumps({"events": [entry(2, "2026-04-29T10:40:00Z", "100", "10"),
                                  entry(1, "2026-04-29T10:02:00Z", "10", "100")]}, indent=2)
    back, up = ledgers.parse_ledger(text, "event-api", "prod")[0]
    assert (up.id, up.flag.name, up.flag.from_, up.flag.to) == ("1", "similar-v2", "rollout=10", "rollout=100")
    assert (back.flag.from_, back.flag.to) == ("rollout=100", "rollout=10")


def test_a_result_set_exported_from_a_database_is_read_whatever_case_its_columns_were_folded_to():
    """PostgreSQL folds unquoted names to lower case: a SQL client's export of Liquibase's history
    table (the rows under the query text) has `dateexecuted`, `md5sum`, `id` — the same table."""
    rows = [{k.lower(): v for k, v in row.items()} for row in json.loads(LIQUIBASE)]
    export = json.dumps({"select * from public.databasechangelog order by orderexecuted desc": rows}, indent=1)
    (lq,), bad = ledgers.parse_ledger(export, "orders-db", "prod", UTC)
    assert not bad
    assert (lq.id, lq.type) == ("orders-db-liquibase-20260429-1", "schema_migration")
    assert lq.started_at == datetime(2026, 4, 29, 10, 15, tzinfo=UTC)
    _cites(export, lq)
    spreadsheet = json.dumps([{"Service": "checkout", "Started": "2026-04-29T10:20:00Z", "Id": "CH-1"}])
    (ch,), _ = ledgers.parse_ledger(spreadsheet, "*", "prod")
    assert (ch.id, ch.service, ch.started_at) == ("CH-1", "checkout", datetime(2026, 4, 29, 10, 20, tzinfo=UTC))


def test_a_change_record_without_an_environment_field_takes_the_one_its_own_words_name():
    """Deploy tools write the environment into a title, a parameter or a resource path; a record that
    names two environments (or none) stays unknown, and so is kept out of the subject's environment."""
    builds = json.dumps({"builds": [
        {"displayName": "#1186 7.1.4 → prod", "timestamp": 1793206030000, "result": "SUCCESS",
         "actions": [{"parameters": [{"name": "TARGET_ENV", "value": "prod"}]}]},
        {"displayName": "#1185 7.2.0 → staging", "timestamp": 1793106030000},
        {"accesses": [{"resource": "proj/stays:env/production:flag/preview"}], "date": 1793205190000, "kind": "flag",
         "name": "Preview"},
        {"displayTitle": "promote staging build to production", "createdAt": "2026-10-28T16:00:00Z"},
        {"displayTitle": "deploy", "createdAt": "2026-10-28T16:05:00Z"}]})
    got, _ = ledgers.parse_ledger(builds, "search-api", "*")
    assert [c.environment for c in got] == ["prod", "staging", "production", "*", "*"]


ADMIN_TASKS = json.dumps({"userTasks": [
    {"Status": "Completed", "RequestURL": "GET /kafkacruisecontrol/proposals?json=true",
     "UserTaskId": "t-1", "StartMs": 1769491862000},
    {"Status": "Completed", "RequestURL": "POST /kafkacruisecontrol/rebalance?dryrun=true&json=true",
     "UserTaskId": "t-2", "StartMs": 1769492020000},
    {"Status": "Completed", "RequestURL": "POST /kafkacruisecontrol/rebalance?dryrun=false&json=true",
     "UserTaskId": "t-3", "StartMs": 1769492292000},
    {"method": "PUT", "url": "/admin/v1/limits", "taskId": "t-4", "startMs": 1769492400000}]}, indent=2)


def test_an_admin_apis_task_list_gives_the_calls_that_change_something_typed_by_their_path(tmp_path):
    """An admin API's record of the calls made to it (Cruise Control's `user_tasks`, an audit of
    requests): reads and dry runs change nothing; a call with no type field is of the change type the
    words of its path name in the profile (`rebalance`), else of the ledger's default; its id and
    epoch-millisecond start are its own."""
    from tools.profile import default_profile

    profile = default_profile()
    got, bad = ledgers.parse_ledger(ADMIN_TASKS, "events-kafka", "prod", None, profile.known_change_type)
    assert not bad and [c.id for c in got] == ["t-3", "t-4"]
    rebalance, limits = got
    assert profile.change_type(rebalance.type) == "infrastructure" and limits.type == "deployment"
    assert rebalance.started_at == datetime(2026, 1, 27, 5, 38, 12, tzinfo=UTC)
    assert rebalance.summary.startswith("POST /kafkacruisecontrol/rebalance?dryrun=false")
    for ch in got:
        _cites(ADMIN_TASKS, ch)


def test_an_admin_apis_task_list_is_detected_as_a_change_ledger_without_a_service_field():
    """What the calls act on is the file's service (the manifest's or `init`'s guess), as for any ledger
    that names none; the calls' method and path are what make the records changes."""
    assert detect(Path("user-tasks.json"), ADMIN_TASKS) == ("change", "ledger")
    served = "\n".join(json.dumps({"time": f"2026-01-27T05:3{i}:00Z", "id": f"r{i}", "request": "POST /v1/orders HTTP/1.1",
                                    "status": 201, "bytes": 88}) for i in range(5))
    assert detect(Path("access.json"), served) != ("change", "ledger")  # an access log's requests are no changes


def _execution(eid: str, name: str, start_ms: int, stages: list[dict], **extra) -> dict:
    return {"type": "PIPELINE", "id": eid, "application": "tickets", "name": name, "status": "SUCCEEDED",
            "startTime": start_ms, "endTime": start_ms + 300_000, "stages": stages, **extra}


SPINNAKER = json.dumps([  # newest first, as the API returns them
    _execution("ex-4", "Rollback production", 1_780_000_900_000,
               [{"type": "rollbackServerGroup", "status": "SUCCEEDED",
                 "context": {"serverGroupName": "tickets-prod-v031", "targetServerGroup": "tickets-prod-v030",
                             "imageId": "registry.example/tickets:2.4.0"}}],
               trigger={"type": "manual", "parameters": {"reason": "undo 2.5.0"}}),
    _execution("ex-3", "Bake only", 1_780_000_600_000, [{"type": "bake", "status": "SUCCEEDED"}]),
    _execution("ex-2", "Deploy production", 1_780_000_000_000,
               [{"type": "findImageFromTags", "status": "SUCCEEDED"},
                {"type": "deploy", "status": "SUCCEEDED", "context": {"serverGroupName": "tickets-prod-v031"}}],
               trigger={"type": "docker", "tag": "2.5.0"}),
    _execution("ex-1", "Deploy production", 1_779_000_000_000,
               [{"type": "deploy", "status": "CANCELED", "context": {"serverGroupName": "tickets-prod-v030x"}}],
               canceled=True)], indent=1)


def test_spinnaker_executions_give_the_deploys_and_rollbacks_that_ran_and_what_each_rollback_undid():
    """An execution is a change when a stage that changes what runs ran; a rollback is told by its stage
    type and undoes the execution that created the server group it rolls back; times are epoch ms."""
    assert detect(Path("executions.json"), SPINNAKER) == ("change", "spinnaker")
    got, bad = ledgers.PARSERS["spinnaker"](SPINNAKER, "tickets", "prod")
    assert not bad
    assert [(c.id, c.type, c.version_to, c.rollback_of) for c in got] == [
        ("ex-4", "rollback", "2.4.0", "ex-2"), ("ex-2", "deployment", "2.5.0", None)]
    assert got[1].started_at == datetime(2026, 5, 28, 20, 26, 40, tzinfo=timezone.utc)
    assert got[1].completed_at == datetime(2026, 5, 28, 20, 31, 40, tzinfo=timezone.utc)
    for ch in got:
        _cites(SPINNAKER, ch)


def test_a_change_file_declared_ledger_in_a_tools_own_shape_is_read_by_that_tools_reader(tmp_path):
    """`ledger` names the family: a Spinnaker execution list declared `format: ledger` is read as Spinnaker."""
    from state.sources import Manifest, SourceEntry
    from tools.corpus import load_sources

    (tmp_path / "ex.json").write_text(SPINNAKER)
    entry = SourceEntry(id="pipelines", path="ex.json", kind="change", format="ledger", environment="prod",
                        service="tickets", groups=["sre"])
    (doc,) = load_sources(tmp_path, Manifest(format="investigator/sources@1", sources=(entry,)))
    assert doc.format == "spinnaker" and [c.id for c in doc.changes] == ["ex-4", "ex-2"]


GRAFANA_WIDE = '''"Time","checkout p95 (s)","checkout p99 (s)"
"2026-06-01 09:00:00",0.21,0.40
"2026-06-01 09:01:00",0.22,
"2026-06-01 09:02:00",1.90,3.10
'''


def _metric_case(tmp_path, name: str, text: str, timezone: str | None):
    from state.sources import Manifest, SourceEntry
    from tools.corpus import load_sources

    (tmp_path / name).write_text(text)
    entry = SourceEntry(id="panel", path=name, kind="metric", format="auto", environment="prod",
                        service="checkout", groups=["sre"], timezone=timezone)
    (doc,) = load_sources(tmp_path, Manifest(format="investigator/sources@1", sources=(entry,)))
    return doc


def test_grafanas_csv_download_gives_a_series_per_column_read_in_the_manifests_timezone(tmp_path):
    """Grafana's "Download CSV" (joined by time) names its series in the header and writes the
    browser's local time without a zone: no sidecar is needed, and the manifest entry's timezone dates it."""
    doc = _metric_case(tmp_path, "panel.csv", GRAFANA_WIDE, "+09:00")
    assert doc.format == "csv" and not doc.unparsed
    p95, p99 = doc.series
    assert (p95.metric, p95.entity, [x.value for x in p95.points]) == ("checkout p95 (s)", "checkout", [0.21, 0.22, 1.9])
    assert [x.value for x in p99.points] == [0.40, 3.10]  # an empty cell: no point at that time
    assert p95.points[2].ts == datetime(2026, 6, 1, 0, 2, tzinfo=timezone.utc)
    assert GRAFANA_WIDE[p95.points[2].start:p95.points[2].end] == '"2026-06-01 09:02:00",1.90,3.10'


def test_grafanas_one_row_a_point_csv_and_times_without_a_zone_or_a_timezone(tmp_path):
    long = '"Series";"Time";"Value"\n'.replace(";", ",") + "".join(
        f'"checkout p95","2026-06-01T09:0{i}:00+09:00",{v}\n' for i, v in enumerate((0.2, 0.3)))
    (s,) = _metric_case(tmp_path, "long.csv", long, None).series
    assert s.metric == "checkout p95" and [x.value for x in s.points] == [0.2, 0.3]
    doc = _metric_case(tmp_path, "panel.csv", GRAFANA_WIDE, None)  # local times and no timezone: not guessed
    assert not any(s.points for s in doc.series) and len(doc.unparsed) == 3
    assert "timezone" in doc.unparsed[0].reason


def test_a_grafana_csvs_zoneless_times_are_found_in_its_time_column_whichever_layout():
    """`init` names a Grafana export whose times carry no zone; one row a point puts the series name first."""
    from tools.formats.metrics import grafana_zoneless

    assert grafana_zoneless(GRAFANA_WIDE)
    assert grafana_zoneless('"Series","Time","Value"\n"checkout, p95","2026-06-01 09:00:00",0.2\n')
    assert not grafana_zoneless('"Series","Time","Value"\n"checkout p95","2026-06-01T09:00:00+09:00",0.2\n')
    assert not grafana_zoneless("ts,value\n2026-06-01 09:00:00,1\n")
