"""Change sources with many records a file, or one record in a tool's own shape (`kind: change`).

- `ledger`: a deploy ledger or pipeline history (`entries:`/`changes:`/`deployments:` …, a list,
  or JSON lines), a deployment or config-push record as a tool exports it (`deployment_id`,
  `push_id`, `change_type`, `applied_at`, `changes: {key: {from, to}}`), a flag audit in a vendor
  shape (Unleash `events[]` with `featureName`, Flagsmith `results[]` with `log`, a YAML `events:`
  list of toggles), a migration history (Flyway `info` JSON, Liquibase `DATABASECHANGELOG` rows).
  Fields are read by their usual names (`started_at`/`createdAt`/`at`…, `service`/`app`/`project`…).
- `ecs`, `cloudtrail`, `route53`, `certificates`: what a control plane exports (ECS deployments,
  CloudTrail calls, Route 53 change batches, cert-manager issuances), parsed in
  `tools.formats.controlplane`; detected here and listed in `PARSERS` with the others.
- `spinnaker`: a deploy pipeline's executions (`type: PIPELINE`, epoch-ms times, stages), parsed in
  `tools.formats.pipelines`.
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
from collections.abc import Callable
from datetime import timedelta, timezone
from typing import Any
from urllib.parse import urlsplit

from state.change import ConfigChange, FlagChange
from state.telemetry import Change, Unparsed, as_text
from tools.formats.controlplane import parse_certificates, parse_cloudtrail, parse_ecs, parse_route53
from tools.formats.pipelines import is_spinnaker, parse_spinnaker
from tools.formats.logs import time_field
from tools.formats.records import Rec, first, read_records, records, same_environment, scalar, stated_environment
from tools.formats.shape import ContentError

FORMATS = ("ledger", "ecs", "cloudtrail", "route53", "certificates", "migrations")

_START = ("started_at", "startedAt", "start", "started", "start_time", "submitted_at", "submittedAt", "deployStartedAt",
          "created_at", "createdAt", "created_date", "creationTimestamp", "at", "ts", "time", "timestamp", "date",
          "eventTime", "deployed_at", "deployedAt", "applied_at", "appliedAt", "executed_at", "installedOnUTC",
          "installed_on", "installedOn", "DATEEXECUTED", "dateExecuted", "when", "StartMs", "startMs", "start_ms")
_END = ("completed_at", "completedAt", "finished_at", "finishedAt", "ended_at", "end_time", "applied_at", "appliedAt",
        "deployed_at", "deployedAt", "updatedAt")
_ID = ("id", "_id", "change_id", "changeId", "deployment_id", "deploymentId", "push_id", "pushId", "ticket", "ID", "eventID",
       "uid", "key", "UserTaskId", "userTaskId", "task_id", "taskId")
_TYPE = ("type", "change_type", "changeType", "kind", "action", "category", "event_type", "eventType")
_SERVICE = ("service", "service_name", "serviceName", "app", "application", "component", "workload", "database",
            "target_service", "target")
_PROJECT = ("project", "project.name")
"""A grouping a tool files records under (a flag tool's or a repository's project): the subject only when
the manifest names none — a file listed for one service is about that service, whatever project holds it."""
_ENV = ("environment", "env", "environment.name", "stage", "namespace")
_SUMMARY = ("summary", "description", "note", "comment", "reason", "log", "message", "title", "DESCRIPTION")
_FLAG = ("flag", "flagKey", "featureName", "feature", "flag_name", "flagName", "feature_flag")
_CALL = ("RequestURL", "requestURL", "requestUrl", "request_url", "request_uri", "requestURI", "request", "endpoint", "url",
         "uri")
_METHOD = ("method", "httpMethod", "http_method", "request_method", "RequestMethod", "verb")
_HTTP = re.compile(r"^\s*(GET|HEAD|OPTIONS|POST|PUT|PATCH|DELETE)\s+(\S+)", re.I)
_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"})
_READS = frozenset({"GET", "HEAD", "OPTIONS"})
_DRY_RUN = re.compile(r"[?&;](?:dry[_-]?run|dryrun)=(?:true|1|yes)(?:&|;|$)", re.I)
"""An API call's record (an admin API's task list, an audit of requests): a read or a dry run changes nothing."""
_TZ_ANY = re.compile(r"(Z|[+-]\d{2}:?\d{2})\s*$")
_LEDGER = ("a list of change records (under entries, changes, deployments, events, results …, the file a list, or "
           "JSON lines), or one change record with a start time")
_MIGRATIONS = ("migration tool output: Alembic `Running upgrade A -> B` lines, `sqitch log` `Deploy <id>` blocks, "
               "or a Flyway `info` table")


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
    keys = {str(key).casefold() for key in (*v, *(parent if isinstance(parent, dict) else ()))}  # columns in any case
    if {"installedonutc", "installedon", "installed_on", "flywayversion", "installed_rank"} & keys:
        return "flyway"
    if {"dateexecuted", "orderexecuted", "md5sum"} & keys:
        return "liquibase"
    return None


def _call(v: dict) -> tuple[str, str] | None:
    """(METHOD, target) of a record of an HTTP API call: a method field, or a method leading its URL."""
    said = as_text(scalar(v, *_CALL) or "").strip()
    m = _HTTP.match(said)
    method = as_text(scalar(v, *_METHOD) or "").strip().upper() or (m.group(1).upper() if m else "")
    if not said or method not in _METHODS:
        return None
    return method, m.group(2) if m else said


def _task_call(v: dict) -> tuple[str, str] | None:
    """An admin API's record of a call made to it (a task with an id), not a served request of an access
    log (a numeric HTTP status): a change record whose subject is the file's service."""
    status = scalar(v, "status", "Status", "status_code", "statusCode", "response_code")
    if first(v, *_ID) is None or isinstance(status, int) or re.fullmatch(r"[1-5]\d\d", as_text(status or "")):
        return None
    return _call(v)


def ledger_change(rec: Rec, service: str, environment: str, tz: timezone | None,
                  known: Callable[[str], bool] | None = None) -> Change | Unparsed | None:
    """One record as a change (the field names above), or why it is not one; None for a record of an API
    call that changes nothing (a read, a dry run). `known` says whether the profile knows a change type:
    a call with no type field is of the type its path's words name, when they name one."""
    v, parent = rec.value, rec.parent if isinstance(rec.parent, dict) else {}
    if not isinstance(v, dict):
        return Unparsed(start=rec.start, end=rec.end, reason="a change record (an object)")
    started = time_field(first(v, *_START), tz)
    if started is None:
        return Unparsed(start=rec.start, end=rec.end, reason="a change record with a start time")
    call = _call(v)
    if call is not None and (call[0] in _READS or _DRY_RUN.search(call[1])):
        return None
    done = time_field(first(v, *_END), tz)
    done = done if done is not None and done >= started else None
    summary = as_text(scalar(v, *_SUMMARY) or "") or (f"{call[0]} {call[1]}" if call else "")
    kind = as_text(scalar(v, *_TYPE) or "")
    if not kind and call is not None and known is not None:
        words = "_".join(re.findall(r"[A-Za-z]+", urlsplit(call[1]).path))
        kind = words if words and known(words) else ""
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
    if env in ("", "*"):  # no field says it: the record's own words may (a title, a parameter, a resource path)
        env = stated_environment(v) or env
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


def parse_ledger(text: str, service: str, environment: str, tz: timezone | None = None,
                 known: Callable[[str], bool] | None = None) -> tuple[list[Change], list[Unparsed]]:
    out: list[Change] = []
    recs, broken = read_records(text, _LEDGER, one=lambda v: first(v, *_START) is not None,
                                loose=lambda v: first(v, *_START, *_ID, *_TYPE, *_SERVICE, *_PROJECT, *_FLAG) is not None)
    bad = [Unparsed(start=s, end=e, reason=r) for s, e, r in broken]
    for rec in recs:
        try:
            got = ledger_change(rec, service, environment, tz, known)
        except (ValueError, TypeError, OverflowError):  # a field no change takes (a time past year 1): kept as text
            got = Unparsed(start=rec.start, end=rec.end, reason="a change record with fields of the usual types")
        if got is not None:
            (out if isinstance(got, Change) else bad).append(got)  # type: ignore[arg-type]
    return out, bad


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
            at = time_field(line, tz)
            done = next((time_field(ln, tz) for ln in text[end:].splitlines() if f"{m.group('b')} done" in ln), None)
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
                block["at"] = time_field(line.split(":", 1)[1].strip(), tz)
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and re.fullmatch(r"\d+(\.\d+)*", cells[1] if len(cells) > 1 else ""):
            at = next((t for c in cells if (t := time_field(c, tz)) is not None), None)
            if at is not None:
                out.append(Change(start=start, end=end, id=f"{service}-flyway-V{cells[1]}", type="schema_migration",
                                  service=service, environment=environment, started_at=at, completed_at=at,
                                  version_to=cells[1], summary=" ".join(cells[2:3])))
    if not out and not bad and text.strip() and not _TOOL_TEXT.search(text):
        raise ContentError("<document>", _MIGRATIONS, len(text) - len(text.lstrip()))
    return out, bad


def own_shape(text: str) -> str | None:
    """Which of the family's tool shapes a change file is (by its opening, without reading its records),
    or None: a file declared `ledger` in one of them is read by that shape's reader."""
    head = text.lstrip()[:6000]
    if head.startswith("{") and '"ChangeInfo"' in head and '"ChangeBatch"' in text:
        return "route53"
    if head.startswith("{") and '"Records"' in head and '"eventName"' in head:
        return "cloudtrail"
    if head.startswith("{") and '"serviceName"' in head and '"deployments"' in head:
        return "ecs"
    if is_spinnaker(text):
        return "spinnaker"
    if '"cert-manager.io/' in head and ('"Certificate"' in head or '"CertificateRequest"' in head):
        return "certificates"
    if _ALEMBIC.search(head) or re.search(r"^Deploy [0-9a-f]{7,40}\s*$", head, re.M) or re.search(
            r"^\|?\s*Category\s*\|\s*Version\s*\|", head, re.M):
        return "migrations"
    return None


def detect(text: str) -> str | None:
    """Which of this module's formats a file is, or None."""
    own = own_shape(text)
    if own is not None:
        return own
    recs = records(text)
    if not recs:
        return None
    dated = [r for r in recs if isinstance(r.value, dict) and first(r.value, *_START) is not None]
    if len(dated) < max(1, len(recs) // 2):
        return None
    sample = dated[0].value
    who = (first(sample, *_SERVICE, *_PROJECT, *_FLAG, "targets", "target_group")
           or first(dated[0].parent or {}, *_SERVICE, *_PROJECT)
           or _migration_tool(sample, dated[0].parent)
           or _task_call(sample))
    what = (first(sample, *_ID, *_TYPE, *_FLAG, *_SUMMARY) is not None or _migration_tool(sample, dated[0].parent)
            or first(sample, "version_to", "to_version", "changes") is not None)
    return "ledger" if who is not None and what else None


PARSERS = {"ledger": parse_ledger, "ecs": parse_ecs, "cloudtrail": parse_cloudtrail, "route53": parse_route53,
           "certificates": parse_certificates, "migrations": parse_migrations, "spinnaker": parse_spinnaker}
