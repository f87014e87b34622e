"""One change model: a change file, a parsed change and a change fact compose the parts in `state.change`."""

from __future__ import annotations

from datetime import UTC, datetime

from state.change import ChangeBody, ChangeHead, ConfigChange, Revision, restated
from state.facts import ChangeFact
from state.sources import ChangeRecord
from state.telemetry import Change

BODY = ["target", "targets", "environment", "started_at", "completed_at", "version_from", "version_to", "summary",
        "config_changes", "dependency_changes", "flag", "rollback_of"]


def test_each_account_keeps_its_field_order():
    """Run stores hold facts as JSON and the corpus fingerprint hashes parsed changes: the order is stored form."""
    assert list(ChangeRecord.model_fields) == ["id", "type", "service", *BODY]
    assert list(Change.model_fields) == ["start", "end", "id", "type", "service", *BODY, "revision", "template_hash"]
    assert list(ChangeFact.model_fields) == ["kind", "id", "type", "entity", *BODY, "revision", "template_hash",
                                             "dated_by", "at"]


def test_a_shared_field_is_declared_once():
    shared = set(ChangeHead.model_fields) | set(ChangeBody.model_fields) | set(Revision.model_fields)
    assert not shared & set(Change.__annotations__) and not shared & set(ChangeFact.__annotations__)
    assert shared & set(ChangeRecord.__annotations__) == {"started_at", "completed_at"}, \
        "a change file's times alone are narrowed (zoned; a start is required)"


def test_a_record_restated_as_a_parsed_change_carries_its_values_not_its_extra_keys():
    t = datetime(2026, 4, 29, 2, 22, tzinfo=UTC)
    record = ChangeRecord.model_validate({"id": 42, "type": "config_push", "service": "web", "environment": "prod",
                                          "started_at": t, "config_changes": [{"key": "pool", "from": 5, "to": 2}],
                                          "ticket": "OPS-1"})
    change = restated(record, Change, start=3, end=90)
    assert (change.id, change.service, change.started_at, change.at, change.start) == ("42", "web", t, t, 3)
    assert change.config_changes == (ConfigChange(key="pool", from_=5, to=2),)
    assert change.config_changes[0] is record.config_changes[0], "the values themselves, not copies"


def test_a_parsed_change_restated_as_a_fact_keeps_its_revision_and_takes_the_resolved_entity():
    change = Change(start=0, end=9, id="web@rev3", type="deployment", service="web-7d9f", environment="prod",
                    revision="3", template_hash="7d9f")
    fact = restated(change, ChangeFact, entity="web")
    assert (fact.kind, fact.entity, fact.revision, fact.template_hash, fact.dated_by, fact.effective) == \
        ("change", "web", "3", "7d9f", "", None)
