"""The entity registry: which names are entities, keys in any style, hosts and pods resolved."""

from __future__ import annotations

import pytest

from tools.entities import EntityExtractor, canon_key


def registry(**kw) -> EntityExtractor:
    return EntityExtractor(kw.pop("kinds", {"checkout": "service", "pay-client": "component", "orders-db": "database"}),
                           **kw)


@pytest.mark.parametrize("written", ["retry_timeout", "retryTimeout", "retry-timeout", "RETRY_TIMEOUT",
                                     "RetryTimeout", "retry.timeout"])
def test_a_key_is_one_key_whatever_style_it_is_written_in(written):
    assert canon_key(written) == "retry_timeout"
    reg = registry(keys=["retry_timeout"])
    found = reg.mentions(f"the client's {written} is 2000")
    assert [(m.name, m.kind, m.written) for m in found] == [("retry_timeout", "config_key", written)]


def test_a_dotted_key_is_known_by_its_leaf_and_spring_style_keys_work():
    reg = registry(keys=["spring.datasource.hikari.maximum-pool-size", "pay-client.retry_budget"])
    names = [m.name for m in reg.mentions("HikariPool: maximumPoolSize reached; retry_budget=3")]
    assert names == ["maximum_pool_size", "retry_budget"]


def test_a_one_word_key_counts_only_when_written_as_code_quoted_or_assigned():
    reg = registry(keys=["maxmemory", "db.host"])
    assert [m.name for m in reg.mentions("used memory > 'maxmemory'")] == ["maxmemory"]
    assert [m.name for m in reg.mentions("maxmemory=12gb")] == ["maxmemory"]
    assert reg.mentions("the host is slow and memory is full") == [], "ordinary words are not keys"


def test_mentions_carry_exact_offsets():
    reg = registry(keys=["retry_budget"])
    text = "prefix `pay-client.retry_budget` suffix calls checkout"
    for m in reg.mentions(text, offset=100):
        assert text[m.start - 100:m.end - 100] == m.written


def test_hosts_urls_and_dsns_resolve_to_the_entity_they_name():
    reg = registry(aliases={"payments.example.com": "checkout"})
    assert reg.entities_in_value("http://checkout.prod.svc.cluster.local:8080/v1") == ["checkout"]
    assert reg.entities_in_value("postgres://app@orders-db:5432/orders") == ["orders-db"]
    assert reg.entities_in_value("orders-db.internal:5432, checkout:80") == ["orders-db", "checkout"]
    assert reg.resolve("payments.example.com") == "checkout", "an alias is the catalog's word for it"
    assert reg.entities_in_value("not a host at all") == []


def test_a_pod_resolves_to_its_workload():
    reg = registry(kinds={"web": "workload"}, pods={"web-7f6d4c8b95-h8zkt": "web"})
    assert reg.resolve("web-7f6d4c8b95-h8zkt") == "web"
    assert reg.resolve("web-5b8f7c6d9-abcde") == "web", "the name shape alone says it"


def test_a_name_inside_another_word_is_not_a_mention():
    reg = registry()
    assert reg.mentions("precheckout and checkout-v2 and mycheckout") == []
