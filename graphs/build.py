"""`build_graph(deps)`: the bounded loop plan → retrieve → read → update → decide ─┐ back to plan."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, Literal

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


NODES = ("plan", "retrieve", "read", "update", "decide")


def loop_graph(node_for: Callable[[str], Callable[..., Any]], state: type = LoopState,
               input_schema: type | None = None) -> StateGraph:
    """The loop's wiring with the node callables `node_for(name)` gives (not yet compiled).

    `build_graph` binds the nodes to one `Deps`; a host that supplies its own checkpointer and
    threads (`investigator.langgraph_app` under `langgraph dev`) binds them per run instead."""
    g = StateGraph(state, input_schema=input_schema)
    for name in NODES:
        g.add_node(name, node_for(name))
    g.add_edge(START, "plan")
    g.add_conditional_edges("plan", after_plan)
    g.add_edge("retrieve", "read")
    g.add_edge("read", "update")
    g.add_edge("update", "decide")
    g.add_conditional_edges("decide", after_decide)
    return g


def build_graph(deps: Deps, checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    return loop_graph(lambda name: partial(getattr(nodes, name), deps=deps)).compile(checkpointer=checkpointer)
