"""Change sources: YAML records (with or without diffs), Helm and Argo CD histories, kubectl
rollout history (dated by ScalingReplicaSet events), and a feature-flag audit."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from .bundle import Bundle, Source, iso, iso_offset, utc, yq
from .model import Change
from .scenario import Scenario, k8s_hash
from .topology import unbump

_TYPE_WORDS = {"deployment": ["deployment", "deployment", "deployment", "release", "rollout"],
               "config_push": ["config_push", "config_push", "config", "configuration"],
               "feature_flag": ["feature_flag", "feature_flag", "toggle"],
               "certificate": ["certificate", "certificate", "cert"], "dns": ["dns"]}


def _summary(sc: Scenario, ch: Change) -> str:
    r = sc.rng
    ticket = f"{r.choice(['CHG', 'OPS', 'REL', 'PLAT'])}-{r.randint(100, 9999)}"
    if ch.type == "deployment":
        return r.choice([f"Release {ch.version_to} ({ticket}): routine release, rolling update.",
                         f"Rolling deploy of {ch.version_to} via the release pipeline for {ticket}; canary passed.",
                         f"Scheduled release train, {ticket}. Build promoted from staging after a green run."])
    if ch.type == "config_push":
        return r.choice([f"Config push for {ticket}: tuning after last week's review.",
                         f"Applied live with the config service ({ticket}); no restart needed.",
                         f"{ticket}: align settings with the capacity plan."])
    if ch.type == "feature_flag":
        return r.choice([f"Gradual rollout for {ticket}, 100% of traffic.", f"Enabled for all tenants ({ticket})."])
    if ch.type == "certificate":
        return r.choice([f"Rotated the TLS certificate of {ch.target} ({ticket}); new chain from the internal CA.",
                         f"Certificate renewal for {ch.target} ahead of expiry ({ticket})."])
    return r.choice([f"Moved {ch.target} to the new load balancer ({ticket}); TTL 60 s.",
                     f"DNS record for {ch.target} updated to the new edge ({ticket})."])


def _record(sc: Scenario, ch: Change, bundle: Bundle, groups_for, canary: str | None) -> None:  # noqa: ANN001
    r = sc.rng
    lines = []
    if canary:
        lines.append(f"# restricted change record; reference {canary}")
    lines += [f"id: {ch.id}", f"type: {r.choice(_TYPE_WORDS[ch.type])}", f"service: {ch.service}"]
    if ch.target:
        lines.append(f"target: {ch.target}")
    lines += [f"environment: {ch.env}", f"started_at: {iso_offset(ch.started)}",
              f"completed_at: {iso_offset(ch.completed)}"]
    if ch.version_from:
        lines += [f"version_from: {yq(ch.version_from)}", f"version_to: {yq(ch.version_to)}"]
    summary = _summary(sc, ch) + (f" Restricted: {canary}." if canary else "")
    lines += ["summary: >-", f"  {summary}"]
    quotes = [f"id: {ch.id}", f"completed_at: {iso_offset(ch.completed)}"]
    if ch.config_changes:
        lines.append("config_changes:")
        for k, f, t in ch.config_changes:
            item = f'{{key: {k}, from: "{f}", to: "{t}"}}'
            lines.append(f"  - {item}")
            quotes.append(item)
    if ch.dependency_changes:
        lines.append("dependency_changes:")
        for n, f, t in ch.dependency_changes:
            lines.append(f"  - {{name: {n}, from: {yq(f)}, to: {yq(t)}}}")
    if ch.flag:
        lines.append(f"flag: {{name: {ch.flag[0]}, from: {ch.flag[1]}, to: {ch.flag[2]}}}")
        quotes.append(f"flag: {{name: {ch.flag[0]}, from: {ch.flag[1]}, to: {ch.flag[2]}}}")
    if ch.actor:
        lines.append(f"# pushed by {ch.actor}")
    text = "\n".join(lines) + "\n"
    # the manifest scopes a source to the entity it is about: for a certificate or DNS change that is
    # its target (a reader who cannot open the record still knows whose change it is)
    svc = ch.target if ch.type in ("certificate", "dns") and ch.target else ch.service
    src = bundle.add(Source(id=ch.id or "", path=f"sources/changes/{ch.id}.yaml", kind="change", fmt="record", service=svc,
                            env=ch.env, text=text, groups=groups_for(svc, denied=ch.denied),
                            tags=["change/record-diff" if (ch.config_changes or ch.flag) else "change/record-nodiff"]))
    ch.ref["source"] = src.id
    for q in quotes:
        bundle.anchor(f"change:{ch.key}", src, q)


def _older_versions(sc: Scenario, newest_from: str, n: int) -> list[str]:
    out = [newest_from]
    for _ in range(n - 1):
        out.append(unbump(sc.rng, out[-1]))
    return list(reversed(out))


def _helm(sc: Scenario, ch: Change, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    n_old = r.randint(1, 4)
    versions = _older_versions(sc, ch.version_from or "1.0.0", n_old) + [ch.version_to or "1.0.1"]
    t = ch.completed - timedelta(days=r.randint(3, 20) * n_old)
    entries = []
    for i, v in enumerate(versions):
        last = i == len(versions) - 1
        when = ch.completed if last else t + timedelta(days=i * r.randint(2, 6), hours=r.randint(0, 9))
        entries.append({"revision": i + 1, "updated": when.isoformat(timespec="microseconds"),
                        "status": "deployed" if last else "superseded", "chart": f"{ch.service}-{v}", "app_version": v,
                        "description": "Install complete" if i == 0 else "Upgrade complete"})
    lines = [json.dumps(e, separators=(",", ":")) for e in entries]
    text = "[\n" + ",\n".join(lines) + "\n]\n"
    src = bundle.add(Source(id=f"helm-{ch.service}-{ch.env}", path=f"sources/changes/helm-history-{ch.service}-{ch.env}.json",
                            kind="change", fmt="helm", service=ch.service, env=ch.env, text=text,
                            groups=groups_for(ch.service, denied=ch.denied), explicit_format=r.random() < 0.5,
                            tags=["change/helm"]))
    ch.ref.update(source=src.id, revision=len(versions))
    bundle.anchor(f"change:{ch.key}", src, lines[-1])


def _argocd(sc: Scenario, ch: Change, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    n = r.randint(2, 5)
    hist = []
    shas = [f"{r.getrandbits(160):040x}" for _ in range(n)]
    ch.version_from, ch.version_to = shas[-2], shas[-1]
    for i, sha in enumerate(shas):
        last = i == n - 1
        done = ch.completed if last else ch.completed - timedelta(days=(n - i) * r.randint(2, 7), hours=r.randint(0, 9))
        begun = ch.started if last else done - timedelta(minutes=r.randint(1, 6))
        hist.append({"id": i + 1, "revision": sha, "deployStartedAt": iso(utc(begun)), "deployedAt": iso(utc(done)),
                     "source": {"repoURL": f"https://git.example.com/{sc.topo.domain}/{ch.service}-deploy.git",
                                "path": f"envs/{ch.env}", "targetRevision": "main"}})
    lines = [json.dumps(h, separators=(",", ":")) for h in hist]
    app = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
           "metadata": {"name": f"{ch.service}-{ch.env}", "namespace": "argocd"}}
    text = (json.dumps(app, separators=(",", ":"))[:-1] + ',"status":{"sync":{"status":"Synced"},"history":[\n'
            + ",\n".join(lines) + "\n]}}\n")
    src = bundle.add(Source(id=f"argocd-{ch.service}-{ch.env}", path=f"sources/changes/argocd-{ch.service}-{ch.env}.json",
                            kind="change", fmt="argocd", service=ch.service, env=ch.env, text=text,
                            groups=groups_for(ch.service, denied=ch.denied), explicit_format=r.random() < 0.5,
                            tags=["change/argocd"]))
    ch.ref.update(source=src.id, history_id=n, revision=shas[-1])
    bundle.anchor(f"change:{ch.key}", src, lines[-1])


def _rollout(sc: Scenario, ch: Change, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    n_old = r.randint(1, 3)
    versions = _older_versions(sc, ch.version_from or "1.0.0", n_old) + [ch.version_to or "1.0.1"]
    revs = []
    for i, v in enumerate(versions):
        last = i == len(versions) - 1
        at = ch.completed if last else ch.completed - timedelta(days=(len(versions) - i) * r.randint(2, 6), hours=r.randint(0, 9))
        h = sc.pod_hash.get(ch.service, k8s_hash(r, 10)) if last else k8s_hash(r, 10)
        revs.append({"rev": i + 1, "version": v, "hash": h, "at": at.replace(microsecond=0), "replicas": r.choice([2, 3, 4, 6]),
                     "current": last})
    ch.ref["revisions"] = revs
    image = f"registry.example.com/{ch.service}"
    lines = [f"deployment.apps/{ch.service}", "REVISION  CHANGE-CAUSE"]
    for rv in revs:
        cause = f"kubectl set image deployment/{ch.service} main={image}:{rv['version']} --record=true" if rv["rev"] > 1 else "<none>"
        lines.append(f"{rv['rev']:<10}{cause}")
    for rv in revs:
        lines += ["", f"deployment.apps/{ch.service} with revision #{rv['rev']}", "Pod Template:",
                  f"  Labels:\tapp={ch.service}", f"\tpod-template-hash={rv['hash']}",
                  f"  Annotations:\tkubernetes.io/change-cause: kubectl set image deployment/{ch.service} main={image}:{rv['version']}",
                  "  Containers:", "   main:", f"    Image:\t{image}:{rv['version']}", "    Port:\t8080/TCP",
                  "    Environment:\t<none>", "    Mounts:\t<none>", "  Volumes:\t<none>"]
    text = "\n".join(lines) + "\n"
    src = bundle.add(Source(id=f"rollout-{ch.service}-{ch.env}", path=f"sources/changes/rollout-history-{ch.service}-{ch.env}.txt",
                            kind="change", fmt="rollout", service=ch.service, env=ch.env, text=text,
                            groups=groups_for(ch.service, denied=ch.denied), explicit_format=r.random() < 0.5,
                            tags=["change/rollout"]))
    ch.ref.update(source=src.id, revision=len(revs), pod_template_hash=revs[-1]["hash"])
    bundle.anchor(f"change:{ch.key}", src, f"pod-template-hash={revs[-1]['hash']}")


def _flags(sc: Scenario, flags: list[Change], bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    entries: list[tuple[datetime, str, Change | None]] = []
    for ch in flags:
        assert ch.flag
        obj = {"at": iso_offset(ch.completed), "flag": ch.flag[0], "service": ch.service, "environment": ch.env,
               "from": ch.flag[1] == "true", "to": ch.flag[2] == "true", "actor": ch.actor}
        entries.append((ch.completed, json.dumps(obj, separators=(",", ":")), ch))
    # older toggles of the same flags, for a fuller audit
    for ch in flags:
        assert ch.flag
        when = ch.completed - timedelta(days=r.randint(2, 30), hours=r.randint(0, 12))
        obj = {"at": iso_offset(when), "flag": ch.flag[0], "service": ch.service, "environment": ch.env,
               "from": ch.flag[2] == "true", "to": ch.flag[1] == "true", "actor": r.choice(["a.kowalski", "li.na", "j.martin"])}
        entries.append((when, json.dumps(obj, separators=(",", ":")), None))
    entries.sort(key=lambda e: e[0])
    as_yaml = r.random() < 0.3
    if as_yaml:
        text = "".join(f"- {line}\n" for _, line, _ in entries)
        path = f"sources/changes/flag-audit-{sc.env}.yaml"
    else:
        text = "".join(f"{line}\n" for _, line, _ in entries)
        path = f"sources/changes/flag-audit-{sc.env}.jsonl"
    src = bundle.add(Source(id=f"flag-audit-{sc.env}", path=path, kind="change", fmt="flags", service="*", env=sc.env,
                            text=text, groups=groups_for("*"), explicit_format=r.random() < 0.6, tags=["change/flags"]))
    for _, line, ch in entries:
        if ch is not None:
            ch.ref.update(source=src.id, at=iso_offset(ch.completed), flag=ch.flag[0] if ch.flag else None)
            bundle.anchor(f"change:{ch.key}", src, line)


def write_changes(sc: Scenario, bundle: Bundle, groups_for, canary_for_denied: str | None) -> None:  # noqa: ANN001
    flags = []
    for ch in sc.changes:
        if ch.fmt == "record":
            _record(sc, ch, bundle, groups_for, canary_for_denied if ch.denied else None)
        elif ch.fmt == "helm":
            _helm(sc, ch, bundle, groups_for)
        elif ch.fmt == "argocd":
            _argocd(sc, ch, bundle, groups_for)
        elif ch.fmt == "rollout":
            _rollout(sc, ch, bundle, groups_for)
        elif ch.fmt == "flags":
            flags.append(ch)
    if flags:
        _flags(sc, flags, bundle, groups_for)
