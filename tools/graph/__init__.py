"""Offline graphrag (3.3.0) index for Investigator: build, load, query.

No LLM and no network: entities come from an injected ``analyze(text)``,
embeddings from an injected ``embed(texts)``, community reports from a
deterministic extractive writer. See NOTES.md.

Two layers:

* the product tool (``casegraph``, ``walk``, ``bridges``, ``community``):
  ``build_case_graph``, ``graph_fingerprint``, ``graph_is_fresh``, ``readerships`` and
  ``GraphRetrieval`` (the ``graph`` retrieval tool);
* the graphrag wrapper (``builder``, ``tables``, ``_extract``, ``_models``):
  ``build_graph_index``, ``load_graph_tables``

Names are imported lazily (PEP 562), so ``from tools.graph import GraphRetrieval``
does not import graphrag, litellm or lancedb; building and the community view do.

Importing this package sets ``LITELLM_LOCAL_MODEL_COST_MAP=True``,
``HF_HUB_OFFLINE=1`` and ``LANCEDB_LOG=error`` unless already set (they must precede
the litellm / HF / lance imports, which only happen in submodules). Importing
graphrag_llm also applies ``nest_asyncio2`` to asyncio, process-wide (graphrag's
doing, see NOTES.md).
"""

from __future__ import annotations

import os
from state.lazy import lazy_exports

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LANCEDB_LOG", "error")  # else each build warns "No existing dataset"

_EXPORTS = {
    # product tool
    "GraphBuildInfo": "casegraph",
    "build_case_graph": "casegraph",
    "graph_fingerprint": "casegraph",
    "graph_is_fresh": "casegraph",
    "readerships": "casegraph",
    "GraphRetrieval": "walk",
    "GraphBridge": "bridges",
    "CommunityContext": "community",
    "CommunityView": "community",
    # graphrag wrapper
    "AnalyzeFn": "_models",
    "EmbedFn": "_models",
    "BuildStats": "builder",
    "GraphDocument": "builder",
    "abuild_graph_index": "builder",
    "build_graph_index": "builder",
    "identifier_analyzer": "_extract",
    "GraphTables": "tables",
    "load_graph_tables": "tables",
}

__all__ = sorted(_EXPORTS)


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
