"""One parser module per source format; each turns a file's text into typed records that keep
the character offsets they were parsed from (so every fact can be cited as an exact span).

`changes` (change records, Helm / Argo CD / rollout histories, flag audits), `configs`
(settings, YAML/JSON, `.env`, `.properties`, ConfigMaps), `k8s` (events, pods, describe),
`logs` (plain, logfmt, JSON lines, syslog), `metrics` (CSV with a sidecar, Prometheus JSON),
`traces` (OTLP and Jaeger JSON), `ledgers` (many changes a file and tools' own change shapes:
ledgers, vendor records and audits, migrations; it detects and dispatches the family) with
`controlplane` (ECS, CloudTrail, Route 53, cert-manager),
`catalogs` (Backstage and registry catalogs), `chat` (chat exports as notes), `records` (records
with offsets from JSON/YAML, which the change families and catalogs use), and `jsonspan` (JSON with offsets).
`tools.corpus` picks the parser for each manifest entry.
"""

__all__ = ["catalogs", "changes", "chat", "configs", "controlplane", "jsonspan", "k8s", "ledgers", "logs", "metrics", "records", "traces"]
