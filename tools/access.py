"""Who may read what: the manifest's groups against the principal's groups, at the time asked."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

from state import Frozen, stable_id
from state.case import Principal
from state.sources import Manifest
from tools.corpus import load_manifest


class AccessSnapshot(Frozen):
    """The access rules as they are at one moment; the watermark names that moment."""

    groups: dict[str, tuple[str, ...]]
    principal_groups: tuple[str, ...]

    @cached_property
    def watermark(self) -> str:
        return "acl-" + stable_id(sorted(self.principal_groups), sorted(self.groups.items()))[:12]

    def can_read(self, source_id: str) -> bool:
        allowed = self.groups.get(source_id)
        return allowed is not None and bool(set(allowed) & set(self.principal_groups))

    def readable(self) -> frozenset[str]:
        return self._readable

    @cached_property
    def _readable(self) -> frozenset[str]:
        mine = set(self.principal_groups)
        return frozenset(s for s, allowed in self.groups.items() if mine.intersection(allowed))


def snapshot(manifest: Manifest, principal: Principal, extra_groups: tuple[str, ...] = ()) -> AccessSnapshot:
    return AccessSnapshot(
        groups={s.id: s.groups for s in manifest.sources},
        principal_groups=tuple(sorted(set(principal.groups) | set(extra_groups))),
    )


class AccessPolicy:
    """Re-reads the manifest on every check so a revocation takes effect at once."""

    def __init__(self, case_dir: Path, principal: Principal, extra_groups: tuple[str, ...] = ()) -> None:
        self.case_dir = Path(case_dir)
        self.principal = principal
        self.extra_groups = extra_groups

    def current(self) -> AccessSnapshot:
        return snapshot(load_manifest(self.case_dir), self.principal, self.extra_groups)
