"""Where the runtime keeps its files and which store it talks to."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from state import Frozen


class Settings(Frozen):
    """Workspace layout; every path can be moved with an option or an environment variable."""

    workspace: Path = Path(".investigator")
    store_url: str | None = None
    """`sqlite:///…` (default: a file in the workspace) or `postgresql+psycopg://…`."""
    lease_seconds: float = 60.0
    """How long a worker's hold on a run lasts without a heartbeat (a killed worker's run is
    picked up by another after this)."""
    index_root: Path | None = None
    """Where case indexes live (default: `<workspace>/index`); indexes can be shared by workspaces."""

    @classmethod
    def from_env(cls, workspace: str | Path | None = None, store_url: str | None = None) -> "Settings":
        index_root = os.environ.get("INVESTIGATOR_INDEX_ROOT")
        return cls(lease_seconds=float(os.environ.get("INVESTIGATOR_LEASE_SECONDS", "60")),workspace=Path(workspace or os.environ.get("INVESTIGATOR_HOME", ".investigator")),
                   store_url=store_url or os.environ.get("INVESTIGATOR_STORE_URL"),
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
