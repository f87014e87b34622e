"""Entities: names from the structured sources, config keys written as code, scope by environment."""

from __future__ import annotations

from graphs.knowledge import node_key
from tools.entities import EntityExtractor


def test_known_names_keep_their_kind_and_unknown_code_keys_are_config_keys():
    ex = EntityExtractor({"checkout": "service", "pay-client": "component", "p99_ms": "metric"})
    found = {m.name: m.kind for m in ex.mentions("checkout calls pay-client; `retry_budget` and p99_ms, order_id=7")}
    assert found == {"checkout": "service", "pay-client": "component", "retry_budget": "config_key",
                     "p99_ms": "metric", "order_id": "identifier"}


def test_mentions_carry_exact_offsets():
    ex = EntityExtractor({"pay-client": "component"})
    text = "prefix `pay-client.retry_budget` suffix"
    for m in ex.mentions(text, offset=100):
        assert text[m.start - 100:m.end - 100] == m.name


def test_the_case_formats_own_field_names_are_not_entities():
    ex = EntityExtractor({})
    assert ex.names("started_at: x\nconfig_changes: []\nversion_to: 1") == []


def test_the_same_name_in_another_environment_is_another_entity():
    assert node_key("retry_budget", "staging", "prod") != node_key("retry_budget", "prod", "prod")
    assert node_key("retry_budget", "*", "prod") == node_key("retry_budget", "prod", "prod")
