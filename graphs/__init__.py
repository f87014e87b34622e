"""The LangGraph loop: plan → retrieve → read → update → decide, bounded; imports `state` and `tools`.

`build_graph(deps, checkpointer)` compiles it over `Deps` (everything a node needs, passed in
once); `LoopState` is what the checkpoints hold; `DeterministicPlanner` (or `LLMPlanner`) picks
the next gap; `recheck` re-reads permissions and tombstones before a resumed run goes on.

The names below are imported lazily (PEP 562), so importing one module of this package does
not import LangGraph.
"""

from __future__ import annotations

from state.lazy import lazy_exports

_EXPORTS = {
    "build_graph": "build",
    "CrashPoint": "deps",
    "Deps": "deps",
    "LLMPlanner": "llm_planner",
    "LoopState": "loop_state",
    "DeterministicPlanner": "planner",
    "Planner": "planner",
    "recheck": "resume",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
