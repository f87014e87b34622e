"""The manifest as it is on disk now: the one place a run's access checks read `sources.yaml` again.

Everything else of a run reads the manifest once, in the `LoadedCase` (`investigator.loading`).
Access cannot: a revocation or a grant written to the manifest mid-run, or between a pause and a
resume, takes effect at the next check. `AccessPolicy` (and the read tool through it) asks a
`ManifestOnDisk` on every check; `show` and `grant` ask it once. Light on purpose: `show` and
`grant` use it without the format parsers.
"""

from __future__ import annotations

from pathlib import Path

from state.sources import Manifest
from tools.manifest import load_manifest

__all__ = ["ManifestOnDisk", "manifest_now"]


class ManifestOnDisk:
    """`tools.access.ManifestSource` of a case folder: `sources.yaml` as it is now, parsed again
    only when the file changed (its modification time, size or inode)."""

    def __init__(self, case_dir: Path) -> None:
        self.case_dir = Path(case_dir)
        self._seen: tuple[tuple[int, int, int], Manifest] | None = None

    def current(self) -> Manifest:
        try:
            st = (self.case_dir / "sources.yaml").stat()
        except FileNotFoundError:
            return load_manifest(self.case_dir)  # the CaseError that names it
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        if self._seen is None or self._seen[0] != stamp:
            self._seen = (stamp, load_manifest(self.case_dir))
        return self._seen[1]


def manifest_now(case_dir: Path) -> Manifest:
    """The case folder's manifest as it is on disk now."""
    return ManifestOnDisk(case_dir).current()
