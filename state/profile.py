"""The profile: word lists, spellings and thresholds the rules use, as one validated value.

Loaded from the package default and a case's overrides by `tools.profile.load_profile`.
Compiled matchers are cached on the instance; the value itself stays frozen.
"""

from __future__ import annotations

import re
from functools import cached_property

from pydantic import Field, field_validator

from state._base import Frozen, Int, Number

_CJK = re.compile(r"[\u3000-\u9fff\uac00-\ud7af]")

LEVELS = ("debug", "info", "warning", "error")
"""The severity levels a log line is sorted into."""
ROLES = ("latency", "errors", "saturation", "traffic", "availability")
"""The roles a metric plays (a sidecar's `role`, the profile's `metric_roles` and `unit_roles`)."""


def _within(names: object, allowed: tuple[str, ...], where: str) -> None:
    """Every name one of the vocabulary, else an error that lists the vocabulary."""
    for name in names:  # type: ignore[attr-defined]
        if name not in allowed:
            raise ValueError(f"{where}: one of {', '.join(allowed)} (got {str(name)[:40]!r})")


def phrase_pattern(words: list[str] | tuple[str, ...]) -> re.Pattern[str]:
    """One case-insensitive alternation: whole words for Latin text, substrings for CJK."""
    parts = []
    for w in sorted({w for w in words if w}, key=lambda x: (-len(x), x)):
        esc = re.escape(w).replace(r"\ ", r"\s+")
        parts.append(esc if _CJK.search(w) else rf"(?<![\w]){esc}(?![\w])")
    return re.compile("|".join(parts) or r"(?!x)x", re.IGNORECASE)


def _compiles(pattern: str, where: str) -> None:
    """A profile pattern must be a regular expression Python compiles (else the run would crash later)."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        raise ValueError(f"{where}: a regular expression that compiles ({getattr(exc, 'msg', type(exc).__name__)})") from None


class AnomalyParams(Frozen):
    min_ratio: Number = Field(default=1.5, gt=1)
    mad_z: Number = Field(default=5.0, gt=0)
    floor: Number = Field(default=1e-9, ge=0)
    persist: Int = Field(default=3, ge=1)
    persist_min: Int = Field(default=2, ge=1)
    min_baseline_points: Int = Field(default=3, ge=1)
    saturation_level: Number = Field(default=0.98, gt=0, le=1)
    log_burst_min: Int = Field(default=3, ge=1)
    log_burst_span: Number = Field(default=300, gt=0)
    log_burst_ratio: Number = Field(default=3.0, gt=1)
    span_bucket: Number = Field(default=60, gt=0)
    min_bucket_spans: Int = Field(default=5, ge=1)
    """Spans a bucket should hold on average: a lightly sampled trace file gets wider buckets (up to
    ten), so a percentile of two spans never makes an onset."""
    explain_fraction: Number = Field(default=0.5, ge=0, le=1)


class Profile(Frozen):
    severity: dict[str, tuple[str, ...]]
    numeric_levels: dict[Int, str]
    syslog_severity: dict[Int, str]
    level_fields: tuple[str, ...]
    time_fields: tuple[str, ...]
    message_fields: tuple[str, ...]
    writer_fields: tuple[str, ...]
    relation_fields: tuple[str, ...]
    relation_phrases: tuple[str, ...]
    change_phrases: tuple[str, ...]
    version_patterns: tuple[str, ...]
    metric_roles: dict[str, str]
    unit_roles: dict[str, tuple[str, ...]]
    anomaly: AnomalyParams
    k8s_warning_reasons: tuple[str, ...]
    k8s_node_conditions: tuple[str, ...]
    change_types: dict[str, tuple[str, ...]]
    entity_labels: tuple[str, ...]
    environments: tuple[str, ...] = ()
    host_suffixes: tuple[str, ...]
    injection_phrases: tuple[str, ...]
    version_fields: tuple[str, ...] = ()
    """Log fields that carry the version of the instance that wrote the line (`ver`, `app_version`)."""
    pod_labels: tuple[str, ...] = ()
    """Series labels that name a pod: such a series is about the pod's workload."""
    limit_words: tuple[str, ...] = ()
    """Words that only say a setting is a limit (`max`, `limit`, `capacity`…): left out when a
    configured limit is matched to the series it bounds by the words they share."""
    upstream_phrases: tuple[str, ...] = ()
    """Phrases by which an error line blames something below it without naming it ("upstream
    dependency unavailable", "bad gateway"): such lines do not say the failure is internal."""
    through_phrases: tuple[str, ...] = ()
    """Relation phrases that say a call passes through the named thing on its way elsewhere (`calls to
    the partners go through X`, `via X`): X stands on the way of the writer's calls, so where what it
    calls is seen failing only by the caller, a change of X is looked for (a firewall, an egress proxy)."""
    front_phrases: tuple[str, ...] = ()
    """Sentences that say one name stands in front of an entity (`{a} is {b}'s VIP`, `{a} resolves to
    {b}`): regular expressions with `{a}` first and `{b}` once; such a sentence states a → b."""

    @field_validator("front_phrases")
    @classmethod
    def _fronts(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for i, p in enumerate(value):
            if not p.startswith("{a}") or p.count("{b}") != 1 or p.count("{a}") != 1:
                raise ValueError(f"front_phrases.{i}: a pattern that starts with {{a}} and holds {{b}} once")
            for part in p[3:].split("{b}"):
                _compiles(part, f"front_phrases.{i}")
        return value

    @field_validator("version_patterns")
    @classmethod
    def _patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for i, p in enumerate(value):
            _compiles(p, f"version_patterns.{i}")
        return value

    @field_validator("metric_roles")
    @classmethod
    def _role_patterns(cls, value: dict[str, str]) -> dict[str, str]:
        _within(value, ROLES, "a metric role")
        for role, p in value.items():
            _compiles(p, f"metric_roles.{role}")
        return value

    @field_validator("unit_roles")
    @classmethod
    def _unit_roles(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        _within(value, ROLES, "a metric role")
        return value

    @field_validator("severity")
    @classmethod
    def _severity(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        _within(value, LEVELS, "a severity level")
        return value

    @field_validator("numeric_levels", "syslog_severity")
    @classmethod
    def _levels(cls, value: dict[int, str]) -> dict[int, str]:
        _within(value.values(), LEVELS, "a severity level")
        return value

    @field_validator("change_types")
    @classmethod
    def _change_type_names(cls, value: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
        for kind in value:
            if not re.fullmatch(r"[a-z][a-z0-9_]{0,63}", kind):
                raise ValueError(f"a change type name of lower-case letters, digits and '_' (got {kind[:40]!r})")
        return value

    # --- compiled matchers ---------------------------------------------------------------
    @cached_property
    def _severity_words(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for level in ("debug", "info", "warning", "error"):  # later (worse) levels win a clash
            for w in self.severity.get(level, ()):
                out[w.lower()] = level
        return out

    def level_of(self, word: str) -> str | None:
        """The level a spelling names (`WARNING:` → warning), or None."""
        return self._severity_words.get(word.strip().rstrip(":").strip("[]<>").lower())

    @cached_property
    def relation_phrase_re(self) -> re.Pattern[str]:
        return phrase_pattern(self.relation_phrases)

    def passes_through(self, via: str) -> bool:
        """Whether a relation stated by a sentence (`via` as the relation reader records it: `sentence
        'go through'`) says the call passes through its target (`through_phrases`)."""
        if not via.startswith("sentence '"):
            return False
        return bool(self._through_re.fullmatch(via[len("sentence '"):-1]))

    @cached_property
    def _through_re(self) -> re.Pattern[str]:
        return phrase_pattern(self.through_phrases)

    @cached_property
    def front_templates(self) -> tuple[tuple[re.Pattern[str], re.Pattern[str]], ...]:
        """(between, after) per front phrase: what stands between the two names, what follows the second
        (names may be quoted or written as code, and the first written as a host whose first label is
        the name: `orders-db.prod.internal`)."""
        q = r"[`'\"*]*"
        host = r"(?:\.[A-Za-z0-9-]+)*"
        out = []
        for p in self.front_phrases:
            mid, tail = p[3:].split("{b}")
            out.append((re.compile(rf"{host}{q}\s*{mid.strip()}\s*{q}", re.IGNORECASE),
                        re.compile(rf"{q}{tail}", re.IGNORECASE)))
        return tuple(out)

    @cached_property
    def upstream_phrase_re(self) -> re.Pattern[str]:
        return phrase_pattern(self.upstream_phrases)

    @cached_property
    def change_phrase_re(self) -> re.Pattern[str]:
        return phrase_pattern(self.change_phrases)

    @cached_property
    def injection_re(self) -> re.Pattern[str]:
        return phrase_pattern(self.injection_phrases)

    @cached_property
    def version_re(self) -> re.Pattern[str]:
        alt = "|".join(f"(?:{p})" for p in self.version_patterns)
        return re.compile(rf"(?<![\w.]){'(?:' + alt + ')'}(?![\w])", re.IGNORECASE)

    @cached_property
    def _roles(self) -> list[tuple[str, re.Pattern[str]]]:
        return [(role, re.compile(p, re.IGNORECASE)) for role, p in self.metric_roles.items()]

    def role_of(self, metric: str, unit: str = "") -> str | None:
        """The role a metric suggests: a time unit says latency; else its name; else its unit; else None."""
        u = unit.strip().lower().split(" ", 1)[0]
        if u and u in {x.lower() for x in self.unit_roles.get("latency", ())}:
            return "latency"
        for role, pattern in self._roles:
            if pattern.search(metric):
                return role
        for role, units in self.unit_roles.items():
            if u and u in {x.lower() for x in units}:
                return role
        return None

    @cached_property
    def _change_words(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for kind, words in self.change_types.items():
            for w in (kind, *words):
                out.setdefault(w.lower().replace("-", "_").replace(" ", "_"), kind)
        return out

    def known_change_type(self, written: str) -> bool:
        """Whether a type as written is one of the change types or a spelling the profile maps to one."""
        return self.change_type(written) in self.change_types

    def change_type_vocabulary(self) -> str:
        """The change types, for a message: `deployment, config_push, …`."""
        return ", ".join(self.change_types)

    def change_type(self, written: str) -> str:
        """The normalised change type of a type as written (`release` → deployment); a compound an
        export tool writes (`config-only`, `hotfix release`) is the one type its words name."""
        key = written.strip().lower().replace("-", "_").replace(" ", "_")
        if key in self._change_words:
            return self._change_words[key]
        named = {self._change_words[w] for w in key.split("_") if w in self._change_words}
        return named.pop() if len(named) == 1 else (key or "other")
