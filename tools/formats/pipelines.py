"""Changes as a deploy pipeline's execution history states them: `spinnaker`, the list of pipeline
executions Spinnaker's API returns (`GET /applications/{app}/pipelines`, or `/executions`), each
object `type: PIPELINE` with epoch-millisecond `startTime`/`endTime`, a `trigger` and `stages`.

An execution is a change when it got as far as a stage that changes what runs: a deploy (`deploy`,
`createServerGroup`, `deployManifest`, `patchManifest` …), a rollback (`rollbackServerGroup`,
`rollbackCluster`, `undoRolloutManifest`) or a resize, enable or disable of a server group. A pipeline
that only bakes, tests or waits for a judgement changed nothing; one that was cancelled or never started
either. A rollback is told by its stages' type, not by the pipeline's name, and undoes the execution
that created the server group it rolls back (`rollback_of`). The version deployed is the
trigger's image tag, else the tag of the image a stage names. Part of the change-file family of
`tools.formats.ledgers` (its conventions: every change keeps the offsets of its execution object).
"""

from __future__ import annotations

import re
from datetime import timezone

from state.telemetry import Change, Unparsed, as_text
from tools.formats.logs import time_field
from tools.formats.records import obj, read_records

_SPINNAKER = "Spinnaker pipeline executions: a list of objects with type PIPELINE, startTime (epoch ms) and stages"
_ROLLBACK = re.compile(r"^(rollback|undoRollout)", re.I)
_CHANGES = re.compile(r"^(deploy|createServerGroup|cloneServerGroup|patchManifest|scaleManifest|resize|enable|disable|"
                      r"destroyServerGroup|rollback|undoRollout)", re.I)
_NOT_RUN = frozenset({"NOT_STARTED", "CANCELED", "SKIPPED", "BUFFERED"})


def is_spinnaker(text: str) -> bool:
    head = text.lstrip()[:4000]
    return head.startswith("[") and '"PIPELINE"' in head and '"stages"' in text and '"startTime"' in text


def parse_spinnaker(text: str, service: str, environment: str, tz: timezone | None = None
                    ) -> tuple[list[Change], list[Unparsed]]:
    """Every execution that ran a stage changing what runs: a `deployment`, or a `rollback`."""
    recs, broken = read_records(text, _SPINNAKER, keys=("executions", "items"),
                                one=lambda v: as_text(v.get("type")).upper() == "PIPELINE")
    out: list[Change] = []
    bad = [Unparsed(start=s, end=e, reason=r) for s, e, r in broken]
    created: dict[str, str] = {}  # server group -> the execution whose deploy created it
    for rec in recs:
        v = rec.value if isinstance(rec.value, dict) else {}
        began = time_field(v.get("startTime") or v.get("buildTime"), tz)
        if began is None:
            if as_text(v.get("status")).upper() not in _NOT_RUN:
                bad.append(Unparsed(start=rec.start, end=rec.end, reason="a Spinnaker execution with startTime"))
            continue
        stages = [obj(s) for s in v.get("stages") or [] if isinstance(s, dict)]
        ran = [s for s in stages if _CHANGES.match(as_text(s.get("type"))) and
               as_text(s.get("status")).upper() not in _NOT_RUN]
        if not ran or v.get("canceled") is True and not any(s.get("endTime") for s in ran):
            continue
        ended = time_field(v.get("endTime"), tz)
        trigger = obj(v.get("trigger"))
        rollback = any(_ROLLBACK.match(as_text(s.get("type"))) for s in ran)
        version = as_text(trigger.get("tag") or "") or _image_tag(stages)
        reason = as_text(obj(trigger.get("parameters")).get("reason") or "")
        cid = as_text(v.get("id") or "") or f"{service}@spinnaker-{int(began.timestamp())}"
        groups = [as_text(obj(s.get("context")).get("serverGroupName") or "") for s in ran]
        if not rollback:
            created.update((g, cid) for g in groups if g)
        out.append(Change(
            start=rec.start, end=rec.end, id=cid, type="rollback" if rollback else "deployment", service=service,
            environment=environment, started_at=began, completed_at=ended if ended and ended >= began else None,
            version_to=version or None, rollback_of=next((g for g in groups if g), None) if rollback else None,
            summary=" ".join(x for x in (as_text(v.get("name")), as_text(v.get("status")), version, reason) if x)))
    # a rollback names the server group it rolls back: the execution that created that group is what it undoes
    return [c.model_copy(update={"rollback_of": created.get(c.rollback_of)}) if c.rollback_of else c for c in out], bad


def _image_tag(stages: list[dict]) -> str:
    """The tag of the first image a stage's context names (`…/repo:4.30.2` → `4.30.2`)."""
    for s in stages:
        image = as_text(obj(s.get("context")).get("imageId") or "")
        tail = image.rsplit("/", 1)[-1]
        if ":" in tail:
            return tail.rsplit(":", 1)[1]
    return ""
