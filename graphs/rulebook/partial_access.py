"""§8 of docs/deciding.md, Partial access: which unreadable sources could change the causal verdict.

A source the principal cannot read blocks a verdict only when the readable evidence cannot decide
it without that source; anything merely *about* an entity of the path changes nothing.
"""

from __future__ import annotations

from graphs.rulebook.cause import Cause
from graphs.rulebook.knowledge import Knowledge
from graphs.rulebook.path import Trace
from graphs.rulebook.root import fronting


def decisive_denials(k: Knowledge, t: Trace, cause: Cause | None, open_competitors: list[str]) -> list[str]:
    """Unreadable sources that could change the causal verdict (docs/deciding.md §8): what the end of the
    path depends on or what it names, the root's changes and own signals unless the anomaly itself
    names the change found, the root's placement unless a change explains it, a competitor's evidence. A source that
    is merely *about* an entity of the path (another metric of an entity whose anomaly is read, a
    change of an entity whose anomaly is explained below it) decides nothing, nor does one about a
    competitor the readable evidence has already decided."""
    # the path's own frontier: decisive once nothing readable is left to extend it
    # and the root's own sources are decisive only once the path has settled on it: while readable
    # lookups can still carry the path below, the root is provisional and so are its denials
    named = cause is not None and cause.change is not None and cause.change.implicated
    # what the root depends on is open like its changes and signals: not once the anomaly names the change
    out = [d for d, at in t.blocked.items() if not (named and at == t.root)] if not t.pending else []
    if t.root is not None and not t.pending:
        if not named:
            # a cause chosen by timing alone is open while the root's changes or its own signals (the
            # lines that would name what broke, or a dependency below) cannot be read — except the
            # signals of a root seen failing only by its callers, whose readable signals show it healthy:
            # what its callers' errors name is on the way to it, not in it
            out += k.searches.denied("changes", t.root)
            root_state = t.nodes[t.root].state
            if root_state.how != "callers" or not root_state.normal:
                out += k.searches.denied("telemetry", t.root)
        if cause is None or cause.change is None:
            out += k.searches.denied("placement", t.root)
        if not named:  # what stands in front of a dependency that left the path (§8)
            out += t.beside
            # and the changes of what stands on the way to a root only its callers see failing (§5)
            out += [d for x in fronting(k, t) for d in k.searches.denied("changes", x)]
    out += [d for h in open_competitors for d in hypothesis_denied(k, h)]
    return list(dict.fromkeys(out))


def hypothesis_denied(k: Knowledge, h_id: str) -> list[str]:
    h = k.case.hypothesis(h_id)
    b = k.blames.get(h_id)
    if b is not None:
        return k.searches.denied("changes", b.entity)
    assert h.predicts is not None
    return k.searches.denied("telemetry", h.predicts.entity or k.case.subject.service, metric=h.predicts.metric)

