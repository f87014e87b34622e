"""`investigator init`: a review-ready case folder from an alert and a folder of material.

The alert is an Alertmanager webhook payload (its documented JSON: `alerts[].labels`,
`annotations`, `startsAt`, `endsAt`, `generatorURL`), a single alert object, or plain text.
Every file under the sources folder is detected (tools/detect.py), scoped by the service and
environment names its path and content carry, copied into `sources/<kind>/` and listed in
`sources.yaml` with one default group for the author to review. The case is written into a
temporary folder, validated, and only then moved into place: a failure leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

from state import Frozen, yamlio
from state.casefiles import read_text_file
from state.errors import CaseError, CaseProblems
from state.limits import SOURCE_BYTES, YAML_BYTES
from state.sources import FORMATS
from investigator.init_report import Skipped, init_report
from investigator.inventory import lookup, parse_inventory, read_inventory
from investigator.scoping import catalog_names, environment, metric_sidecar, service_of, untrusted, zone
from tools.detect import detect
from tools.formats.changes import argocd_workloads
from tools.formats.metrics import grafana_zoneless, is_grafana
from tools.formats.logs import parse_time
from tools.profile import default_profile

ENV_LABELS = ("environment", "env", "namespace", "cluster_env", "stage", "tier")
SERVICE_LABELS = ("service", "app", "app_kubernetes_io_name", "job", "deployment", "container", "workload")


class AlertInfo(Frozen):
    id: str
    rule: str
    fired_at: datetime
    ends_at: datetime | None = None
    text: str
    environment: str
    service: str
    labels: dict[str, str] = {}
    expression: str = ""


def fingerprint(labels: dict[str, str]) -> str:
    """A stable hash of an alert's label set (what Alertmanager's fingerprint identifies): the
    case id of an alert sent without a fingerprint, and the service's key for it."""
    return hashlib.sha256(json.dumps(sorted(labels.items())).encode()).hexdigest()[:16]


def _name(text: str) -> str:
    out = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")
    return (out or "x")[:100]


def _mapping(value: object, where: Path, field: str) -> dict[str, str]:
    """Alertmanager labels and annotations: a mapping of names to values (both taken as text)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise CaseError(str(where), field, "a mapping of names to values")
    return {str(k): str(v) for k, v in value.items()}


def read_alert(path: Path) -> AlertInfo:
    """The first firing alert of a payload, a single alert, or a plain-text alert."""
    raw = read_text_file(Path(path), YAML_BYTES)
    try:
        data = json.loads(raw)
    except ValueError:
        return _plain_alert(path, raw)
    except RecursionError:
        raise CaseError(str(path), "<document>", "JSON nested less deeply (an Alertmanager payload)") from None
    alerts = data.get("alerts") if isinstance(data, dict) and "alerts" in data else [data]
    if not isinstance(alerts, list) or not alerts or not all(isinstance(a, dict) for a in alerts):
        raise CaseError(str(path), "alerts", "an Alertmanager payload with at least one alert (a list of objects)")
    alert = next((a for a in alerts if a.get("status", "firing") == "firing"), alerts[0])
    i = alerts.index(alert)
    labels = _mapping(alert.get("labels"), path, f"alerts[{i}].labels")
    common = _mapping(data.get("commonLabels"), path, "commonLabels") if isinstance(data, dict) else {}
    labels = {**common, **labels}
    ann = _mapping(alert.get("annotations"), path, f"alerts[{i}].annotations")
    fired = parse_time(alert.get("startsAt"), None)
    if fired is None:
        raise CaseError(str(path), f"alerts[{i}].startsAt", "a timestamp with a zone")
    if fired.year < 2000:  # 0001-01-01 is Alertmanager's zero time: no start (a case window cannot precede it)
        raise CaseError(str(path), f"alerts[{i}].startsAt", "a start time on or after 2000-01-01")
    ends = parse_time(alert.get("endsAt"), None)
    if ends is not None and ends.year < 2000:  # Alertmanager writes 0001-01-01 for "still firing"
        ends = None
    env = next((labels[k] for k in ENV_LABELS if labels.get(k)), "")
    service = next((labels[k] for k in SERVICE_LABELS if labels.get(k)), "")
    if not env or not service:
        raise CaseError(str(path), f"alerts[{i}].labels", f"an environment ({'/'.join(ENV_LABELS)}) and a service "
                                                       f"({'/'.join(SERVICE_LABELS)}) label")
    expr = ann.get("expr", "")
    if isinstance(alert.get("generatorURL"), str):
        q = parse_qs(urlsplit(alert["generatorURL"]).query)
        expr = expr or unquote(next(iter(q.get("g0.expr", [])), ""))
    rule = labels.get("alertname", "alert")
    fp = alert.get("fingerprint") or fingerprint(labels)
    text = " ".join(x for x in (ann.get("summary"), ann.get("description"), ann.get("message")) if x) or rule
    return AlertInfo(id=_name(f"{rule}-{fired:%Y%m%dT%H%M}-{fp}")[:100], rule=rule, fired_at=fired, ends_at=ends,
                     text=text, environment=env, service=service, labels=labels, expression=expr)


def _plain_alert(path: Path, raw: str) -> AlertInfo:
    fired = parse_time(raw, None)
    m = re.search(r"\b([a-z][\w-]*)/([a-z][\w.-]*)\b", raw)
    pairs = dict(re.findall(r"\b(\w+)[=:]\s*\"?([\w./-]+)", raw))
    env = (m.group(1) if m else None) or next((pairs[k] for k in ENV_LABELS if pairs.get(k)), None)
    service = (m.group(2) if m else None) or next((pairs[k] for k in SERVICE_LABELS if pairs.get(k)), None)
    if fired is None or not env or not service:
        raise CaseError(str(path), "<text>", "a timestamp with a zone and `env/service` (or service= and env= pairs)")
    rule = pairs.get("alertname") or raw.strip().splitlines()[0][:60]
    return AlertInfo(id=_name(f"{service}-{fired:%Y%m%dT%H%M}"), rule=rule, fired_at=fired, text=raw.strip()[:2000],
                     environment=env, service=service)


def _yaml_or_none(text: str) -> object:
    """A YAML document as far as init needs it; a broken one is reported by validation, naming its file."""
    try:
        return yamlio.loads(text)
    except (ValueError, yaml.YAMLError):
        return None


def _metric_names(text: str, kind: str, fmt: str, sidecar_text: str | None) -> set[str]:
    if kind != "metric":
        return set()
    if fmt == "csv" and sidecar_text is not None:
        meta = _yaml_or_none(sidecar_text)
        return {str(meta["metric"])} if isinstance(meta, dict) and meta.get("metric") else set()
    return set(re.findall(r'"__name__"\s*:\s*"([^"]+)"', text))


def _read_material(p: Path) -> str:
    """A material file's text (undecodable bytes replaced: detection decides what it is), its size checked first."""
    size, cap = p.stat().st_size, SOURCE_BYTES.value()
    if size > cap:
        raise CaseError(str(p), "<file>", f"{SOURCE_BYTES.describe(cap)}; this one has {size} bytes")
    return p.read_bytes().decode("utf-8", errors="replace")


def _detect(p: Path, text: str) -> tuple[str, str] | None:
    try:
        return detect(p, text)
    except RecursionError:
        raise CaseError(str(p), "<document>", "content nested less deeply (JSON deeper than can be parsed)") from None


class InitResult(Frozen):
    case_dir: Path
    """The case folder written (validated)."""
    sources: int
    """How many sources `sources.yaml` lists."""
    skipped: tuple[Skipped, ...] = ()
    """Material files not listed, each with why."""
    assumed: tuple[str, ...] = ()
    """Files that state no environment, taken to be from the alert's."""
    zoneless: tuple[str, ...] = ()
    """Files whose times carry no zone, with no timezone given for them: their rows stay unread until
    their entry gets a `timezone` (the zone is never guessed)."""


ASSUMED_KINDS = frozenset({"change", "log", "metric", "trace", "kubernetes", "config"})
"""Kinds whose files, when they state no environment, are taken to be from the alert's (a catalog
or a document naming none stays `*`: it is about every environment)."""


def _deployed_workload(kind: str, fmt: str, text: str) -> str | None:
    """The one workload a GitOps application's history deploys, where its own status names it."""
    if kind != "change" or fmt != "argocd":
        return None
    found = argocd_workloads(text)
    return found[0] if len(found) == 1 else None


def _skip_reason(p: Path, text: str) -> str:
    name = p.name.lower()
    if name.endswith((".meta.yaml", ".meta.yml")):
        return "a sidecar (read with the file it describes)"
    if "\ufffd" in text[:4000]:
        return "not UTF-8 text"
    if name.endswith((".md", ".markdown")):
        return "Markdown without a YAML front matter block (doc_id, title, version, updated_at)"
    return "no known source kind recognised in the content"


def _front_problems(p: Path, text: str) -> list[CaseError]:
    """Every problem of a Markdown file's front matter (each one line: file, field, expected)."""
    from pydantic import ValidationError

    from state.sources import FrontMatter

    m = re.match(r"\A---\r?\n(.*?)\r?\n---", text, re.S)
    if not m:
        return []
    front = _yaml_or_none(m.group(1))
    if not isinstance(front, dict):
        return [CaseError(str(p), "front matter", "a YAML mapping between '---' lines")]
    try:
        FrontMatter.model_validate(front)
    except ValidationError as exc:
        known = set(FrontMatter.model_fields)
        return [CaseError(str(p), "front matter." + ".".join(str(x) if str(x) in known or str(x).isdigit() else "<key>"
                                                            for x in e["loc"]), e["msg"].removeprefix("Value error, "))
                for e in exc.errors()]
    return []


def scaffold(alert_path: Path, sources: Path, out: Path, *, group: str = "sre-oncall", force: bool = False,
             access: Path | None = None, inventory: Path | None = None) -> Path:
    """Write a case folder for the alert and the material; return it (validated)."""
    return initialise(alert_path, sources, out, group=group, force=force, access=access, inventory=inventory).case_dir


def initialise(alert_path: Path, sources: Path, out: Path, *, group: str = "sre-oncall", force: bool = False,
               access: Path | None = None, inventory: Path | None = None) -> InitResult:
    """Write a case folder for the alert and the material (validated); say what was listed and skipped."""
    from investigator.access_map import AccessMap, read_access_map
    from investigator.loading import validate_case

    alert = read_alert(alert_path)
    amap = read_access_map(access) if access is not None else AccessMap()
    sources, out = Path(sources), Path(out)
    if not sources.is_dir():
        raise CaseError(str(sources), "<folder>", "a folder of source files")
    if out.exists() and not force:
        raise CaseError(str(out), "<folder>", "a folder that does not exist yet (or --force)")
    if out.exists() and not out.is_dir():
        raise CaseError(str(out), "<folder>", "a folder to write the case into (it is a file)")
    if out.exists() and any(out.iterdir()) and not (out / "case.yaml").is_file():
        # --force replaces a case folder, never a folder of something else (`--out . --force`)
        raise CaseError(str(out), "<folder>", "an empty folder or a case folder (with case.yaml) to replace")
    if sources.resolve() == out.resolve() or sources.resolve().is_relative_to(out.resolve()):
        raise CaseError(str(out), "<folder>", "a folder outside --sources (replacing it would delete the material)")
    envs = [e.lower() for e in default_profile().environments]
    made = [d for d in reversed(out.parents) if not d.exists()]  # removed again when init fails
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".init-", dir=out.parent))
    origin: dict[Path, Path] = {}  # a file of the new case → the material file it was copied from
    done = False
    try:
        entries, metrics = [], set()
        skipped: list[Skipped] = []
        assumed: list[str] = []
        zoneless: list[str] = []
        inventory = Path(inventory) if inventory is not None else None
        files = sorted(p for p in sources.rglob("*") if p.is_file() and not p.is_symlink())
        texts = {p: _read_material(p) for p in files}
        detected = {p: _detect(p, text) for p, text in texts.items()}
        inv = read_inventory(inventory, read_text_file(inventory, YAML_BYTES)) if inventory is not None else []
        for p, text in texts.items():  # an inventory among the material scopes the rest; it is no source
            if detected[p] is not None and p.suffix.lower() in (".yaml", ".yml", ".json") and (
                    found := parse_inventory(text)) and sum(bool(lookup(found, f.relative_to(sources).as_posix()))
                                                           for f in files) * 2 > len(files):
                inv += found
                detected[p] = None
                skipped.append(Skipped(path=p.relative_to(sources).as_posix(),
                                       reason="an inventory of the material (read to scope the files it lists)"))
        for p in files:  # what the inventory states a file is (a collector's own files) is not guessed
            about = lookup(inv, p.relative_to(sources).as_posix())
            kind_, fmt_ = about.get("kind"), about.get("format")
            if kind_ in FORMATS and fmt_ in FORMATS[kind_] and not any(
                    s.path == p.relative_to(sources).as_posix() for s in skipped):
                detected[p] = (kind_, fmt_)
        known = {alert.service}
        for p, text in texts.items():
            got = detected[p]
            if got and got[0] == "catalog":
                known |= catalog_names(text)
        problems = [e for p, t in texts.items() if detected[p] and detected[p][1] == "markdown"  # type: ignore[index]
                    for e in _front_problems(p, t)]
        if problems:
            raise CaseProblems(problems)
        used_ids: set[str] = set()
        for p, text in texts.items():
            got = detected[p]
            rel = p.relative_to(sources)
            if got is None:
                if not p.name.lower().endswith((".meta.yaml", ".meta.yml")) and all(s.path != rel.as_posix()
                                                                                      for s in skipped):
                    skipped.append(Skipped(path=rel.as_posix(), reason=_skip_reason(p, text)))
                continue
            kind, fmt = got
            dest = Path("sources") / kind / rel
            (tmp / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, tmp / dest)
            origin[tmp / dest] = p
            sidecar = p.with_name(p.name + ".meta.yaml")
            sidecar_text = texts.get(sidecar)
            if sidecar_text is not None:
                shutil.copyfile(sidecar, tmp / dest.with_name(dest.name + ".meta.yaml"))
                origin[tmp / dest.with_name(dest.name + ".meta.yaml")] = sidecar
            where = str(rel).lower()
            about = lookup(inv, rel.as_posix())
            env = environment(text, sidecar_text, where, alert.environment, envs, about.get("environment"))
            if env == "*" and kind in ASSUMED_KINDS:  # exported for this incident, naming no other environment
                env = alert.environment
                assumed.append(rel.as_posix())
            listed = _deployed_workload(kind, fmt, text) or about.get("service")
            service = service_of(rel, kind, env, known, alert.environment, alert.service, envs, listed)
            grafana = kind == "metric" and fmt == "csv" and is_grafana(text)
            if kind == "metric" and sidecar_text is None and (
                    fmt == "csv" and not grafana or "metric" in about or "unit" in about):  # Grafana's names its series
                sidecar_text = metric_sidecar(p, service, env, envs, about, fmt)
                (tmp / dest.with_name(dest.name + ".meta.yaml")).write_text(sidecar_text)
            metrics |= _metric_names(text, kind, fmt, sidecar_text)
            groups = list(amap.groups_for(rel.as_posix(), (group,)))
            m = re.match(r"\A---\r?\n(.*?)\r?\n---", text, re.S)
            front = _yaml_or_none(m.group(1)) if m else None
            if access is None and isinstance(front, dict) and isinstance(front.get("groups"), list) and front["groups"]:
                groups = [str(g) for g in front["groups"]]
            sid = _name(rel.with_suffix("").as_posix().replace("/", "-"))
            while sid in used_ids:
                sid += "-2"
            used_ids.add(sid)
            entry = {"id": sid, "path": dest.as_posix(), "kind": kind, "format": fmt, "environment": env,
                     "service": service, "groups": groups}
            if untrusted(where) or fmt == "chat":  # what people typed in a channel
                entry["trust"] = "untrusted"
            if zone_ := zone(about.get("timezone")):
                entry["timezone"] = zone_
            if grafana and "timezone" not in entry and grafana_zoneless(text):
                zoneless.append(rel.as_posix())
            if about.get("captured_at") and parse_time(about["captured_at"], None) is not None:
                entry["captured_at"] = about["captured_at"]
            if about.get("version"):
                entry["version"] = about["version"]
            entries.append(entry)
        if not entries:
            raise CaseError(str(sources), "<folder>", "at least one file of a known source kind")
        case = _case_yaml(alert, metrics, amap, group)
        (tmp / "case.yaml").write_text("# Written by `investigator init`: review access groups before running.\n"
                                       + yaml.safe_dump(case, sort_keys=False, allow_unicode=True))
        head = ("# Groups from the access map given to init.\n" if access is not None else
                "# Review: every source got the default group; narrow where it is restricted.\n")
        (tmp / "sources.yaml").write_text(head + yaml.safe_dump({"format": "investigator/sources@1", "sources": entries},
                                                                 sort_keys=False, allow_unicode=True))
        (tmp / "init-report.md").write_text(init_report(entries, skipped, assumed, zoneless, alert.environment))
        try:
            validate_case(tmp)
        except CaseError as exc:  # name the material file (or the case file to be), not the temporary folder
            raise CaseError(_shown(Path(exc.file), tmp, out, origin), exc.field, exc.expected) from None
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
        done = True
        return InitResult(case_dir=out, sources=len(entries), skipped=tuple(skipped), assumed=tuple(assumed),
                          zoneless=tuple(zoneless))
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        if not done:
            for d in reversed(made):
                with contextlib.suppress(OSError):
                    d.rmdir()


def case_window(alert: AlertInfo) -> tuple[datetime, datetime]:
    """The case window init writes: from 10 minutes before the alert fired, 40 minutes or until it ended."""
    start = alert.fired_at - timedelta(minutes=10)
    return start, alert.ends_at if alert.ends_at and alert.ends_at > start else start + timedelta(minutes=40)


def _case_yaml(alert: AlertInfo, metrics: set[str], amap: object, group: str) -> dict:
    """case.yaml: window, principal, budgets and the standard claims (docs/case-format.md §8)."""
    from investigator.access_map import AccessMap

    assert isinstance(amap, AccessMap)
    expr_metrics = [m for m in re.findall(r"[A-Za-z_:][\w:]*", alert.expression) if m in metrics]
    symptom: dict = {"id": "symptom", "kind": "symptom", "statement": f"{alert.service} in {alert.environment} shows "
                     f"the alerted departure from its baseline ({alert.rule}).", "direction": _direction(alert)}
    if expr_metrics:
        symptom.update(signal="metric", metric=expr_metrics[0])
    start, end = case_window(alert)
    who = amap.principal
    principal = ({"id": who.id, "groups": list(who.groups), "may_request_access": who.may_request_access} if who
                 else {"id": "oncall", "groups": [group], "may_request_access": False})
    own_deploy = f"h_{_name(alert.service).replace('.', '_')}_deployment"
    return {
        "format": "investigator/case@1", "id": alert.id,
        "title": f"{alert.environment}/{alert.service}: {alert.rule}",
        "alert": {"id": alert.id, "rule": alert.rule, "fired_at": alert.fired_at.isoformat(), "text": alert.text,
                  "labels": alert.labels},
        "question": f"Why did {alert.rule} fire for {alert.environment}/{alert.service} at "
                    f"{alert.fired_at.isoformat()}{f' ({alert.text[:300]})' if alert.text != alert.rule else ''}, "
                    f"and what caused it?",
        "subject": f"{alert.environment}/{alert.service}",
        "window": {"start": start.isoformat(), "end": end.isoformat(), "change_lookback": "60m", "baseline": "30m"},
        "principal": principal,
        "budgets": {"rounds": 30, "reads": 100, "reads_per_round": 4},
        "hypotheses": [{"id": own_deploy, "statement": f"A deployment of {alert.service} shortly before or during "
                        f"the window caused the alerted departure.",
                        "blames": {"entity": alert.service, "types": ["deployment"]}}],
        "required_claims": [
            symptom,
            {"id": "change_in_window", "kind": "change_in_window",
             "statement": f"A change to {alert.service} took effect shortly before or during the window."},
            {"id": "counter_evidence", "kind": "counter_evidence", "hypothesis": own_deploy,
             "statement": f"The competing explanation that {alert.service}'s own deployment caused it was tested."},
            {"id": "causal_attribution", "kind": "causal_chain",
             "statement": f"The departure of {alert.service} is traced along stated relations to its root and cause."},
        ],
        "initial_evidence": [{"id": "E1", "claim": "symptom", "trust": "unverified", "text": alert.text[:500],
                              "origin": "alert"}],
    }


def _direction(alert: AlertInfo) -> str:
    """`down` when the alert's expression or words say the signal fell below a floor (availability,
    throughput, success rate), else `up`."""
    expr = alert.expression.replace(" ", "")
    if re.search(r"<=?[\d.]", expr) and not re.search(r">=?[\d.]", expr):
        return "down"
    words = f"{alert.rule} {alert.text}".lower()
    if re.search(r"\b(below|under|drops?|dropped|fell|low|lower than|less than)\b", words) and not re.search(
            r"\b(above|over|exceeds?|higher than|more than|high)\b", words):
        return "down"
    return "up"


def _shown(file: Path, tmp: Path, out: Path, origin: dict[Path, Path]) -> str:
    if file in origin:
        return str(origin[file])
    try:
        return str(out / file.relative_to(tmp))
    except ValueError:
        return str(file)


_ = timezone
