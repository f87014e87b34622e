"""Size limits on what a case folder may hold, each one an environment variable.

A case is input from people and tools the runtime does not control: a 50 MB note, a
million-line log or 10,000 sources must be refused with a clear error before they are
read, not indexed for minutes at gigabytes of memory. Every limit is checked before the
bytes are read (a file's size from `stat`), and every error names the file, the limit and
the variable that raises it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from state.errors import ConfigError

_SIZE = re.compile(r"^\s*(\d{1,15})\s*(b|k|kb|kib|m|mb|mib|g|gb|gib)?\s*$", re.IGNORECASE)
_UNIT = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2,
         "g": 1024**3, "gb": 1024**3, "gib": 1024**3}


@dataclass(frozen=True)
class Limit:
    env: str
    default: int
    what: str
    unit: str = "bytes"

    def value(self) -> int:
        """The limit now: the environment variable when set (`20MB`, `5000000`, `2000`), else the default."""
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        m = _SIZE.match(raw)
        if not m or (self.unit != "bytes" and m.group(2)):
            shown = raw if len(raw) <= 40 else raw[:37] + "..."
            expected = "a whole number of bytes, e.g. 20MB or 5000000" if self.unit == "bytes" else "a whole number"
            raise ConfigError(f"{self.env}: {expected} (got {shown!r})")
        n = int(m.group(1)) * _UNIT[(m.group(2) or "").lower()]
        if n < 1:
            raise ConfigError(f"{self.env}: at least 1 (got {raw!r})")
        return n

    def describe(self, n: int | None = None) -> str:
        """`at most 20 MB (INVESTIGATOR_MAX_SOURCE_BYTES)`: the expectation of a limit error."""
        n = self.value() if n is None else n
        return f"at most {human(n) if self.unit == 'bytes' else n} {self.what} ({self.env} raises it)"


def human(n: int) -> str:
    """`20 MB`, `512 KB`, or `1234567 bytes` (exact: a limit is never rounded in a message)."""
    for unit, size in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


SOURCE_BYTES = Limit("INVESTIGATOR_MAX_SOURCE_BYTES", 20 * 1024**2, "a source file")
"""One source file (a log, a note, a trace export...)."""
CASE_BYTES = Limit("INVESTIGATOR_MAX_CASE_BYTES", 200 * 1024**2, "of sources in one case")
"""All the source files of a case together."""
SOURCES = Limit("INVESTIGATOR_MAX_SOURCES", 2000, "sources in one case", unit="count")
"""Entries in `sources.yaml`."""
YAML_BYTES = Limit("INVESTIGATOR_MAX_YAML_BYTES", 4 * 1024**2, "a case YAML file")
"""`case.yaml`, `sources.yaml`, `expected.yaml` and a metric's sidecar."""
