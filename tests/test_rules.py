"""The causal rules (docs/deciding.md §3–§7) as pure functions of read facts: each rule can fail.

Every test builds the facts a run would have read (tests/rulesworld.py) and asks the rules
what follows: which path, which root, which cause, which verdict.
"""

from __future__ import annotations

from rulesworld import World, at, case, change, dep, fall, flat, lines, names, rise

from graphs.rulebook.anomalies import entity_state
from graphs.rulebook.causal_chain import decide_causal
from graphs.rulebook.cause import cause_at
from graphs.rulebook.counter_evidence import decide_counter_evidence
from graphs.rulebook.path import explains, named_by
from graphs.rulebook.root import trace
from state.case import CausalChainClaim, CounterEvidenceClaim
from state.facts import UPSTREAM
from state.evidence import ChangesAction, RelationsAction, TelemetryAction
from state.facts import PlacementFact, RelationFact, SignalFact

CLAIM = CausalChainClaim(id="cause", kind="causal_chain", statement="s")


def decide(w: World, claim: CausalChainClaim = CLAIM):
    k = w.knowledge()
    return decide_causal(claim, k), k


def cascade(depth: int = 3, cause_minute: float = -8) -> World:
    """web → s1 → … → s<depth>, each next onset two and a half minutes earlier; a change of the last."""
    chain = ["web", *(f"s{i}" for i in range(1, depth + 1))]
    w = World()
    for i, e in enumerate(chain):
        w.read(rise(e, onset_min=-2.5 * i))
    for a, b in zip(chain, chain[1:]):
        w.read(dep(a, b), source_kind="catalog")
    w.read(change("CFG-1", chain[-1], cause_minute - 2.5 * (depth - 1) - 1, type_="config_push", keys=("pool_size",)),
           source_kind="change")
    w.everything_looked(*chain)
    return w


def test_a_cascade_is_followed_hop_by_hop_to_the_change_of_its_deepest_entity():
    d, _k = decide(cascade(depth=3))
    assert d.verdict == "confirmed", d.missing
    assert d.root_cause.entity == "s3" and d.root_cause.change == "CFG-1" and d.root_cause.kind == "config_push"
    assert d.root_cause.path == ("web", "s1", "s2", "s3")
    assert [(h.source, h.target) for h in d.path][:3] == [("web", "s1"), ("s1", "s2"), ("s2", "s3")]


def test_an_innocent_change_of_the_subject_is_refuted_by_the_anomaly_below_it():
    w = cascade(depth=2)
    w.read(change("DEP-web", "web", -3), source_kind="change")
    d, _k = decide(w)
    assert d.root_cause.change == "CFG-1"
    alt = next(a for a in d.alternatives if a.what == "DEP-web")
    assert alt.status == "refuted" and "explained by s1" in alt.why


def test_a_dependency_whose_anomaly_starts_after_its_caller_does_not_explain_it():
    w = World()
    w.read(rise("web", 0))
    w.read(rise("db", 5))  # later than web + 2 minutes
    w.read(dep("web", "db"), source_kind="catalog")
    w.everything_looked("web", "db")
    k = w.knowledge()
    assert not explains(k, entity_state(k, "web"), entity_state(k, "db")).observed
    assert trace(k, "web", 6).root == "web"


def test_a_dependency_that_rose_far_less_than_its_caller_does_not_explain_it():
    w = World()
    w.read(rise("web", 0, base=200, level=2000))
    w.read(rise("inv", -1, base=180, level=390))
    w.read(dep("web", "inv"), source_kind="catalog")
    w.everything_looked("web", "inv")
    k = w.knowledge()
    ex = explains(k, entity_state(k, "web"), entity_state(k, "inv"))
    assert ex.observed and not ex.explains and "amplified" in ex.why
    # the same rise in seconds against milliseconds compares in one unit
    w2 = World()
    w2.read(rise("web", 0, base=200, level=2000))
    w2.read(rise("inv", -1, base=0.2, level=1.9, unit="s"))
    w2.read(dep("web", "inv"), source_kind="catalog")
    k2 = w2.knowledge()
    assert explains(k2, entity_state(k2, "web"), entity_state(k2, "inv")).explains


def test_a_co_mention_is_never_a_hop():
    w = World()
    w.read(rise("web", 0))
    w.read(rise("cache", -3))
    # the two names only appear side by side: no relation fact, so no path
    w.read(names("web", "cache", 1, kind="service"))
    w.everything_looked("web", "cache")
    t = trace(w.knowledge(), "web", 6)
    assert t.root == "web" and "cache" not in t.nodes


def test_a_single_change_of_the_subject_needs_a_link_beyond_timing():
    w = World()
    w.read(rise("web", 0))
    w.read(change("DEP-1", "web", -4, keys=("retry_budget",)), source_kind="change")
    w.everything_looked("web")
    d, _k = decide(w)
    assert d.verdict == "inferred" and any("naming what it changed" in m for m in d.missing)
    w.read(names("web", "retry_budget", 0.5))
    d2, _k = decide(w)
    assert d2.verdict == "confirmed" and d2.root_cause.element == "retry_budget"


def test_of_two_changes_the_one_the_anomaly_names_is_the_cause_in_any_key_style():
    w = cascade(depth=1)
    w.read(change("CFG-2", "s1", -5, type_="config_push", keys=("DB_MAX_OPEN_CONNS",)), source_kind="change")
    w.read(names("s1", "db_max_open_conns", -2))
    d, _k = decide(w)
    assert d.verdict == "confirmed" and d.root_cause.change == "CFG-2"
    assert next(a for a in d.alternatives if a.what == "CFG-1").status == "not_implicated"


def test_two_changes_and_nothing_naming_either_leave_the_cause_inferred():
    w = cascade(depth=1)
    w.read(change("CFG-2", "s1", -5, type_="config_push", keys=("other_key",)), source_kind="change")
    d, _k = decide(w)
    assert d.verdict == "inferred" and any("which of" in m for m in d.missing)


def test_of_two_changes_in_doubt_the_deployment_a_pipeline_run_wraps_is_the_one_named():
    """A CI run and the deployment it drove are two records of one rollout: while the cause stays in
    doubt, the record of what took effect (the inner span) is named, not the run around it."""
    w = cascade(depth=1)
    w.evidence = [e for e in w.evidence if not any(getattr(f, "kind", "") == "change" for f in e.facts)]
    w.read(change("RUN-418", "s1", -1, type_="deployment").model_copy(update={"started_at": at(-9)}),
           change("ECS-58", "s1", -2, type_="deployment").model_copy(update={"started_at": at(-6)}), source_kind="change")
    d, _k = decide(w)
    assert d.verdict == "inferred" and any("which of" in m for m in d.missing), d.missing
    assert d.root_cause is not None and d.root_cause.change == "ECS-58"


def test_a_change_after_the_onset_is_not_a_cause():
    w = cascade(depth=1, cause_minute=10)
    d, _k = decide(w)
    assert d.verdict == "insufficient" and d.root_cause is None
    assert any(a.status == "after_onset" for a in d.alternatives)


def test_a_rollback_that_did_not_end_the_anomaly_refutes_the_change():
    w = cascade(depth=1)
    w.read(change("RB-1", "s1", 5, type_="rollback", rollback_of="CFG-1"), source_kind="change")
    d, _k = decide(w)
    assert d.root_cause is None
    assert next(a for a in d.alternatives if a.what == "CFG-1").status == "refuted"


def test_a_noisy_neighbour_is_found_through_the_node_both_run_on():
    w = World(kinds={"node-7": "node"})
    w.read(rise("web", 0))
    w.read(rise("node-7", -3, base=40, level=99, role="saturation", unit="%", name="cpu_pct"))
    w.read(rise("batch", -6, base=0.5, level=7.5, role="saturation", unit="cores", name="cpu_cores"))
    w.read(PlacementFact(workload="web", node="node-7"), RelationFact(source="web", target="node-7", relation="runs_on",
                                                                      via="pod placement"), source_kind="kubernetes")
    w.read(RelationFact(source="batch", target="node-7", relation="runs_on", via="pod placement"),
           source_kind="kubernetes")
    w.read(change("DEP-batch", "batch", -7), source_kind="change")
    w.everything_looked("web", "node-7", "batch")
    d, _k = decide(w)
    assert d.verdict == "confirmed", d.missing
    assert (d.root_cause.entity, d.root_cause.change) == ("batch", "DEP-batch")
    assert d.root_cause.path == ("web", "node-7", "batch")


def test_load_with_no_change_is_capacity():
    w = World()
    w.read(rise("web", 0))
    w.read(rise("web", -2, base=500, level=1500, role="traffic", unit="rps", name="requests_rps"))
    w.everything_looked("web")
    d, _k = decide(w)
    assert d.root_cause is not None and d.root_cause.kind == "capacity" and d.root_cause.change is None


def test_a_domain_with_no_telemetry_is_seen_failing_through_its_callers_and_its_certificate_change_found():
    w = World(kinds={"api.pay.example": "domain"})
    w.read(rise("web", 0, role="errors", unit="%", base=0.2, level=9, name="error_pct"))
    w.read(dep("web", "api.pay.example", relation="configured", via="config key pay.url"), source_kind="config")
    w.read(names("web", "api.pay.example", -1, kind="domain"))
    w.read(change("CERT-1", "payments-team", -4, type_="certificate", target="api.pay.example"), source_kind="change")
    w.everything_looked("web", "api.pay.example")
    d, _k = decide(w)
    assert d.verdict == "confirmed", d.missing
    assert (d.root_cause.entity, d.root_cause.kind, d.root_cause.change) == ("api.pay.example", "certificate", "CERT-1")


def test_a_library_is_looked_through_to_what_it_talks_to():
    w = World(kinds={"pay-client": "component"})
    w.read(rise("web", 0))
    w.read(rise("payments", -3))
    w.read(dep("web", "pay-client"), dep("pay-client", "payments", relation="talks_to"), source_kind="catalog")
    w.read(change("CFG-9", "payments", -6, type_="config_push", keys=("k",)), source_kind="change")
    w.everything_looked("web", "pay-client", "payments")
    d, _k = decide(w)
    assert d.root_cause.entity == "payments" and d.root_cause.path == ("web", "payments")


def test_an_unreadable_telemetry_source_on_the_path_leaves_the_cause_insufficient():
    w = cascade(depth=1)
    w.looked(TelemetryAction(entities=("s1",), environment="prod"), denied=("s1-logs",))
    d, _k = decide(w)
    assert d.verdict == "insufficient" and d.root_cause is None and "s1-logs" in d.blocked_by


def test_a_competing_hypothesis_that_holds_keeps_the_cause_from_being_confirmed():
    hyp = [{"id": "h", "statement": "cpu", "predicts": {"metric": "cpu_pct", "direction": "up", "min_ratio": 1.5}}]
    w = cascade(depth=1)
    w.case = case(competitors=("h",), hypotheses=hyp)
    w.read(rise("web", -1, base=30, level=90, role="saturation", unit="%", name="cpu_pct"))
    claim = CausalChainClaim(id="cause", kind="causal_chain", statement="s", competitors=("h",))
    d, _k = decide(w, claim)
    assert d.verdict == "inferred" and d.state == "conflicted"
    w2 = cascade(depth=1)
    w2.case = case(competitors=("h",), hypotheses=hyp)
    w2.read(flat("web", 30, role="saturation", unit="%", name="cpu_pct"))
    d2, _k = decide(w2, claim)
    assert d2.verdict == "confirmed"
    assert next(a for a in d2.alternatives if a.what == "hypothesis h").status == "refuted"


def test_a_dependency_left_unread_keeps_the_path_open():
    w = World()
    w.read(rise("web", 0))
    w.read(dep("web", "db"), source_kind="catalog")
    w.read(change("DEP-1", "web", -4), source_kind="change")
    w.everything_looked("web")
    t = trace(w.knowledge(), "web", 6)
    assert ("telemetry", "db") in [(a, e) for a, e, _w in t.pending]
    d, _k = decide(w)
    assert d.verdict != "confirmed"


def test_path_search_visits_each_entity_once_on_a_dense_graph():
    """200 entities, every one depending on ten others: the search is linear in what was read."""
    import random

    rnd = random.Random(7)
    ents = [f"e{i}" for i in range(200)]
    w = World(case("e0"))
    for i, e in enumerate(ents):
        w.read(rise(e, onset_min=-0.01 * i) if i % 3 == 0 else flat(e))
        w.read(*[dep(e, x) for x in rnd.sample(ents, 10) if x != e], source_kind="catalog")
    w.everything_looked(*ents)
    k = w.knowledge()
    calls = {"n": 0}
    import graphs.rulebook.path as path
    import graphs.rulebook.root as root

    real = entity_state

    def counting(kk, e, caller=None):
        calls["n"] += 1
        return real(kk, e, caller)

    path.entity_state = root.entity_state = counting  # where the path and its root look states up
    try:
        t = trace(k, "e0", 8)
    finally:
        path.entity_state = root.entity_state = real
    assert t.root is not None and len(t.nodes) <= 200
    assert calls["n"] <= 200 * 11, "each relation is looked at a bounded number of times"
    _ = cause_at(k, t)


# --- change in window, scoped to the anomalous path ----------------------------------------------

def _path_change_claim():
    from state.case import ChangeInWindowClaim

    return ChangeInWindowClaim(id="chg", kind="change_in_window", statement="s", scope="path")


def _decide_change(w: World):
    from graphs.rulebook.verdicts import decide

    k = w.knowledge()
    return decide(_path_change_claim(), k, trace(k, "web", 6))


def test_a_path_scoped_change_claim_is_refuted_when_the_subject_is_quiet_and_has_no_change():
    """No anomaly at the subject: the path is the subject alone, and its changes were all searched."""
    w = World()
    w.read(flat("web"))
    w.everything_looked("web")
    d = _decide_change(w)
    assert d.verdict == "refuted"


def test_a_path_scoped_change_claim_finds_the_change_of_the_root():
    w = cascade(2)
    d = _decide_change(w)
    assert d.verdict == "confirmed"


def test_a_timing_only_change_is_not_confirmed_when_a_dependency_of_the_root_has_no_telemetry():
    """s2 is a service the root depends on but nothing in the case observes it: it cannot be ruled out."""
    w = cascade(2)
    w.read(dep("s2", "blind-svc"), source_kind="catalog")
    w.kinds["blind-svc"] = "service"
    w.everything_looked("blind-svc")
    d, _k = decide(w)
    assert d.verdict == "inferred" and d.root_cause is not None and d.root_cause.entity == "s2"
    assert any("blind-svc" in m for m in d.missing)


def _undecidable_dependency(w: World) -> None:
    """s2 depends on a service whose only metric cannot decide anything (every value +Inf, say)."""
    w.read(dep("s2", "inf-svc"), source_kind="catalog")
    w.kinds["inf-svc"] = "service"
    w.read(flat("inf-svc").model_copy(update={"decidable": False}))
    w.everything_looked("inf-svc")


def test_a_dependency_whose_telemetry_cannot_decide_is_unchecked_and_keeps_a_timing_only_change_inferred():
    w = cascade(2)
    _undecidable_dependency(w)
    d, k = decide(w)
    assert entity_state(k, "inf-svc").status == "undecidable"
    assert d.verdict == "inferred" and d.root_cause is not None and d.root_cause.entity == "s2"
    assert any("inf-svc" in m and "cannot be ruled out" in m for m in d.missing)
    alt = next(a for a in d.alternatives if a.what == "inf-svc")
    assert alt.status == "unchecked", "telemetry that cannot decide refutes nothing"


def test_an_implicated_change_is_confirmed_over_an_undecidable_dependency_which_stays_unchecked():
    w = cascade(2)
    _undecidable_dependency(w)
    w.read(names("s2", "pool_size", -4))  # s2's error lines name the key CFG-1 changed
    d, _k = decide(w)
    assert d.verdict == "confirmed" and d.root_cause is not None and d.root_cause.change == "CFG-1", d.missing
    assert next(a for a in d.alternatives if a.what == "inf-svc").status == "unchecked"


def test_a_change_the_anomaly_names_is_confirmed_even_with_an_unobserved_dependency():
    w = cascade(2)
    w.read(dep("s2", "blind-svc"), source_kind="catalog")
    w.kinds["blind-svc"] = "service"
    w.everything_looked("blind-svc")
    w.read(names("s2", "pool_size", -4))  # s2's error lines name the key CFG-1 changed
    d, _k = decide(w)
    assert d.root_cause is not None and d.root_cause.change == "CFG-1" and d.verdict == "confirmed", d.missing


# --- following the anomaly's own lines ---------------------------------------------------------

def test_a_dependency_the_callers_errors_name_is_followed_first_and_the_others_wait():
    """web's bursting error lines name s1; s1 explains web, so web's other dependencies are only
    looked up to complete the picture, never before the path reaches its end."""
    w = World()
    w.read(rise("web", 0), names("web", "s1", 0.5, kind="service"))
    w.read(dep("web", "s1"), dep("web", "other-a"), dep("web", "other-b"), source_kind="catalog")
    w.read(rise("s1", -3))
    w.looked(TelemetryAction(entities=("web",), environment="prod"))
    w.looked(TelemetryAction(entities=("s1",), environment="prod"))
    t = trace(w.knowledge(), "web", 6)
    assert t.path("s1") == ["web", "s1"] and t.nodes["s1"].via_named
    pending = {(a, e) for a, e, _w in t.pending}
    assert ("telemetry", "other-a") not in pending and ("relations", "web") not in pending
    assert ("telemetry", "other-a") in {(a, e) for a, e, _w in t.later}
    assert ("relations", "s1") in pending, "the end of the path still needs what it depends on"


def _led_past(other_onset: float | None, *, other_depends_on_root: bool = False) -> World:
    """web's errors name s1; s1 → db, whose change CFG-1 is the cause; web also depends on `other`,
    anomalous since `other_onset` (minutes; None: its telemetry not read yet), which web's errors
    do not name."""
    w = World()
    w.read(rise("web", 0), names("web", "s1", 0.5, kind="service"))
    w.read(dep("web", "s1"), dep("web", "other"), dep("s1", "db"), source_kind="catalog")
    w.read(rise("s1", -3), rise("db", -6))
    if other_onset is not None:
        w.read(rise("other", other_onset))
    if other_depends_on_root:
        w.read(dep("other", "db"), source_kind="catalog")
    w.read(change("CFG-1", "db", -8, type_="config_push", keys=("pool_size",)), source_kind="change")
    w.everything_looked("web", "s1", "db", *(("other",) if other_onset is not None else ()))
    return w


def test_an_anomalous_dependency_the_errors_do_not_name_is_a_rival_branch_when_it_started_as_early():
    """Two things broke at once: web's errors name s1, but `other` explains web just as well and
    began within the tolerance of the root found; the root is not the only candidate."""
    d, _k = decide(_led_past(-5))
    assert d.root_cause is not None and d.root_cause.entity == "db"
    assert d.verdict == "inferred" and any("which root" in m and "other" in m for m in d.missing), d.missing
    alt = next(a for a in d.alternatives if a.what == "other")
    assert alt.status == "off_path" and "rival branch" in alt.why


def test_another_victim_of_the_same_root_is_no_rival():
    """`other` is anomalous too, but a stated relation ties it to the root: one cause, two victims."""
    d, _k = decide(_led_past(-5, other_depends_on_root=True))
    assert d.verdict == "confirmed", d.missing
    assert next(a for a in d.alternatives if a.what == "other").status == "off_path"


def test_an_anomalous_dependency_that_began_well_after_the_root_is_no_rival():
    d, _k = decide(_led_past(-1))
    assert d.verdict == "confirmed", d.missing


def test_a_dependency_the_errors_do_not_name_is_read_before_the_cause_is_confirmed():
    """The errors point along the path, but a dependency of the path left unread may be a rival branch."""
    d, _k = decide(_led_past(None))
    assert d.root_cause is not None and d.root_cause.entity == "db"
    assert d.verdict == "inferred" and any("other" in m for m in d.missing), d.missing


def test_with_no_named_dependency_every_dependency_is_read_before_the_path_goes_on():
    w = World()
    w.read(rise("web", 0))
    w.read(dep("web", "s1"), dep("web", "other-a"), source_kind="catalog")
    w.read(rise("s1", -3))
    w.looked(TelemetryAction(entities=("web",), environment="prod"))
    w.looked(TelemetryAction(entities=("s1",), environment="prod"))
    t = trace(w.knowledge(), "web", 6)
    assert ("telemetry", "other-a") in {(a, e) for a, e, _w in t.pending}


def test_a_dependency_that_looks_healthy_is_followed_when_its_callers_errors_naming_it_burst():
    """A certificate or DNS change breaks the way to a service whose own metrics stay flat: its
    caller's errors naming it are the anomaly, and the change of the service is the cause."""
    w = World()
    w.read(rise("web", 0), names("web", "api", 0.2, kind="service"))
    w.read(dep("web", "api"), source_kind="config")
    w.read(flat("api"))
    w.read(change("CERT-9", "api", -2, type_="certificate"), source_kind="change")
    w.everything_looked("web", "api")
    d, k = decide(w)
    assert entity_state(k, "api", caller="web").how == "callers"
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.change) == ("api", "CERT-9"), d.missing
    assert d.verdict == "confirmed", d.missing


def test_a_healthy_dependency_is_seen_failing_only_by_the_caller_whose_errors_name_it():
    """Another service's errors naming db do not make db a hop of web's path."""
    w = World()
    w.read(rise("web", 0))
    w.read(rise("batch", -1), names("batch", "db", -1, kind="database"))
    w.read(dep("web", "db"), source_kind="catalog")
    w.read(flat("db"))
    w.everything_looked("web", "db", "batch")
    t = trace(w.knowledge(), "web", 6)
    assert "db" not in t.nodes and t.root == "web"


def test_a_change_under_way_when_the_anomaly_began_is_a_candidate():
    """A migration (or rolling deploy) that started before the onset and finished after it was acting
    on the root when the anomaly began."""
    w = cascade(depth=1)
    w.evidence = [e for e in w.evidence if not any(getattr(f, "kind", "") == "change" for f in e.facts)]
    slow = change("MIG-7", "s1", 6, type_="deployment").model_copy(update={"started_at": at(-4)})
    w.read(slow, source_kind="change")
    d, _k = decide(w)
    assert d.root_cause is not None and d.root_cause.change == "MIG-7", d.missing


def test_a_queue_whose_backlog_grows_is_looked_through_to_the_consumer_that_slowed():
    w = World(kinds={"jobs-q": "queue"})
    w.read(rise("web", 0), names("web", "jobs-q", 0.2, kind="queue"), names("web", "worker", 0.2, kind="service"))
    w.read(dep("web", "jobs-q", "calls", "log field queue"), dep("web", "worker", "calls", "log field consumer"))
    w.read(rise("jobs-q", -1.5, base=10, level=5000, role="saturation", unit="", name="backlog"))
    w.read(rise("worker", -2))
    w.read(change("FLAG-1", "worker", -4, type_="feature_flag"), source_kind="change")
    w.everything_looked("web", "jobs-q", "worker")
    d, _k = decide(w)
    assert d.root_cause is not None and d.root_cause.entity == "worker" and d.verdict == "confirmed", d.missing
    assert "jobs-q" in {a.what for a in d.alternatives}


def _drained(*, worker_falls_at: float | None, queue_slow: bool = False) -> World:
    """web → q (a queue); `worker` and `reporter` are stated users of q; q's backlog grows from -3; the
    worker's processing rate falls at `worker_falls_at` (None: it stays level); a flag of the worker at -5."""
    w = World(kinds={"q": "queue"})
    w.read(rise("web", 0), names("web", "q", 0, kind="queue"))
    w.read(dep("web", "q", "calls", "config queue_url"), dep("worker", "q"), dep("reporter", "q"), source_kind="catalog")
    w.read(rise("q", -3, base=2, level=600, role="saturation", unit="s", name="oldest_message_age"))
    if queue_slow:
        w.read(rise("q", -3, base=20, level=900, name="fetch_p99_ms"))
    w.read(fall("worker", worker_falls_at) if worker_falls_at is not None else flat("worker", 80, role="traffic", unit="1/s"),
           flat("worker", 110, name="handle_p95_ms"))
    w.read(flat("reporter", 5, role="traffic", unit="1/s"))
    w.read(change("FLAG-1", "worker", -5, type_="feature_flag"), source_kind="change")
    w.everything_looked("web", "q", "worker", "reporter")
    return w


def test_a_queue_whose_backlog_grows_is_followed_to_the_user_whose_processing_rate_fell_first():
    """A backlog grows when what drains the queue slows down: a stated user of the queue whose
    processing rate fell no later than the backlog rose is the next hop, though nothing names it."""
    d, _k = decide(_drained(worker_falls_at=-4))
    assert d.root_cause is not None and d.root_cause.entity == "worker" and d.root_cause.change == "FLAG-1", d.missing
    assert d.root_cause.path == ("web", "q", "worker")
    assert d.path[1].relation == "drained by" and "drains q" in d.path[1].note
    assert next(a for a in d.alternatives if a.what == "reporter").status == "refuted"


def test_a_queue_whose_own_answers_went_bad_is_failing_itself_and_its_slowed_users_are_its_victims():
    """Brokers that answer slowly slow every user of them: a user's lower pace then follows from the
    queue, and the queue, with its change, is the root."""
    w = _drained(worker_falls_at=-3, queue_slow=True)
    w.read(change("REBAL-1", "q", -5, type_="infrastructure"), source_kind="change")
    d, _k = decide(w)
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.change) == ("q", "REBAL-1"), d.root_cause


def test_a_queue_whose_users_all_kept_their_pace_ends_the_path_without_a_drain():
    d, _k = decide(_drained(worker_falls_at=None))
    assert d.root_cause is None or d.root_cause.entity != "worker", d.root_cause
    assert d.verdict != "confirmed"


def test_a_user_of_the_queue_that_slowed_only_after_the_backlog_grew_is_no_drain():
    d, _k = decide(_drained(worker_falls_at=4))
    assert d.root_cause is None or d.root_cause.entity != "worker", d.root_cause


def test_a_hop_is_timed_from_the_callers_lines_that_name_it_not_from_its_earlier_unrelated_warnings():
    """web's first bad lines (a trickle naming nothing below) began six minutes before its measured
    rise; its error lines naming s1 began with that rise. s1, anomalous a minute before them, explains
    web along that hop."""
    w = World()
    w.read(rise("web", 0), lines("web", -6), names("web", "s1", -0.5, kind="service"))
    w.read(dep("web", "s1"), source_kind="catalog")
    w.read(rise("s1", -1))
    w.read(change("CFG-1", "s1", -3, type_="config_push", keys=("pool_size",)), source_kind="change")
    w.everything_looked("web", "s1")
    d, k = decide(w)
    assert entity_state(k, "web").onset == at(-6)
    assert explains(k, entity_state(k, "web"), entity_state(k, "s1")).explains
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.change) == ("s1", "CFG-1"), d.missing


def test_a_hop_is_still_timed_from_a_measured_rise_of_the_caller_that_began_before_the_lines_naming_it():
    w = World()
    w.read(rise("web", -6), names("web", "s1", 0, kind="service"))
    w.read(dep("web", "s1"), source_kind="catalog")
    w.read(rise("s1", -1))
    w.everything_looked("web", "s1")
    k = w.knowledge()
    assert not explains(k, entity_state(k, "web"), entity_state(k, "s1")).explains


def test_where_error_lines_name_a_dependency_a_name_only_warnings_carry_does_not_lead():
    w = World()
    w.read(rise("web", 0), names("web", "gw", -6, kind="service", severity="warning"),
           names("web", "s1", 0, kind="service"))
    assert named_by(w.knowledge(), "web") == {"s1"}
    quiet = World()
    quiet.read(rise("web", 0), names("web", "gw", -6, kind="service", severity="warning"),
               names("web", "s1", 0, kind="service", severity="warning"))
    assert named_by(quiet.knowledge(), "web") == {"gw", "s1"}, "with no error line, the warnings say where"


def _provider(*, own_probe: bool = True, egress_change: bool = False) -> World:
    """web → relay → sms (a third party); sms anomalous from -3 on its own probe (or, without it, only as
    relay's errors name it); a deployment of relay at -6; relay's calls pass through `egress`."""
    w = World(kinds={"sms": "external", "egress": "host"})
    w.read(rise("web", 0), names("web", "relay", 0, kind="service"))
    w.read(rise("relay", -2), names("relay", "sms", -2, kind="external"))
    w.read(dep("web", "relay"), dep("relay", "sms"), dep("relay", "egress", "calls", "sentence 'go through'"),
           source_kind="catalog")
    if own_probe:
        w.read(rise("sms", -3, base=0.2, level=4.0, unit="s", name="probe_duration_seconds"))
    w.read(change("DEP-relay", "relay", -6), source_kind="change")
    if egress_change:
        w.read(change("FW-12", "egress", -4, type_="config_push", keys=("allowlist",)), source_kind="change")
    w.everything_looked("web", "relay", "sms", "egress")
    return w


def test_a_third_party_failing_on_its_own_probe_with_nothing_of_ours_changed_is_the_cause():
    """A provider outside the organisation has no change log of ours: when its own probe shows the
    failure first, and nothing of ours changed at it or on the way to it, its own failure is the cause."""
    d, _k = decide(_provider())
    assert d.verdict == "confirmed", d.missing
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.kind, d.root_cause.change) == ("sms", "external", None)
    assert next(a for a in d.alternatives if a.what == "DEP-relay").status == "refuted"


def test_a_third_party_seen_failing_only_through_our_calls_is_not_blamed_on_its_own():
    d, _k = decide(_provider(own_probe=False))
    assert d.verdict != "confirmed" and (d.root_cause is None or d.root_cause.kind != "external"), d.root_cause


def test_a_change_of_ours_at_the_onset_that_nothing_places_keeps_a_third_partys_failure_in_doubt():
    """Blaming a third party is a claim that nothing of ours did it: an unplaced change at the onset
    (a network change nobody related to the path) leaves it inferred."""
    w = _provider()
    w.read(change("NET-7", "core-router", -3, type_="config_push"), source_kind="change")
    d, _k = decide(w)
    assert d.root_cause is not None and d.root_cause.kind == "external"
    assert d.verdict == "inferred" and any("NET-7" in m for m in d.missing), d.missing


def test_a_change_on_the_way_to_a_third_party_is_the_cause_not_the_third_party():
    """Our probe of a provider goes the way our calls go: an egress change at the onset breaks both."""
    d, _k = decide(_provider(egress_change=True))
    assert d.root_cause is not None and d.root_cause.kind != "external" and d.root_cause.change == "FW-12", d.root_cause


def test_a_change_sent_to_a_group_of_targets_is_a_change_of_each_target():
    w = cascade(depth=1)
    w.evidence = [e for e in w.evidence if not any(getattr(f, "kind", "") == "change" for f in e.facts)]
    push = change("PUSH-3", "cache-fleet", -4, type_="config_push").model_copy(update={"targets": ("s1", "other")})
    w.read(push, source_kind="change")
    d, _k = decide(w)
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.change) == ("s1", "PUSH-3"), d.missing


# --- capacity ------------------------------------------------------------------------------------

def _saturated_db(limit: str = "300", last: float = 297.0):
    from state.facts import SnapshotFact

    w = World(kinds={"db": "database"})
    w.read(rise("web", 0), names("web", "db", 0.1, kind="database"))
    w.read(dep("web", "db"), source_kind="config")
    pts = tuple((at(m), 240.0 + (m + 60) * (last - 240.0) / 60) for m in range(-60, 21))
    conns = SignalFact(entity="db", signal="metric", name="pg_stat_activity_count", role="saturation", unit="count",
                       anomalous=False, series="db.connections", points=pts, baseline=250.0, level=last)
    w.read(conns, rise("db", -1, base=0.1, level=5.0, role="errors", unit="lines/min", name="warning/error lines"))
    w.read(SnapshotFact(entity="db", environment="prod", source_id="db.limits", settings={"max_connections": limit}),
           source_kind="config")
    w.everything_looked("web", "db")
    return w


def test_a_root_that_reached_its_configured_limit_with_no_change_is_capacity():
    d, _k = decide(_saturated_db())
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.kind) == ("db", "capacity"), d.missing
    assert d.root_cause.element == "max_connections" and d.root_cause.change is None
    assert d.verdict == "confirmed", d.missing


def test_a_limit_far_above_what_the_series_reached_explains_nothing():
    d, _k = decide(_saturated_db(limit="5000"))
    assert d.root_cause is None and d.verdict == "insufficient"
    assert any("configured limit" in m for m in d.missing)


def test_a_noisy_neighbour_that_a_change_made_one_is_named_with_that_change():
    w = World(kinds={"node-7": "node", "batch": "workload"})
    w.read(rise("web", 0))
    w.read(RelationFact(source="web", target="node-7", relation="runs_on", via="pod placement", environment="prod"),
           PlacementFact(workload="web", node="node-7"), PlacementFact(workload="batch", node="node-7"),
           RelationFact(source="batch", target="node-7", relation="runs_on", via="pod placement", environment="prod"),
           source_kind="kubernetes")
    w.read(rise("node-7", -2, base=40, level=99, role="saturation", unit="%", name="node_cpu"))
    w.read(rise("batch", -3, base=0.5, level=7.5, role="saturation", unit="cores", name="cpu_usage"))
    w.read(change("SYNC-48", "batch", -10), source_kind="change")
    w.everything_looked("web", "node-7", "batch")
    d, _k = decide(w)
    assert d.root_cause is not None, d.missing
    assert (d.root_cause.entity, d.root_cause.kind, d.root_cause.change) == ("batch", "noisy_neighbour", "SYNC-48")
    assert d.verdict == "confirmed", d.missing


# --- partial access (docs/deciding.md §8) --------------------------------------------------------

def test_an_unreadable_source_merely_about_an_entity_whose_anomaly_is_read_changes_nothing():
    """A finance-only metric of the subject, a restricted change of an entity explained below it."""
    w = cascade(depth=2)
    w.looked(TelemetryAction(entities=("web",), environment="prod"), denied=("web-finance-metric",))
    w.looked(ChangesAction(entities=("s1",), environment="prod", start=at(-60), end=at(20)), denied=("s1-secret-change",))
    d, _k = decide(w)
    assert d.verdict == "confirmed" and d.blocked_by == (), d.missing


def test_a_restricted_change_record_of_the_root_blocks_a_cause_chosen_by_timing():
    w = cascade(depth=2)
    w.looked(ChangesAction(entities=("s2",), environment="prod", start=at(-60), end=at(20)), denied=("s2-restricted",))
    d, _k = decide(w)
    assert d.verdict == "insufficient" and "s2-restricted" in d.blocked_by


def test_a_restricted_change_record_of_the_root_does_not_block_the_change_the_anomaly_names():
    w = cascade(depth=2)
    w.read(names("s2", "pool_size", -4))
    w.looked(ChangesAction(entities=("s2",), environment="prod", start=at(-60), end=at(20)), denied=("s2-restricted",))
    d, _k = decide(w)
    assert d.verdict == "confirmed" and d.root_cause.change == "CFG-1", d.missing


def test_an_unmonitored_dependency_the_roots_own_error_lines_do_not_name_is_ruled_out():
    """The root's errors, read whole and bursting, are internal (they name no dependency and blame
    nothing below): an unmonitored dependency is not where they come from, so a timing-only change
    is confirmed."""
    w = cascade(2)
    w.read(dep("s2", "blind-svc"), source_kind="catalog")
    w.kinds["blind-svc"] = "service"
    w.everything_looked("blind-svc")
    w.read(rise("s2", -5, base=0.2, level=6, role="errors", unit="lines/min", name="warning/error lines")
           .model_copy(update={"signal": "logs"}))
    d, _k = decide(w)
    assert d.verdict == "confirmed" and d.root_cause.change == "CFG-1", d.missing


def test_error_lines_that_blame_an_unnamed_upstream_rule_no_unmonitored_dependency_out():
    """"upstream dependency unavailable" says the failure comes from below without saying where: an
    unmonitored dependency may be it, so a change chosen by its timing alone stays inferred."""
    w = cascade(2)
    w.read(dep("s2", "blind-svc"), source_kind="catalog")
    w.kinds["blind-svc"] = "service"
    w.everything_looked("blind-svc")
    w.read(rise("s2", -5, base=0.2, level=6, role="errors", unit="lines/min", name="warning/error lines")
           .model_copy(update={"signal": "logs"}), names("s2", UPSTREAM, -4, kind="upstream"))
    d, _k = decide(w)
    assert d.verdict == "inferred" and any("blind-svc" in m for m in d.missing), d.missing


def test_an_unmonitored_dependency_the_roots_error_lines_name_keeps_the_cause_open():
    w = cascade(2)
    w.read(dep("s2", "blind-svc"), source_kind="catalog")
    w.kinds["blind-svc"] = "service"
    w.everything_looked("blind-svc")
    w.read(rise("s2", -5, base=0.2, level=6, role="errors", unit="lines/min", name="warning/error lines")
           .model_copy(update={"signal": "logs"}), names("s2", "blind-svc", -4, kind="service"))
    d, _k = decide(w)
    assert d.verdict != "confirmed"


def test_a_change_of_what_stands_in_front_of_a_service_only_its_callers_see_failing_is_its_cause():
    """The service's own signals are healthy; its caller's errors name it; its load balancer (stated
    in front of it, no telemetry of its own) had a TLS policy change just before."""
    w = World(kinds={"lb-7": "external"})
    w.read(rise("web", 0), names("web", "api", 0.2, kind="service"))
    w.read(dep("web", "api"), source_kind="config")
    w.read(flat("api"))
    w.read(RelationFact(source="lb-7", target="api", relation="stated", via="sentence 'fronts'",
                        environment="prod"), source_kind="doc")
    w.read(change("LISTENER-1", "lb-7", -2, type_="certificate"), source_kind="change")
    w.everything_looked("web", "api", "lb-7")
    d, _k = decide(w)
    assert d.root_cause is not None, d.missing
    assert (d.root_cause.entity, d.root_cause.change) == ("api", "LISTENER-1") and d.verdict == "confirmed", d.missing
    assert not any("placement" in m for m in d.missing)


def _healthy_api_world(changed_key: str) -> World:
    """edge → web → api: web's errors name api, api's own signals are healthy, and web's deploy changed
    `changed_key` four minutes before the onset."""
    w = World(c=case(subject="edge"))
    w.read(rise("edge", 0), names("edge", "web", 0.1, kind="service"))
    w.read(dep("edge", "web"), source_kind="config")
    w.read(rise("web", -1), names("web", "api", -0.8, kind="service"))
    w.read(dep("web", "api"), source_kind="config")
    w.read(flat("api"))
    w.read(change("DEP-web", "web", -4, keys=(changed_key,)), source_kind="change")
    w.everything_looked("edge", "web", "api")
    return w


def test_a_service_only_its_caller_sees_failing_with_nothing_changed_on_the_way_sends_the_search_back_to_the_caller():
    """web's errors name api, api's own signals are healthy and nothing changed for api or in front of
    it: what fails is web's side of the call, and web's own change (its new client) is the cause."""
    d, _k = decide(_healthy_api_world("api.tls.min_version"))
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.change) == ("web", "DEP-web"), d.missing
    assert "api" in {a.what for a in d.alternatives}


def _unmonitored(kind: str) -> World:
    """web's errors name gw (of `kind`, no signals of its own, no change); web's flag changed at -4."""
    w = World(kinds={"gw": kind})
    w.read(rise("web", 0), names("web", "gw", -0.5, kind=kind))
    w.read(dep("web", "gw"), source_kind="catalog")
    w.read(change("FLAG-9", "web", -4, type_="feature_flag"), source_kind="change")
    w.everything_looked("web", "gw")
    return w


def test_an_unmonitored_service_of_ours_that_nothing_changed_sends_the_search_back_to_its_changed_caller():
    """A gateway of ours with no signals, failing only as its caller sees it, with nothing changed at it or
    on the way, while the caller changed at its onset: the caller's change is the cause named, in doubt
    (the gateway's own health cannot be read)."""
    d, _k = decide(_unmonitored("service"))
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.change) == ("web", "FLAG-9"), d.missing
    assert d.verdict == "inferred" and any("whether gw failed on its own" in m for m in d.missing), d.missing


def test_an_unmonitored_third_party_stays_the_root_however_its_caller_changed():
    d, _k = decide(_unmonitored("external"))
    assert d.root_cause is None or d.root_cause.entity == "gw", d.root_cause
    assert d.verdict != "confirmed"


def test_a_cache_whose_latency_barely_moved_while_its_evictions_surged_explains_its_caller():
    """The cause's signal need not be in the effect's unit: misses make the caller recompute."""
    w = World(kinds={"cache": "cache"})
    w.read(rise("web", 0, base=100, level=2000), names("web", "cache", 0.2, kind="cache"))
    w.read(dep("web", "cache"), source_kind="config")
    w.read(rise("cache", -2, base=1.0, level=1.3),  # its own command latency: +0.3 ms
           rise("cache", -2, base=3.0, level=20000.0, role="saturation", unit="", name="evictions_per_s"))
    w.read(change("CFG-MEM", "cache", -3, type_="config_push", keys=("maxmemory",)), source_kind="change")
    w.everything_looked("web", "cache")
    d, _k = decide(w)
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.change) == ("cache", "CFG-MEM"), d.missing


def test_a_dependency_that_only_got_a_little_slower_still_does_not_explain_a_big_slowdown():
    w = World()
    w.read(rise("web", 0, base=100, level=2000), names("web", "db", 0.2, kind="database"))
    w.read(dep("web", "db"), source_kind="config")
    w.read(rise("db", -2, base=10, level=60))
    w.everything_looked("web", "db")
    t = trace(w.knowledge(), "web", 6)
    assert t.root == "web" and "db" in t.checked


def test_a_competitor_whose_series_rose_by_a_few_milliseconds_does_not_explain_a_two_second_slowdown():
    """A 0 → 5 ms series is a rise by any ratio, yet far too small to be what slowed the subject by 2 s."""
    hyp = [{"id": "h", "statement": "the database got slow",
            "predicts": {"entity": "db", "metric": "db_p95_ms", "direction": "up", "min_ratio": 1.5}}]
    claim = CounterEvidenceClaim(id="check", kind="counter_evidence", statement="s", hypothesis="h")
    for level, verdict in ((5.0, "refuted"), (1500.0, "confirmed")):
        w = World()
        w.case = case(hypotheses=hyp)
        w.read(rise("web", 0, base=100, level=2100))
        w.read(rise("db", -1, base=0.0001, level=level, name="db_p95_ms"))
        d = decide_counter_evidence(claim, w.knowledge())
        assert d.verdict == verdict, (level, d.rule)


def _gaps(w: World):
    from graphs.planner import DeterministicPlanner

    k = w.knowledge()
    return list(DeterministicPlanner().gaps(w.case, {}, k, trace(k, "web", 6)))


def test_what_else_the_subject_depends_on_is_looked_up_with_the_next_relations_lookup():
    """The subject's errors name s1, so its other dependencies wait; they are asked for together with
    what s1 depends on, costing no round of their own (a second broken dependency is a rival root)."""
    w = World()
    w.read(rise("web", 0), names("web", "s1", 0.5, kind="service"))
    w.read(dep("web", "s1"), source_kind="log")
    w.read(rise("s1", -3))
    w.looked(TelemetryAction(entities=("web",), environment="prod"))
    w.looked(TelemetryAction(entities=("s1",), environment="prod"))
    rel = next(g.act for g in _gaps(w) if isinstance(g.act, RelationsAction))
    assert set(rel.entities) == {"s1", "web"}


def test_dependencies_left_aside_are_read_with_the_next_batch_of_dependencies():
    """web's errors name s1; web's other dependency is read in the same lookup as s1's dependencies,
    not in a round of its own after the root is found."""
    w = World()
    w.read(rise("web", 0), names("web", "s1", 0.5, kind="service"))
    w.read(dep("web", "s1"), dep("web", "other"), dep("s1", "a"), dep("s1", "b"), source_kind="catalog")
    w.read(rise("s1", -3))
    w.everything_looked("web", "s1")
    tel = [g.act for g in _gaps(w) if isinstance(g.act, TelemetryAction)]
    assert tel and set(tel[0].entities) == {"a", "b", "other"}


def test_an_unreadable_source_that_may_say_what_the_root_depends_on_does_not_block_the_change_the_anomaly_names():
    """A restricted copy of the root's config may state another dependency; while the cause is chosen by
    timing it could be the real root, but once the anomaly's own lines name what the change changed, it
    cannot take the cause away (docs/deciding.md §8)."""
    w = cascade(depth=2)
    w.looked(RelationsAction(entities=("s2",), environment="prod"), denied=("s2-config-restricted",))
    d, _k = decide(w)
    assert d.verdict == "insufficient" and "s2-config-restricted" in d.blocked_by, "timing alone: it could say more"
    w.read(names("s2", "pool_size", -4))
    d, _k = decide(w)
    assert d.verdict == "confirmed" and d.blocked_by == () and d.root_cause.change == "CFG-1", d.missing


def test_an_unreadable_log_of_the_subject_is_no_evidence_for_a_competitors_metric():
    """A lookup of every signal of web met a restricted log: it cannot hold web's cpu series, so the
    competitor that predicts cpu is not blocked by it; the lookup of the cpu series itself is still to
    be made, and a restricted cpu series it meets is what blocks."""
    hyp = [{"id": "h", "statement": "cpu", "predicts": {"metric": "cpu_pct", "direction": "up", "min_ratio": 1.5}}]
    claim = CausalChainClaim(id="cause", kind="causal_chain", statement="s", competitors=("h",))
    w = cascade(depth=1)
    w.case = case(competitors=("h",), hypotheses=hyp)
    w.looked(TelemetryAction(entities=("web",), environment="prod"), denied=("web-log-security",))
    d, k = decide(w, claim)
    assert "web-log-security" not in d.blocked_by and d.verdict != "insufficient", d.missing
    assert not k.searches.done("telemetry", "web", metric="cpu_pct"), "the cpu series is still to be looked up"
    w.looked(TelemetryAction(entities=("web",), environment="prod", metric="cpu_pct"), denied=("web-cpu-finance",))
    d, k = decide(w, claim)
    assert d.verdict == "insufficient" and d.blocked_by == ("web-cpu-finance",), d.missing


def test_what_a_healthy_dependency_left_behind_unread_blocks_only_while_the_anomaly_does_not_name_the_cause():
    """api looks healthy and nothing changed on the way to it, so the search goes back to its caller
    web. A restricted source met while looking for what stands in front of api could name a proxy with
    a change; that matters while web's change is chosen by timing, not once web's errors name what it
    changed."""
    def world() -> World:
        w = _healthy_api_world("tls_min_version")
        w.looked(RelationsAction(entities=("api",), environment="prod", direction="consumers"), denied=("api-lb-ops",))
        return w

    d, _k = decide(world())
    assert d.verdict == "insufficient" and "api-lb-ops" in d.blocked_by, d.missing
    w = world()
    w.read(names("web", "tls_min_version", -0.7))
    d, _k = decide(w)
    assert d.verdict == "confirmed" and (d.root_cause.entity, d.root_cause.change) == ("web", "DEP-web"), d.missing


def test_a_change_written_for_production_counts_for_a_case_in_prod_and_one_for_staging_does_not():
    from rulesworld import World, case, change

    w = World(case())
    w.read(change("PUSH-1", "web", -3, type_="config_push").model_copy(update={"environment": "production"}),
           change("PUSH-2", "web", -2, type_="config_push").model_copy(update={"environment": "staging"}),
           source_kind="change")
    assert [c.id for c, _e in w.knowledge().changes_of("web")] == ["PUSH-1"]


def _vm_world(*, also_on_vm_1: str | None = None) -> World:
    """web calls `upstream=vm-1:9090` (its bad lines name the host); the catalog says score runs on vm-1
    and vm-2; score's own lines carry `host=vm-1`; score slowed first, after its deploy."""
    w = World(kinds={"vm-1": "host", "vm-2": "host"})
    w.read(rise("web", 0), names("web", "vm-1", 0.2, kind="host"),
           RelationFact(source="web", target="vm-1", relation="calls", via="log field upstream", environment="prod"))
    w.read(dep("score", "vm-1", "runs_on", "catalog runs_on"), dep("score", "vm-2", "runs_on", "catalog runs_on"),
           *([dep(also_on_vm_1, "vm-1", "runs_on", "catalog runs_on")] if also_on_vm_1 else []), source_kind="catalog")
    w.read(rise("score", -1), names("score", "vm-1", -0.5, kind="host"),
           RelationFact(source="score", target="vm-1", relation="calls", via="log field host", environment="prod"))
    w.read(change("DEP-7", "score", -4), source_kind="change")
    w.everything_looked("web", "score", "vm-1", "vm-2")
    for h in ("vm-1", "vm-2"):
        w.looked(RelationsAction(entities=(h,), environment="prod", direction="consumers"))
    return w


def test_a_call_to_a_host_that_runs_one_service_is_a_call_to_that_service():
    """On machines without an orchestrator a caller names the host it calls (`upstream=vm-1:9090`): the
    service that runs there is the next hop, and its deploy the cause, not the machine."""
    k = _vm_world().knowledge()
    t = trace(k, "web", 6)
    assert t.path() == ["web", "score"], t.path()
    assert cause_at(k, t).cause.change.change.id == "DEP-7"


def test_a_writers_lines_naming_the_machine_it_runs_on_do_not_make_the_machine_anomalous():
    k = _vm_world().knowledge()
    assert entity_state(k, "vm-1", caller="score").status != "anomalous"


def test_a_host_that_runs_two_services_stands_for_neither():
    k = _vm_world(also_on_vm_1="batch").knowledge()
    assert "score" not in k.dependencies("web") and "vm-1" in k.dependencies("web")


def test_what_runs_on_a_called_host_is_looked_up_before_the_path_ends_there():
    """Before anything says what runs on vm-1, the path reaches the machine itself; what runs there is
    asked for, not taken as the end of the path."""
    w = World(kinds={"vm-1": "host"})
    w.read(rise("web", 0), names("web", "vm-1", 0.2, kind="host"),
           RelationFact(source="web", target="vm-1", relation="calls", via="log field upstream", environment="prod"))
    w.everything_looked("web")
    w.looked(TelemetryAction(entities=("vm-1",), environment="prod"))
    t = trace(w.knowledge(), "web", 6)
    assert "vm-1" in t.nodes and ("consumers", "vm-1") in {(a, e) for a, e, _w in t.pending}
    w.looked(RelationsAction(entities=("vm-1",), environment="prod", direction="consumers"))
    assert ("consumers", "vm-1") not in {(a, e) for a, e, _w in trace(w.knowledge(), "web", 6).pending}


def _new_pod_load(first_minute: float) -> SignalFact:
    """A job's pod, created at `first_minute`: its CPU series begins then (nothing before it existed)."""
    pts = tuple((at(m / 2), 0.4 if m / 2 < first_minute + 0.5 else 7.5) for m in range(int(first_minute * 2), 41))
    return SignalFact(entity="compactor", signal="metric", name="cpu_cores", role="saturation", unit="cores",
                      anomalous=False, decidable=False, series="cpu_cores:compactor", points=pts,
                      note="0 baseline points (at least 3 needed)")


def _node_shared_with_a_new_pod(first_minute: float) -> World:
    w = World(kinds={"node-7": "node"})
    w.read(rise("web", 0))
    w.read(rise("node-7", -3, base=40, level=99, role="saturation", unit="%", name="cpu_pct"))
    w.read(_new_pod_load(first_minute))
    w.read(RelationFact(source="web", target="node-7", relation="runs_on", via="pod placement"),
           RelationFact(source="compactor", target="node-7", relation="runs_on", via="pod placement"),
           source_kind="kubernetes")
    w.everything_looked("web", "node-7", "compactor")
    return w


def test_a_pod_that_began_in_the_window_brings_its_load_from_nothing_and_is_the_neighbour():
    """A job's pod scheduled onto the node at −4 uses nothing before it exists: its series has no point
    before then while every other series covers the baseline, so its load starts from zero at −4."""
    d, k = decide(_node_shared_with_a_new_pod(-4))
    assert d.root_cause is not None and (d.root_cause.entity, d.root_cause.kind) == ("compactor", "noisy_neighbour")
    assert d.root_cause.path == ("web", "node-7", "compactor")
    (f, _e), = k.signals["compactor"]
    assert f.anomalous and f.onset == at(-4) and "taken as 0" in f.note


def test_a_pod_that_began_after_the_node_was_already_saturated_did_not_load_it_first():
    d, _k = decide(_node_shared_with_a_new_pod(5))
    assert d.root_cause is None or d.root_cause.entity != "compactor"


def _partner_behind_a_firewall(*, through: bool) -> World:
    """web's errors name a partner's domain (no telemetry of its own); web's runbook says its calls to
    the partners go through fw-1 (or merely names fw-1 as something web calls)."""
    w = World(kinds={"api.partner.example": "domain"})
    w.read(rise("web", 0, role="errors", unit="%", base=0.2, level=9, name="error_pct"))
    w.read(dep("web", "api.partner.example", relation="configured", via="config key partner.url"), source_kind="config")
    w.read(names("web", "api.partner.example", -1, kind="domain"))
    w.read(dep("web", "fw-1", relation="stated", via="sentence 'go through'" if through else "sentence 'calls'"),
           source_kind="doc")
    w.everything_looked("web", "api.partner.example")
    return w


def test_what_a_callers_calls_are_stated_to_pass_through_stands_on_the_way_to_what_only_its_callers_see_fail():
    """An egress firewall has no telemetry; the caller sees the partner time out. A change of the firewall
    is looked for, and once found it is the cause of the partner's failure as the caller sees it."""
    from graphs.rulebook.root import fronting

    w = _partner_behind_a_firewall(through=True)
    k = w.knowledge()
    assert fronting(k, trace(k, "web", 6)) == ["fw-1"]
    assert fronting(*(lambda k: (k, trace(k, "web", 6)))(_partner_behind_a_firewall(through=False).knowledge())) == []
    w.read(change("FW-1", "fw-1", -2, type_="config_push"), source_kind="change")
    w.everything_looked("fw-1")
    d, _k = decide(w)
    assert d.root_cause is not None and d.root_cause.change == "FW-1", d.missing


def test_an_unreadable_change_log_of_what_stands_on_the_way_blocks_the_cause():
    """The firewall's change log is restricted: the partner's failure stays unexplained, and the verdict
    waits on that log — the run says it cannot read it rather than blaming the partner."""
    w = _partner_behind_a_firewall(through=True)
    w.looked(ChangesAction(entities=("fw-1",), environment="prod", start=at(-60), end=at(20)), denied=("fw-changes",))
    d, _k = decide(w)
    assert d.verdict == "insufficient" and "fw-changes" in d.blocked_by, (d.blocked_by, d.missing)


def test_a_competitor_whose_predicted_series_rose_only_after_the_symptom_began_does_not_explain_it():
    """The predicted rise is real and large, but it starts twenty minutes after the subject's anomaly:
    what begins after the symptom cannot be what started it."""
    hyp = [{"id": "h", "statement": "the partner got slow",
            "predicts": {"entity": "partner", "metric": "partner_p95_ms", "direction": "up", "min_ratio": 2.0}}]
    claim = CounterEvidenceClaim(id="check", kind="counter_evidence", statement="s", hypothesis="h")
    for onset, verdict in ((15.0, "refuted"), (-1.0, "confirmed"), (1.5, "confirmed")):
        w = World()
        w.case = case(hypotheses=hyp)
        w.read(rise("web", 0, base=100, level=2100))
        w.read(rise("partner", onset, base=400, level=2300, name="partner_p95_ms"))
        d = decide_counter_evidence(claim, w.knowledge())
        assert d.verdict == verdict, (onset, d.rule)
        assert ("after web's anomaly began" in d.rule) == (verdict == "refuted")
