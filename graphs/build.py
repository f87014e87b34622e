"""`build_graph(deps)`: the bounded loop plan → retrieve → read → update → decide ─┐ back to plan."""

from __future__ import annotations

from functools import partial
from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from graphs import nodes
from graphs.deps import Deps
from graphs.loop_state import LoopState


def after_plan(state: LoopState) -> Literal["retrieve", "decide"]:
    """Nothing left to try goes straight to decide, which names the stop reason."""
    return "retrieve" if state.get("gap") is not None else "decide"


def after_decide(state: LoopState) -> Literal["plan", "__end__"]:
    return END if state.get("stop") is not None else "plan"


def build_graph(deps: Deps, checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    g = StateGraph(LoopState)
    for name in ("plan", "retrieve", "read", "update", "decide"):
        g.add_node(name, partial(getattr(nodes, name), deps=deps))
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", after_plan)
    g.add_edge("retrieve", "read")
    g.add_edge("read", "update")
    g.add_edge("update", "decide")
    g.add_conditional_edges("decide", after_decide)
    return g.compile(checkpointer=checkpointer)
