"""The store: values survive a round trip, writes are idempotent, history is never overwritten."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from datetime import datetime, timedelta, timezone

from state import content_hash
from state.claims import ClaimDecision, Hop, RootCause
from state.evidence import Evidence, Finding, ReadRecord, Scope, Span
from state.facts import ChangeFact, MentionFact, RelationFact, SignalFact
from state.steps import PlanStep
from state.store import RunRow, Store, make_engine

text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60)


@st.composite
def evidences(draw):
    quote = draw(text)
    start = draw(st.integers(0, 10_000))
    return Evidence(
        id=f"E{draw(st.integers(1, 999))}", kind="read", source_id=draw(st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True)),
        source_kind="runbook", version=draw(text), revision=content_hash(quote),
        span=Span(start=start, end=start + len(quote), quote=quote),
        found=Finding(tool="basic", query=draw(text), channel="dense", rank=draw(st.integers(1, 50)),
                      score=draw(st.floats(0, 1))),
        trust=draw(st.sampled_from(["verified", "unverified", "untrusted"])),
        scope=Scope(environment="prod", service=draw(text)), claim_ids=("c1",), facts=tuple(draw(facts())))


T0 = datetime(2026, 4, 29, 2, 35, tzinfo=timezone.utc)
names = st.from_regex(r"[a-z][a-z0-9-]{0,12}", fullmatch=True)


@st.composite
def facts(draw):
    """Some facts of every family that a read can establish."""
    at = draw(st.integers(0, 60))
    out = [RelationFact(source=draw(names), target=draw(names), relation=draw(st.sampled_from(["depends_on", "calls"])),
                        via="catalog depends_on", environment="prod"),
           MentionFact(entity=draw(names), name=draw(names), name_kind="config_key", ts=T0 + timedelta(minutes=at),
                       severity="error", anomalous=draw(st.booleans()))]
    if draw(st.booleans()):
        pts = tuple((T0 + timedelta(minutes=i), float(v)) for i, v in enumerate(draw(st.lists(st.floats(-1e6, 1e6), max_size=8))))
        out.append(SignalFact(entity=draw(names), signal="metric", name="p95_ms", role="latency", unit="ms",
                              anomalous=True, direction="up", onset=T0, baseline=1.0, level=2.0, points=pts))
    if draw(st.booleans()):
        out.append(ChangeFact(id=draw(names), type="deployment", entity=draw(names), environment="prod",
                              started_at=T0, completed_at=None))
    return out


def _store(tmp_path) -> Store:
    store = Store(make_engine(f"sqlite:///{tmp_path / 's.db'}"))
    store.create_run(RunRow(run_id="r", case_id="c", case_dir="/x", retrieval="basic", principal_id="p",
                            rounds_limit=3, reads_limit=3))
    return store


@settings(max_examples=40, deadline=None)
@given(ev=evidences())
def test_evidence_round_trips_through_the_store(tmp_path_factory, ev):
    store = _store(tmp_path_factory.mktemp("rt"))
    store.add_evidence("r", "k", ev)
    assert store.evidence("r") == [ev]


def test_a_span_must_match_its_hash_and_length():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Span(start=0, end=3, quote="abcd")
    with pytest.raises(ValidationError):
        Span(start=0, end=3, quote="abc", content_hash="0" * 16)
    assert Span(start=0, end=3, quote="abc").content_hash == content_hash("abc")


def test_writes_are_idempotent_on_their_keys(tmp_path):
    store = _store(tmp_path)
    ev = Evidence(id="E1", kind="read", source_id="s", source_kind="doc", version="v1", revision="r",
                  span=Span(start=0, end=1, quote="x"), trust="verified", scope=Scope(environment="prod", service="a"))
    store.add_evidence("r", "key", ev)
    again = store.add_evidence("r", "key", ev.model_copy(update={"id": "E2"}))
    assert again.id == "E1" and len(store.evidence("r")) == 1
    assert store.add_read("r", "k1", 1, ReadRecord(source_id="s", outcome="ok"))
    assert not store.add_read("r", "k1", 1, ReadRecord(source_id="s", outcome="ok"))
    store.add_step("r", PlanStep(round=1, note="first"))
    store.add_step("r", PlanStep(round=1, note="again"))
    assert [s.step.note for s in store.steps("r")] == ["again"]


def test_claim_history_keeps_every_earlier_decision(tmp_path):
    store = _store(tmp_path)
    first = ClaimDecision(claim_id="c", state="insufficient", verdict="insufficient", rule="r", missing=("x",))
    later = ClaimDecision(claim_id="c", state="supported", verdict="confirmed", rule="r",
                          path=(Hop(source="a", target="b", evidence_ids=("E1",), status="applicable"),),
                          root_cause=RootCause(entity="b", kind="config_push", change="CFG-1", path=("a", "b")))
    store.add_decision("r", 1, first)
    store.add_decision("r", 2, later)
    store.add_decision("r", 2, later)
    assert [d.verdict for _r, d in store.decision_history("r")] == ["insufficient", "confirmed"]
    assert store.decisions("r")["c"] == later


def test_one_worker_holds_a_run_at_a_time_and_an_expired_lease_can_be_taken(tmp_path):
    from datetime import timedelta

    store = _store(tmp_path)
    assert store.acquire("r", "worker-a", timedelta(seconds=60))
    assert not store.acquire("r", "worker-b", timedelta(seconds=60)), "a live lease keeps others out"
    assert store.renew("r", "worker-a", timedelta(seconds=60)) and not store.renew("r", "worker-b", timedelta(seconds=60))
    assert store.claimable() == []
    store.acquire("r", "worker-a", timedelta(seconds=-1))  # worker-a dies: its lease runs out
    assert store.claimable() == ["r"]
    assert store.acquire("r", "worker-b", timedelta(seconds=60))
    assert not store.renew("r", "worker-a", timedelta(seconds=60)), "the old worker learns it lost the run"
