"""Partial access (docs/deciding.md §8): an unreadable source decides nothing unless it is on the path.

A property over generated cascades: adding a denied lookup about an entity off the path, or about
an entity above the root whose anomaly is read, never turns a confirmed causal verdict into
anything else; a denied change record of the root does (the cause was chosen by timing).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rulesworld import at, case, change, dep, flat, names, rise, World

from graphs.rulebook.causal_chain import decide_causal
from state.case import CausalChainClaim
from state.evidence import ChangesAction, PlacementAction, RelationsAction, TelemetryAction

CLAIM = CausalChainClaim(id="cause", kind="causal_chain", statement="s")


def _world(depth: int, bystanders: int) -> tuple[World, list[str]]:
    chain = ["web", *(f"s{i}" for i in range(1, depth + 1))]
    w = World()
    for i, e in enumerate(chain):
        w.read(rise(e, onset_min=-2.5 * i))
    for a, b in zip(chain, chain[1:]):
        w.read(dep(a, b), source_kind="catalog")
    others = [f"by{i}" for i in range(bystanders)]
    for i, o in enumerate(others):
        w.read(flat(o), dep(chain[i % len(chain)], o), source_kind="catalog")
    w.read(change("CFG-1", chain[-1], -2.5 * depth - 3, type_="config_push", keys=("pool_size",)), source_kind="change")
    w.everything_looked(*chain, *others)
    return w, chain


def _act(action: str, entity: str):
    if action == "telemetry":
        return TelemetryAction(entities=(entity,), environment="prod")
    if action == "changes":
        return ChangesAction(entities=(entity,), environment="prod", start=at(-60), end=at(20))
    if action == "placement":
        return PlacementAction(entity=entity, environment="prod")
    return RelationsAction(entities=(entity,), environment="prod")


@settings(max_examples=150, deadline=None)
@given(depth=st.integers(1, 4), bystanders=st.integers(0, 4), where=st.integers(0, 20),
       action=st.sampled_from(["telemetry", "changes", "relations", "placement"]))
def test_a_source_about_an_entity_off_the_root_never_changes_a_confirmed_verdict(depth, bystanders, where, action):
    w, chain = _world(depth, bystanders)
    before = decide_causal(CLAIM, w.knowledge())
    assert before.verdict == "confirmed", before.missing
    # an entity above the root (its anomaly read and explained below it), or a healthy bystander
    candidates = chain[:-1] + [f"by{i}" for i in range(bystanders)]
    if not candidates:
        return
    entity = candidates[where % len(candidates)]
    if action in ("relations", "placement") and entity in chain:
        action = "changes"  # what a path entity depends on is read whole already; its changes are about it
    w.looked(_act(action, entity), denied=(f"secret-{action}-{entity}",))
    after = decide_causal(CLAIM, w.knowledge())
    assert (after.verdict, after.root_cause.change if after.root_cause else None) == ("confirmed", "CFG-1"), \
        (entity, action, after.missing)


@given(depth=st.integers(1, 4))
@settings(max_examples=20, deadline=None)
def test_a_restricted_change_record_of_the_root_leaves_a_timing_only_cause_open(depth):
    w, chain = _world(depth, 0)
    w.looked(_act("changes", chain[-1]), denied=("secret-change",))
    after = decide_causal(CLAIM, w.knowledge())
    assert after.verdict == "insufficient" and "secret-change" in after.blocked_by


def test_a_restricted_copy_of_a_competitors_metric_changes_nothing_once_readable_series_refute_it():
    """A finance-only twin of a metric the principal can read: the readable series decided the competitor."""
    hyp = [{"id": "h", "statement": "cpu", "predicts": {"metric": "cpu_pct", "direction": "up", "min_ratio": 1.5}}]
    claim = CausalChainClaim(id="cause", kind="causal_chain", statement="s", competitors=("h",))
    w, _chain = _world(2, 0)
    w.case = case(competitors=("h",), hypotheses=hyp)
    w.read(flat("web", 30, role="saturation", unit="%", name="cpu_pct"))
    w.looked(TelemetryAction(entities=("web",), environment="prod", metric="cpu_pct"), denied=("finance-cpu",))
    after = decide_causal(claim, w.knowledge())
    assert (after.verdict, after.root_cause.change if after.root_cause else None) == ("confirmed", "CFG-1"), after.missing

    unread = _world(2, 0)[0]  # the same denial where no readable series decides the competitor: it blocks
    unread.case = case(competitors=("h",), hypotheses=hyp)
    unread.looked(TelemetryAction(entities=("web",), environment="prod", metric="cpu_pct"), denied=("finance-cpu",))
    held = decide_causal(claim, unread.knowledge())
    assert held.verdict != "confirmed" and "finance-cpu" in held.blocked_by


def test_a_restricted_twin_of_the_subjects_own_series_does_not_stop_the_search_below_it():
    """While readable lookups can carry the path further, the entity it stands on is no root yet,
    and neither are that entity's unreadable sources decisive."""
    w = World()
    w.read(rise("web", 0))
    w.read(dep("web", "db"), source_kind="catalog")
    w.looked(TelemetryAction(entities=("web",), environment="prod"), denied=("finance-web-latency",))
    open_ = decide_causal(CLAIM, w.knowledge())
    assert open_.verdict == "insufficient" and open_.blocked_by == (), open_.missing
    assert any("db" in m for m in open_.missing)

    w.read(rise("db", -2))
    w.read(change("CFG-DB", "db", -5, type_="config_push", keys=("max_conn",)), source_kind="change")
    w.everything_looked("web", "db")
    done = decide_causal(CLAIM, w.knowledge())
    assert (done.verdict, done.root_cause.change if done.root_cause else None) == ("confirmed", "CFG-DB"), done.missing


def test_a_restricted_series_met_in_a_lookup_of_several_entities_is_about_its_own_entity_only():
    """One telemetry lookup asks about two dependencies; the finance-only twin of the cache's series
    it meets is about the cache (whose readable series shows it healthy), not about the registry
    beside it, which has no telemetry of its own and is not thereby 'unreadable'."""
    w = World()
    w.read(rise("web", 0))
    w.read(dep("web", "db"), dep("web", "cache"), dep("web", "registry"), source_kind="catalog")
    w.read(rise("db", -2), flat("cache"))
    w.read(change("CFG-DB", "db", -5, type_="config_push", keys=("max_conn",)), source_kind="change")
    w.everything_looked("web", "db", "cache", "registry")
    w.looked(TelemetryAction(entities=("registry", "cache"), environment="prod"), denied=("finance-cache",),
             denied_about=(("finance-cache", "cache"),))
    d = decide_causal(CLAIM, w.knowledge())
    assert (d.verdict, d.root_cause.change if d.root_cause else None) == ("confirmed", "CFG-DB"), d.missing
    assert d.blocked_by == ()


def test_a_restricted_twin_of_a_healthy_series_of_a_root_only_its_callers_see_failing_decides_nothing():
    """The root's readable series shows it healthy and its callers' errors name it: what broke is on
    the way to it; another (unreadable) series of it cannot say otherwise."""
    w = World()
    w.read(rise("web", 0), names("web", "api", 0.2, kind="service"))
    w.read(dep("web", "api"), source_kind="config")
    w.read(flat("api"))
    w.read(change("CERT-9", "api", -2, type_="certificate"), source_kind="change")
    w.everything_looked("web", "api")
    w.looked(TelemetryAction(entities=("api",), environment="prod"), denied=("finance-api",))
    d = decide_causal(CLAIM, w.knowledge())
    assert (d.verdict, d.root_cause.change if d.root_cause else None) == ("confirmed", "CERT-9"), d.missing
