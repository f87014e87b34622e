"""`investigator collect`: a case folder from an alert and the systems it names, fetched live.

For the alert (read as `init` reads it: an Alertmanager payload, one alert, or text) and the
case window `init` would write, it gathers into a staging folder:

- `git/`: the GitOps repository's commits in the lookback touching the alert's service and the
  services its configuration names (a change ledger), and their config snapshots;
- `prometheus/`: the alert's own expression (without its threshold) and the profile's RED/USE
  templates for each of those services, as `query_range` JSON with sidecars;
- `kubernetes/`: events, pods and rollout histories, when a kubeconfig is given;
- `material/`: a folder of files given with `--sources`, as `init` would take them.

Then `init` builds the case from that folder with an inventory naming each collected file's
kind, format, service and environment, and an access map whose globs are relative to the
staging folder (`prometheus/**`, `git/**`, `kubernetes/**`, `material/**`). `collection.yaml`
records every fetch with its provenance (state/collection.py), failures included. The case is
written beside its destination and moved into place only when it validated: a failure leaves
nothing behind. A system that does not answer is a failed fetch, not a failed command; only a
collection that fetched nothing at all is refused.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import httpx
import yaml

from state import Frozen, parse_duration, yamlio
from state.collection import Collection, Fetched
from state.errors import CaseError, InvestigatorError
from investigator.init import InitResult, case_window, initialise, read_alert
from tools.collect.gitops import GitFailed, GitRepo, collect_git
from tools.collect.kube import collect_kubernetes
from tools.collect.profile import CollectProfile, load_collect_profile
from tools.collect.urls import public_url
from tools.collect.prometheus import PromClient, alert_query, plan_queries, write_answers
from tools.profile import default_profile

__all__ = ["CollectResult", "NothingCollected", "collect"]


class NothingCollected(InvestigatorError):
    """Every fetch failed or came back empty, and no other material was given: no case to write."""

    exit_code = 6


class CollectResult(Frozen):
    case_dir: Path
    """The case folder written (validated)."""
    collection: Collection
    """Every fetch, with its provenance (also `collection.yaml` in the case folder)."""
    init: InitResult
    """What init listed and skipped."""


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _check_out(out: Path, force: bool) -> None:
    if out.exists() and not force:
        raise CaseError(str(out), "<folder>", "a folder that does not exist yet (or --force)")
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "case.yaml").is_file())):
        raise CaseError(str(out), "<folder>", "an empty folder or a case folder (with case.yaml) to replace")


def collect(alert_path: Path, out: Path, *, prometheus: str | None = None, git: str | None = None,
            kubeconfig: Path | None = None, sources: Path | None = None, access: Path | None = None,
            group: str = "sre-oncall", profile: CollectProfile | Path | None = None, force: bool = False,
            now: datetime | None = None, transport: httpx.BaseTransport | None = None,
            progress: Callable[[str], None] | None = None) -> CollectResult:
    """Fetch the alert's material and write a validated case folder at `out`."""
    say = progress or (lambda _line: None)
    prof = profile if isinstance(profile, CollectProfile) else load_collect_profile(profile)
    alert = read_alert(Path(alert_path))
    out = Path(out)
    _check_out(out, force)
    if sources is not None and not Path(sources).is_dir():
        raise CaseError(str(sources), "<folder>", "a folder of source files")
    if kubeconfig is not None and not Path(kubeconfig).is_file():
        raise CaseError(str(kubeconfig), "<file>", "a kubeconfig file")
    now = now or _now()
    start, end = case_window(alert)
    until = min(end, now)
    envs = list(default_profile().environments)
    made = [d for d in reversed(out.parents) if not d.exists()]
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".collect-", dir=out.parent))
    done = False
    try:
        material = stage / "material"
        material.mkdir()
        fetched: list[tuple[Fetched, str | None]] = []
        inventory: list[dict] = []
        skipped: list[str] = []
        services = [alert.service]
        if git:
            since = start - parse_duration(prof.git.lookback)
            try:
                repo = GitRepo(git, workdir=stage)
                got = collect_git(repo, prof.git, service=alert.service, environment=alert.environment,
                                  environments=envs, since=since, until=until, folder=material)
                fetched += got.fetched
                inventory += got.inventory
                services = got.services or services
                say(f"git: {sum(f.status == 'ok' for f, _ in got.fetched)} sources for {', '.join(services)}")
            except GitFailed as exc:
                fetched.append((Fetched(collector="git", what=f"changes of {alert.service}", status="failed",
                                        error=str(exc), server=public_url(git), start=since, end=until, fetched_at=_now()), None))
                say(f"git: failed: {exc}")
        else:
            skipped.append("git: no --git repository given")
        if prometheus:
            p = prof.prometheus
            begin = start - parse_duration(p.before)
            queries = plan_queries(p, services, alert.environment)
            own = alert_query(p, alert.expression, alert.service, alert.environment) if alert.expression else None
            client = PromClient(prometheus, timeout=parse_duration(p.timeout).total_seconds(), attempts=p.attempts,
                                transport=transport)
            try:
                got_m = write_answers(client, ([own] if own else []) + queries, begin, until, p.step, material,
                                      progress=say)
            finally:
                client.close()
            fetched += got_m
            for f, rel in got_m:
                if rel is not None:
                    inventory.append({"path": rel, "kind": "metric", "format": "prometheus", "service": f.service,
                                      "environment": alert.environment})
            say(f"prometheus: {sum(f.status == 'ok' for f, _ in got_m)} of {len(got_m)} queries gave series")
        else:
            skipped.append("prometheus: no --prometheus URL given")
        if kubeconfig is not None:
            namespace = alert.labels.get("namespace") or alert.environment
            got_k, inv_k = collect_kubernetes(Path(kubeconfig), namespace, services, alert.environment, material,
                                              timeout=parse_duration(prof.kubernetes.timeout).total_seconds())
            fetched += got_k
            inventory += [{**e, "service": e.get("service", alert.service)} for e in inv_k]
        else:
            skipped.append("kubernetes: no --kubeconfig given (events, pods and rollout histories not collected)")
            say(skipped[-1])
        if sources is not None:
            shutil.copytree(sources, material / "material", symlinks=True)
        if not any(rel for _f, rel in fetched) and sources is None:
            failures = [f"{f.collector} {f.what}: {f.error or f.status}" for f, _ in fetched] or skipped
            raise NothingCollected("nothing was collected: " + "; ".join(failures[:5])
                                   + (f" (and {len(failures) - 5} more)" if len(failures) > 5 else ""))
        inv_path = stage / "inventory.yaml"
        inv_path.write_text(yaml.safe_dump({"files": inventory}, sort_keys=False, allow_unicode=True))
        staged = stage / "case"
        result = initialise(Path(alert_path), material, staged, group=group, access=access,
                            inventory=inv_path if inventory else None)
        collection = _collection(alert.id, staged, fetched, skipped, services, start, end)
        (staged / "collection.yaml").write_text(
            "# Written by `investigator collect`: where each source came from (docs/case-format.md §11).\n"
            + yaml.safe_dump(collection.model_dump(mode="json", exclude_none=True), sort_keys=False,
                             allow_unicode=True, width=120))
        with (staged / "init-report.md").open("a") as fh:
            fh.write(_report(collection))
        if out.exists():
            shutil.rmtree(out)
        staged.rename(out)
        done = True
        return CollectResult(case_dir=out, collection=collection, init=result.model_copy(update={"case_dir": out}))
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        if not done:
            for d in reversed(made):
                with contextlib.suppress(OSError):
                    d.rmdir()


def _collection(alert_id: str, case_dir: Path, fetched: list[tuple[Fetched, str | None]], skipped: list[str],
                services: list[str], start: datetime, end: datetime) -> Collection:
    """The provenance records, each written file tied to the source id init gave it."""
    manifest = yamlio.loads((case_dir / "sources.yaml").read_text())
    assert isinstance(manifest, dict)  # init wrote and validated it
    by_path: dict[str, dict] = {}
    for entry in manifest["sources"]:
        # init copies `<rel>` to `sources/<kind>/<rel>`
        rel = entry["path"].split("/", 2)[2] if entry["path"].count("/") >= 2 else entry["path"]
        by_path[rel] = entry
    records = []
    for f, rel in fetched:
        entry = by_path.get(rel) if rel else None
        if entry is not None:
            f = f.model_copy(update={"source_id": entry["id"], "path": entry["path"]})
        elif rel is not None:  # written but not listed (init said why in init-report.md)
            f = f.model_copy(update={"status": "failed", "error": "written but not listed by init", "path": None})
        records.append(f)
    return Collection(alert=alert_id, collected_at=_now(), window_start=start, window_end=end,
                      services=tuple(services), fetched=tuple(records), skipped=tuple(skipped))


def _report(c: Collection) -> str:
    ok = [f for f in c.fetched if f.status == "ok"]
    lines = ["", "## Collected live (`collection.yaml` holds each fetch's provenance)", "",
             f"Services: {', '.join(c.services)}. {len(ok)} sources fetched, "
             f"{sum(f.status == 'empty' for f in c.fetched)} empty answers, {len(c.failed())} failed.", ""]
    if c.failed():
        lines += ["| failed | why |", "| --- | --- |",
                  *(f"| {f.collector}: {f.what} | {f.error} |" for f in c.failed()), ""]
    lines += [f"- skipped {s}" for s in c.skipped]
    return "\n".join(lines) + "\n"

