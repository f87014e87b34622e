"""`history` reads a SQLite checkpointer's file without LangGraph, and only what it knows.

The values it decodes are the loop's own checkpoint types, read as plain fields (nothing named
in a checkpoint is imported); a checkpoint holding anything else is left to LangGraph's reader.
"""

from __future__ import annotations

import sqlite3

from investigator.checkpoint_rows import KNOWN, history_rows
from investigator.checkpoints import serializer
from state.claims import ClaimDecision, StopReason
from state.evidence import Gap, RelationsAction


def _saved(path, *values: dict) -> None:
    """Checkpoints of thread `r1` as LangGraph's SQLite saver stores them (one per channel-values dict)."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    with sqlite3.connect(path, check_same_thread=False) as conn:
        saver = SqliteSaver(conn, serde=serializer())
        saver.setup()
        for step, channel_values in enumerate(values):
            checkpoint = {"v": 4, "ts": f"2026-12-04T10:00:0{step}+00:00", "id": f"cp-{step}",
                          "channel_values": channel_values, "channel_versions": {}, "versions_seen": {},
                          "updated_channels": None}
            saver.put({"configurable": {"thread_id": "r1", "checkpoint_ns": ""}}, checkpoint,
                      {"source": "loop", "step": step}, {})


def test_the_types_it_reads_are_the_loops_checkpoint_types():
    from graphs.loop_state import CHECKPOINT_TYPES

    assert KNOWN == {(t.__module__, t.__name__) for t in CHECKPOINT_TYPES}


def test_a_checkpoint_of_known_values_is_listed_with_the_size_langgraph_gives_it(tmp_path):
    gap = Gap(claim_id="causal", act=RelationsAction(entities=("partnerhub",), environment="prod"), reason="why")
    stop = StopReason(kind="evidence_ready", detail="done")
    _saved(tmp_path / "cp.db", {"round": 1, "gap": gap, "hits": []}, {"round": 2, "stop": stop})
    rows = history_rows(tmp_path / "cp.db", "r1")
    assert rows is not None
    assert [(r["step"], r["source"], r["round"], r["gap"], r["hits"], r["stop"]) for r in rows] == [
        (0, "loop", 1, "relations → causal", 0, None), (1, "loop", 2, None, 0, "evidence_ready")]
    serde = serializer()
    with sqlite3.connect(tmp_path / "cp.db") as conn:
        blobs = dict(conn.execute("SELECT checkpoint_id, checkpoint FROM checkpoints").fetchall())
    for r in rows:  # the size `history` always showed: the checkpoint serialised again by LangGraph
        again = serde.dumps_typed(serde.loads_typed(("msgpack", blobs[r["checkpoint_id"]])))[1]
        assert r["bytes"] == len(again)
    assert history_rows(tmp_path / "cp.db", "another-run") == []


def test_a_checkpoint_holding_another_type_is_left_to_langgraph(tmp_path):
    decision = ClaimDecision(claim_id="c", state="candidate", verdict="insufficient", rule="r")
    _saved(tmp_path / "cp.db", {"round": 1, "decision": decision})
    assert history_rows(tmp_path / "cp.db", "r1") is None


def test_no_checkpointer_file_is_no_checkpoint_and_none_is_created(tmp_path):
    assert history_rows(tmp_path / "checkpoints.db", "r1") == []
    assert not (tmp_path / "checkpoints.db").exists()
