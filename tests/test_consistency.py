"""Claims of one run never contradict each other (graphs/rulebook/consistency.py)."""

from __future__ import annotations

from rulesworld import World, case, change, dep, names, rise

from graphs.rulebook.consistency import contradictions, reconcile
from graphs.rulebook.verdicts import decide_all
from state.case import Case
from tools.profile import default_profile

P = default_profile()


def _case(claims: list[dict], hypotheses: list | None = None) -> Case:
    from pydantic import TypeAdapter

    from state.case import Claim

    c = case(hypotheses=hypotheses)
    more = tuple(TypeAdapter(Claim).validate_python(x) for x in claims)
    return c.model_copy(update={"required_claims": (*c.required_claims, *more)})


def _subject_cause_world(c: Case) -> World:
    """web's own deploy is the cause: its error lines name the key the deploy changed."""
    w = World(c)
    w.read(rise("web", 0), names("web", "pool_size", 0.5))
    w.read(change("DEP-1", "web", -3, keys=("pool_size",)), source_kind="change")
    w.read(dep("web", "db"), source_kind="catalog")
    w.read(rise("db", 5))
    w.everything_looked("web", "db")
    return w


def test_a_confirmed_cause_beside_a_claim_that_finds_no_such_change_is_held_at_inferred():
    c = _case([{"id": "chg", "kind": "change_in_window", "statement": "s", "change_types": ["deployment"]}])
    w = _subject_cause_world(c)
    decisions = decide_all(c, w.knowledge())
    assert decisions["cause"].verdict == "confirmed" and decisions["chg"].verdict == "confirmed"
    # the same verdicts with the change claim flipped: a contradiction the check must catch
    flipped = {**decisions, "chg": decisions["chg"].model_copy(update={"verdict": "refuted", "state": "refuted"})}
    found = contradictions(c, P, flipped)
    assert found and "chg" in found[0]
    fixed = reconcile(c, P, flipped)
    assert fixed["cause"].verdict == "inferred" and fixed["cause"].state == "conflicted"
    assert any("chg" in x for x in fixed["cause"].conflicts)
    assert not contradictions(c, P, fixed)


def test_a_change_claim_of_other_types_does_not_contradict_the_cause():
    c = _case([{"id": "chg", "kind": "change_in_window", "statement": "s", "change_types": ["feature_flag"]}])
    w = _subject_cause_world(c)
    decisions = decide_all(c, w.knowledge())
    assert decisions["chg"].verdict == "refuted" and not contradictions(c, P, decisions)


def test_the_decided_verdicts_of_a_run_are_consistent_by_construction():
    hyp = [{"id": "h", "statement": "the web deploy did it", "blames": {"entity": "web"}}]
    c = _case([{"id": "chg", "kind": "change_in_window", "statement": "s"},
               {"id": "ce", "kind": "counter_evidence", "statement": "s", "hypothesis": "h"}], hyp)
    w = _subject_cause_world(c)
    k = w.knowledge()
    decisions = decide_all(c, k)
    assert decisions["cause"].verdict == "confirmed", decisions["cause"].missing
    assert decisions["ce"].verdict == "confirmed", decisions["ce"].rule
    assert contradictions(c, P, decisions, k.blames) == []


def test_a_hypothesis_refuted_by_its_mechanism_does_not_contradict_the_same_change_as_the_cause():
    """"The deploy lowered a timeout" is refuted when timeouts stay flat; that is no denial that the
    deploy caused the symptom by another mechanism, so the confirmed cause stands."""
    from rulesworld import flat

    hyp = [{"id": "h", "statement": "the web deploy lowered a timeout", "blames": {"entity": "web"},
            "predicts": {"metric": "timeouts_per_s", "entity": "web", "direction": "up", "min_ratio": 3}}]
    c = _case([{"id": "ce", "kind": "counter_evidence", "statement": "s", "hypothesis": "h"}], hyp)
    w = _subject_cause_world(c)
    w.read(flat("web", 0.5, role="errors", unit="1/s", name="timeouts_per_s"))
    k = w.knowledge()
    decisions = reconcile(c, P, decide_all(c, k), k.blames)
    assert decisions["ce"].verdict == "refuted", decisions["ce"].rule
    assert decisions["cause"].verdict == "confirmed" and not decisions["cause"].conflicts
