"""The entity registry: which names are entities, of which kind, and where text mentions them.

Built from the parsed sources (catalog entries and aliases, manifest and sidecar services,
trace services, Kubernetes pods and nodes, change records, config keys). Config keys match
in any style — `pool_size`, `poolSize`, `pool-size`, `POOL_SIZE`, `db.pool.size` — through one canonical form. Host names resolve to the entity
their first label (or whole name, without the profile's DNS suffixes) names; pod names
resolve to their workload. No model, no download: the same text always yields the same
mentions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from state import Frozen
from state.keys import canon_key
from state.profile import Profile
from state.sources import Catalog, ServiceConfig
from tools.corpus import SourceDoc
from tools.formats.k8s import workload_of_pod

_CODE = re.compile(r"`([^`\n]+)`")
_IDENT = re.compile(r"(?<![\w.\-/])([A-Za-z][A-Za-z0-9]*(?:[_.\-][A-Za-z0-9]+)+|[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+)(?![\w\-])")
_HOSTISH = re.compile(r"(?:[a-z][a-z0-9+.-]*://)?(?:[\w.%-]+(?::[^@\s/]*)?@)?([A-Za-z0-9][A-Za-z0-9.-]*[A-Za-z0-9])(?::\d+)?")
_KIND_ORDER = {"service": 0, "database": 0, "cache": 0, "queue": 0, "cluster": 0, "external": 0, "node": 1,
               "host": 1, "workload": 1, "component": 2, "domain": 3, "flag": 4, "metric": 5, "config_key": 6}
RESOURCE_KINDS = frozenset({"node", "host", "cluster", "database", "cache", "queue"})
"""Entities others share: their other consumers may be the noisy neighbour."""


def key_leaf(key: str) -> str:
    """The last dotted segment of a key (`spring.datasource.hikari.maximum-pool-size` → `maximum-pool-size`)."""
    return key.rsplit(".", 1)[-1] if "." in key and not key.startswith(".") else key


class Mention(Frozen):
    """An entity or key named at an exact place in a text."""

    name: str
    """Canonical: the entity name, or the canonical form of a key."""
    kind: str
    start: int
    end: int
    written: str


_IP = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9a-fA-F:]+\]?")
"""An address, not a name: never an entity by itself."""


def _value_parts(value: str) -> list[str]:
    """The items of a config value that may list several (comma, space or semicolon separated)."""
    return [p for p in re.split(r"[,\s;]+", value) if p]


def host_of(value: str) -> str | None:
    """The host of a URL, DSN, `host:port` or bare host name; None when the value is none of these."""
    v = value.strip().strip("'\"")
    if not v or " " in v:
        return None
    if "://" in v:
        try:
            return urlsplit(v).hostname
        except ValueError:
            return None
    m = _HOSTISH.fullmatch(v)
    return m.group(1) if m else None


def _gathered(docs: list[SourceDoc], listed: Iterable[str]) -> tuple[dict[str, str], dict[str, str], set[str], set[str],
                                                                 dict[str, str], list[str]]:
    """What the sources say about names (`EntityExtractor.from_sources`): (kinds, aliases, config keys,
    flags, pod -> workload, change targets). A kind the catalog declares wins over one seen in use."""
    kinds: dict[str, str] = {}
    aliases: dict[str, str] = {}
    keys: set[str] = set()
    flags: set[str] = set()
    pods: dict[str, str] = {}

    def put(name: str | None, kind: str) -> None:
        if not name:
            return
        name = str(name).strip()
        if not name or name == "*":
            return
        old = kinds.get(name)
        if old is None or _KIND_ORDER.get(kind, 9) < _KIND_ORDER.get(old, 9):
            kinds[name] = kind

    declared: dict[str, str] = {}
    targets: list[str] = []
    for name in listed:
        put(name, "service")
    for doc in docs:
        if doc.entry.service != "*" and doc.kind not in ("doc",):
            put(doc.entry.service, "service")
        rec = doc.record
        if isinstance(rec, Catalog):
            for s in rec.services:
                declared[s.name] = s.kind
                for a in s.aliases:
                    aliases[a] = s.name
                for dep in s.depends_on:
                    put(dep, "service")
                for n in s.runs_on:
                    declared.setdefault(n, "node")
            for c in rec.components:
                declared[c.name] = "component"
                for t in c.talks_to:
                    put(t, "service")
        elif isinstance(rec, ServiceConfig):
            put(rec.service, "service")
        for ch in doc.changes:
            put(ch.service, "service")
            if ch.target:
                targets.append(ch.target)
            targets.extend(ch.targets)
            for dc in ch.dependency_changes:
                put(dc.name, "component")
            keys.update(cc.key for cc in ch.config_changes)
            if ch.flag is not None:
                flags.add(ch.flag.name)
        keys.update(s.key for s in doc.settings)
        for sp in doc.spans:
            put(sp.service, "service")
        for p in doc.placements:
            wl = p.workload or workload_of_pod(p.pod, p.template_hash)
            if wl:
                put(wl, "workload")
                pods[p.pod] = wl
            if p.node:
                declared.setdefault(p.node, "node")
        for ev in doc.k8s_events:
            if ev.object_kind == "Node" and ev.object_name:
                declared.setdefault(ev.object_name, "node")
        for s in doc.series:
            if s.entity:
                put(s.entity, "service")
        if doc.meta is not None and doc.meta.service:
            put(doc.meta.service, "service")
    for name, kind in declared.items():  # what the catalog says a name is wins
        kinds[name] = kind
    # a workload that is also a service keeps the service kind
    for name in list(kinds):
        if kinds[name] == "workload" and name in declared and declared[name] != "workload":
            kinds[name] = declared[name]
    return kinds, aliases, keys, flags, pods, targets


class EntityExtractor:
    """Known names with their kinds; finds mentions and resolves written names to entities."""

    def __init__(self, kinds: dict[str, str], aliases: dict[str, str] | None = None,
                 keys: Iterable[str] = (), flags: Iterable[str] = (), pods: dict[str, str] | None = None,
                 host_suffixes: tuple[str, ...] = (".svc.cluster.local", ".svc", ".cluster.local", ".internal")) -> None:
        self.kinds = dict(sorted(kinds.items()))
        self.aliases = {a.lower(): n for a, n in sorted((aliases or {}).items()) if a}
        self.pods = dict(pods or {})
        self.host_suffixes = tuple(sorted(host_suffixes, key=len, reverse=True))
        self.keys: dict[str, str] = {}
        """canonical key -> a written form (for display)."""
        for k in sorted(set(keys)):
            leaf = key_leaf(k)
            # a one-word leaf of a dotted key (`db.host` -> `host`) would match ordinary words: only whole keys
            for form in (k, leaf) if leaf == k or "_" in canon_key(leaf) else (k,):
                c = canon_key(form)
                if c:
                    self.keys.setdefault(c, form)
        self.flags = {canon_key(f): f for f in sorted(set(flags)) if f}
        names = sorted({*self.kinds, *self.aliases}, key=lambda n: (-len(n), n))
        self._known = (re.compile(r"(?<![A-Za-z0-9_.\-])(" + "|".join(re.escape(n) for n in names)
                                  + r")(?![A-Za-z0-9_\-])", re.IGNORECASE) if names else None)

    # --- building ----------------------------------------------------------------------
    @classmethod
    def from_sources(cls, docs: Iterable[SourceDoc], profile: Profile | None = None,
                     listed: Iterable[str] = ()) -> "EntityExtractor":
        """The names `docs` establish; `listed` are services the manifest names for sources whose content
        is not among `docs` (unreadable to the principal): their names are metadata a report already
        shows, so prose that names them is read as naming an entity."""
        docs = list(docs)
        kinds, aliases, keys, flags, pods, targets = _gathered(docs, listed)
        suffixes = profile.host_suffixes if profile is not None else (".svc.cluster.local", ".svc", ".cluster.local")
        reg = cls(kinds, aliases, keys, flags, pods, suffixes)
        variants = abbreviated_variants(reg, docs)  # `ledger-svc` written for ledger-service
        if variants:
            aliases = {**variants, **aliases}
            reg = cls(kinds, aliases, keys, flags, pods, suffixes)
        targets += _url_hosts(docs, profile)
        # a change target is a new entity (a domain) only when no known name or alias covers it
        extra = {t: ("domain" if "." in t else "service") for t in dict.fromkeys(targets) if reg.resolve(t) is None}
        if extra:
            reg = cls({**kinds, **extra}, aliases, keys, flags, pods, suffixes)
        return reg

    # --- resolution --------------------------------------------------------------------
    def kind_of(self, name: str, in_code: bool = False) -> str:
        """Known names keep their kind; a known key is a config_key; an unknown identifier
        written as code is a config key, otherwise a plain identifier."""
        if name in self.kinds:
            return self.kinds[name]
        if canon_key(name) in self.flags:
            return "flag"
        if canon_key(name) in self.keys:
            return "config_key"
        return "config_key" if in_code else "identifier"

    def resolve(self, written: str | None) -> str | None:
        """The entity a written name refers to: itself, an alias, a host, a pod's workload, or None."""
        if not written:
            return None
        w = written.strip().strip("'\"`[]()<>,;")
        if not w:
            return None
        low = w.lower()
        if low in self.aliases:  # an alias is the catalog's word for what the name is
            return self.aliases[low]
        if w in self.kinds:
            return w
        for name in (low, *(n for n in self.kinds if n.lower() == low)):
            if name in self.kinds:
                return name
        if w in self.pods:
            return self.pods[w]
        wl = workload_of_pod(w)
        if wl and wl in self.kinds:
            return wl
        host = self.host_of(w)
        if host and host != w:
            return self.resolve(host)
        if host and "." in host:
            stripped = host
            for suffix in self.host_suffixes:
                if stripped.lower().endswith(suffix):
                    stripped = stripped[: -len(suffix)]
                    break
            for cand in (stripped, stripped.split(".", 1)[0]):
                if cand != host and (got := self.resolve(cand)):
                    return got
        return None

    host_of = staticmethod(host_of)

    def entities_in_value(self, value: str) -> list[str]:
        """Entities a config value names (a URL, DSN, host:port, host, or a list of them)."""
        out: list[str] = []
        for part in _value_parts(value):
            host = self.host_of(part)
            got = self.resolve(host) if host else None
            if got is None and "/" in part and "://" in part:
                path_db = urlsplit(part).path.strip("/")
                got = self.resolve(path_db) if path_db else None
            if got and got not in out:
                out.append(got)
        return out

    # --- mentions ----------------------------------------------------------------------
    def mentions(self, text: str, offset: int = 0) -> list[Mention]:
        """Every entity, key and flag mention in `text`, with offsets shifted by `offset`.

        Entities and multi-word keys match anywhere (keys in any style); a one-word key or
        an unknown identifier counts only when written as code, quoted, or as `key=`/`key:`."""
        found: dict[tuple[int, int], Mention] = {}
        if self._known is not None:
            for m in self._known.finditer(text):
                w = m.group(1)
                name = self.resolve(w) or w
                found[(m.start(1), m.end(1))] = Mention(name=name, kind=self.kinds.get(name, "service"),
                                                       start=offset + m.start(1), end=offset + m.end(1), written=w)
        code = [(c.start(1), c.end(1)) for c in _CODE.finditer(text)]

        def taken(a: int, b: int) -> bool:
            return any(s <= a < e or s < b <= e for s, e in found)

        for m in _IDENT.finditer(text):
            a, b = m.start(1), m.end(1)
            written = m.group(1)
            in_code = any(s <= a and b <= e for s, e in code)
            for cand, ca, cb in self._key_candidates(written, a):
                c = canon_key(cand)
                kind = "flag" if c in self.flags else "config_key" if c in self.keys else None
                if kind is None and in_code and cand == written and not self._looks_like_host(written):
                    kind = "config_key"
                if kind is not None and not taken(ca, cb):
                    found[(ca, cb)] = Mention(name=c, kind=kind, start=offset + ca, end=offset + cb, written=cand)
                    break
        # one-word keys and flags: only in code, quoted, or as key=/key:
        for c, written in [*self.keys.items(), *self.flags.items()]:
            if "_" in c:
                continue
            pat = re.compile(rf"(?:`|'|\"|\b)({re.escape(written)})(?:`|'|\"|\s*[=:]|\b)", re.IGNORECASE)
            for m in pat.finditer(text):
                a, b = m.start(1), m.end(1)
                ctx = text[max(0, a - 1):b + 2]
                quoted = ctx[:1] in "`'\"" or re.match(r"\s*[=:]", text[b:b + 3] or "")
                if quoted and not taken(a, b):
                    kind = "flag" if c in self.flags else "config_key"
                    found[(a, b)] = Mention(name=c, kind=kind, start=offset + a, end=offset + b, written=m.group(1))
        return sorted(found.values(), key=lambda x: (x.start, x.end))

    def _key_candidates(self, written: str, at: int) -> list[tuple[str, int, int]]:
        """A dotted key's leaf first when it is itself a known key (`some-lib.pool_size` → `pool_size`,
        the name prose uses), then the identifier as written."""
        whole = (written, at, at + len(written))
        if "." in written:
            leaf = written.rsplit(".", 1)[1]
            part = (leaf, at + len(written) - len(leaf), at + len(written))
            return [part, whole] if canon_key(leaf) in self.keys else [whole, part]
        return [whole]

    def _looks_like_host(self, written: str) -> bool:
        return written.count(".") >= 2 or bool(re.search(r"\.(com|net|org|io|local|internal|svc)$", written))

    def names(self, text: str) -> list[str]:
        """Distinct entity names in order of first mention (the graph tool's analyzer)."""
        seen: dict[str, None] = {}
        for m in self.mentions(text):
            seen.setdefault(m.name, None)
        return list(seen)


EntityRegistry = EntityExtractor


def _words(name: str) -> str:
    return " ".join(p for p in re.split(r"[-_.\s]+", name.lower()) if p)


def abbreviated_variants(reg: EntityExtractor, docs: Iterable[SourceDoc]) -> dict[str, str]:
    """Identifiers the material writes that abbreviate exactly one known name word by word
    (``ledger-svc`` -> ``ledger-service``, ``stock-mgmt-api`` -> ``stock-management-api``;
    ``tools.resolution``): written variant -> the known name. Only same-length spellings: a
    shorter or longer name (``db-primary`` beside ``eu-db-primary``) may be another host."""
    from tools.resolution import alias_map

    known = {_words(n): n for n in reg.kinds}
    unknown: dict[str, str] = {}
    checked: set[str] = set()
    for doc in docs:
        for m in _IDENT.finditer(doc.text):
            w = m.group(1)
            if w in checked:
                continue
            checked.add(w)
            if "-" in w and reg.resolve(w) is None and _words(w) not in known:
                unknown.setdefault(_words(w), w)
    if not unknown:
        return {}
    folds = alias_map({**dict.fromkeys(unknown, "name"), **dict.fromkeys(known, "title")}, titles=known)
    return {unknown[v]: known[c] for v, c in folds.items()
            if v in unknown and c in known and len(v.split()) == len(c.split())}


def _url_hosts(docs: Iterable[SourceDoc], profile: Profile | None) -> list[str]:
    """Hosts that URLs name. The host of a URL in a config value is a domain (deciding.md §1) when no
    known name, alias or host suffix covers it: `https://api.vendor.example/v2` names api.vendor.example.
    So is the URL a log line calls: `call https://api.vendor.example/v2 failed` names the host the
    writer depends on, as a config value pointing at it would (deciding.md §1)."""
    out: list[str] = []
    for doc in docs:
        for st in doc.settings:
            out += [h for part in _value_parts(st.value) if (h := _url_domain(part))]
    if profile is not None:
        for doc in docs:
            out.extend(_called_hosts(doc, profile.relation_phrase_re))
    return out


def _url_domain(value: str) -> str | None:
    """The host of a URL (`https://API.vendor.example/v2` → `api.vendor.example`); None for an address."""
    host = EntityExtractor.host_of(value) if "://" in value else None
    return host.lower() if host and "." in host and not _IP.fullmatch(host) else None


def _called_hosts(doc: SourceDoc, phrase: re.Pattern[str]) -> list[str]:
    """Hosts of URLs written right after a relation phrase in a log line (`calling https://h/…`)."""
    if "://" not in doc.text:
        return []
    out: list[str] = []
    for e in doc.events:
        text = doc.text[e.start:e.end]
        if "://" not in text:
            continue
        for m in phrase.finditer(text):
            first = text[m.end():m.end() + 200].split(None, 1)
            if first and (host := _url_domain(first[0].strip("\"'<>()[],;"))):
                out.append(host)
    return out
