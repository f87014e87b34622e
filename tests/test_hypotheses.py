"""Hypotheses that blame a change, refuted or confirmed the way people test them (docs/deciding.md §7).

Each test builds the facts a run would have read (tests/rulesworld.py): no loop, no store.
"""

from __future__ import annotations

from rulesworld import World, at, case, change, dep, flat, names, rise

from graphs.rulebook.counter_evidence import decide_counter_evidence
from graphs.rulebook.hypotheses import read_blame, restates_symptom
from graphs.rulebook.root import trace
from state.case import CounterEvidenceClaim
from state.evidence import ChangesAction
from state.facts import VersionSeenFact
from tools.entities import EntityExtractor
from tools.profile import default_profile

P = default_profile()
CLAIM = CounterEvidenceClaim(id="ce", kind="counter_evidence", statement="s", hypothesis="h")


def _case(blames: dict | None = None, statement: str = "the in-window web deployment (2.4.1) caused it",
          predicts: dict | None = None):
    h = {"id": "h", "statement": statement}
    if blames is not None:
        h["blames"] = blames
    if predicts is not None or blames is None:
        h["predicts"] = predicts or {"metric": "p95_ms", "entity": "web", "direction": "up", "min_ratio": 1.5}
    c = case(hypotheses=[h])
    return c.model_copy(update={"required_claims": (*c.required_claims, CLAIM)})


def _deploy(minute: float, started: float | None = None, **kw):
    d = change("DEP-1", "web", minute, **kw).model_copy(update={"version_from": "2.4.0", "version_to": "2.4.1"})
    return d.model_copy(update={"started_at": at(started)}) if started is not None else d


def _decide(w: World):
    k = w.knowledge()
    return decide_counter_evidence(CLAIM, k, trace(k, "web", 6))


def test_a_prediction_of_the_subjects_own_symptom_tells_no_cause_apart_and_the_named_change_is_tested():
    c = _case()
    reg = EntityExtractor({"web": "service", "db": "database"})
    assert restates_symptom(c.hypotheses[0], c, P)
    b = read_blame(c.hypotheses[0], c, reg, P)
    assert b is not None and b.entity == "web" and "deployment" in b.types and "2.4.1" in b.versions


def test_a_prediction_of_another_metric_is_still_decided_by_that_metric():
    c = _case(statement="the web deployment exhausted the db pool",
              predicts={"metric": "pool_wait_ms", "entity": "db", "direction": "up", "min_ratio": 2})
    reg = EntityExtractor({"web": "service", "db": "database"})
    assert not restates_symptom(c.hypotheses[0], c, P) and read_blame(c.hypotheses[0], c, reg, P) is None


def test_a_deploy_whose_callers_anomaly_is_explained_by_a_cause_found_below_is_refuted():
    w = World(_case(blames={"entity": "web", "version": "2.4.1"}))
    w.read(rise("web", 0), names("web", "db", 0.2, kind="database"))
    w.read(dep("web", "db"), source_kind="config")
    w.read(rise("db", -2))
    w.read(change("CFG-9", "db", -4, type_="config_push"), _deploy(-1, started=-3), source_kind="change")
    w.everything_looked("web", "db")
    d = _decide(w)
    assert d.verdict == "refuted", d.rule
    assert "explained by db" in d.rule and "CFG-9" in d.rule


def test_a_deploy_that_was_rolled_back_without_ending_the_anomaly_is_refuted():
    w = World(_case(blames={"entity": "web"}))
    w.read(rise("web", 0))
    rb = change("DEP-2", "web", 8, type_="rollback", rollback_of="DEP-1")
    w.read(_deploy(-2), rb, source_kind="change")
    w.everything_looked("web")
    d = _decide(w)
    assert d.verdict == "refuted" and "rolled DEP-1 back" in d.rule


def test_a_deploy_is_refuted_when_instances_still_on_the_old_version_fail_the_same_way():
    w = World(_case(blames={"entity": "web", "version": "2.4.1"}))
    w.read(rise("web", 0))
    w.read(VersionSeenFact(entity="web", version="2.4.0", lines=40, bad=25, first_bad=at(0.5)),
           VersionSeenFact(entity="web", version="2.4.1", lines=10, bad=6, first_bad=at(1)))
    w.read(_deploy(5, started=-1), source_kind="change")
    w.everything_looked("web")
    d = _decide(w)
    assert d.verdict == "refuted" and "still on 2.4.0 fail" in d.rule


def test_a_release_that_no_change_source_holds_is_refuted():
    w = World(_case(blames={"entity": "web", "types": ["deployment"]}))
    w.read(rise("web", 0))
    w.looked(ChangesAction(entities=("web",), environment="prod", start=at(-60), end=at(20)))
    d = _decide(w)
    assert d.verdict == "refuted" and "no a change of web" not in d.rule and "searched" in d.rule


def test_a_release_is_not_refuted_while_its_change_records_are_unread():
    w = World(_case(blames={"entity": "web"}))
    w.read(rise("web", 0))
    d = _decide(w)
    assert d.verdict == "insufficient" and d.missing


def test_the_change_the_causal_chain_ends_at_confirms_the_hypothesis():
    w = World(_case(blames={"entity": "db", "change": "CFG-9"}))
    w.read(rise("web", 0), names("web", "db", 0.2, kind="database"))
    w.read(dep("web", "db"), source_kind="config")
    w.read(rise("db", -2))
    w.read(change("CFG-9", "db", -4, type_="config_push"), source_kind="change")
    w.everything_looked("web", "db")
    d = _decide(w)
    assert d.verdict == "confirmed" and d.supporting, d.rule


def test_a_deploy_of_the_subject_picked_by_timing_alone_confirms_nothing():
    """At the subject, timing is not enough (§5): the hypothesis stays open, naming what would decide it."""
    w = World(_case(blames={"entity": "web", "version": "2.4.1"}))
    w.read(rise("web", 0))
    w.read(_deploy(-2), source_kind="change")
    w.everything_looked("web")
    d = _decide(w)
    assert d.verdict == "insufficient"


def test_a_deploy_with_nothing_read_against_it_stays_insufficient_naming_what_would_rule_it_out():
    w = World(_case(blames={"entity": "web", "version": "2.4.1"}))
    w.read(rise("web", 0))
    w.read(_deploy(-2), source_kind="change")
    w.looked(ChangesAction(entities=("web",), environment="prod", start=at(-60), end=at(20)))
    d = _decide(w)
    assert d.verdict == "insufficient" and any("rule out DEP-1" in m for m in d.missing)


def test_a_deploy_above_a_noisy_neighbour_the_path_settles_on_is_refuted_even_without_a_change_of_the_neighbour():
    """web deployed, then its dependency db slowed because a batch job sharing db's node loaded it. No
    change of the batch job is known, yet the path settles on its load: web's deploy did not cause it."""
    w = World(_case(blames={"entity": "web", "version": "2.4.1"}), kinds={"db": "database", "node-7": "node"})
    w.read(rise("web", 0), names("web", "db", 0.2, kind="database"))
    w.read(dep("web", "db"), source_kind="config")
    w.read(rise("db", 1), dep("db", "node-7", "runs_on", "pod placement"), source_kind="kubernetes")
    w.read(rise("node-7", -1, base=40, level=99, role="saturation", unit="%", name="cpu_pct"))
    w.read(rise("batch", -3, base=0.5, level=7.5, role="saturation", unit="cores", name="cpu_cores"),
           dep("batch", "node-7", "runs_on", "pod placement"), source_kind="kubernetes")
    w.read(_deploy(-1, started=-3), source_kind="change")
    w.everything_looked("web", "db", "node-7", "batch")
    d = _decide(w)
    assert d.verdict == "refuted", d.rule
    assert "noisy neighbour at batch" in d.rule


def _mechanism_case(direction: str = "up"):
    """db's config push is the cause; the hypothesis blames it *and* says how: web's timeouts rise."""
    return _case(blames={"entity": "db", "change": "CFG-9"}, statement="the db push lowered a timeout",
                 predicts={"metric": "timeouts_per_s", "entity": "web", "direction": direction, "min_ratio": 3})


def _chain_to_cfg9(w: World) -> World:
    w.read(rise("web", 0), names("web", "db", 0.2, kind="database"))
    w.read(dep("web", "db"), source_kind="config")
    w.read(rise("db", -2))
    w.read(change("CFG-9", "db", -4, type_="config_push"), source_kind="change")
    w.everything_looked("web", "db")
    return w


def test_a_hypothesis_that_says_how_the_change_did_it_stays_open_until_that_mechanism_is_read():
    d = _decide(_chain_to_cfg9(World(_mechanism_case())))
    assert d.verdict == "insufficient", d.rule
    assert any("timeouts_per_s of web" in m for m in d.missing)


def test_the_right_change_by_a_mechanism_that_is_not_observed_refutes_the_hypothesis():
    """The path ends at the blamed change, but the series the hypothesis says it moved is flat: the
    change may be the cause, the explanation is still wrong."""
    w = _chain_to_cfg9(World(_mechanism_case()))
    w.read(flat("web", 0.5, role="errors", unit="1/s", name="timeouts_per_s"))
    d = _decide(w)
    assert d.verdict == "refuted" and "not observed" in d.rule, d.rule
    assert d.opposing


def test_the_right_change_by_the_mechanism_observed_confirms_the_hypothesis():
    w = _chain_to_cfg9(World(_mechanism_case()))
    w.read(rise("web", 0.5, base=0.5, level=9.0, role="errors", unit="1/s", name="timeouts_per_s"))
    d = _decide(w)
    assert d.verdict == "confirmed" and "observed" in d.rule, d.rule


def test_times_in_a_verdict_are_told_in_the_cases_own_zone():
    """A case written for +05:30 reads its rules in +05:30, as its report header says; the facts
    themselves keep UTC."""
    from datetime import timedelta, timezone

    ist = timezone(timedelta(hours=5, minutes=30))
    c = _case(blames={"entity": "web"})
    c = c.model_copy(update={"window": c.window.model_copy(update={"start": c.window.start.astimezone(ist),
                                                                   "end": c.window.end.astimezone(ist)})})
    w = World(c)
    w.read(rise("web", 0))
    w.read(_deploy(5, started=4), source_kind="change")
    w.everything_looked("web")
    d = _decide(w)
    assert d.verdict == "refuted" and "began at 14:30:00, before DEP-1 started at 14:34:00" in d.rule, d.rule


def _flag(cid: str, minute: float, name: str, was: str, now: str):
    from state.change import FlagChange

    return change(cid, "web", minute, type_="feature_flag").model_copy(
        update={"flag": FlagChange(name=name, from_=was, to=now)})


def _settles_on_a_flag_set_back(w: World, *, set_back: bool) -> World:
    """web slows at 0 after two flag changes; the rollout raised at −2 is set back at 10 (when it was set
    back, web recovered at 12), and checkout, which nothing on the path relates to, deployed at −20."""
    base = rise("web", 0)
    w.read(base.model_copy(update={"recovered_at": at(12) if set_back else None}))
    flags = [_flag("F-0", -30, "dark-mode", "false", "true"), _flag("F-1", -2, "similar-v2", "rollout=10", "rollout=100")]
    if set_back:
        flags.append(_flag("F-2", 10, "similar-v2", "rollout=100", "rollout=10"))
    w.read(*flags, change("DEP-9", "checkout", -20), source_kind="change")
    w.everything_looked("web", "checkout")
    return w


def test_a_flag_set_back_to_what_it_was_ends_the_anomaly_and_so_ties_that_flag_change_to_it():
    """A later change that puts a flag back as it was is its rollback (§5): the anomaly ending with it
    names which of two flag changes caused it."""
    from graphs.rulebook.cause import cause_at

    w = _settles_on_a_flag_set_back(World(_case(blames={"entity": "checkout"})), set_back=True)
    k = w.knowledge()
    res = cause_at(k, trace(k, "web", 6))
    assert not res.ambiguous and res.cause is not None and res.cause.change.change.id == "F-1"
    assert any("ended after F-2" in how for _x, how, _e in res.cause.change.implicated)


def test_a_deploy_of_something_unrelated_to_the_path_is_refuted_once_the_anomaly_itself_names_another_change():
    w = _settles_on_a_flag_set_back(World(_case(blames={"entity": "checkout"})), set_back=True)
    d = _decide(w)
    assert d.verdict == "refuted", d.rule
    assert "tied to F-1" in d.rule and "neither on the anomalous path" in d.rule


def test_an_unrelated_deploy_stays_open_while_the_cause_is_picked_by_timing_alone():
    """Without the set-back nothing ties either flag change to the anomaly: the unrelated deploy is not
    ruled out by a cause that is itself only a guess."""
    w = _settles_on_a_flag_set_back(World(_case(blames={"entity": "checkout"})), set_back=False)
    assert _decide(w).verdict == "insufficient"


def test_an_unrelated_looking_deploy_is_not_refuted_when_a_relation_ties_it_to_the_path():
    w = _settles_on_a_flag_set_back(World(_case(blames={"entity": "checkout"})), set_back=True)
    w.read(dep("web", "checkout"), source_kind="config")
    assert "tied to F-1" not in _decide(w).rule


def test_a_prediction_that_a_resource_of_the_subject_saturates_is_not_a_restated_latency_symptom():
    """"The GPU pool of web is saturated" predicts web's GPU utilisation up: a latency symptom does not
    make that true whatever the cause, so it is decided by that series, not read as blaming a change."""
    from state.case import SymptomClaim

    c = _case(statement="the GPU node pool of web is saturated", predicts={"metric": "gpu_util_percent", "entity": "web",
                                                                          "direction": "up", "min_ratio": 1.2})
    sym = SymptomClaim(id="sym", kind="symptom", statement="web is slow", metric="p95_ms", direction="up")
    c = c.model_copy(update={"required_claims": (*c.required_claims, sym)})
    reg = EntityExtractor({"web": "service"})
    assert not restates_symptom(c.hypotheses[0], c, P) and read_blame(c.hypotheses[0], c, reg, P) is None
    latency = _case(predicts={"metric": "p95_ms", "entity": "web", "direction": "up", "min_ratio": 1.5})
    latency = latency.model_copy(update={"required_claims": (*latency.required_claims, sym)})
    assert restates_symptom(latency.hypotheses[0], latency, P)
