"""Change sources with many records a file, or one record in a tool's own shape (`kind: change`).

- `ledger`: a deploy ledger or pipeline history (`entries:`/`changes:`/`deployments:` …, a list,
  or JSON lines), a deployment or config-push record as a tool exports it (`deployment_id`,
  `push_id`, `change_type`, `applied_at`, `changes: {key: {from, to}}`), a flag audit in a vendor
  shape (Unleash `events[]` with `featureName`, Flagsmith `results[]` with `log`, a YAML `events:`
  list of toggles), a migration history (Flyway `info` JSON, Liquibase `DATABASECHANGELOG` rows).
  Fields are read by their usual names (`started_at`/`createdAt`/`at`…, `service`/`app`/`project`…).
- `ecs`: `aws ecs describe-services` — each `deployments[]` entry is a deployment.
- `cloudtrail`: an AWS CloudTrail log (`Records[]`) — each mutating call is a change.
- `route53`: a Route 53 change (`ChangeInfo` + `ChangeBatch`) — a `dns` change of the record names.
- `certificates`: cert-manager `Certificate`/`CertificateRequest` objects (`kubectl get … -o json`)
  — each issued request is a `certificate` change of the certificate's first DNS name.
- `migrations`: migration tool output as text — Alembic `Running upgrade A -> B`, Sqitch `Deploy`
  blocks, Flyway `info` tables.

Every change keeps the offsets of the record that states it. A stamp without a zone is read in
the manifest's `timezone`, else UTC (migration tools write the database server's UTC). A file that
is not the shape its format has — broken JSON or YAML, a list of records that is a number or a text,
a document with none, text no migration tool writes — is refused naming where (`shape.ContentError`);
a record that is there but cannot be read (no usable time) is kept as unparsed text.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from state.sources import ConfigChange, FlagChange
from state.telemetry import Change, Unparsed, as_text
from tools.formats import jsonspan
from tools.formats.logs import parse_time
from tools.formats.records import ENV_FAMILIES, Rec, first, obj, read_records, records, same_environment, scalar
from tools.formats.shape import ContentError, bad_json, expecting, listed

FORMATS = ("ledger", "ecs", "cloudtrail", "route53", "certificates", "migrations")

_START = ("started_at", "startedAt", "start", "started", "start_time", "submitted_at", "submittedAt", "deployStartedAt",
          "created_at", "createdAt", "created_date", "creationTimestamp", "at", "ts", "time", "timestamp", "date",
          "eventTime", "deployed_at", "deployedAt", "applied_at", "appliedAt", "executed_at", "installedOnUTC",
          "installed_on", "installedOn", "DATEEXECUTED", "dateExecuted", "when")
_END = ("completed_at", "completedAt", "finished_at", "finishedAt", "ended_at", "end_time", "applied_at", "appliedAt",
        "deployed_at", "deployedAt", "updatedAt")
_ID = ("id", "_id", "change_id", "changeId", "deployment_id", "deploymentId", "push_id", "pushId", "ticket", "ID", "eventID",
       "uid", "key")
_TYPE = ("type", "change_type", "changeType", "kind", "action", "category", "event_type", "eventType")
_SERVICE = ("service", "service_name", "serviceName", "app", "application", "component", "workload", "database",
            "target_service", "target")
_PROJECT = ("project", "project.name")
"""A grouping a tool files records under (a flag tool's or a repository's project): the subject only when
the manifest names none — a file listed for one service is about that service, whatever project holds it."""
_ENV = ("environment", "env", "environment.name", "stage", "namespace")
_SUMMARY = ("summary", "description", "note", "comment", "reason", "log", "message", "title", "DESCRIPTION")
_FLAG = ("flag", "flagKey", "featureName", "feature", "flag_name", "flagName", "feature_flag")
_TZ_ANY = re.compile(r"(Z|[+-]\d{2}:?\d{2})\s*$")
_LEDGER = ("a list of change records (under entries, changes, deployments, events, results …, the file a list, or "
           "JSON lines), or one change record with a start time")
_ECS = "`aws ecs describe-services` JSON: services a list of service objects"
_ECS_SERVICE = ("an ECS service object (serviceName text; deployments a list of objects with id, taskDefinition "
                "text and createdAt a time)")
_TRAIL = "a CloudTrail log: Records a list of event objects (eventName text, eventTime a time), or JSON lines of them"
_TRAIL_RECORD = ("a CloudTrail event object (eventName, eventSource and eventID text; eventTime a time; "
                 "requestParameters and responseElements objects)")
_R53 = ("a Route 53 change: ChangeInfo an object (Id text, SubmittedAt a time, Comment text) and ChangeBatch an "
        "object whose Changes are a list")
_R53_CHANGE = ("a Route 53 change object (Action text; ResourceRecordSet an object with Name and Type text, "
               "ResourceRecords a list of {Value} objects)")
_CERTS = ("cert-manager objects as `kubectl get certificates,certificaterequests -o json` writes them: items a list "
          "of objects (or one Certificate or CertificateRequest object)")
_CERT = ("a cert-manager object (kind text; metadata an object with name text and creationTimestamp a time; spec an "
         "object with dnsNames a list of text and issuerRef an object)")
_MIGRATIONS = ("migration tool output: Alembic `Running upgrade A -> B` lines, `sqitch log` `Deploy <id>` blocks, "
               "or a Flyway `info` table")


def _time(value: Any, tz: timezone | None) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz or timezone.utc)
    got = parse_time(value, tz or timezone.utc)
    return got


def _env(value: Any, default: str) -> str:
    """An environment as written, folded onto the manifest's when one is a prefix of the other (`production`/`prod`)."""
    text = as_text(value).strip().lower() if value not in (None, "") else ""
    if not text:
        return default
    return default if default not in ("", "*") and same_environment(text, default) else text


def _versions(v: dict, summary: str) -> tuple[str | None, str | None]:
    vf = first(v, "version_from", "from_version", "previous_version", "versionFrom", "old_version", "from_rev")
    vt = first(v, "version_to", "to_version", "new_version", "versionTo", "version", "app_version", "image_tag",
               "revision", "to_rev")
    if (vf is None or vt is None) and (m := re.search(r"(\S+)\s*(?:->|→|=>)\s*(\S+)\s*$", summary)):
        vf, vt = vf or m.group(1), vt or m.group(2)
    return (as_text(vf) or None) if vf is not None else None, (as_text(vt) or None) if vt is not None else None


def _config_changes(v: dict) -> tuple[ConfigChange, ...]:
    raw = first(v, "config_changes", "changes", "settings_changed", "parameters", "diff")
    out: list[ConfigChange] = []
    if isinstance(raw, dict):
        for k, d in raw.items():
            if isinstance(d, dict) and ("from" in d or "to" in d or "old" in d or "new" in d):
                out.append(ConfigChange(key=str(k), from_=as_text(d.get("from", d.get("old"))),
                                        to=as_text(d.get("to", d.get("new")))))
    elif isinstance(raw, list):
        for d in raw:
            if isinstance(d, dict) and (k := first(d, "key", "name", "parameter", "setting")):
                out.append(ConfigChange(key=str(k), from_=as_text(first(d, "from", "old", "previous")),
                                        to=as_text(first(d, "to", "new", "value"))))
    return tuple(out)


_SNAPSHOT_PAIRS = (("preData", "data"), ("before", "after"), ("previous", "current"), ("oldValue", "newValue"))
"""A flag tool's audit entry that carries the flag's state before and after (Unleash `preData`/`data`)."""


def _leaves(value: Any, prefix: str = "") -> dict[str, str]:
    """Scalar leaves of nested objects by dotted path (lists and ids left out: they do not say what was set)."""
    if not isinstance(value, dict):
        return {}
    out: dict[str, str] = {}
    for key, x in value.items():
        path = f"{prefix}{key}"
        if isinstance(x, dict):
            out.update(_leaves(x, path + "."))
        elif not isinstance(x, list) and key not in ("id", "sortOrder") and x is not None:
            out[path] = as_text(x)
    return out


def _settings(leaves: dict[str, str], keys: list[str]) -> str:
    return ", ".join(f"{k.rsplit('.', 1)[-1]}={leaves.get(k, '')}" for k in keys)


def _before_after(v: dict) -> tuple[str | None, str | None]:
    """What a flag entry's before/after objects differ in, as `key=value` on each side (`rollout=10` →
    `rollout=100`), the last part of each key's path; (None, None) when it has no such pair or no difference."""
    for a, b in _SNAPSHOT_PAIRS:
        before, after = v.get(a), v.get(b)
        if not isinstance(before, dict) or not isinstance(after, dict):
            continue
        was, now = _leaves(before), _leaves(after)
        moved = [k for k in dict.fromkeys([*was, *now]) if was.get(k) != now.get(k)]
        if moved:
            return _settings(was, moved), _settings(now, moved)
    return None, None


def _flag(v: dict, summary: str, kind: str) -> FlagChange | None:
    name = first(v, *_FLAG)
    if name is None and kind.lower() == "flag":  # an audit entry of kind flag names it (LaunchDarkly)
        name = first(v, "name", "key")
    for word in ("feature", "flag"):
        if name is None and (m := re.search(rf"\b{word}:?\s+([\w.:-]+)", summary, re.I)):
            name = m.group(1)
    if name is None:
        return None
    old = first(v, "from", "old", "previous", "previous_value")
    new = first(v, "to", "new", "value", "enabled", "state")
    if old is None and new is None:
        old, new = _before_after(v)
    said = f"{kind} {first(v, 'titleVerb', 'action') or ''} {summary}"
    if new is None and re.search(r"enabled|turned on|\bon\b", said, re.I):
        new, old = True, False if old is None else old
    elif new is None and re.search(r"disabled|turned off|\boff\b", said, re.I):
        new, old = False, True if old is None else old
    return FlagChange(name=as_text(name), from_=as_text(old) if old is not None else None,
                      to=as_text(new) if new is not None else None)


def _migration_tool(v: dict, parent: Any) -> str | None:
    keys = set(v) | (set(parent) if isinstance(parent, dict) else set())
    if {"installedOnUTC", "installedOn", "installed_on", "flywayVersion", "installed_rank"} & keys:
        return "flyway"
    if {"DATEEXECUTED", "ORDEREXECUTED", "dateExecuted", "MD5SUM"} & keys:
        return "liquibase"
    return None


def ledger_change(rec: Rec, service: str, environment: str, tz: timezone | None) -> Change | Unparsed:
    """One record as a change (the field names above), or why it is not one."""
    v, parent = rec.value, rec.parent if isinstance(rec.parent, dict) else {}
    if not isinstance(v, dict):
        return Unparsed(start=rec.start, end=rec.end, reason="a change record (an object)")
    started = _time(first(v, *_START), tz)
    if started is None:
        return Unparsed(start=rec.start, end=rec.end, reason="a change record with a start time")
    done = _time(first(v, *_END), tz)
    done = done if done is not None and done >= started else None
    summary = as_text(scalar(v, *_SUMMARY) or "")
    kind = as_text(scalar(v, *_TYPE) or "")
    # the file's own subject (manifest) before what its header names (a migration history's `database`)
    svc_default = service if service not in ("", "*") else as_text(scalar(parent, *_SERVICE) or "")
    svc = (as_text(scalar(v, *_SERVICE) or "") or svc_default
           or as_text(scalar(v, *_PROJECT) or scalar(parent, *_PROJECT) or ""))
    targets = first(v, "targets", "hosts", "instances")
    targets = tuple(as_text(t) for t in targets) if isinstance(targets, list) else ()
    group = first(v, "target_group", "targetGroup", "fleet")
    if svc in ("", "*") and targets:
        svc = as_text(group) if group and len(targets) > 1 else targets[0]
    env = _env(scalar(v, *_ENV) or scalar(parent, *_ENV), environment)
    flag = _flag(v, summary, kind)
    tool = _migration_tool(v, parent)
    vf, vt = _versions(v, summary)
    cid = as_text(scalar(v, *_ID) or "")
    if tool == "flyway":
        ver = as_text(first(v, "version", "script") or "")
        ms = first(v, "executionTime", "execution_time")
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and 0 <= ms < 7 * 86400_000:
            # Flyway records a migration when it ends: `installedOn` less `executionTime` (ms) is its start
            started, done = started - timedelta(milliseconds=ms), started
        cid, kind, vt = f"{svc}-flyway-V{ver}", kind if kind in ("schema_migration",) else "schema_migration", ver
        if as_text(first(v, "state") or "").lower() not in ("", "success", "baseline"):
            summary = f"{summary} ({first(v, 'state')})".strip()
    elif tool == "liquibase":
        cid, kind, vt = f"{svc}-liquibase-{cid}", "schema_migration", cid
    elif flag is not None:
        kind = "feature_flag"
        cid = cid or f"{flag.name}@{started.isoformat()}"
    if not kind:
        kind = "config_push" if _config_changes(v) or first(v, "push_id", "pushId") else "deployment"
    if not cid:
        cid = f"{svc}@{started.isoformat()}"
    return Change(start=rec.start, end=rec.end, id=cid, type=kind, service=svc or "*", targets=targets,
                  environment=env, started_at=started, completed_at=done, version_from=vf if tool is None else None,
                  version_to=vt, summary=summary, config_changes=_config_changes(v) if flag is None else (), flag=flag,
                  rollback_of=as_text(first(v, "rollback_of", "rollbackOf", "reverts")) or None)


def parse_ledger(text: str, service: str, environment: str, tz: timezone | None = None
                 ) -> tuple[list[Change], list[Unparsed]]:
    out: list[Change] = []
    recs, broken = read_records(text, _LEDGER, one=lambda v: first(v, *_START) is not None,
                                loose=lambda v: first(v, *_START, *_ID, *_TYPE, *_SERVICE, *_PROJECT, *_FLAG) is not None)
    bad = [Unparsed(start=s, end=e, reason=r) for s, e, r in broken]
    for rec in recs:
        try:
            got = ledger_change(rec, service, environment, tz)
        except (ValueError, TypeError, OverflowError):  # a field no change takes (a time past year 1): kept as text
            got = Unparsed(start=rec.start, end=rec.end, reason="a change record with fields of the usual types")
        (out if isinstance(got, Change) else bad).append(got)  # type: ignore[arg-type]
    return out, bad


def _strip_env(name: str, environment: str) -> str:
    """`checkout-prod` → `checkout` (the file's environment, or any usual environment word)."""
    words = {environment.lower()} | {w for f in ENV_FAMILIES for w in f}
    for sep in ("-", "_", "."):
        head, _, tail = name.rpartition(sep)
        if head and tail.lower() in words:
            return head
    return name


def parse_ecs(text: str, service: str, environment: str, tz: timezone | None = None
              ) -> tuple[list[Change], list[Unparsed]]:
    """`aws ecs describe-services`: every deployment of every service."""
    doc = _json(text)
    if doc.kind != "object" or "services" not in doc.keys:
        raise ContentError("<document>", _ECS, doc.start)
    out: list[Change] = []
    bad: list[Unparsed] = []
    for i, s in enumerate(listed(doc.get("services"), "services", _ECS)):
        if s.kind != "object":
            raise ContentError(f"services[{i}]", _ECS_SERVICE, s.start)
        with expecting(f"services[{i}]", _ECS_SERVICE, s.start):
            sv = s.value
            name = as_text(sv.get("serviceName") or "")
            svc = _strip_env(name, environment) or service or "*"  # what the file says first
            for d in listed(s.get("deployments"), f"services[{i}].deployments", _ECS_SERVICE):
                v = d.value if isinstance(d.value, dict) else {}
                began = _time(v.get("createdAt"), tz)
                if began is None:
                    bad.append(Unparsed(start=d.start, end=d.end, reason="an ECS deployment with createdAt"))
                    continue
                state = as_text(v.get("rolloutState") or v.get("status") or "")
                done = _time(v.get("updatedAt"), tz) if state.upper() in ("COMPLETED", "PRIMARY", "") else None
                task = as_text(v.get("taskDefinition") or "")
                rev = task.rsplit(":", 1)[1] if ":" in task.rsplit("/", 1)[-1] else None
                cid = as_text(v.get("id") or "").rsplit("/", 1)[-1] or f"{svc}@ecs-{rev}"
                out.append(Change(start=d.start, end=d.end, id=cid, type="deployment", service=svc,
                                  environment=environment, started_at=began,
                                  completed_at=done if done and done >= began else None, version_to=rev, revision=rev,
                                  summary=f"{name} {as_text(v.get('status'))} {state} {task.rsplit('/', 1)[-1]}".strip()))
    return out, bad


def _json(text: str) -> jsonspan.J:
    """One JSON document; a syntax error names its offset (a ContentError: a change file's caller turns
    a ValueError into a vaguer message)."""
    try:
        return jsonspan.parse(text)
    except jsonspan.JSONSpanError as exc:
        raise bad_json(exc.pos) from None


_READ_ONLY = re.compile(r"^(Describe|Get|List|Lookup|Head|Check|Search|Batch(Get|Describe))")


def parse_cloudtrail(text: str, service: str, environment: str, tz: timezone | None = None
                     ) -> tuple[list[Change], list[Unparsed]]:
    """CloudTrail `Records[]`: every call that changes something (not Describe/Get/List …)."""
    out: list[Change] = []
    recs, broken = read_records(text, _TRAIL, keys=("Records",), one=lambda v: "eventName" in v or "eventTime" in v)
    bad = [Unparsed(start=s, end=e, reason=r) for s, e, r in broken]
    for rec in recs:
        with expecting(rec.where, _TRAIL_RECORD, rec.start):
            _trail_change(rec, service, environment, tz, out, bad)
    return out, bad


def _trail_change(rec: Rec, service: str, environment: str, tz: timezone | None,
                  out: list[Change], bad: list[Unparsed]) -> None:
    """One CloudTrail record: a change when the call changes something, unparsed when it is no call."""
    v = rec.value if isinstance(rec.value, dict) else {}
    name = as_text(v.get("eventName") or "")
    at = _time(v.get("eventTime"), tz)
    if not name or at is None:
        bad.append(Unparsed(start=rec.start, end=rec.end, reason="a CloudTrail record with eventName and eventTime"))
        return
    if _READ_ONLY.match(name) or v.get("readOnly") is True:
        return
    params = obj(v.get("requestParameters"))
    arn = next((as_text(x) for k, x in params.items() if k.lower().endswith("arn") and isinstance(x, str)), "")
    lb = re.search(r"/(?:app|net|gwy)/([^/]+)/", arn)
    target = lb.group(1) if lb else (re.split(r"[:/]", arn)[-1] if arn else None)
    blob = f"{name} {params}".lower()
    kind = ("certificate" if re.search(r"ssl|certificate|tls", blob) else "dns" if "route53" in
            as_text(v.get("eventSource")) else "infrastructure")
    diffs = _cloudtrail_diffs(v)
    stamp = at.astimezone(timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")
    cid = as_text(v.get("eventID") or "") or f"cloudtrail-{name}-{stamp}"
    out.append(Change(start=rec.start, end=rec.end, id=cid, type=kind, service=target or service,
                      target=target or None,
                      environment=environment, started_at=at, completed_at=at, config_changes=diffs,
                      summary=f"{as_text(v.get('eventSource'))} {name} {target or ''}".strip()))


def _cloudtrail_diffs(v: dict) -> tuple[ConfigChange, ...]:
    out = []
    resp = v.get("responseElements")
    for part in (resp.get(k) for k in resp) if isinstance(resp, dict) else []:
        for item in part if isinstance(part, list) else [part]:
            if not isinstance(item, dict):
                continue
            for k, new in item.items():
                prev = item.get("previous" + k[:1].upper() + k[1:])
                if prev is not None and not k.startswith("previous"):
                    out.append(ConfigChange(key=k, from_=as_text(prev), to=as_text(new)))
    return tuple(out)


def parse_route53(text: str, service: str, environment: str, tz: timezone | None = None
                  ) -> tuple[list[Change], list[Unparsed]]:
    """A Route 53 change: `ChangeInfo` (id, SubmittedAt, Comment) and `ChangeBatch.Changes[]`."""
    doc = _json(text)
    info_node = doc.get("ChangeInfo")
    if info_node is None:
        raise ContentError("<document>", _R53, doc.start)
    if info_node.kind != "object":
        raise ContentError("ChangeInfo", _R53, info_node.start)
    batch = doc.get("ChangeBatch")
    if batch is not None and batch.kind != "object" and not (batch.kind == "literal" and batch.raw is None):
        raise ContentError("ChangeBatch", _R53, batch.start)
    changes = listed(batch.get("Changes") if batch is not None else None, "ChangeBatch.Changes", _R53)
    info = info_node.value
    at = _time(info.get("SubmittedAt"), tz)
    if at is None:
        return [], [Unparsed(start=doc.start, end=doc.end, reason="a Route 53 change with ChangeInfo.SubmittedAt")]
    names: list[str] = []
    diffs: list[ConfigChange] = []
    for i, c in enumerate(changes):
        rrs = c.value.get("ResourceRecordSet") if c.kind == "object" else None
        if not isinstance(rrs, dict):
            raise ContentError(f"ChangeBatch.Changes[{i}]", _R53_CHANGE, c.start)
        with expecting(f"ChangeBatch.Changes[{i}]", _R53_CHANGE, c.start):
            if not rrs.get("Name"):
                continue
            name = as_text(rrs["Name"]).rstrip(".")
            names.append(name) if name not in names else None
            vals = ",".join(as_text(r.get("Value")) for r in rrs.get("ResourceRecords") or [] if isinstance(r, dict))
            ident = f"{name}[{rrs.get('SetIdentifier')}]" if rrs.get("SetIdentifier") else name
            diffs.append(ConfigChange(key=ident, from_=None, to=f"{c.value.get('Action', '')} {rrs.get('Type', '')} "
                                      f"{vals} weight={rrs.get('Weight', '')}".strip()))
    svc = names[0].split(".")[0] if names else service or "*"  # the record's own name first
    with expecting("ChangeInfo", _R53, info_node.start):
        cid = as_text(info.get("Id") or "").rsplit("/", 1)[-1] or f"{svc}@dns-{at.isoformat()}"
        return [Change(start=doc.start, end=doc.end, id=cid, type="dns", service=svc,
                       target=names[0] if names else None, targets=tuple(names), environment=environment,
                       started_at=at, completed_at=at, summary=as_text(info.get("Comment") or ""),
                       config_changes=tuple(diffs))], []


def parse_certificates(text: str, service: str, environment: str, tz: timezone | None = None
                       ) -> tuple[list[Change], list[Unparsed]]:
    """cert-manager objects: each CertificateRequest (else each Certificate's current revision) is a renewal."""
    doc = _json(text)
    kind = doc.get("kind")
    if doc.kind == "array":
        items, wheres = doc.items, [f"[{n}]" for n in range(len(doc.items))]
    elif "items" in doc.keys:
        items = listed(doc.get("items"), "items", _CERTS)
        wheres = [f"items[{n}]" for n in range(len(items))]
    elif kind is not None and kind.raw in ("Certificate", "CertificateRequest"):
        items, wheres = [doc], ["<document>"]
    else:
        raise ContentError("<document>", _CERTS, doc.start)
    certs: dict[str, tuple[str, ...]] = {}  # a Certificate's name: its DNS names
    for it, where in zip(items, wheres):
        if it.kind != "object":
            raise ContentError(where, _CERT, it.start)
        with expecting(where, _CERT, it.start):
            if it.value.get("kind") == "Certificate":
                certs[as_text((it.value.get("metadata") or {}).get("name"))] = _dns_names(it.value)
    out: list[Change] = []
    bad: list[Unparsed] = []

    def about(dns: tuple[str, ...] | None) -> str:
        return dns[0].split(".")[0] if dns else service or "*"  # the certificate's own name first

    requests = [(it, where) for it, where in zip(items, wheres) if it.value.get("kind") == "CertificateRequest"]
    for it, where in requests:
        with expecting(where, _CERT, it.start):
            v = it.value
            meta = v.get("metadata") or {}
            name = as_text(meta.get("name"))
            base = re.sub(r"-\d+$", "", name)
            dns = certs[base] if base in certs else next((c for n, c in certs.items() if name.startswith(n)), None)
            at = _time(meta.get("creationTimestamp"), tz)
            if at is None:
                bad.append(Unparsed(start=it.start, end=it.end, reason="a CertificateRequest with creationTimestamp"))
                continue
            issuer = as_text(((v.get("spec") or {}).get("issuerRef") or {}).get("name"))
            out.append(Change(start=it.start, end=it.end, id=name, type="certificate", service=about(dns),
                              target=dns[0] if dns else None, environment=_dns_env(list(dns or ()), environment),
                              started_at=at, completed_at=at, summary=f"certificate request {name} issued by {issuer}".strip(),
                              config_changes=(ConfigChange(key="issuer", from_=None, to=issuer),) if issuer else ()))
    if not requests:
        for it, where in zip(items, wheres):
            v = it.value
            if v.get("kind") != "Certificate":
                continue
            with expecting(where, _CERT, it.start):
                st = v.get("status") or {}
                at = _time(st.get("notBefore"), tz)
                if at is None:  # not issued yet: no change
                    continue
                name = as_text((v.get("metadata") or {}).get("name"))
                out.append(Change(start=it.start, end=it.end, id=f"{name}-{st.get('revision', '')}".rstrip("-"),
                                  type="certificate", service=about(_dns_names(v)), environment=environment,
                                  started_at=at, completed_at=at, summary=f"certificate {name} renewed"))
    return out, bad


def _dns_names(cert: dict) -> tuple[str, ...]:
    names = (cert.get("spec") or {}).get("dnsNames") or []
    if not isinstance(names, list):
        raise TypeError("dnsNames is a list")
    return tuple(as_text(n) for n in names)


def _dns_env(names: list, environment: str) -> str:
    """The environment a host name states (`web.prod.example`), when the file's is `*`."""
    if environment not in ("", "*"):
        return environment
    labels = [lab for n in names for lab in as_text(n).lower().split(".")]
    return next((lab for lab in labels for f in ENV_FAMILIES if lab in f), environment)


_ALEMBIC = re.compile(r"Running upgrade (?P<a>\S*) -> (?P<b>[\w]+),?\s*(?P<msg>.*)$", re.M)
_SQITCH = re.compile(r"^Deploy (?P<id>[0-9a-f]{7,40})\s*$")
_TOOL_TEXT = re.compile(r"alembic|sqitch|flyway|^On database |^\|?\s*Category\s*\|\s*Version\s*\||^Schema version:",
                        re.I | re.M)
"""What a migration tool's output says of itself: such text with no migration in it (nothing to upgrade) is no error."""


def parse_migrations(text: str, service: str, environment: str, tz: timezone | None = None
                     ) -> tuple[list[Change], list[Unparsed]]:
    """Migration tool text: Alembic upgrade lines, Sqitch `Deploy` blocks, a Flyway `info` table (a pending
    migration, without an installed-on time, is no change yet). Text of none of these tools is refused."""
    out: list[Change] = []
    bad: list[Unparsed] = []
    pos = 0
    block: dict[str, Any] | None = None
    lines = text.splitlines(keepends=True)
    for raw in lines + [""]:
        line = raw.rstrip("\r\n")
        start, end = pos, pos + len(line)
        pos += len(raw)
        if m := _ALEMBIC.search(line):
            at = _time(line, tz)
            done = next((_time(ln, tz) for ln in text[end:].splitlines() if f"{m.group('b')} done" in ln), None)
            out.append(Change(start=start, end=end, id=f"{service}-alembic-{m.group('b')}", type="schema_migration",
                              service=service, environment=environment, started_at=at, completed_at=done,
                              version_from=m.group("a") or None, version_to=m.group("b"), summary=m.group("msg").strip()))
            continue
        if (m := _SQITCH.match(line)) or not line.strip():
            if block is not None and block.get("at") is None:
                bad.append(Unparsed(start=block["start"], end=block["end"], reason="a sqitch Deploy block with a Date"))
            elif block is not None:
                out.append(Change(start=block["start"], end=block["end"], id=f"{service}-sqitch-{block['name']}",
                                  type="schema_migration", service=service, environment=environment,
                                  started_at=block["at"], completed_at=block["at"], version_to=block["name"],
                                  summary=f"sqitch deploy {block['name']} ({block['id'][:12]})"))
            block = {"id": m.group("id"), "start": start, "end": end, "name": m.group("id")[:12], "at": None} if m else None
            continue
        if block is not None:
            block["end"] = end
            if line.startswith("Name:"):
                block["name"] = line.split(":", 1)[1].strip()
            elif line.startswith("Date:"):
                block["at"] = _time(line.split(":", 1)[1].strip(), tz)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"\d+(\.\d+)*", cells[1] if len(cells) > 1 else ""):
            at = next((t for c in cells if (t := _time(c, tz)) is not None), None)
            if at is not None:
                out.append(Change(start=start, end=end, id=f"{service}-flyway-V{cells[1]}", type="schema_migration",
                                  service=service, environment=environment, started_at=at, completed_at=at,
                                  version_to=cells[1], summary=" ".join(cells[2:3])))
    if not out and not bad and text.strip() and not _TOOL_TEXT.search(text):
        raise ContentError("<document>", _MIGRATIONS, len(text) - len(text.lstrip()))
    return out, bad


def detect(text: str) -> str | None:
    """Which of this module's formats a file is, or None."""
    head = text.lstrip()[:6000]
    if head.startswith("{") and '"ChangeInfo"' in head and '"ChangeBatch"' in text:
        return "route53"
    if head.startswith("{") and '"Records"' in head and '"eventName"' in head:
        return "cloudtrail"
    if head.startswith("{") and '"serviceName"' in head and '"deployments"' in head:
        return "ecs"
    if '"cert-manager.io/' in head and ('"Certificate"' in head or '"CertificateRequest"' in head):
        return "certificates"
    if _ALEMBIC.search(head) or re.search(r"^Deploy [0-9a-f]{7,40}\s*$", head, re.M) or re.search(
            r"^\|?\s*Category\s*\|\s*Version\s*\|", head, re.M):
        return "migrations"
    recs = records(text)
    if not recs:
        return None
    dated = [r for r in recs if isinstance(r.value, dict) and first(r.value, *_START) is not None]
    if len(dated) < max(1, len(recs) // 2):
        return None
    sample = dated[0].value
    who = (first(sample, *_SERVICE, *_PROJECT, *_FLAG, "targets", "target_group")
           or first(dated[0].parent or {}, *_SERVICE, *_PROJECT)
           or _migration_tool(sample, dated[0].parent))
    what = (first(sample, *_ID, *_TYPE, *_FLAG, *_SUMMARY) is not None or _migration_tool(sample, dated[0].parent)
            or first(sample, "version_to", "to_version", "changes") is not None)
    return "ledger" if who is not None and what else None


PARSERS = {"ledger": parse_ledger, "ecs": parse_ecs, "cloudtrail": parse_cloudtrail, "route53": parse_route53,
           "certificates": parse_certificates, "migrations": parse_migrations}
