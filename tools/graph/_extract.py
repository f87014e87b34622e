"""Plug-in point replacing graphrag's ``extract_graph_nlp`` noun-phrase extractor.

graphrag builds its extractor from config (``regex_english`` / spaCy), and those
download NLTK data or spaCy models at run time. Its extractor factory's
``register`` is never consulted by the workflow, so we register our own workflow
(``WORKFLOW_NAME``) with ``PipelineFactory`` and list it in ``config.workflows``
in place of ``extract_graph_nlp``. It still runs graphrag's own
``extract_graph_nlp(...)`` (co-occurrence graph, PMI edge weights), only with
``text_analyzer=CallableTextAnalyzer(analyze)``, then fills the empty entity
descriptions with sentences copied from the text units (``describe_entities``).

The analyzer reaches the workflow through ``build_index(additional_context=...)``
(``context.state["additional_context"]``), which graphrag never serialises.

Two more changes keep a build at machine speed (NOTES.md, "Build cost"):

* **untraced workflows**: graphrag wraps every workflow in a tracemalloc profiler, which
  made its row-by-row pandas work (``finalize_graph``, ``create_final_text_units``) about 2-3x
  slower. Every workflow of ``FAST_WORKFLOWS`` is registered again as ``investigator:<name>``,
  the same function with tracemalloc stopped (``stats.json`` keeps the times; its memory
  figures read 0).
* **subject stars**: graphrag's NLP graph links every pair of names in a text unit. When a
  unit has a subject (``subject(document title)`` is one of its entities: a passage about
  "Pál Gábor"), its relationships are the subject's edges to the other names only -- a
  passage relates its subject to what it mentions, not every mention to every other -- so
  relationships grow with mentions, not with their square. Units without a subject keep
  graphrag's pairs. Nothing walks relationships (the walk reads ``text_units.entity_ids``);
  they feed the communities.
"""

from __future__ import annotations

from . import _env  # noqa: F401  (must precede graphrag / litellm imports)

import re
import tracemalloc
from collections.abc import Callable

import pandas as pd
from graphrag.config.models.graph_rag_config import GraphRagConfig
from graphrag.index.operations.build_noun_graph.np_extractors.base import (
    BaseNounPhraseExtractor,
)
from graphrag.index.typing.context import PipelineRunContext
from graphrag.index.typing.workflow import WorkflowFunctionOutput
from graphrag.index.workflows.extract_graph_nlp import extract_graph_nlp
from graphrag.index.workflows.factory import PipelineFactory

from ._models import AnalyzeFn, split_sentences

WORKFLOW_NAME = "investigator_extract_graph_nlp"
ANALYZER_KEY = "investigator_graph_analyzer"
"""Key of the analyzer callable in ``build_index(additional_context=...)``."""
SUBJECT_KEY = "investigator_graph_subject"
"""Key of ``subject(title) -> entity name | None`` in ``additional_context`` (optional)."""
UNTRACED = "investigator:"

_GRAPHRAG_WORKFLOWS: tuple[str, ...] = (
    "create_base_text_units",
    "create_final_documents",
    WORKFLOW_NAME,  # instead of "extract_graph_nlp"
    "prune_graph",
    "finalize_graph",
    "create_communities",
    "create_final_text_units",
    "create_community_reports_text",
)
FAST_WORKFLOWS: tuple[str, ...] = (
    "load_input_documents",  # removed by build_index when input_documents is given
    *(UNTRACED + w for w in _GRAPHRAG_WORKFLOWS),
)
"""graphrag 3.3.0's ``fast`` pipeline with the extraction step swapped and
``generate_text_embeddings`` left out: nothing reads its LanceDB tables (the walk reads the
chunk vectors of the DuckDB index, the community view reads the parquet tables), and
embedding every entity description and community report was 78-94 % of a build."""


class CallableTextAnalyzer(BaseNounPhraseExtractor):
    """``BaseNounPhraseExtractor`` over ``analyze(text) -> names``.

    Names are stripped, empties dropped and de-duplicated per text (graphrag counts
    a text unit once per returned name, so duplicates would inflate frequencies).
    """

    def __init__(self, analyze: AnalyzeFn, name: str | None = None) -> None:
        super().__init__(model_name=None, exclude_nouns=[])
        self._analyze = analyze
        self._name = name or getattr(analyze, "__qualname__", type(analyze).__name__)

    def extract(self, text: str) -> list[str]:
        """Entity names of ``text``, first-seen order, unique."""
        names = (n.strip() for n in self._analyze(text))
        return list(dict.fromkeys(n for n in names if n))

    def __str__(self) -> str:
        """Identity used by graphrag in its extraction cache key."""
        return f"CallableTextAnalyzer({self._name})"


async def run_injected_extract_graph_nlp(
    config: GraphRagConfig, context: PipelineRunContext
) -> WorkflowFunctionOutput:
    """Workflow body: graphrag's ``run_workflow`` with the injected analyzer."""
    extra = context.state["additional_context"]
    analyze: AnalyzeFn = extra[ANALYZER_KEY]
    subject: Callable[[str], str | None] | None = extra.get(SUBJECT_KEY)
    provider = context.output_table_provider
    async with (
        provider.open("text_units", truncate=False) as text_units_table,
        provider.open("entities") as entities_table,
        provider.open("relationships") as relationships_table,
    ):
        result = await extract_graph_nlp(
            text_units_table,
            context.cache,
            entities_table=entities_table,
            relationships_table=relationships_table,
            text_analyzer=CallableTextAnalyzer(analyze),
            normalize_edge_weights=config.extract_graph_nlp.normalize_edge_weights,
        )
    entities = await provider.read_dataframe("entities")
    units = await provider.read_dataframe("text_units")
    entities["description"] = (
        entities["title"]
        .map(describe_entities(analyze, units["text"].tolist(), set(entities["title"])))
        .fillna("")
    )
    await provider.write_dataframe("entities", entities)
    relationships = await provider.read_dataframe("relationships")
    if subject is not None:
        documents = await provider.read_dataframe("documents")
        title_of = dict(zip(documents["id"], documents["title"], strict=True))
        subjects = {u: subject(str(title_of.get(d) or "")) for u, d in zip(units["id"], units["document_id"],
                                                                           strict=True)}
        relationships = subject_stars(relationships, subjects)
    await provider.write_dataframe("relationships", positive_weights(relationships))
    return WorkflowFunctionOutput(result=result)


MIN_WEIGHT = 1e-6


def positive_weights(relationships: pd.DataFrame) -> pd.DataFrame:
    """Edge weights floored at a small positive number.

    graphrag's PMI weights go negative for pairs that co-occur less than chance, and
    graspologic's hierarchical Leiden crashes the process (SIGSEGV) on a negative weight.
    Communities only group entities; the walk reads mentions, not these weights."""
    if "weight" not in relationships.columns or relationships.empty:
        return relationships
    out = relationships.copy()
    out["weight"] = out["weight"].astype(float).clip(lower=MIN_WEIGHT).fillna(MIN_WEIGHT)
    return out


def subject_stars(relationships: pd.DataFrame, subjects: dict[str, str | None]) -> pd.DataFrame:
    """Relationships restricted to subject stars (see the module docstring).

    An edge's ``text_unit_ids`` keep the units where it is a star edge (one end is the
    unit's subject) or where the unit has no subject; an edge left with none is dropped.
    Weights are graphrag's, unchanged."""
    keep_units: list[list[str]] = []
    for src, dst, units in zip(relationships["source"], relationships["target"],
                               relationships["text_unit_ids"], strict=True):
        kept = []
        for u in units:
            s = subjects.get(u)
            if s is None or s == src or s == dst:
                kept.append(u)
        keep_units.append(kept)
    out = relationships.copy()
    out["text_unit_ids"] = keep_units
    return out[[len(k) > 0 for k in keep_units]].reset_index(drop=True)


def describe_entities(
    analyze: AnalyzeFn, texts: list[str], titles: set[str], per_entity: int = 2
) -> dict[str, str]:
    """Extractive descriptions: the first ``per_entity`` sentences naming each title.

    graphrag's NLP pipeline leaves descriptions empty, so the LanceDB
    ``entity_description`` vectors would embed only ``"title:"``. Sentences are
    verbatim (``split_sentences``), taken in text-unit order, joined by newlines.
    """
    found: dict[str, list[str]] = {}
    wrapper = CallableTextAnalyzer(analyze)
    for text in texts:
        for sentence in split_sentences(text):
            for name in wrapper.extract(sentence):
                picked = found.setdefault(name, [])
                if name in titles and len(picked) < per_entity and sentence not in picked:
                    picked.append(sentence)
    return {name: "\n".join(sents) for name, sents in found.items() if sents}


def _untraced(workflow):  # noqa: ANN001, ANN202 - graphrag's WorkflowFunction
    async def run(config: GraphRagConfig, context: PipelineRunContext) -> WorkflowFunctionOutput:
        if tracemalloc.is_tracing():
            tracemalloc.stop()  # graphrag's profiler started it; its __exit__ copes with it stopped
        return await workflow(config, context)

    return run


def register_extract_workflow() -> None:
    """Register ``WORKFLOW_NAME`` and the untraced copies of the pipeline's workflows with
    graphrag's PipelineFactory (idempotent)."""
    PipelineFactory.register(WORKFLOW_NAME, run_injected_extract_graph_nlp)
    for name in _GRAPHRAG_WORKFLOWS:
        PipelineFactory.register(UNTRACED + name, _untraced(PipelineFactory.workflows[name]))


_IDENTIFIER = re.compile(
    r"(?<![\w.-])(?:"
    r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)+"  # kebab-case: billing-api
    r"|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"  # snake_case: queue_depth_max
    r"|v?\d+\.\d+\.\d+(?:[-+.][0-9A-Za-z.]+)?"  # versions: 2.4.1, v1.10.0-rc1
    r"|v\d+\.\d+"  # short versions only with a v: v2.3
    r")(?![\w-])"
)


def identifier_analyzer(text: str) -> list[str]:
    """Default analyzer for tests: technical identifiers found verbatim in ``text``.

    Finds kebab-case names (``billing-api``), snake_case keys (``queue_depth_max``)
    and dotted versions (``2.4.1``, ``v1.2``); first-seen order, unique. Names
    keep their case; trailing sentence dots are not part of a match.
    """
    found = (m.group(0).rstrip(".") for m in _IDENTIFIER.finditer(text))
    return list(dict.fromkeys(found))
