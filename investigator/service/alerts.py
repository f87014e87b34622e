"""Webhook bodies -> one value per alert, with the key that makes a repeat a repeat.

Accepted bodies (JSON):
  - an Alertmanager webhook payload (`version`, `groupKey`, `status`, `commonLabels`, `alerts[]`
    with `labels`, `annotations`, `startsAt`, `endsAt`, `generatorURL`, `fingerprint`);
  - a plain alert object, or a list of them, in the same alert shape (as Alertmanager's own
    `POST /api/v2/alerts` takes them): `labels` required, the rest optional.

The dedupe key of an alert is its fingerprint (Alertmanager's, else a hash of its sorted labels)
and, when the sender gave one, its `startsAt`: Alertmanager repeats a notification with the same
both, and a new firing after a resolution has a new `startsAt`. With `dedupe: group` the key is the
notification's group key instead (one investigation per group). Resolved alerts are not investigated.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from investigator.init import _name, fingerprint, read_alert
from tools.formats.logs import parse_time
from state import Frozen
from state.errors import CaseError, InvestigatorError


MAX_DEPTH = 32
"""JSON nesting a body may have: an Alertmanager payload is 4 deep (alerts[].labels.x)."""
MAX_ITEMS = 1000
"""Entries one JSON array or object of a body may hold (alerts in a notification, labels of an alert)."""
MAX_TEXT = 65536
"""Characters one JSON string of a body may hold."""
EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)
"""No alert started before this: Alertmanager writes 0001-01-01T00:00:00Z for a time it does not know."""
SKEW = timedelta(hours=1)
"""How far in the future a start may be (clocks disagree); later is a wrong clock or a made-up alert."""
_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(rb"[\[\]{}]")


class AlertError(InvestigatorError):
    """A webhook body that is not an alert the service can investigate (HTTP 4xx, CLI exit 2)."""

    exit_code = 2

    def __init__(self, field: str, expected: str, status: int = 422) -> None:
        self.field, self.expected, self.status = field, expected, status
        super().__init__(f"{field}: {expected}")


class AlertIn(Frozen):
    key: str
    """The dedupe key: `fp:<fingerprint>[@<startsAt>]` or `group:<groupKey>`."""
    run_id: str
    fingerprint: str
    group_key: str = ""
    rule: str
    labels: dict[str, str]
    starts_at: datetime
    payload: str
    """A one-alert Alertmanager payload (JSON) that `investigator init` turns into a case."""


class Parsed(Frozen):
    alerts: tuple[AlertIn, ...]
    resolved: int = 0
    """Resolved alerts in the body: acknowledged, not investigated."""


def _str_map(value: Any, field: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float, bool)) for v in value.values()):
        raise AlertError(field, "an object of label names to string values")
    out = {str(k): str(v) for k, v in value.items()}
    for k, v in out.items():
        if _BAD_TEXT.search(k) or _BAD_TEXT.search(v):
            raise AlertError(f"{field}.{k}" if not _BAD_TEXT.search(k) else field,
                             "text without NUL characters or unpaired surrogates")
    return out


def check_nesting(body: bytes, limit: int = MAX_DEPTH) -> None:
    """A body nested deeper than `limit` is refused before it is parsed (a deep one would exhaust
    the parser's recursion); strings are skipped, so brackets inside them do not count."""
    depth = 0
    for m in _BRACKETS.finditer(_STRINGS.sub(b'""', body)):
        depth += 1 if m.group() in (b"[", b"{") else -1
        if depth > limit:
            raise AlertError("body", f"JSON nested at most {limit} deep (an Alertmanager payload is 4)")


def _check_width(value: Any, where: str) -> None:
    """Every array and object of a body within MAX_ITEMS entries, every string within MAX_TEXT."""
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise AlertError(where or "body", f"text of at most {MAX_TEXT} characters (got {len(value)})")
    elif isinstance(value, (list, dict)):
        if len(value) > MAX_ITEMS:
            raise AlertError(where or "body", f"at most {MAX_ITEMS} entries (got {len(value)})")
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for k, v in items:
            _check_width(k, where)
            inner = f"{where}[{k}]" if isinstance(value, list) else f"{where}.{k}" if where else str(k)
            _check_width(v, inner[:200])


def _check_times(alert: dict[str, Any], where: str, starts: datetime, now: datetime) -> None:
    """A start that no alert has (before 2000, past the clock's skew) and an end before the start are refused."""
    if starts < EARLIEST:
        raise AlertError(f"{where}.startsAt", "a start time on or after 2000-01-01 (0001-01-01 is Alertmanager's "
                         "zero time: the alert has no start)")
    if starts > now + SKEW:
        raise AlertError(f"{where}.startsAt", f"a start time no later than an hour from now ({now:%Y-%m-%dT%H:%MZ})")
    if alert.get("endsAt") in (None, ""):
        return
    ends = parse_time(alert["endsAt"], None) if isinstance(alert["endsAt"], str) else None
    if ends is None:
        raise AlertError(f"{where}.endsAt", "a timestamp with a zone (0001-01-01T00:00:00Z while firing)")
    if ends >= EARLIEST and ends < starts:
        raise AlertError(f"{where}.endsAt", "a time after startsAt (or 0001-01-01T00:00:00Z while firing)")


def _check_with_init(payload: dict[str, Any], where: str) -> tuple[str, datetime]:
    """What `investigator init` will read from the alert (rule, start): its errors name the field."""
    with tempfile.TemporaryDirectory(prefix="inv-alert-") as tmp:
        path = Path(tmp) / "alert.json"
        path.write_text(json.dumps(payload))
        try:
            info = read_alert(path)
        except CaseError as exc:
            raise AlertError(where + exc.field.removeprefix("alerts[0]"), exc.expected) from None
    return info.rule, info.fired_at


def parse_body(body: bytes | str, *, dedupe: str = "fingerprint", now: datetime | None = None) -> Parsed:
    """Every firing alert of a webhook body, validated the way `init` will read it."""
    raw = body.encode("utf-8", "surrogatepass") if isinstance(body, str) else body
    check_nesting(raw)
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise AlertError("body", "JSON: an Alertmanager webhook payload, an alert object or a list of alerts",
                         status=400) from None
    _check_width(data, "")
    now = now or datetime.now(timezone.utc)
    group_key, common, prefix = "", {}, ""
    if isinstance(data, dict) and "alerts" in data:
        alerts, prefix = data["alerts"], "alerts"
        if not isinstance(alerts, list) or not alerts:
            raise AlertError("alerts", "a non-empty list of alert objects (Alertmanager webhook format)")
        group_key = data.get("groupKey") or ""
        if not isinstance(group_key, str):
            raise AlertError("groupKey", "a string")
        common = _str_map(data.get("commonLabels"), "commonLabels")
    elif isinstance(data, dict):
        alerts = [data]
    elif isinstance(data, list) and data:
        alerts = data
    else:
        raise AlertError("body", "an Alertmanager webhook payload, an alert object or a non-empty list of alerts")
    out: list[AlertIn] = []
    resolved = 0
    seen: set[str] = set()
    for i, alert in enumerate(alerts):
        where = f"{prefix or 'body'}[{i}]" if prefix or isinstance(data, list) else "alert"
        if not isinstance(alert, dict):
            raise AlertError(where, "an alert object with labels")
        labels = {**common, **_str_map(alert.get("labels"), f"{where}.labels")}
        if not labels:
            raise AlertError(f"{where}.labels", "at least one label (alertname, service, environment, …)")
        _str_map(alert.get("annotations"), f"{where}.annotations")  # text init writes into the case
        status = alert.get("status", "firing")
        if status not in ("firing", "resolved"):
            raise AlertError(f"{where}.status", "firing or resolved")
        if status == "resolved":
            resolved += 1
            continue
        given_start = alert.get("startsAt")
        if given_start is not None and (not isinstance(given_start, str) or not given_start.strip()):
            raise AlertError(f"{where}.startsAt", "a timestamp with a zone, as text (or no startsAt: the time it arrives)")
        if alert.get("fingerprint") is not None and not isinstance(alert["fingerprint"], str):
            raise AlertError(f"{where}.fingerprint", "text (Alertmanager's fingerprint of the label set)")
        one = {k: alert[k] for k in ("annotations", "endsAt", "generatorURL", "fingerprint") if k in alert}
        one.update(status="firing", labels=labels, startsAt=given_start or now.isoformat())
        rule, starts = _check_with_init({"alerts": [one]}, where)
        _check_times(alert, where, starts, now)
        fp = str(alert.get("fingerprint") or fingerprint(labels))
        if dedupe == "group" and group_key:
            key = f"group:{group_key}"
        else:
            key = f"fp:{fp}" + (f"@{starts.astimezone(timezone.utc).isoformat()}" if given_start else "")
        if key in seen:  # the same alert twice in one body
            continue
        seen.add(key)
        digest = hashlib.sha256(key.encode()).hexdigest()[:10]
        out.append(AlertIn(key=key, run_id=_name(f"{rule}-{starts:%Y%m%dT%H%M}-{digest}"), fingerprint=fp,
                           group_key=group_key, rule=rule, labels=labels, starts_at=starts,
                           payload=json.dumps({"groupKey": group_key, "alerts": [one]})))
    return Parsed(alerts=tuple(out), resolved=resolved)
