"""Collectors: material fetched live from the systems an incident touches, written as sources.

`prometheus` (range queries → `query_range` JSON with sidecars), `gitops` (commits of a GitOps
repository → a change ledger and config snapshots), `kube` (`kubectl` → events, pods, rollout
histories), `profile` (the PromQL and path templates, `default.yaml`). Each returns what it
fetched as `state.collection.Fetched` values, failures included; none raises for a system that
does not answer. `investigator.collect` composes them into a case folder.
"""

from __future__ import annotations

__all__: list[str] = []
