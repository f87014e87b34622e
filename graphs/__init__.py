"""The LangGraph loop: plan → retrieve → read → update → decide, bounded; imports `state` and `tools`.

`build_graph(deps, checkpointer)` compiles it over `Deps` (everything a node needs, passed in
once); `LoopState` is what the checkpoints hold; `DeterministicPlanner` (or `LLMPlanner`) picks
the next gap; `recheck` re-reads permissions and tombstones before a resumed run goes on.

The names below are imported lazily (PEP 562), so importing one module of this package does
not import LangGraph.
"""

from __future__ import annotations

import importlib
from typing import Any

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


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
