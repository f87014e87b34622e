"""One parser module per source format; each turns a file's text into typed records that keep
the character offsets they were parsed from (so every fact can be cited as an exact span).

`changes` (change records, Helm / Argo CD / rollout histories, flag audits), `configs`
(settings, YAML/JSON, `.env`, `.properties`, ConfigMaps), `k8s` (events, pods, describe),
`logs` (plain, logfmt, JSON lines, syslog), `metrics` (CSV with a sidecar, Prometheus JSON),
`traces` (OTLP and Jaeger JSON), and `jsonspan` (JSON with offsets, which the others use).
`tools.corpus` picks the parser for each manifest entry.
"""

__all__ = ["changes", "configs", "jsonspan", "k8s", "logs", "metrics", "traces"]
