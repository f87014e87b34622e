"""A case folder loaded once for a run: the value passed down instead of the folder's path.

The composition root (`investigator.loading.load_case_folder`) builds it; below `investigator/`
nothing reads `sources.yaml` or the profile again, and every entity registry is built here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from state.case import Case
from state.profile import Profile
from state.sources import Manifest, SourceEntry
from tools.access import AccessSnapshot
from tools.corpus import ParseContext, SourceDoc
from tools.entities import EntityExtractor

__all__ = ["LoadedCase"]


@dataclass(frozen=True)
class LoadedCase:
    """A case, its manifest, profile and parsed sources, as they were when the run loaded them."""

    case: Case
    case_dir: Path
    """The folder the sources' paths are relative to."""
    manifest: Manifest
    """`sources.yaml` as loaded (access is re-checked against the manifest of now, see `AccessPolicy`)."""
    ctx: ParseContext
    """What parsing needs: the case's profile (the default with its overrides) and the year."""
    docs: tuple[SourceDoc, ...]
    """The sources the case reads, parsed."""
    aside: tuple[SourceDoc, ...] = ()
    """Untrusted sources left out because their content cannot be read (each with its problem)."""

    @property
    def profile(self) -> Profile:
        return self.ctx.profile

    def entry(self, source_id: str) -> SourceEntry | None:
        """The manifest's entry of a source, None when it lists none."""
        return self._entries.get(source_id)

    @cached_property
    def _entries(self) -> dict[str, SourceEntry]:
        return {s.id: s for s in self.manifest.sources}

    @cached_property
    def registry(self) -> EntityExtractor:
        """The entity registry of every source the case reads (built on first use, once)."""
        return EntityExtractor.from_sources(self.docs, self.profile)

    def readable_registry(self, access: AccessSnapshot) -> EntityExtractor:
        """The registry of the sources `access` lets the principal read; the services of the others
        are listed by name (metadata a report shows anyway)."""
        return EntityExtractor.from_sources(
            [d for d in self.docs if access.can_read(d.id)], self.profile,
            listed=[d.entry.service for d in self.docs if not access.can_read(d.id) and d.kind != "doc"])
