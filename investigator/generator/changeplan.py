"""The changes of a scenario: the cause (or candidates) at the root, and the red-herring changes
around it, timed against the onsets and the change lookback."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from . import vocab
from .model import Change, onset_of
from .topology import bump, unbump

if TYPE_CHECKING:
    from .incident import Scenario


def _ceil5(minutes: float) -> int:
    return int(math.ceil(minutes / 5.0) * 5)


# -- changes --------------------------------------------------------------------------------

_ID = {"deployment": "DEP", "config_push": "CFG", "feature_flag": "FF", "certificate": "CERT", "dns": "DNS",
       "rollback": "RB", "infrastructure": "INFRA"}


def _change_id(sc: Scenario, ctype: str, when: datetime) -> str:
    return f"{_ID[ctype]}-{when:%Y%m%d}-{sc.rng.randint(100, 9999):04d}"


def _key_words(sc: Scenario, avoid: list[list[str]] | None = None) -> list[str]:
    avoid = avoid or []
    pool = [k for k in vocab.KEY_WORDS if k not in avoid]
    return list(sc.rng.choice(pool))


def _config_values(sc: Scenario, words: list[str]) -> tuple[str, str]:
    r = sc.rng
    if words[-1] in ("ms", "s", "seconds", "kb"):
        a = r.choice([50, 100, 200, 250, 500, 800, 1000, 2000])
        return str(a), str(a * r.choice([4, 8, 10, 20]) if r.random() < 0.5 else max(1, a // r.choice([5, 10, 20])))
    if words[0] in ("tls", "dns"):
        return r.choice([("true", "false"), ("300", "0")])
    a = r.choice([4, 8, 16, 32, 50, 64, 100, 128, 200])
    return str(a), str(max(1, a // r.choice([4, 8, 16])) if r.random() < 0.6 else a * r.choice([4, 8]))


def _make_change(sc: Scenario, ctype: str, service: str, completed: datetime, *, env: str | None = None,
                 role: str = "herring", fmt: str = "record", avoid_keys: list[list[str]] | None = None) -> Change:
    r = sc.rng
    env = env or sc.env
    started = completed - timedelta(minutes=r.randint(1, 9), seconds=r.randint(0, 59))
    ch = Change(key=f"c{len(sc.changes)}", type=ctype, service=service, env=env, started=started,
                completed=completed, fmt=fmt, role=role, actor=r.choice(vocab.PEOPLE))
    e = sc.topo.entities.get(service)
    if ctype == "deployment":
        ch.version_from, ch.version_to = _versions(sc, service, completed, env)
        if e and e.components and r.random() < 0.4:
            comp = r.choice(e.components)
            a = f"{r.randint(1, 5)}.{r.randint(0, 9)}.{r.randint(0, 9)}"
            ch.dependency_changes.append((comp, a, bump(r, a)))
        if fmt == "record" and r.random() < 0.35:
            words = _key_words(sc, avoid_keys)
            f, t = _config_values(sc, words)
            ch.config_changes.append((vocab.key_style(words, r.choice(["snake", "camel", "dotted"])), f, t))
            ch.ref["words"] = [words]
    elif ctype == "config_push":
        n = r.choice([1, 1, 1, 2, 3])
        ws: list[list[str]] = []
        for _ in range(n):
            words = _key_words(sc, (avoid_keys or []) + ws)
            ws.append(words)
            f, t = _config_values(sc, words)
            ch.config_changes.append((vocab.key_style(words, r.choice(["snake", "snake", "camel", "dotted", "kebab"])), f, t))
        ch.ref["words"] = ws
    elif ctype == "feature_flag":
        words = r.choice(vocab.FLAG_WORDS)
        name = vocab.key_style(list(words), r.choice(["kebab", "kebab", "snake", "dotted"]))
        ch.flag = (name, "false", "true") if r.random() < 0.8 else (name, "true", "false")
        ch.ref["words"] = [list(words)]
    ch.id = None if fmt in ("helm", "argocd", "rollout", "flags", "snapshot") else _change_id(sc, ctype, completed)
    sc.changes.append(ch)
    return ch


def _versions(sc: Scenario, service: str, completed: datetime, env: str) -> tuple[str, str]:
    """Versions of a deployment, consistent with the entity's other deployments."""
    e = sc.topo.entities.get(service)
    if e is None or not e.version:
        v = f"{sc.rng.randint(1, 9)}.{sc.rng.randint(0, 20)}.{sc.rng.randint(0, 9)}"
        return v, bump(sc.rng, v)
    if env != sc.env:
        return e.version, bump(sc.rng, e.version)
    hist = sc.deploy_hist.setdefault(service, [])
    if not hist or completed > max(h[0] for h in hist):
        frm = e.version
        to = bump(sc.rng, frm)
        e.version = to
    else:
        to = min(hist)[1]
        frm = unbump(sc.rng, to)
    hist.append((completed, frm, to))
    return frm, to


def _pick_fmt(sc: Scenario, ctype: str, service: str, *, allow_history: bool = True) -> str:
    r = sc.rng
    e = sc.topo.entities.get(service)
    if sc.prose_hop and service in sc.prose_hop:
        allow_history = False        # its deployed version must stay a plain version (document applicability)
    if any(c.service == service and c.fmt in ("helm", "argocd", "rollout") for c in sc.changes):
        allow_history = False        # one history per release; its other deployments are records
    if ctype == "deployment" and allow_history and e is not None and e.kind == "service":
        return r.choices(["record", "helm", "argocd", "rollout"], [55, 17, 14, 14])[0]
    if ctype == "feature_flag" and allow_history:
        return r.choice(["record", "flags"])
    return "record"


def plan_changes(sc: Scenario) -> None:
    r, topo, v = sc.rng, sc.topo, sc.variant
    root = topo.root
    t_root = onset_of(sc, root) if v != "false_alarm" else None
    in_scope: list[datetime] = []

    def before(t: datetime, lo: int, hi: int) -> datetime:
        return t - timedelta(minutes=r.randint(lo, hi), seconds=r.randint(0, 59))

    if v != "false_alarm" and sc.cause in ("config_push", "deployment", "feature_flag", "certificate", "dns"):
        ctype = sc.cause
        simple = v in ("decisive_change_denied", "two_changes_implicated", "two_changes_unimplicated", "two_roots")
        fmt = "snapshot" if v == "snapshot_diff" else sc.fmt_hint or _pick_fmt(sc, ctype, root, allow_history=not simple)
        svc = root
        if ctype in ("certificate", "dns"):
            svc = f"{r.choice(['edge', 'platform', 'netops', 'pki', 'dns'])}-{r.choice(['admin', 'automation', 'ops'])}"
        when = before(t_root, 3, 14)
        if v == "no_candidate":
            when = t_root - timedelta(hours=r.randint(3, 30), minutes=r.randint(0, 59))  # well before any lookback
        ch = _make_change(sc, ctype, svc, when, role="herring" if v == "no_candidate" else "cause", fmt=fmt)
        if ctype in ("certificate", "dns"):
            ch.target = root
        if v == "decisive_change_denied":
            ch.denied = True
        if v != "no_candidate":
            in_scope.append(ch.completed)
        if v in ("two_changes_implicated", "two_changes_unimplicated"):
            kinds = ("deployment", "config_push", "feature_flag") if topo.entities[root].kind == "service" \
                else ("deployment", "config_push")
            other_type = r.choice([t for t in kinds if t != ctype])
            when2 = before(t_root, 2, 22)
            while abs((when2 - when).total_seconds()) < 90:
                when2 = before(t_root, 2, 22)
            other = _make_change(sc, other_type, root, when2, role="candidate",
                                 avoid_keys=ch.ref.get("words"))
            in_scope.append(other.completed)
            if v == "two_changes_unimplicated":
                ch.role = "candidate"
            sc.implicate = ch.key if v == "two_changes_implicated" else None
        elif v != "no_candidate" and r.random() < 0.6:
            sc.implicate = ch.key          # the root's errors name what the change changed
        if v == "two_roots":
            q = topo.branch[0]
            qt = r.choice(["deployment", "config_push", "feature_flag"])
            c2 = _make_change(sc, qt, q, before(onset_of(sc, q), 3, 12), role="cause2")
            in_scope.append(c2.completed)
    if sc.cause == "noisy_neighbour" and v == "consumer_changed":
        c = topo.consumer
        ctype = r.choice(["deployment", "deployment", "config_push", "feature_flag"])
        ch = _make_change(sc, ctype, c, before(onset_of(sc, c), 3, 12), role="cause",
                          fmt=_pick_fmt(sc, ctype, c))
        in_scope.append(ch.completed)

    # red-herring changes
    rh = sc.red_herrings
    if "intermediate_deploy" in rh:
        mids = [x for x in topo.chain[1:] if x != root and onset_of(sc, x)]
        if mids:
            x = r.choice(mids)
            ch = _make_change(sc, "deployment", x, before(onset_of(sc, x), 2, 9), fmt=_pick_fmt(sc, "deployment", x))
            in_scope.append(ch.completed)
        else:
            rh.remove("intermediate_deploy")
    if "innocent_subject_deploy" in rh:
        lo = sc.start - timedelta(minutes=15)
        when = lo + timedelta(seconds=r.randint(0, int((sc.end - lo).total_seconds()) - 120))
        if root == sc.subject:
            rh.remove("innocent_subject_deploy")
        else:
            ctype = r.choice(["deployment", "deployment", "config_push"])
            ch = _make_change(sc, ctype, sc.subject, when, fmt=_pick_fmt(sc, ctype, sc.subject))
            in_scope.append(ch.completed)

    lb = _ceil5(max((sc.start - t).total_seconds() / 60 + 6 for t in in_scope) if in_scope else 0)
    sc.lookback = max(30, lb, sc.onset_lead + 5) if in_scope else r.choice([30, 45, 60])
    sc.lookback = max(sc.lookback, 30)

    if "innocent_offpath_deploy" in rh:
        others = [n for n, e in topo.entities.items() if e.kind == "service" and n not in topo.path
                  and n not in topo.branch and n not in topo.consumers and n != sc.late_sibling
                  and n != sc.caller_anomaly]
        if others:
            x = r.choice(sorted(others))
            when = sc.start + timedelta(minutes=r.randint(-10, 12), seconds=r.randint(0, 59))
            ctype = r.choice(["deployment", "deployment", "config_push", "feature_flag"])
            _make_change(sc, ctype, x, when, fmt=_pick_fmt(sc, ctype, x))
        else:
            rh.remove("innocent_offpath_deploy")
    if "old_root_change" in rh:
        if topo.entities[root].kind in ("service", "database", "cache", "queue"):
            anchor = min(t_root or sc.start, sc.start)
            when = anchor - timedelta(minutes=sc.lookback) - timedelta(hours=r.randint(2, 150), minutes=r.randint(0, 59))
            ctype = "deployment" if topo.entities[root].kind == "service" else "config_push"
            _make_change(sc, ctype, root, when, fmt=_pick_fmt(sc, ctype, root))
        else:
            rh.remove("old_root_change")
    if "staging_change" in rh:
        tgt = root if topo.entities[root].kind in ("service", "database", "cache", "queue") else sc.subject
        cause = next((c for c in sc.changes if c.role == "cause" and c.config_changes), None)
        when = sc.start + timedelta(minutes=r.randint(-40, 5), seconds=r.randint(0, 59))
        ch = _make_change(sc, "config_push", tgt, when, env=sc.staging)
        if cause is not None and cause.service == tgt:
            k, f, t = cause.config_changes[0]
            ch.config_changes = [(k, f, str(int(t) * 2) if t.isdigit() else t)]
            ch.ref["words"] = cause.ref.get("words", [])[:1]


