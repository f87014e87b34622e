"""A case's indexes: the chunk index and the GraphRAG index, kept fresh, built, imported,
a source tombstoned; and the retrieval tool over them.

`CaseIndexes` is a frozen value over the settings, the embedding model and the progress sink;
it knows nothing of runs. It may import `state/`, `tools/`, `investigator.config` and
`investigator.loading` (the case loaded once), nothing else of ours.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from investigator.config import Settings
from investigator.workspace import index_path
from investigator.loading import load_case_folder
from state.case import Case
from state.errors import ConfigError
from state.progress import Progress
from tools.embedding import Embedder
from tools.loaded import LoadedCase
from tools.builds import build_lock, remove_leftovers
from tools.index import IndexInfo, build_index, corpus_fingerprint, index_meta, tombstone, tombstoned
from tools.retrieval import RetrievalTool
from tools.stages import StageClock

if TYPE_CHECKING:
    from tools.graph.casegraph import GraphBuildInfo

RETRIEVAL_TOOLS = ("basic", "graph")


def _unknown_tool(name: str) -> ConfigError:
    return ConfigError(f"retrieval {name!r}: expected one of {', '.join(RETRIEVAL_TOOLS)}")


def check_tool(name: str) -> None:
    """A ConfigError unless `name` is one of RETRIEVAL_TOOLS."""
    if name not in RETRIEVAL_TOOLS:
        raise _unknown_tool(name)


@dataclass(frozen=True)
class CaseIndexes:
    """The indexes of cases under `settings`, embedded with `embedder`."""

    settings: Settings
    embedder: Embedder
    progress: Progress

    def index_path(self, case: Case, case_dir: Path) -> Path:
        return index_path(self.settings, case, case_dir)

    def graph_dir(self, case: Case, case_dir: Path) -> Path:
        return self.settings.index_dir(case.id, case_dir) / "graph"

    def _building(self, case: Case, case_dir: Path, what: str) -> AbstractContextManager[None]:
        """The case folder's build lock: one process checks and builds its indexes at a time."""
        return build_lock(self.settings.index_dir(case.id, case_dir), self.progress, f"{what} of {case.id}")

    def ensure_index(self, loaded: LoadedCase, *, force: bool = False,
                     clock: StageClock | None = None) -> IndexInfo | None:
        """Build the chunk index when it is missing or stale (or `force`); None when it was fresh.
        `clock`: the stage clock that timed the parsing of the sources, for the build to go on with."""
        case, case_dir, docs, profile = loaded.case, loaded.case_dir, list(loaded.docs), loaded.profile
        path = self.index_path(case, case_dir)
        with self._building(case, case_dir, "the index"):
            gone = remove_leftovers(path.parent)  # what a killed build left, even when the index in place is current
            if gone:
                self.progress(f"removed what killed builds left in {path.parent}: {', '.join(gone)}")
            meta = index_meta(path) or {}
            if (not force and meta.get("embedder") == self.embedder.name
                    and meta.get("fingerprint") == corpus_fingerprint(docs, tombstoned(path), profile)):
                return None
            return build_index(case_dir, path, self.embedder, self.progress, docs=docs, profile=profile,
                               vectors_from=_sibling_indexes(case, path), clock=clock)

    def ensure_graph(self, loaded: LoadedCase, *, force: bool = False) -> GraphBuildInfo | None:
        """Build the GraphRAG index (after the chunk index) when missing or stale; None when fresh.
        An imported graph is kept, and imported again when the chunks changed."""
        from tools.graph import build_case_graph, graph_is_fresh, readerships
        from tools.graph.external import import_graph, imported_from

        case, case_dir, extractor = loaded.case, loaded.case_dir, loaded.registry
        with self._building(case, case_dir, "the GraphRAG index"):
            self.ensure_index(loaded)
            path, graph_dir = self.index_path(case, case_dir), self.graph_dir(case, case_dir)
            origin = imported_from(graph_dir)
            if origin is not None and not force:  # a graph the user brought is kept; re-imported when the chunks changed
                if graph_is_fresh(path, graph_dir):
                    return None
                if Path(origin).is_dir():
                    self.progress(f"the chunk index of {case.id} changed since its graph was imported: "
                                  f"importing {origin} again")
                    return import_graph(Path(origin), graph_dir, path, self.embedder, self.progress)
                self.progress(f"{origin}, the imported graph of {case.id}, is gone: building the graph from the case")
            readers = readerships(list(loaded.docs))
            if not force and graph_is_fresh(path, graph_dir, self.embedder, extractor, readers):
                return None
            self.progress(f"building the GraphRAG index of {case.id}")
            return build_case_graph(path, graph_dir, self.embedder, extractor, self.progress, readerships=readers)

    def index(self, case_dir: Path, *, force: bool = False) -> IndexInfo | None:
        """Build the chunk index of the case folder when it is missing or stale; None when fresh."""
        clock = StageClock(self.progress)
        with clock.stage("parse"):
            loaded = load_case_folder(case_dir, self.progress)
        return self.ensure_index(loaded, force=force, clock=clock)

    def index_graph(self, case_dir: Path, *, force: bool = False) -> GraphBuildInfo | None:
        """Build the GraphRAG index from the chunk index when missing or stale; None when fresh."""
        return self.ensure_graph(load_case_folder(case_dir, self.progress), force=force)

    def import_graph(self, case_dir: Path, src: Path) -> GraphBuildInfo:
        """Use a graphrag output folder (built from the case's chunks) as the case's graph index."""
        from tools.graph.external import import_graph

        loaded = load_case_folder(case_dir, self.progress)
        case, case_dir = loaded.case, loaded.case_dir
        with self._building(case, case_dir, "the GraphRAG index"):
            self.ensure_index(loaded)
            return import_graph(Path(src), self.graph_dir(case, case_dir), self.index_path(case, case_dir),
                                self.embedder, self.progress)

    def delete_source(self, case_dir: Path, source_id: str, reason: str = "deleted") -> bool:
        """Tombstone a source: it is dropped from both indexes now and never recalled again.

        Returns False when it was tombstoned already (nothing changes). A source id the manifest
        does not name is a ConfigError, and nothing is written."""
        loaded = load_case_folder(case_dir, self.progress)
        case, case_dir = loaded.case, loaded.case_dir
        with self._building(case, case_dir, "the index"):
            if source_id in tombstoned(self.index_path(case, case_dir)):
                return False
            if source_id not in {d.id for d in loaded.docs}:
                known = sorted(d.id for d in loaded.docs)
                raise ConfigError(f"{case_dir / 'sources.yaml'}: sources: no source with id {source_id!r} "
                                  f"(expected one of {', '.join(known[:12])}{', …' if len(known) > 12 else ''})")
            self.ensure_index(loaded)
            tombstone(self.index_path(case, case_dir), source_id, reason)
            self.ensure_index(loaded, force=True)  # the fingerprint now excludes it
            if self.graph_dir(case, case_dir).exists():
                self.ensure_graph(loaded)
        return True

    def retrieval(self, name: str, loaded: LoadedCase) -> RetrievalTool:
        """The named tool over the case's (fresh) indexes."""
        case, case_dir = loaded.case, loaded.case_dir
        if name == "basic":
            from tools.basic import BasicRetrieval

            return BasicRetrieval(self.index_path(case, case_dir), self.embedder)
        if name == "graph":
            from tools.graph import GraphRetrieval

            self.ensure_graph(loaded)
            return GraphRetrieval(self.index_path(case, case_dir), self.graph_dir(case, case_dir), self.embedder,
                                  loaded.registry)
        raise _unknown_tool(name)

    def prepare(self, loaded: LoadedCase, retrieval: str) -> RetrievalTool:
        """Fresh indexes and the named tool, from sources parsed once."""
        self.ensure_index(loaded)
        return self.retrieval(retrieval, loaded)


OTHER_CASES = 8
"""Indexes of other cases whose vectors a build looks up, the most recently built first."""


def _sibling_indexes(case: Case, path: Path) -> list[Path]:
    """Indexes whose cached vectors a build reuses (never their chunks): those of other folders with
    the same case id (copies, checkouts), then the `OTHER_CASES` most recently built of other cases
    in the same index root, which often share runbooks, configs and mappings with this one. A
    vector is keyed by the embedder and the exact text, so it is only ever reused for that text."""
    same: list[Path] = []
    others: list[tuple[float, str, Path]] = []
    for p in path.parent.parent.glob(f"*/{path.name}"):
        if p == path:
            continue
        if p.parent.name.startswith(f"{case.id}-"):
            same.append(p)
            continue
        try:
            others.append((-p.stat().st_mtime, str(p), p))
        except OSError:  # removed meanwhile
            continue
    return sorted(same) + [p for _t, _s, p in sorted(others)[:OTHER_CASES]]
