"""The generator's own words: name stems per business domain, infrastructure, keys, flags, people.

Names are composed at run time (stem + suffix) so that no full service name of a hand-written
case appears in this source. Nothing here is shared with the runtime's profile.
"""

from __future__ import annotations

DOMAINS: dict[str, list[str]] = {
    "commerce": ["cart", "catalog", "pricing", "promo", "checkout", "basket", "wishlist", "review", "stock",
                 "fulfil", "returns", "coupon", "storefront", "merch", "tax", "invoice", "shipping", "loyalty",
                 "giftcard", "seller", "listing", "offer", "bundle", "recommend"],
    "payments": ["ledger", "payout", "acquirer", "refund", "chargeback", "wallet", "settle", "fx", "risk",
                 "fraud", "tokenizer", "vault", "billing", "dispute", "mandate", "kyc", "clearing", "authz",
                 "capture", "merchant", "fee", "statement", "reconcile", "issuer"],
    "streaming": ["playback", "manifest", "transcode", "drm", "license", "catalogue", "ingest", "packager",
                  "thumbnail", "subtitle", "entitle", "session", "heartbeat", "bitrate", "watchlist",
                  "continue", "trending", "epg", "ads", "chapter", "profile", "device", "cdnlog", "preview"],
    "iot": ["telemetry", "shadow", "provision", "firmware", "fleet", "gateway", "rules", "alerting",
            "timeseries", "geofence", "pairing", "command", "ota", "sensor", "meter", "twin", "edgehub",
            "bridge", "registry", "enroll", "battery", "uplink", "downlink", "tariff"],
    "banking": ["accounts", "transfer", "standing", "overdraft", "statement", "cards", "atm", "loan",
                "mortgage", "savings", "interest", "onboarding", "aml", "sanctions", "branch", "teller",
                "cheque", "swift", "sepa", "limits", "consent", "openbank", "notify", "audit"],
    "gaming": ["matchmaker", "lobby", "leaderboard", "inventory", "store", "entitlement", "party",
               "presence", "chat", "guild", "quest", "achievement", "replay", "anticheat", "telemetryx",
               "season", "lootbox", "crafting", "tournament", "friends", "voice", "rank", "spectate", "patcher"],
    "logistics": ["routing", "dispatch", "tracking", "manifestx", "label", "carrier", "depot", "slotting",
                  "picking", "packing", "eta", "proof", "customs", "linehaul", "yard", "dock", "returnsx",
                  "parcel", "locker", "courier", "rating", "zone", "address", "podscan"],
    "travel": ["search", "fare", "booking", "seatmap", "ticketing", "ancillary", "loyaltyx", "hotel",
               "itinerary", "checkin", "boarding", "baggage", "pnr", "availability", "rebook", "voucher",
               "insurance", "carhire", "transfersx", "review", "gds", "schedule", "notifyx", "upsell"],
}

SERVICE_SUFFIXES = ["api", "svc", "service", "worker", "gateway", "engine", "core", "web", "backend", "sync",
                    "proxy", "manager", "writer", "reader", "scheduler", "bff"]
EDGE_STEMS = ["edge", "frontdoor", "portal", "mobile", "public", "partner"]
JOB_SUFFIXES = ["batch", "exporter", "backfill", "reindex", "etl", "cron", "compactor", "replayer"]

DB_SUFFIXES = ["db", "pg", "mysql", "store", "cockroach"]
CACHE_SUFFIXES = ["redis", "cache", "memcache", "kv"]
QUEUE_SUFFIXES = ["events", "queue", "stream", "topic", "jobs"]
CLUSTER_NAMES = ["kafka", "rabbit", "nats", "pulsar"]
NODE_PATTERNS = ["node-{n}", "worker-{a}{n}", "gke-prod-pool-{n}-{h}", "ip-10-{n}-{m}-{k}", "k8s-w{n}"]
COMPONENT_STEMS = ["http", "grpc", "db", "cache", "queue", "auth", "retry", "pool", "kafka", "geo"]
COMPONENT_SUFFIXES = ["client", "sdk", "lib", "driver", "connector"]

EXTERNAL_DOMAINS = ["example.com", "example.net", "example.org", "partner.example", "vendor.example"]
EXTERNAL_STEMS = ["api", "pay", "auth", "sso", "geo", "sms", "mail", "push", "kyc", "fx", "maps", "cdn"]
EXTERNAL_VENDORS = ["quickpay", "ledgerly", "verifyme", "sendwave", "geonexa", "ratebridge", "idcheck",
                    "notifly", "mapster", "acmebank", "tollgate", "shipstar"]

# Config keys as lists of words; the style is applied when a key is rendered.
KEY_WORDS = [
    ["max", "open", "conns"], ["pool", "max", "idle"], ["request", "timeout", "ms"], ["batch", "size"],
    ["max", "inflight"], ["read", "timeout"], ["write", "buffer", "kb"], ["worker", "threads"],
    ["cache", "ttl", "seconds"], ["retry", "budget"], ["max", "retries"], ["queue", "depth", "limit"],
    ["prefetch", "count"], ["keepalive", "seconds"], ["circuit", "breaker", "threshold"],
    ["rate", "limit", "rps"], ["gc", "target", "percent"], ["max", "body", "kb"], ["index", "refresh", "ms"],
    ["conn", "lifetime", "s"], ["shard", "count"], ["flush", "interval", "ms"], ["lock", "wait", "ms"],
    ["statement", "cache", "size"], ["max", "page", "size"], ["compression", "level"],
    ["tls", "session", "cache"], ["dns", "cache", "ttl"], ["upstream", "weight"], ["hedge", "delay", "ms"],
]
FLAG_WORDS = [
    ["new", "pricing", "engine"], ["async", "settlement"], ["v2", "search", "ranker"], ["strict", "schema"],
    ["batch", "writes"], ["smart", "retry"], ["fast", "checkout"], ["edge", "caching"], ["geo", "sharding"],
    ["dual", "write"], ["lazy", "hydration"], ["streaming", "export"], ["compressed", "payloads"],
    ["inline", "fraud", "check"], ["shadow", "reads"], ["eager", "prefetch"],
]

PEOPLE = ["a.kowalski", "li.na", "wang.fang", "m.keller", "s.okafor", "j.martin", "k.tanaka", "r.silva",
          "d.ferreira", "p.nowak", "e.larsen", "h.yilmaz", "zhang.wei", "c.moreau", "t.becker", "n.haddad",
          "y.sato", "o.ivanova", "f.rossi", "l.chen", "b.adeyemi", "i.schmidt", "g.costa", "v.petrov"]
ONCALL_GROUPS = [["sre-oncall"], ["oncall"], ["sre"], ["platform-oncall", "observability"], ["incident-response"]]
RESTRICTED_GROUPS = ["security", "finance", "legal", "dba", "hr", "compliance", "exec-staff"]
PROD_ENVS = ["prod", "production", "prd", "live"]
STAGING_ENVS = ["staging", "stage", "preprod"]
INCIDENT_PREFIXES = ["INC", "PD", "OPS", "SEV", "ALERT", "PAGE"]

TIMEZONES = ["+08:00", "+02:00", "+00:00", "-05:00", "+05:30", "+09:00", "+01:00", "-07:00", "+10:00", "-03:00"]


def key_style(words: list[str], style: str) -> str:
    """Render a key given as words in one of the styles config files use."""
    if style == "snake":
        return "_".join(words)
    if style == "camel":
        return words[0] + "".join(w.capitalize() for w in words[1:])
    if style == "kebab":
        return "-".join(words)
    if style == "dotted":
        return ".".join(words)
    if style == "upper":
        return "_".join(w.upper() for w in words)
    raise ValueError(style)
