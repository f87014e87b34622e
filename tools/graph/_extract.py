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
"""

from __future__ import annotations

from . import _env  # noqa: F401  (must precede graphrag / litellm imports)

import re

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

FAST_WORKFLOWS: tuple[str, ...] = (
    "load_input_documents",  # removed by build_index when input_documents is given
    "create_base_text_units",
    "create_final_documents",
    WORKFLOW_NAME,  # instead of "extract_graph_nlp"
    "prune_graph",
    "finalize_graph",
    "create_communities",
    "create_final_text_units",
    "create_community_reports_text",
    "generate_text_embeddings",
)
"""graphrag 3.3.0's ``fast`` pipeline with the extraction step swapped."""


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
    analyze: AnalyzeFn = context.state["additional_context"][ANALYZER_KEY]
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
    return WorkflowFunctionOutput(result=result)


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


def register_extract_workflow() -> None:
    """Register ``WORKFLOW_NAME`` with graphrag's PipelineFactory (idempotent)."""
    PipelineFactory.register(WORKFLOW_NAME, run_injected_extract_graph_nlp)


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
