"""Service catalogs in the shapes tools export them (`kind: catalog`).

- `backstage`: Backstage descriptor files (`catalog-info.yaml`), one entity a YAML document:
  `kind: Component|Resource|System|API`, `metadata.name`, `spec.type`, `spec.owner`,
  `spec.dependsOn: [component:x, resource:y]`, `spec.consumesApis`, `spec.system`.
- `registry`: a service registry as JSON or YAML — a list of entries (or one under `services`,
  `components`, `entities`, `items`) with `name`, `type`/`kind`, `depends_on`/`dependsOn`/
  `dependencies`/`calls`, `runs_on`, `aliases`, `environment`, `owner`; a load-balancer inventory
  (`name` + `dns_name`) lists each balancer as an alias of what it answers for (the DNS name's
  first label).

Either becomes the `catalog` record (`state.sources.Catalog`), each entry with the offsets of the
text that states it. Entry types map to entity kinds by the usual words (`svc`, `website` →
service; `postgres`, `db` → database; `redis`, `memcached` → cache; `kafka`, `sqs`, `topic` → queue;
`library`, `sdk`, `package` → component: code that runs inside the services that use it).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from state import yamlio
from state.sources import Catalog, CatalogService
from state.telemetry import as_text
from tools.formats.records import LIST_KEYS, Rec, first, load_documents, obj, read_records, records
from tools.formats.shape import ContentError, expecting

FORMATS = ("backstage", "registry")
_BACKSTAGE = ("a Backstage entity (a YAML document a mapping: kind text, metadata an object with name text, spec an "
              "object with dependsOn and consumesApis lists of entity references)")
_REGISTRY = ("a service registry: a list of entries, or one under services, components, entities or items (JSON or "
             "YAML)")
_ENTRY = ("a registry entry (an object: name text; type or kind text; depends_on, calls, runs_on and aliases lists of "
          "names)")
_REGISTRY_KEYS = tuple(dict.fromkeys(("services", "components", "entities", "items", *LIST_KEYS)))

_KINDS = {
    "service": ("service", "svc", "website", "backend", "frontend", "api", "app", "application", "bff", "worker",
                "job", "component", "microservice", "gateway", "batch"),
    # a library runs inside the services that link it: no telemetry, no deploys of its own
    "component": ("library", "lib", "sdk", "package", "client-library", "module"),
    "database": ("database", "db", "postgres", "postgresql", "mysql", "mariadb", "mongodb", "rds", "aurora",
                 "cassandra", "dynamodb", "sql", "datastore"),
    "cache": ("cache", "redis", "memcached", "memcache", "valkey", "elasticache"),
    "queue": ("queue", "topic", "kafka", "sqs", "rabbitmq", "pubsub", "stream", "kinesis", "nats", "broker"),
    "cluster": ("cluster",),
    "node": ("node",),
    "host": ("host", "vm", "instance", "server"),
    "external": ("external", "saas", "third-party", "thirdparty", "vendor"),
}


def entity_kind(word: Any) -> str:
    w = as_text(word).strip().lower()
    for kind, words in _KINDS.items():
        if w in words:
            return kind
    return next((k for k, ws in _KINDS.items() for x in ws if len(x) > 3 and x in w), "service")


def _ref(name: Any) -> str:
    """`component:default/payments` → `payments`."""
    text = as_text(name).strip()
    return text.split(":", 1)[-1].split("/")[-1] if re.match(r"^[\w-]+:", text) else text


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (_ref(value),)
    if isinstance(value, list):
        return tuple(_ref(first(v, "name", "service", "target") if isinstance(v, dict) else v) for v in value)
    return ()


def _backstage(text: str) -> list[tuple[int, int, dict]]:
    """Every entity of a descriptor file; a document that does not load, or is no entity, is refused."""
    out = []
    for s, e, value, _node in load_documents(text):
        at = s + len(text[s:e]) - len(text[s:e].lstrip())
        if not isinstance(value, dict):
            raise ContentError("<document>", _BACKSTAGE, at)
        meta = value.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("name"), (str, int, float)) or meta.get("name") == "":
            raise ContentError("metadata.name", _BACKSTAGE, at)
        out.append((s, e, value))
    return out


def parse(text: str, fmt: str) -> tuple[Catalog, list[tuple[int, int]]]:
    """The catalog and, for each of its services, the offsets of the entry that states it."""
    services: list[CatalogService] = []
    spans: list[tuple[int, int]] = []
    if fmt == "backstage":
        for s, e, v in _backstage(text):
            with expecting("<document>", _BACKSTAGE, s + len(text[s:e]) - len(text[s:e].lstrip())):
                meta, spec = v["metadata"], obj(v.get("spec"))
                kind = v.get("kind", "")
                word = spec.get("type") or ("service" if kind in ("Component", "API", "System") else kind)
                deps = _names(spec.get("dependsOn")) + _names(spec.get("consumesApis"))
                services.append(CatalogService(name=as_text(meta["name"]), kind=entity_kind(word),  # type: ignore[arg-type]
                                               owner=as_text(spec.get("owner") or ""), depends_on=deps,
                                               aliases=_names(meta.get("aliases") or (meta.get("annotations") or {}).get(
                                                   "aliases") or [])))
            while e > s and text[e - 1].isspace():
                e -= 1
            spans.append((s, e))
        return Catalog(services=tuple(services)), spans
    recs, bad = read_records(text, _REGISTRY, keys=_REGISTRY_KEYS, one=lambda v: first(v, "name", "service") is not None)
    if bad:  # a catalog keeps no unparsed text: a JSON line that does not parse is refused
        raise ContentError("<document>", "JSON lines, each a registry entry object", bad[0][0])
    for rec in recs:
        v = rec.value
        if not isinstance(v, dict) or not isinstance(first(v, "name", "service", "id"), (str, int, float)):
            raise ContentError(rec.where, _ENTRY, rec.start)
        with expecting(rec.where, _ENTRY, rec.start):
            services.append(_registry_entry(v))
        spans.append((rec.start, rec.end))
    return Catalog(services=tuple(services)), spans


def _registry_entry(v: dict) -> CatalogService:
    name = as_text(first(v, "name", "service", "id"))
    aliases = _names(first(v, "aliases", "alias"))
    dns = as_text(first(v, *_DNS) or "").rstrip(".")
    if dns and not first(v, *_DEPS):
        # a load balancer (or proxy) listed by the host name it answers for stands for what it fronts
        name, aliases = dns.split(".")[0], (*aliases, name, dns)
    return CatalogService(
        name=name, kind=entity_kind(first(v, "kind", "type") or "service"),  # type: ignore[arg-type]
        environment=as_text(first(v, "environment", "env") or "*"), owner=as_text(first(v, "owner", "team") or ""),
        aliases=aliases,
        depends_on=_names(first(v, "depends_on", "dependsOn", "dependencies", "calls", "upstreams", "uses")),
        runs_on=_names(first(v, "runs_on", "runsOn", "hosts", "nodes")))


_DEPS = ("depends_on", "dependsOn", "dependencies", "calls", "upstreams", "runs_on")
_DNS = ("dns_name", "dnsName", "DNSName", "hostname", "fqdn")


def _registry_records(text: str) -> list[Rec]:
    return [r for r in records(text) if isinstance(r.value, dict) and first(r.value, "name", "service")]


def native(data: Any) -> bool:
    """The documented `catalog` record: `services:`/`components:` entries written with `kind`, not a tool's `type`."""
    if not isinstance(data, dict):
        return False
    entries = [e for k in ("services", "components") if isinstance(data.get(k), list) for e in data[k]
               if isinstance(e, dict)]
    return bool(entries) and not any("type" in e and "kind" not in e for e in entries)


def detect(text: str) -> str | None:
    """`backstage`, `registry` or None (the documented record is not one of these)."""
    head = text.lstrip()[:4000]
    if re.search(r"^apiVersion:\s*backstage\.io/", head, re.M):
        return "backstage"
    try:
        if native(yamlio.loads(text)):
            return None
    except (ValueError, yaml.YAMLError):
        pass
    recs = _registry_records(text)
    if len(recs) < 2:
        return None
    with_deps = sum(any(k in r.value for k in (*_DEPS, *_DNS)) for r in recs)
    timed = sum(any(k in r.value for k in ("started_at", "at", "createdAt", "timestamp", "time")) for r in recs)
    return "registry" if with_deps * 2 >= len(recs) and not timed else None
