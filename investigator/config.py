"""Where the runtime keeps its files and which store it talks to."""

from __future__ import annotations

import hashlib
import math
import os
from pathlib import Path

from state import Frozen
from state.errors import ConfigError

CRASH_NODES = ("plan", "retrieve", "read", "update", "decide", "index", "graph", "tombstone")


class Settings(Frozen):
    """Workspace layout; every path can be moved with an option or an environment variable."""

    workspace: Path = Path(".investigator")
    store_url: str | None = None
    """`sqlite:///…` (default: a file in the workspace) or `postgresql+psycopg://…`."""
    lease_seconds: float = 60.0
    """How long a worker's hold on a run lasts without a heartbeat (a killed worker's run is
    picked up by another after this; at once when the killed worker ran on the same host)."""
    max_attempts: int = 3
    """Drives in a row that may fail before a run is quarantined (set aside by `work`)."""
    index_root: Path | None = None
    """Where case indexes live (default: `<workspace>/index`); indexes can be shared by workspaces."""

    @classmethod
    def from_env(cls, workspace: str | Path | None = None, store_url: str | None = None) -> "Settings":
        """Options first, then `INVESTIGATOR_*` variables; a bad value is a ConfigError naming it."""
        check_environment()
        index_root = os.environ.get("INVESTIGATOR_INDEX_ROOT")
        home = Path(workspace or os.environ.get("INVESTIGATOR_HOME") or ".investigator")
        _folder(home, "--home" if workspace else "INVESTIGATOR_HOME" if os.environ.get("INVESTIGATOR_HOME")
                else "the workspace")
        return cls(lease_seconds=_number("INVESTIGATOR_LEASE_SECONDS", 60.0),
                   max_attempts=int(_number("INVESTIGATOR_MAX_ATTEMPTS", 3, integer=True)),
                   workspace=home,
                   store_url=store_url or os.environ.get("INVESTIGATOR_STORE_URL") or None,
                   index_root=Path(index_root) if index_root else None)

    @property
    def resolved_store_url(self) -> str:
        return self.store_url or f"sqlite:///{(self.workspace / 'investigator.db').resolve()}"

    def index_dir(self, case_id: str, case_dir: Path) -> Path:
        """The index folder of one case folder: `<case id>-<hash of the folder's resolved path>`.

        Keyed by the folder, not by the id written in it: two folders that share an id (a copy
        being edited, two checkouts) never share or rebuild each other's index."""
        where = hashlib.sha256(str(Path(case_dir).resolve()).encode("utf-8")).hexdigest()[:10]
        return (self.index_root or self.workspace / "index") / f"{case_id}-{where}"

    @property
    def checkpoint_path(self) -> Path:
        return self.workspace / "checkpoints.db"


def _number(name: str, default: float, *, integer: bool = False) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    expected = "a whole number of at least 1" if integer else "a number of seconds above 0"
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise ConfigError(f"{name}={raw!r}: expected {expected}") from None
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name}={raw!r}: expected {expected}")
    return value


def _folder(path: Path, name: str) -> None:
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{name} {str(path)!r}: expected a folder (or nothing there yet), found a file")


def check_environment() -> None:
    """Every `INVESTIGATOR_*` value the runtime reads, checked up front: one line naming the bad one."""
    _number("INVESTIGATOR_LEASE_SECONDS", 60.0)
    _number("INVESTIGATOR_MAX_ATTEMPTS", 3, integer=True)
    from state.limits import CASE_BYTES, SOURCE_BYTES, SOURCES, YAML_BYTES

    for limit in (SOURCE_BYTES, CASE_BYTES, SOURCES, YAML_BYTES):  # one parser per value: `20MB` is valid
        limit.value()
    if root := os.environ.get("INVESTIGATOR_INDEX_ROOT"):
        _folder(Path(root), "INVESTIGATOR_INDEX_ROOT")
    url = os.environ.get("INVESTIGATOR_STORE_URL")
    if url and not url.startswith(("sqlite", "postgresql")):
        raise ConfigError("INVESTIGATOR_STORE_URL: expected sqlite:///… or postgresql+psycopg://…")
    runtime = os.environ.get("INVESTIGATOR_EMBED_RUNTIME")
    if runtime and runtime not in ("auto", "onnx-int8", "onnx-fp32", "torch"):
        raise ConfigError(f"INVESTIGATOR_EMBED_RUNTIME={runtime!r}: expected auto, onnx-int8, onnx-fp32 or torch")
    crash = os.environ.get("INVESTIGATOR_CRASH_AT")
    if crash:
        node, _, rest = crash.partition(":")
        rnd, _, after = rest.partition(":")
        if node not in CRASH_NODES or not (rnd == "" or rnd.isdigit()) or after not in ("", "work", "saved"):
            raise ConfigError(f"INVESTIGATOR_CRASH_AT={crash!r}: expected NODE:ROUND[:work|saved] with NODE one of "
                              f"{', '.join(CRASH_NODES)} (e.g. read:6, or read:6:saved to kill after its writes "
                              "were checkpointed)")
