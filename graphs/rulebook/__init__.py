"""The rule book: docs/deciding.md as pure functions of the evidence read, one module per section.

| module | deciding.md | owns |
| --- | --- | --- |
| `searches` | §8 (searched, denied, failed) | `Searches`: what the run looked up, for "searched, found nothing" and denials |
| `changes` | §5 step 1, §6 (deployed version) | rollout revisions dated, config snapshots diffed, the version deployed |
| `knowledge` | §1, §2 | `Knowledge`: the facts of active evidence indexed by entity; changes dated and diffed |
| `anomalies` | §3 Anomalies and onsets | `entity_state`, `is_bad`, `is_load`, `moved` |
| `path` | §4 The anomalous path | `explains`, `Trace`, `walk` (the hops, the anomaly's own lines leading) |
| `root` | §4 the root, §5 what is looked up there | `trace`, rival branches, conduits, noisy neighbours, what stands in front |
| `applicability` | §6 Sources that apply | `applicability`, `relation_status`, `version_matches` |
| `limits` | §5 step 5 | `at_limit`: a configured limit reached |
| `cause` | §5 The cause at the root | `cause_at`, the changed element refined from applicable documents |
| `hypotheses` | §7 Change hypotheses | `change_hypothesis`, `read_blames` |
| `partial_access` | §8 Partial access | which unreadable sources are decisive for the causal claim |
| `symptom`, `change_in_window`, `counter_evidence`, `causal_chain` | §7 Verdicts | one decider per claim kind |
| `verdicts` | §7 | `DECIDERS` (claim kind -> decider), `decide_all` |
| `consistency` | §7 | claims of one run never contradict each other |

A module imports only modules above it in this table; nothing here reads a source or the store.
"""

from __future__ import annotations

from state.lazy import lazy_exports

_EXPORTS = {
    "Knowledge": "knowledge",
    "Searches": "searches",
    "EntityState": "anomalies",
    "entity_state": "anomalies",
    "Trace": "path",
    "trace": "root",
    "cause_at": "cause",
    "read_blames": "hypotheses",
    "DECIDERS": "verdicts",
    "causal_trace": "verdicts",
    "decide_all": "verdicts",
    "reconcile": "consistency",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
