"""Log parsers: plain text, logfmt, JSON lines (zap, logrus, pino, bunyan) and syslog.

Each returns `LogEvent`s with exact offsets and keeps every line it cannot read as
`Unparsed`. Severity, time, writer and message fields come from the profile, so spellings
are data. A line that does not start a new event (a stack trace, a wrapped message)
belongs to the event before it.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from typing import Any

from state.profile import Profile
from state.telemetry import LogEvent, Unparsed, as_text
from tools.formats import jsonspan

_ISO = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})[T ](?P<time>\d{2}:\d{2}:\d{2})(?P<frac>[.,]\d{1,9})?"
    r"\s?(?P<zone>Z|[+-]\d{2}:?\d{2}|UTC|GMT)?(?![\d])")
_LEAD_TS = re.compile(r"^\s*[\[(]?(?=\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})")
_SYSLOG5424 = re.compile(r"^<(?P<pri>\d{1,3})>\d{1,2} (?P<ts>\S+) (?P<host>\S+) (?P<app>\S+) (?P<proc>\S+) (?P<msgid>\S+) "
                         r"(?P<sd>-|(?:\[[^\]]*\])+) ?(?P<msg>.*)$")
_SYSLOG3164 = re.compile(r"^(?:<(?P<pri>\d{1,3})>)?(?P<mon>[A-Z][a-z]{2}) {1,2}(?P<day>\d{1,2}) (?P<time>\d{2}:\d{2}:\d{2}) "
                         r"(?P<host>\S+) (?P<tag>[^:\[\s]+)(?:\[(?P<pid>\d+)\])?: ?(?P<msg>.*)$")
_LOGFMT = re.compile(r'(?P<k>[A-Za-z_@][\w.@/-]*)=(?P<v>"(?:[^"\\]|\\.)*"|[^\s]*)')
_MONTHS = {m: i + 1 for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}
_SEQUENCE = re.compile(r"\[\d+-\d+\]")
_CONTINUATION = re.compile(r"^(\s|Traceback|Caused by:|\.\.\.|at\s|\}|\]|goroutine\s|panic:|\[signal\s)")


def zone(tz: str | None) -> timezone | None:
    if not tz:
        return None
    if tz in ("Z", "UTC", "GMT"):
        return timezone.utc
    sign = -1 if tz[0] == "-" else 1
    digits = tz[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


def parse_iso(m: re.Match[str], default_tz: timezone | None) -> datetime | None:
    frac = (m.group("frac") or "").replace(",", ".")
    micro = int((frac[1:] + "000000")[:6]) if frac else 0
    try:
        base = datetime.fromisoformat(f"{m.group('date')}T{m.group('time')}").replace(microsecond=micro)
    except ValueError:
        return None
    try:
        tz = zone(m.group("zone")) or default_tz
    except ValueError:  # an offset of a day or more (`+25:00`) is no zone: the stamp is no time
        return None
    return base.replace(tzinfo=tz) if tz is not None else None


def epoch(value: float) -> datetime:
    """Seconds, milliseconds, microseconds or nanoseconds since the epoch, by magnitude."""
    v = float(value)
    for scale in (1, 1e3, 1e6, 1e9):
        if abs(v / scale) < 1e11:
            return datetime.fromtimestamp(v / scale, tz=timezone.utc)
    return datetime.fromtimestamp(v / 1e9, tz=timezone.utc)


def parse_time(value: Any, default_tz: timezone | None) -> datetime | None:
    """A timestamp field: ISO text, or an epoch number (or numeric text)."""
    if isinstance(value, bool) or value is None:
        return None
    try:  # an epoch beyond the years datetime holds (1e300) is no timestamp
        if isinstance(value, (int, float)):
            return epoch(value) if value == value else None
        text = str(value).strip()
        if re.fullmatch(r"\d{9,19}(\.\d+)?", text):
            return epoch(float(text))
    except (OverflowError, ValueError, OSError):
        return None
    m = _ISO.search(text)
    return parse_iso(m, default_tz) if m else None


def time_field(value: Any, tz: timezone | None) -> datetime | None:
    """A record's time field: a datetime as YAML parsed it (without a zone: read in `tz`, else UTC), or
    what `parse_time` reads in `tz` (else UTC)."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=tz or timezone.utc)
    got = parse_time(value, tz or timezone.utc)
    return got


def _flat(obj: Any, prefix: str = "") -> dict[str, str]:
    out: dict[str, str] = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if isinstance(v, (dict, list)):
                out.update(_flat(v, key))
            else:
                out[key] = as_text(v)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.update(_flat(v, f"{prefix}.{i}"))
    return out


def severity_of(value: Any, profile: Profile) -> str:
    if isinstance(value, bool) or value is None:
        return "unknown"
    if isinstance(value, (int, float)) or re.fullmatch(r"\d{1,3}", str(value).strip()):
        try:
            number = float(value)
        except OverflowError:  # an integer of hundreds of digits
            return "unknown"
        if not math.isfinite(number):  # a level of NaN or Infinity names no level
            return "unknown"
        n = int(number)
        levels = profile.numeric_levels
        best = max((k for k in levels if k <= n), default=None)
        return levels[best] if best is not None else "unknown"
    return profile.level_of(str(value)) or "unknown"


def _first(fields: dict[str, str], names: tuple[str, ...]) -> str | None:
    for n in names:
        if fields.get(n):
            return fields[n]
    lower = {k.lower(): v for k, v in fields.items()}
    for n in names:
        if lower.get(n.lower()):
            return lower[n.lower()]
    return None


class _Lines:
    """Iterate the lines of a text with offsets (line content without its newline)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __iter__(self):  # noqa: ANN204
        pos = 0
        for raw in jsonspan.physical_lines(self.text):
            end = pos + len(raw.rstrip("\r\n"))
            yield pos, end, self.text[pos:end]
            pos += len(raw)


def _extend(events: list[LogEvent], bad: list[Unparsed], end: int, text: str) -> None:
    """A continuation line joins the record before it: the last event, or the last unparsed block
    when that came later (so an event never spans a line kept as unparsed)."""
    if bad and (not events or bad[-1].end > events[-1].end):
        bad[-1] = bad[-1].model_copy(update={"end": end})
        return
    last = events[-1]
    events[-1] = last.model_copy(update={"end": end, "message": last.message + "\n" + text[last.end:end].strip("\r\n")})


def parse_plain(text: str, profile: Profile, tz: str | None = None) -> tuple[list[LogEvent], list[Unparsed]]:
    default_tz = zone(tz)
    events: list[LogEvent] = []
    bad: list[Unparsed] = []
    for start, end, line in _Lines(text):
        if not line.strip():
            continue
        lead = _LEAD_TS.match(line)
        m = _ISO.search(line, lead.end()) if lead else None
        if m is None or m.start() != lead.end():
            if (events or bad) and (_CONTINUATION.match(line) or not lead):
                _extend(events, bad, end, text)
            else:
                bad.append(Unparsed(start=start, end=end, reason="no timestamp at the start of the line"))
            continue
        ts = parse_iso(m, default_tz)
        if ts is None:
            bad.append(Unparsed(start=start, end=end, reason="a timestamp without a zone (set `timezone` on the source)"))
            continue
        rest = line[m.end():].lstrip(" ])|-")
        tokens = rest.split()
        severity, writer, msg_at = "unknown", None, 0
        for i, tok in enumerate(tokens[:4]):
            if "=" in tok and tok.split("=", 1)[0].lower() in {f.lower() for f in profile.level_fields}:
                level = profile.level_of(tok.split("=", 1)[1].strip('"'))
            else:
                level = profile.level_of(tok)
                if level is None and tok.endswith(":") and ":" in tok[:-1]:
                    # a colon-separated prefix that ends in the level (PostgreSQL's
                    # `UTC:host(port):user@db:[pid]:FATAL:`, many appliance logs)
                    level = profile.level_of(tok[:-1].rsplit(":", 1)[1])
            if level is not None and (len(tok.strip("[]<>:")) > 1 or i == 0):
                severity, msg_at = level, i + 1
                if i + 1 < len(tokens) and re.fullmatch(r"[A-Za-z][\w.-]*[A-Za-z0-9]", tokens[i + 1]):
                    writer = tokens[i + 1]
                break
        message = " ".join(tokens[msg_at:]) if msg_at else rest
        fields = {k: v.strip('"') for k, v in ((mm.group("k"), mm.group("v")) for mm in _LOGFMT.finditer(rest))}
        if writer:
            fields["@after_level"] = writer
        events.append(LogEvent(start=start, end=end, ts=ts, severity=severity, writer=None,
                               message=message, fields=fields))
    return events, bad


def parse_logfmt(text: str, profile: Profile, tz: str | None = None) -> tuple[list[LogEvent], list[Unparsed]]:
    default_tz = zone(tz)
    events: list[LogEvent] = []
    bad: list[Unparsed] = []
    for start, end, line in _Lines(text):
        if not line.strip():
            continue
        pairs = {mm.group("k"): mm.group("v") for mm in _LOGFMT.finditer(line)}
        fields = {k: (v[1:-1].replace('\\"', '"') if v.startswith('"') else v) for k, v in pairs.items()}
        ts = next((t for f in profile.time_fields if (t := parse_time(fields.get(f), default_tz)) is not None), None)
        if ts is None:
            if (events or bad) and (_CONTINUATION.match(line) or not pairs):
                _extend(events, bad, end, text)
            else:
                bad.append(Unparsed(start=start, end=end, reason="no time field (ts=, time=…) with a zone"))
            continue
        level = _first(fields, profile.level_fields)
        events.append(LogEvent(start=start, end=end, ts=ts, severity=severity_of(level, profile),
                               writer=_first(fields, profile.writer_fields),
                               message=_first(fields, profile.message_fields) or line, fields=fields))
    return events, bad


def parse_json(text: str, profile: Profile, tz: str | None = None) -> tuple[list[LogEvent], list[Unparsed]]:
    default_tz = zone(tz)
    events: list[LogEvent] = []
    bad: list[Unparsed] = []
    for start, end, line in _Lines(text):
        if not line.strip():
            continue
        try:
            node = jsonspan.parse(text, start, end)
        except jsonspan.JSONSpanError:
            node = None
        if node is None or node.kind != "object":
            if (events or bad) and _CONTINUATION.match(line):
                _extend(events, bad, end, text)
            else:
                bad.append(Unparsed(start=start, end=end, reason="not a JSON object"))
            continue
        obj = node.value
        fields = _flat(obj)
        raw_ts = next((obj.get(f) for f in profile.time_fields if f in obj), None)
        if raw_ts is None:
            raw_ts = next((fields[f] for f in profile.time_fields if f in fields), None)
        ts = parse_time(raw_ts, default_tz)
        if ts is None:
            bad.append(Unparsed(start=start, end=end, reason="no time field with a zone (ts, time, @timestamp…)"))
            continue
        raw_level = next((obj.get(f) for f in profile.level_fields if f in obj), None)
        if raw_level is None:
            raw_level = _first(fields, profile.level_fields)
        events.append(LogEvent(start=start, end=end, ts=ts, severity=severity_of(raw_level, profile),
                               writer=_first(fields, profile.writer_fields),
                               message=_first(fields, profile.message_fields) or "", fields=fields))
    return events, bad


def parse_syslog(text: str, profile: Profile, tz: str | None = None,
                 year: int | None = None) -> tuple[list[LogEvent], list[Unparsed]]:
    """RFC 5424 (`<PRI>1 ISO host app …`) and RFC 3164 (`<PRI>Mmm dd hh:mm:ss host tag[pid]: msg`)."""
    default_tz = zone(tz)
    events: list[LogEvent] = []
    bad: list[Unparsed] = []
    for start, end, line in _Lines(text):
        if not line.strip():
            continue
        m = _SYSLOG5424.match(line)
        ts: datetime | None = None
        if m:
            ts = parse_time(m.group("ts"), default_tz)
            app, msg, pri = m.group("app"), m.group("msg"), m.group("pri")
        else:
            m = _SYSLOG3164.match(line)
            if m and default_tz is not None and year is not None:
                try:
                    ts = datetime(year, _MONTHS[m.group("mon")], int(m.group("day")),
                                  *map(int, m.group("time").split(":")), tzinfo=default_tz)
                except (KeyError, ValueError):
                    ts = None
            app, msg, pri = (m.group("tag"), m.group("msg"), m.group("pri")) if m else (None, "", None)
        if m is None or ts is None:
            if (events or bad) and _CONTINUATION.match(line):
                _extend(events, bad, end, text)
            else:
                why = "not a syslog line" if m is None else "an RFC 3164 stamp needs `timezone` on the source"
                bad.append(Unparsed(start=start, end=end, reason=why))
            continue
        severity = profile.syslog_severity.get(int(pri) % 8, "unknown") if pri else "unknown"
        words = msg.split(None, 2)
        if words and _SEQUENCE.fullmatch(words[0]):  # PostgreSQL's `[7-1]` (syslog_sequence_numbers)
            words = words[1:]
        first = words[0] if words else ""
        if profile.level_of(first):  # `WARNING:` at the start of the message (PostgreSQL) wins over PRI
            severity = profile.level_of(first) or severity
        fields = {mm.group("k"): mm.group("v").strip('"') for mm in _LOGFMT.finditer(msg)}
        events.append(LogEvent(start=start, end=end, ts=ts, severity=severity, writer=app if app != "-" else None,
                               message=msg, fields=fields))
    return events, bad


def detect(text: str) -> str:
    """The log format the first readable lines suggest."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:30]
    if not lines:
        return "plain"
    votes = {"json": 0, "syslog": 0, "logfmt": 0, "plain": 0}
    for ln in lines:
        if ln.startswith("{"):
            votes["json"] += 1
        elif _SYSLOG5424.match(ln) or _SYSLOG3164.match(ln):
            votes["syslog"] += 1
        elif _LEAD_TS.match(ln):
            votes["plain"] += 1
        elif len(_LOGFMT.findall(ln)) >= 2:
            votes["logfmt"] += 1
    return max(votes, key=lambda k: (votes[k], k == "plain"))


def parse_logs(text: str, fmt: str, profile: Profile, tz: str | None = None,
               year: int | None = None) -> tuple[str, list[LogEvent], list[Unparsed]]:
    fmt = detect(text) if fmt == "auto" else fmt
    if fmt == "json":
        ev, bad = parse_json(text, profile, tz)
    elif fmt == "logfmt":
        ev, bad = parse_logfmt(text, profile, tz)
    elif fmt == "syslog":
        ev, bad = parse_syslog(text, profile, tz, year)
    else:
        ev, bad = parse_plain(text, profile, tz)
    return fmt, ev, bad
