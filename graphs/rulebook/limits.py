"""§5 of docs/deciding.md, step 5: a configured limit reached.

A setting of the root's config read back bounds a series when its key shares a word with the
series' name, unit or source (the profile's `limit_words` aside); the root reached it when the
series rose to `saturation_level` of it in the search range after a baseline below it.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from datetime import datetime

from graphs.rulebook.knowledge import Knowledge
from state.facts import SignalFact

_WORD = re.compile(r"[a-z]+|[^\x00-\x7f]+")


def _words(text: str) -> set[str]:
    """Lower-case words of a name, a plural `s` folded (`connections` ~ `connection`)."""
    out = set()
    for w in _WORD.findall(text.lower().replace("_", " ")):
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return out


@dataclass(frozen=True)
class AtLimit:
    signal: SignalFact
    evidence: str
    key: str
    limit: float
    config_evidence: str
    reached: datetime


def at_limit(k: Knowledge, entity: str) -> list[AtLimit]:
    """Series of `entity` that reached a limit configured for it in the search range (≥
    `saturation_level` of it) after a baseline below it. A setting bounds a series when its key
    shares a word with the series' name, unit or source (the profile's limit words aside):
    `max_connections: 300` bounds `…connections.prom.json`, `worker-threads: 96` bounds `workers`."""
    limit_words = {w for x in k.profile.limit_words for w in _words(x)}
    own = _words(entity)
    out: list[AtLimit] = []
    level = k.profile.anomaly.saturation_level
    settings = [(key, value, eid) for snap, eid in k.configs.get(entity, []) for key, value in snap.settings.items()]
    for sig, eid in k.signals.get(entity, []):
        if sig.signal != "metric" or not sig.points or sig.role in ("latency", "availability"):
            continue
        ev = k.evidence.get(eid.split("+")[0])
        words = _words(" ".join([sig.name, sig.unit, sig.series, ev.source_id if ev else ""])) - limit_words - own
        for key, value, ceid in settings:
            try:
                limit = float(str(value).strip())
            except ValueError:
                continue
            if not math.isfinite(limit) or limit <= 0 or not (_words(key) - limit_words - own) & words:
                continue
            w = k.case.window
            base = [v for t, v in sig.points if t < w.search_from]
            hits = [(t, v) for t, v in sig.points if w.search_from <= t <= w.end and v >= level * limit]
            if hits and base and statistics.median(base) < level * limit:
                out.append(AtLimit(sig, eid, key, limit, ceid, hits[0][0]))
                break
    return sorted(out, key=lambda a: a.reached)


