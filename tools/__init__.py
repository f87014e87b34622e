"""The tools a run uses, over one case folder; imports `state` only.

Sources and access: `manifest` (`sources.yaml`), `corpus` (parsed sources), `formats` (one parser per format),
`access` (who may read what), `reader` (read back the exact span at read time), `profile`.
Indexes and retrieval: `index` (the DuckDB chunk index), `embedding` / `onnx_embedding` / `bert_onnx`,
`basic` (dense + BM25), `graph` (the GraphRAG tool), `retrieval` (their interface),
`observations` (structured lookups). Facts: `entities`, `derive`, `signals`.

The names below are imported lazily (PEP 562): importing one module of this package does not
import the others (DuckDB, the model and graphrag load only where they are used).
"""

from __future__ import annotations

from state.lazy import lazy_exports

_EXPORTS = {
    "AccessPolicy": "access",
    "BasicRetrieval": "basic",
    "ParseContext": "corpus",
    "SourceDoc": "corpus",
    "load_manifest": "manifest",
    "load_sources": "corpus",
    "set_aside_sources": "corpus",
    "load_all_sources": "corpus",
    "Embedder": "embedding",
    "MiniLMEmbedder": "embedding",
    "EntityExtractor": "entities",
    "IndexInfo": "index",
    "build_index": "index",
    "Observations": "observations",
    "load_profile": "profile",
    "Reader": "reader",
    "RetrievalTool": "retrieval",
    "SearchQuery": "retrieval",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
