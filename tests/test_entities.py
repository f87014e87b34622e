"""The entity registry: which names are entities, keys in any style, hosts and pods resolved."""

from __future__ import annotations

import pytest

from state.keys import canon_key
from tools.entities import EntityExtractor


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


def _config_doc(tmp_path, body: str, name: str = "web.env", fmt: str = "env"):
    from state.sources import SourceEntry
    from tools.corpus import ParseContext, load_source
    from tools.profile import default_profile

    (tmp_path / name).write_text(body)
    entry = SourceEntry(id="web-config", path=name, kind="config", format=fmt, environment="prod", service="web",
                        groups=("ops",))
    return load_source(tmp_path, entry, ParseContext(default_profile()))


def test_the_host_of_a_url_in_a_config_value_is_a_domain_entity_no_other_source_needs_to_declare(tmp_path):
    """deciding.md §1: hosts in URLs are domains; the config then states the hop to it."""
    from tools import derive_relations
    from tools.profile import default_profile

    doc = _config_doc(tmp_path, "PARTNER_URL=https://API.Vendor.example/v2\nCACHE=redis://cache:6379\n"
                                "LOCAL=http://127.0.0.1:8080/x\nWEIGHTS=1,2,3\n")
    reg = EntityExtractor.from_sources([doc], default_profile())
    assert reg.kind_of("api.vendor.example") == "domain"
    assert reg.resolve("127.0.0.1") is None, "an address is no entity"
    hops = [(r.source, r.target) for r in derive_relations.config_relations(doc, reg)]
    assert ("web", "api.vendor.example") in hops


def test_the_url_a_log_line_calls_is_a_domain_and_the_line_states_the_hop_to_it(tmp_path):
    """deciding.md §1: `call https://h/… failed` names the host the writer depends on, as a config
    value would; a URL the line merely mentions (no relation phrase before it) makes no entity."""
    from state.sources import SourceEntry
    from tools import derive_relations
    from tools.corpus import ParseContext, load_source
    from tools.profile import default_profile

    (tmp_path / "billing.log").write_text(
        "2026-05-05T19:55:11Z ERROR billing call https://Pay.Partner.example/v1/charges failed: x509: certificate has expired\n"
        "2026-05-05T19:56:11Z INFO billing see https://wiki.example.org/runbook for the procedure\n"
        "2026-05-05T19:57:11Z ERROR billing calling http://10.0.0.7:8080/x failed: connection refused\n")
    doc = load_source(tmp_path, SourceEntry(id="billing-log", path="billing.log", kind="log", format="plain",
                                            environment="prod", service="billing", groups=("ops",)),
                      ParseContext(default_profile()))
    reg = EntityExtractor.from_sources([doc], default_profile())
    assert reg.kind_of("pay.partner.example") == "domain"
    assert reg.resolve("wiki.example.org") is None, "a link in a message is no dependency"
    assert reg.resolve("10.0.0.7") is None, "an address is no entity"
    hops = [(r.source, r.target) for r in derive_relations.log_relations(doc, reg, default_profile())]
    assert hops == [("billing", "pay.partner.example")]


def test_a_url_host_that_a_known_entity_covers_is_that_entity_not_a_new_domain(tmp_path):
    from state.sources import SourceEntry
    from tools.corpus import ParseContext, load_source
    from tools.profile import default_profile

    doc = _config_doc(tmp_path, "INVENTORY_URL=http://inventory.svc.cluster.local:8080/v1\n")
    (tmp_path / "catalog.yaml").write_text("services:\n  - name: inventory\n    kind: service\n")
    catalog = load_source(tmp_path, SourceEntry(id="catalog", path="catalog.yaml", kind="catalog", environment="prod",
                                                groups=("ops",)), ParseContext(default_profile()))
    reg = EntityExtractor.from_sources([doc, catalog], default_profile())
    assert reg.resolve("inventory.svc.cluster.local") == "inventory"
    assert "inventory.svc.cluster.local" not in reg.kinds


def test_an_abbreviated_spelling_of_a_known_service_resolves_to_it():
    from types import SimpleNamespace

    from tools.entities import abbreviated_variants

    reg = EntityExtractor({"order-service": "service", "pricing-service": "service", "processing-service": "service"})
    docs = [SimpleNamespace(text="order-svc timed out calling prcg-svc; order-svc-v2 was fine")]
    # `prcg-svc` could be pricing or processing: left alone; a longer name may be another host
    assert abbreviated_variants(reg, docs) == {"order-svc": "order-service"}
    folded = EntityExtractor(reg.kinds, abbreviated_variants(reg, docs))
    assert folded.names("order-svc timed out") == ["order-service"]


def test_a_service_the_manifest_lists_for_a_source_the_principal_cannot_read_is_a_name_prose_can_mention():
    """Only its name is known (the report names a denied source and its service anyway); the runbook that
    says calls go through it then states a hop to it."""
    reg = EntityExtractor.from_sources([], listed=["fw-egress-1"])
    assert reg.resolve("fw-egress-1") == "fw-egress-1"
    assert [m.name for m in reg.mentions("calls to partners go through fw-egress-1.")] == ["fw-egress-1"]
    assert EntityExtractor.from_sources([]).resolve("fw-egress-1") is None
