"""Who may read what: the manifest's groups against the principal's groups, at the time asked.

One place decides it for every tool: `AccessSnapshot.can_read` for a single source (the read
tool, the structured lookups, a resume, `show`) and `RowScope.mask` for the rows of a chunk
table (both retrieval tools), so the rule that hides an unreadable or deleted source, and
the environment filter that goes with it, exist once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

from state import Frozen, stable_id
from state.case import Principal
from state.sources import Manifest

if TYPE_CHECKING:
    import numpy as np  # imported where a RowScope is built: `show` and `grant` re-check access without it


class AccessSnapshot(Frozen):
    """The access rules as they are at one moment; the watermark names that moment."""

    groups: dict[str, tuple[str, ...]]
    principal_groups: tuple[str, ...]
    deleted: frozenset[str] = frozenset()
    """Tombstoned sources: never readable again, whatever the groups say."""

    @cached_property
    def watermark(self) -> str:
        parts: list[object] = [sorted(self.principal_groups), sorted(self.groups.items())]
        if self.deleted:  # unchanged for a case with no tombstone, so older watermarks stay valid
            parts.append(sorted(self.deleted))
        return "acl-" + stable_id(*parts)[:12]

    def can_read(self, source_id: str) -> bool:
        allowed = self.groups.get(source_id)
        return (allowed is not None and source_id not in self.deleted
                and bool(set(allowed) & set(self.principal_groups)))

    def is_deleted(self, source_id: str) -> bool:
        return source_id in self.deleted

    def readable(self) -> frozenset[str]:
        return self._readable

    @cached_property
    def _readable(self) -> frozenset[str]:
        mine = set(self.principal_groups)
        return frozenset(s for s, allowed in self.groups.items() if mine.intersection(allowed) and s not in self.deleted)

    def unlocking_groups(self, source_id: str) -> tuple[str, ...]:
        """The groups that would let the principal read a source (empty when deleted or unknown)."""
        if source_id in self.deleted:
            return ()
        return tuple(sorted(set(self.groups.get(source_id, ())) - set(self.principal_groups)))


def snapshot(manifest: Manifest, principal: Principal, extra_groups: tuple[str, ...] = (),
             deleted: Iterable[str] = ()) -> AccessSnapshot:
    return AccessSnapshot(
        groups={s.id: s.groups for s in manifest.sources},
        principal_groups=tuple(sorted(set(principal.groups) | set(extra_groups))),
        deleted=frozenset(deleted),
    )


def known_groups(manifest: Manifest) -> frozenset[str]:
    """Every group the case's manifest names: the only groups a grant can mean."""
    return frozenset(g for s in manifest.sources for g in s.groups)


class ManifestSource(Protocol):
    def current(self) -> Manifest:
        """The manifest as it is on disk now (a revocation since the run began included)."""
        ...


class AccessPolicy:
    """Asks `manifest` (and the tombstones) on every check so a revocation takes effect at once."""

    def __init__(self, manifest: ManifestSource, principal: Principal, extra_groups: tuple[str, ...] = (),
                 deleted: Callable[[], Iterable[str]] | None = None) -> None:
        self.manifest = manifest
        self.principal = principal
        self.extra_groups = extra_groups
        self.deleted = deleted

    def current(self) -> AccessSnapshot:
        return snapshot(self.manifest.current(), self.principal, self.extra_groups,
                        self.deleted() if self.deleted is not None else ())


class RowScope:
    """The rows of a chunk table a principal may see in an environment: the one access mask.

    Rows are coded by source and environment once, so a mask is a lookup per distinct source
    and not a Python loop over every chunk; it is computed again only when the access
    watermark or the environment changes, and the same array is returned until then (callers
    that narrow it further take a copy)."""

    def __init__(self, source_ids: Sequence[str] | np.ndarray, environments: Sequence[str] | np.ndarray) -> None:
        import numpy as np

        src = np.asarray(source_ids, dtype=object).astype(str)
        env = np.asarray(environments, dtype=object).astype(str)
        if src.size:
            self.sources, self.source_code = np.unique(src, return_inverse=True)
            self.env_values, self.env_code = np.unique(env, return_inverse=True)
        else:
            self.sources, self.source_code = np.array([], dtype=str), np.array([], dtype=np.int64)
            self.env_values, self.env_code = np.array([], dtype=str), np.array([], dtype=np.int64)
        self.source_code, self.env_code = self.source_code.reshape(-1), self.env_code.reshape(-1)
        self._key: tuple[str, str] | None = None
        self._mask = np.zeros(len(src), dtype=bool)

    def mask(self, access: AccessSnapshot, environment: str) -> np.ndarray:
        """Rows of sources the principal may read now, in `environment` (any name of it) or `*`
        (read-only: copy to narrow)."""
        key = (access.watermark, environment)
        if self._key != key:
            import numpy as np

            from tools.formats.records import environment_names

            readable = access.readable()
            ok = np.fromiter((s in readable for s in self.sources), dtype=bool, count=len(self.sources))
            in_env = np.isin(self.env_values, [*environment_names(environment), "*"])
            mask = ok[self.source_code] & in_env[self.env_code]
            mask.flags.writeable = False
            self._key, self._mask = key, mask
        return self._mask
