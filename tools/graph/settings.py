"""A graphrag ``settings.yaml`` in every graph folder, so graphrag's own tools can open it.

graphrag 3.3 finds an index through its project settings: ``load_config(root)`` reads
``root/settings.yaml``, ``output_storage`` says where the parquet tables are and
``table_provider`` how to read them (``DataReader`` then types them). Our builder configures
graphrag in code, so without this file graphrag's query side could not find the index.

The file names graphrag's stock ``parquet`` table provider and a relative ``output_storage``
(the folder itself), so the folder can be copied or moved. Its models are the offline
stand-ins that built the index (``_models``: the injected embedder and the extractive report
writer), registered with graphrag_llm in-process by ``load_settings``. They can assemble
graphrag's query engines and build their context offline, but cannot answer a question:
a global search needs a real chat model in ``completion_models`` (the file says how), and
local, DRIFT and basic search also need the LanceDB vectors this index does not build
(NOTES.md: they were most of a build and nothing of ours reads them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

SETTINGS = "settings.yaml"
EMBEDDING_MODEL = "all-MiniLM-L6-v2"

_TEMPLATE = """\
# graphrag {graphrag} settings for this index (written by Investigator).
# graphrag's own loaders open it: graphrag.config.load_config.load_config("<this folder>"),
# then graphrag.data_model.data_reader.DataReader over the output storage below.
#
# The models are Investigator's offline stand-ins (registered in-process by
# tools.graph.settings.load_settings): they can assemble graphrag's query engines but cannot
# answer. For `graphrag query --root <this folder> --method global "..."`, replace
# default_completion_model with a chat model, e.g.
#   default_completion_model:
#     model_provider: openai
#     model: <model name>
#     api_base: <OpenAI-compatible endpoint>
#     api_key: <key>   (graphrag substitutes environment variables written as a dollar sign and the name in braces)
# Local, DRIFT and basic search also need LanceDB vectors, which this index does not build.

completion_models:
  default_completion_model:
    type: {completion_type}
    model_provider: {provider}
    model: extractive-report-writer
    metrics: null

embedding_models:
  default_embedding_model:
    type: {embedding_type}
    model_provider: {provider}
    model: {embedding_model}
    metrics: null

input_storage:
  type: memory
output_storage:
  type: file
  base_dir: "."
update_output_storage:
  type: memory
table_provider:
  type: parquet
cache:
  type: none
  storage: null
reporting:
  type: file
  base_dir: logs

chunking:
  type: tokens
  size: {chunk_size}
  overlap: 0
  encoding_model: {encoding}

vector_store:
  type: lancedb
  db_uri: lancedb
  vector_size: {dim}
"""


def settings_text(*, dim: int, chunk_size: int, encoding: str, embedding_model: str = EMBEDDING_MODEL) -> str:
    from importlib.metadata import version

    from ._models import COMPLETION_TYPE, EMBEDDING_TYPE, MODEL_PROVIDER

    return _TEMPLATE.format(graphrag=version("graphrag"), completion_type=COMPLETION_TYPE,
                            embedding_type=EMBEDDING_TYPE, provider=MODEL_PROVIDER, embedding_model=embedding_model,
                            chunk_size=chunk_size, encoding=encoding, dim=dim)


def write_settings(graph_dir: Path, *, dim: int, chunk_size: int, encoding: str,
                   embedding_model: str = EMBEDDING_MODEL) -> Path:
    """Write ``settings.yaml`` into ``graph_dir`` (atomically); returns its path."""
    path = Path(graph_dir) / SETTINGS
    tmp = path.with_name(f".{SETTINGS}.tmp")
    tmp.write_text(settings_text(dim=dim, chunk_size=chunk_size, encoding=encoding, embedding_model=embedding_model),
                   encoding="utf-8")
    tmp.replace(path)
    return path


def load_settings(graph_dir: Path, *, embed: Any = None, analyze: Any = None) -> Any:
    """graphrag's ``GraphRagConfig`` for the index in ``graph_dir``, through graphrag's own loader.

    The offline models are registered first; ``embed`` / ``analyze`` (the callables they wrap)
    are handed to them as graphrag_llm extras. Paths are resolved against ``graph_dir`` and the
    working directory is left as it was (graphrag's loader changes it to the settings' folder)."""
    from graphrag.config.load_config import load_config

    from ._models import register_models

    register_models()
    overrides: dict[str, Any] = {}
    if embed is not None:
        overrides["embedding_models"] = {"default_embedding_model": {"embed": embed}}
    if analyze is not None:
        overrides["completion_models"] = {"default_completion_model": {"analyze": analyze}}
    cwd = os.getcwd()
    try:
        return load_config(Path(graph_dir).resolve(), cli_overrides=overrides or None)
    finally:
        os.chdir(cwd)
