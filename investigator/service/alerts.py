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
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from investigator.init import _name, read_alert
from state import Frozen
from state.errors import CaseError, InvestigatorError


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


def fingerprint(labels: dict[str, str]) -> str:
    """A stable hash of an alert's label set (what Alertmanager's fingerprint identifies)."""
    return hashlib.sha256(json.dumps(sorted(labels.items())).encode()).hexdigest()[:16]


def _str_map(value: Any, field: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float, bool)) for v in value.values()):
        raise AlertError(field, "an object of label names to string values")
    return {str(k): str(v) for k, v in value.items()}


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
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise AlertError("body", "JSON: an Alertmanager webhook payload, an alert object or a list of alerts",
                         status=400) from None
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
        status = alert.get("status", "firing")
        if status not in ("firing", "resolved"):
            raise AlertError(f"{where}.status", "firing or resolved")
        if status == "resolved":
            resolved += 1
            continue
        given_start = alert.get("startsAt")
        one = {k: alert[k] for k in ("annotations", "endsAt", "generatorURL", "fingerprint") if k in alert}
        one.update(status="firing", labels=labels, startsAt=given_start or now.isoformat())
        rule, starts = _check_with_init({"alerts": [one]}, where)
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
