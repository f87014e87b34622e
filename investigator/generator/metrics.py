"""Metric series: values from the scenario's behaviour, written as CSV + sidecar or Prometheus JSON."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from .bundle import Bundle, Source, epoch, iso, iso_offset, num, yq
from .plan import Plan, SeriesSpec
from .scenario import Scenario

_UTC = timezone.utc
RAMP = 0.75   # the first anomalous point carries this share of the rise (still far above any threshold)


def level(sc: Scenario, s: SeriesSpec, t: datetime) -> tuple[float, bool]:
    """The noiseless value of a series at t, and whether the series is in its anomalous part."""
    b = sc.behaviour[s.entity]

    def step(onset: datetime | None, delta: float) -> tuple[float, bool]:
        if onset is None or t < onset or delta == 0:
            return 0.0, False
        return (delta * RAMP if t < onset + timedelta(minutes=1) else delta), True

    if s.env:        # the staging twin: flat, or a rise of its own (another entity)
        rise = s.mild if t >= sc.start + timedelta(minutes=4) else 1.0
        base = b.lat_base if s.what == "lat" else b.err_base if s.what == "err" else 99.6
        return base * rise, rise != 1.0
    if s.what == "lat":
        d, on = step(b.onset, b.lat_delta)
        return b.lat_base + d, on
    if s.what == "err":
        d, on = step(b.onset, b.err_delta)
        return b.err_base + d, on
    if s.what == "avail":
        d, on = step(b.onset, b.err_delta)
        return 100.0 - b.err_base - d, on
    if s.what == "traffic":
        d, on = step(b.traffic_onset, b.traffic_delta)
        return b.traffic_base + d, on
    if s.what == "sat":
        d, on = step(b.sat_onset, b.sat_delta)
        return b.sat_base + d, on
    # hypothesis metric: flat, or a mild rise that stays under its threshold
    anchor = sc.behaviour[sc.subject].onset or sc.start
    return s.base * (s.mild if t >= anchor else 1.0), False


def points(sc: Scenario, s: SeriesSpec) -> list[tuple[datetime, float | None]]:
    r = sc.rng
    t0 = sc.start - timedelta(minutes=sc.baseline)
    n = sc.baseline + int((sc.end - sc.start).total_seconds() // 60) + 1
    gaps: set[int] = set()
    nan: set[int] = set()
    if r.random() < 0.2:
        gaps = {r.randint(5, sc.baseline - sc.onset_lead - 5) for _ in range(r.randint(1, 2))}
    if r.random() < 0.1:
        nan = {r.randint(5, sc.baseline - sc.onset_lead - 5)}
    out: list[tuple[datetime, float | None]] = []
    for i in range(n):
        t = t0 + timedelta(minutes=i)
        if i in gaps:
            continue
        v, on = level(sc, s, t)
        noise = r.uniform(0.95, 1.05) if on else r.uniform(0.98, 1.02)
        val = v * noise
        if s.what == "avail":
            val = min(99.99, v + (v * (noise - 1.0) * (0.2 if not on else 1.0)))
        out.append((t, None if i in nan else val * s.scale))
    return out


def _sidecar(sc: Scenario, s: SeriesSpec) -> str:
    lines = [f"metric: {s.metric}", f"service: {s.entity}", f"environment: {s.env or sc.env}", f"unit: {yq(s.unit)}"]
    if sc.rng.random() < 0.8:
        lines.append(f"role: {s.role}")
    if s.unit == "%" and s.role == "saturation":
        lines.append("capacity: 100")
    lines.append("resolution: 60s")
    return "\n".join(lines) + "\n"


def write_metrics(sc: Scenario, plan: Plan, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    prom: dict[tuple[str, bool], list[SeriesSpec]] = {}
    for s in plan.series:
        if s.carrier == "prom" and not s.denied and not s.env:
            prom.setdefault((s.metric, False), []).append(s)
            continue
        _write_csv(sc, s, bundle, groups_for)
    for (metric, _), specs in prom.items():
        # split large groups so that a file holds 1-6 series
        for i in range(0, len(specs), 6):
            _write_prom(sc, metric, specs[i:i + 6], bundle, groups_for)


def _write_csv(sc: Scenario, s: SeriesSpec, bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    style = r.choices(["iso", "utc", "epoch"], [70, 15, 15])[0]
    lines = ["ts,value"]
    rows: list[tuple[datetime, str]] = []
    for t, v in points(sc, s):
        ts = {"iso": iso_offset(t), "utc": iso(t.astimezone(_UTC)), "epoch": str(int(epoch(t)))}[style]
        val = "NaN" if v is None else num(v)
        lines.append(f"{ts},{val}")
        rows.append((t, f"{ts},{val}"))
    env = s.env or sc.env
    sid = f"{s.entity}-{env}-{s.metric.replace('_', '-')}"
    src = bundle.add(Source(id=sid, path=f"sources/metrics/{sid}.csv", kind="metric", fmt="csv", service=s.entity,
                            env=env, text="\n".join(lines) + "\n", groups=groups_for(s.entity, denied=s.denied),
                            tags=["metric/csv"], sidecar=_sidecar(sc, s)))
    _anchor_points(sc, s, src, rows, bundle)


def _label_set(sc: Scenario, s: SeriesSpec) -> dict[str, str]:
    r = sc.rng
    e = s.entity
    if s.labels == "node":
        return {"node": e, "job": "node-exporter"}
    if s.labels == "instance":
        return {"instance": f"{e}:9100", "job": "node-exporter"}
    if s.labels == "pod":
        return {"namespace": sc.env, "pod": sc.pod_name(e), "container": "main"}
    if s.labels == "job":
        return {"job": e, "instance": f"10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(2, 250)}:8080"}
    if s.labels in ("queue", "topic"):
        return {s.labels: e, "cluster": "mq"}
    if s.labels == "app":
        return {"app": e, "namespace": sc.env}
    return {s.labels: e}


def _write_prom(sc: Scenario, metric: str, specs: list[SeriesSpec], bundle: Bundle, groups_for) -> None:  # noqa: ANN001
    r = sc.rng
    with_name = r.random() < 0.75
    parts = []
    rows_by_spec = []
    for s in specs:
        labels = _label_set(sc, s)
        if with_name:
            labels = {"__name__": metric, **labels}
        pairs = []
        rows = []
        for t, v in points(sc, s):
            pair = f'[{int(epoch(t))},"{"NaN" if v is None else num(v)}"]'
            pairs.append(pair)
            rows.append((t, pair))
        lab = ",".join(f'"{k}":"{v}"' for k, v in labels.items())
        parts.append('    {"metric":{' + lab + '},\n     "values":[' + ",".join(pairs) + "]}")
        rows_by_spec.append((s, rows))
    text = ('{"status":"success","data":{"resultType":"matrix","result":[\n' + ",\n".join(parts) + "\n]}}\n")
    ents = sorted({s.entity for s in specs})
    service = ents[0] if len(ents) == 1 else "*"
    sid = f"prom-{metric.replace('_', '-')}-{sc.env}" + (f"-{ents[0]}" if len(ents) == 1 else "")
    sidecar = None
    s0 = specs[0]
    if not with_name or r.random() < 0.4:
        sidecar = f"metric: {metric}\nenvironment: {sc.env}\nunit: {yq(s0.unit)}\nrole: {s0.role}\n"
        if s0.unit == "%" and s0.role == "saturation":
            sidecar += "capacity: 100\n"
    src = bundle.add(Source(id=sid, path=f"sources/metrics/{sid}.json", kind="metric", fmt="prometheus",
                            service=service, env=sc.env, text=text, groups=groups_for(service),
                            explicit_format=r.random() < 0.5, tags=["metric/prometheus"], sidecar=sidecar))
    for s, rows in rows_by_spec:
        _anchor_points(sc, s, src, rows, bundle)


def _anchor_points(sc: Scenario, s: SeriesSpec, src: Source, rows: list[tuple[datetime, str]], bundle: Bundle) -> None:
    """A point inside the window (after the symptom) as the series' gold quote."""
    b = sc.behaviour[s.entity]
    after = (b.onset or b.traffic_onset or b.sat_onset or sc.start) + timedelta(minutes=3)
    pick = next((row for t, row in rows if t >= max(after, sc.start + timedelta(minutes=3)) and "NaN" not in row), None)
    if pick:
        bundle.anchor(f"series:{s.entity}:{s.metric}:{s.env}", src, pick)

