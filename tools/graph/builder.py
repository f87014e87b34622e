"""Build a graphrag 3.3.0 index offline: ``build_graph_index(documents, out_dir, ...)``.

One product chunk is one graphrag document and yields exactly one text unit:
the token chunker's size is raised to the longest document (at least 1200
tokens, overlap 0), so ``text_units.document_id`` is our chunk id and
``text_units.text`` is our text, byte for byte (both are checked after each build).

graphrag names a text unit by the SHA-512 of its text, so two chunks with the
same text would become one unit with two owners. Such duplicates are merged
before indexing: the smallest id is kept, and ``BuildStats.merged_duplicates``
lists ``(dropped_id, kept_id)``.

Each build goes to a fresh sibling folder that then replaces ``out_dir``, so
nothing of a previous index (deleted documents, graphrag's ``context.json``
state, LanceDB rows) survives a rebuild, and a build killed at any point leaves the
previous index or none, never a partial one (``_swap.py``).
"""

from __future__ import annotations

from . import _env  # noqa: F401  (must precede graphrag / litellm imports)

import asyncio
import json
import logging
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
from graphrag.api import build_index
from graphrag.callbacks.noop_workflow_callbacks import NoopWorkflowCallbacks
from graphrag.config.enums import AsyncType
from graphrag.config.models.graph_rag_config import GraphRagConfig
from graphrag.tokenizer.get_tokenizer import get_tokenizer
from graphrag_llm.config import ModelConfig

from state.progress import Progress, Ticker, silent
from tools.builds import crash_point

from ._extract import ANALYZER_KEY, FAST_WORKFLOWS, SUBJECT_KEY, UNTRACED, register_extract_workflow
from ._tables import TABLE_TYPE, register_tables
from .settings import write_settings
from ._models import (
    REPORT_PROMPT,
    AnalyzeFn,
    EmbedFn,
    embedding_model_config,
    report_model_config,
)
from ._swap import staging_dir, swap_in

MANIFEST = "graph_index.json"
TABLES = (
    "documents",
    "text_units",
    "entities",
    "relationships",
    "communities",
    "community_reports",
)
MIN_CHUNK_TOKENS = 1200
ENCODING = "o200k_base"  # graphrag's chunking default; tiktoken file ships in litellm


@dataclass(frozen=True)
class GraphDocument:
    """One product chunk as a graphrag document."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class BuildStats:
    """What a build produced."""

    out_dir: str
    wall_seconds: float
    row_counts: dict[str, int]
    output_bytes: int
    chunk_size_tokens: int
    merged_duplicates: tuple[tuple[str, str], ...] = field(default=())


def build_graph_index(
    documents: Iterable[Mapping[str, Any] | Any],
    out_dir: str | Path,
    *,
    embed: EmbedFn,
    dim: int,
    analyze: AnalyzeFn,
    max_cluster_size: int = 10,
    seed: int = 0xDEADBEEF,
    report_model: ModelConfig | None = None,
    subject: Callable[[str], str | None] | None = None,
    finish: Callable[[Path], None] | None = None,
    progress: Progress = silent,
) -> BuildStats:
    """Build (or fully replace) the index in ``out_dir``; blocking.

    ``documents``: dicts or objects with ``id``, ``title``, ``text``. ``embed``:
    texts -> vectors of size ``dim``. ``analyze``: text -> entity names. ``subject``:
    a document title -> the entity it is about (relationships become subject stars,
    see ``_extract``); None keeps graphrag's all-pairs co-occurrence. In async
    code await ``abuild_graph_index`` instead (graphrag's nest_asyncio patch lets this
    run inside a loop, but it would block that loop). One build at a time per process.
    ``finish(folder)``: called on the finished build folder before it is swapped in (to
    post-process tables or add files; what it writes is swapped in with the rest).
    ``progress``: told each graphrag stage that runs past two seconds (see `StageProgress`).
    """
    return asyncio.run(
        abuild_graph_index(
            documents,
            out_dir,
            embed=embed,
            dim=dim,
            analyze=analyze,
            max_cluster_size=max_cluster_size,
            seed=seed,
            report_model=report_model,
            subject=subject,
            finish=finish,
            progress=progress,
        )
    )


async def abuild_graph_index(
    documents: Iterable[Mapping[str, Any] | Any],
    out_dir: str | Path,
    *,
    embed: EmbedFn,
    dim: int,
    analyze: AnalyzeFn,
    max_cluster_size: int = 10,
    seed: int = 0xDEADBEEF,
    report_model: ModelConfig | None = None,
    subject: Callable[[str], str | None] | None = None,
    finish: Callable[[Path], None] | None = None,
    progress: Progress = silent,
) -> BuildStats:
    """Async form of ``build_graph_index``.

    ``report_model``: a graphrag ModelConfig for a real LLM (e.g. an OpenAI-compatible
    endpoint through LiteLLM) that writes the community reports with graphrag's own prompt,
    instead of the offline extractive writer."""
    start = time.perf_counter()
    analyze = _memoised(analyze)
    out = Path(out_dir).resolve()
    _check_replaceable(out)
    docs, merged = _normalise(documents)
    tokenizer = get_tokenizer(encoding_model=ENCODING)
    chunk_size = max([MIN_CHUNK_TOKENS, *(len(tokenizer.encode(d.text)) for d in docs)])

    staging = staging_dir(out)
    try:
        prompt = staging / "prompts" / "community_report_text.txt"
        prompt.parent.mkdir()
        prompt.write_text(REPORT_PROMPT, encoding="utf-8")
        config = _config(
            staging,
            prompt,
            report_model=report_model,
            embed=embed,
            dim=dim,
            analyze=analyze,
            chunk_size=chunk_size,
            max_cluster_size=max_cluster_size,
            seed=seed,
        )
        frame = pd.DataFrame(
            {
                "id": [d.id for d in docs],
                # as graphrag's own load_input_documents numbers them (its DataReader casts this to int)
                "human_readable_id": list(range(len(docs))),
                "title": [d.title for d in docs],
                "text": [d.text for d in docs],
                "creation_date": [""] * len(docs),
                "raw_data": [None] * len(docs),
            }
        )
        register_extract_workflow()
        register_tables()
        with _graphrag_logging_restored():
            results = await build_index(
                config,
                method="fast",
                input_documents=frame,
                additional_context={ANALYZER_KEY: analyze, SUBJECT_KEY: subject},
                callbacks=[StageProgress(progress)],
            )
        failed = next((r for r in results if r.error is not None), None)
        if failed is not None:
            raise RuntimeError(f"graphrag workflow {failed.workflow} failed") from failed.error
        _check_one_unit_per_document(staging, docs)
        manifest = {
            "graphrag": version("graphrag"),
            "dim": dim,
            "encoding": ENCODING,
            "chunk_size_tokens": chunk_size,
            "documents": len(docs),
            "merged_duplicates": merged,
        }
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        write_settings(staging, dim=dim, chunk_size=chunk_size, encoding=ENCODING)  # graphrag's own tools open it
        crash_point("graph", 1)
        if finish is not None:
            finish(staging)
        crash_point("graph", 2)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    swap_in(staging, out)
    return BuildStats(
        out_dir=str(out),
        wall_seconds=round(time.perf_counter() - start, 3),
        row_counts={t: pq.ParquetFile(out / f"{t}.parquet").metadata.num_rows for t in TABLES},
        output_bytes=sum(p.stat().st_size for p in out.rglob("*") if p.is_file()),
        chunk_size_tokens=chunk_size,
        merged_duplicates=tuple(tuple(m) for m in merged),  # type: ignore[misc]
    )


class StageProgress(NoopWorkflowCallbacks):
    """graphrag's pipeline told as progress lines: each stage (workflow) is a `Ticker` with a
    heartbeat, counted where graphrag reports items, so a long stage is never silent and a quick
    one says nothing."""

    def __init__(self, say: Progress) -> None:
        self.say = say
        self.names: list[str] = []
        self.ticker: Ticker | None = None

    def pipeline_start(self, names: list[str]) -> None:
        self.names = list(names)

    def workflow_start(self, name: str, instance: object) -> None:
        self._close()
        shown = name.removeprefix(UNTRACED)
        at = f" ({self.names.index(name) + 1}/{len(self.names)})" if name in self.names else ""
        self.ticker = Ticker(self.say, f"graph stage {shown}{at}", beat=True)

    def progress(self, progress: Any) -> None:
        if self.ticker is not None and progress.total_items:
            self.ticker.total = progress.total_items
            self.ticker.advance((progress.completed_items or 0) - self.ticker.done)

    def workflow_end(self, name: str, instance: object) -> None:
        self._close()

    def pipeline_error(self, error: BaseException) -> None:
        if self.ticker is not None:
            self.ticker.close(said=False)
            self.ticker = None

    def pipeline_end(self, results: list[Any]) -> None:
        self._close()

    def _close(self) -> None:
        if self.ticker is not None:
            self.ticker.close()
            self.ticker = None


def _memoised(analyze: AnalyzeFn) -> AnalyzeFn:
    """``analyze`` with its answers kept for the build: the entity descriptions and every
    community report re-read the same sentences (a sentence is in one report per level)."""
    seen: dict[str, list[str]] = {}

    def names(text: str) -> list[str]:
        found = seen.get(text)
        if found is None:
            found = seen[text] = list(analyze(text))
        return found

    names.__qualname__ = getattr(analyze, "__qualname__", "analyze")
    return names


def _field(doc: Mapping[str, Any] | Any, name: str) -> Any:
    return doc[name] if isinstance(doc, Mapping) else getattr(doc, name)


def _normalise(documents: Iterable[Any]) -> tuple[list[GraphDocument], list[tuple[str, str]]]:
    """Sort by id, check ids, merge equal texts (smallest id wins)."""
    docs = sorted(
        (
            GraphDocument(
                str(_field(d, "id")), str(_field(d, "title") or ""), str(_field(d, "text"))
            )
            for d in documents
        ),
        key=lambda d: d.id,
    )
    ids = [d.id for d in docs]
    if not docs or len(set(ids)) != len(ids) or "" in ids:
        raise ValueError("documents must be non-empty with unique, non-empty ids")
    if any(not d.text.strip() for d in docs):
        raise ValueError("every document needs non-blank text")
    kept: dict[str, GraphDocument] = {}
    merged: list[tuple[str, str]] = []
    for d in docs:
        if d.text in kept:
            merged.append((d.id, kept[d.text].id))
        else:
            kept[d.text] = d
    return list(kept.values()), merged


def _config(
    root: Path,
    prompt: Path,
    *,
    report_model: ModelConfig | None = None,
    embed: EmbedFn,
    dim: int,
    analyze: AnalyzeFn,
    chunk_size: int,
    max_cluster_size: int,
    seed: int,
) -> GraphRagConfig:
    return GraphRagConfig.model_validate(
        {
            "completion_models": {"default_completion_model": report_model or report_model_config(analyze)},
            "embedding_models": {"default_embedding_model": embedding_model_config(embed)},
            "async_mode": AsyncType.AsyncIO,  # no worker threads: analyzers need not be thread-safe
            "concurrent_requests": 4,
            "workflows": list(FAST_WORKFLOWS),
            "input_storage": {"type": "memory"},  # unused: documents are given as a frame
            "output_storage": {"base_dir": str(root)},
            "update_output_storage": {"type": "memory"},  # unused: no incremental runs
            "table_provider": {"type": TABLE_TYPE},  # graphrag's parquet, iterated by records (_tables.py)
            # default is a JSON cache in ./cache of the cwd; "none" alone still mkdirs ./cache
            "cache": {"type": "none", "storage": None},
            "reporting": {"type": "file", "base_dir": str(root / "logs")},  # default ./logs
            "chunking": {
                "type": "tokens",
                "size": chunk_size,
                "overlap": 0,
                "encoding_model": ENCODING,
            },
            "prune_graph": {
                "min_node_freq": 1,
                "min_node_degree": 0,  # keep entities that never co-occur (graph walk needs them)
                "min_edge_weight_pct": 0.0,
                "remove_ego_nodes": False,
            },
            "cluster_graph": {"max_cluster_size": max_cluster_size, "use_lcc": False, "seed": seed},
            # the extractive writer reads graphrag's context verbatim; a real LLM gets graphrag's prompt
            "community_reports": {} if report_model is not None else {"text_prompt": str(prompt)},
            "vector_store": {
                "type": "lancedb",
                "db_uri": str(root / "lancedb"),
                "vector_size": dim,
            },
        }
    )


def _check_replaceable(out: Path) -> None:
    if out.exists() and any(out.iterdir()) and not (out / MANIFEST).exists():
        raise FileExistsError(f"{out} is not empty and holds no {MANIFEST}: not replacing it")


def _check_one_unit_per_document(root: Path, docs: list[GraphDocument]) -> None:
    units = pd.read_parquet(root / "text_units.parquet", columns=["document_id", "text"])
    texts = {d.id: d.text for d in docs}
    owners = units["document_id"].tolist()
    if sorted(owners) != sorted(texts) or any(
        t != texts[o] for o, t in zip(owners, units["text"], strict=True)
    ):
        raise RuntimeError("text units do not map one-to-one onto the documents")


class _graphrag_logging_restored:
    """graphrag's ``init_loggers`` replaces handlers/levels of two loggers; undo it."""

    _names = ("graphrag", "graphrag_llm")

    def __enter__(self) -> None:
        self._saved = [
            (lg, lg.level, list(lg.handlers)) for lg in map(logging.getLogger, self._names)
        ]

    def __exit__(self, *_: object) -> None:
        for lg, level, handlers in self._saved:
            for h in lg.handlers:
                if h not in handlers:
                    h.close()
            lg.handlers[:] = handlers
            lg.setLevel(level)
