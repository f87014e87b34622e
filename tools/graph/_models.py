"""Offline model stand-ins plugged into graphrag through graphrag_llm's factories.

Two classes are registered (process-wide, idempotent) with graphrag_llm:

* ``InjectedEmbedding`` (type ``investigator-injected-embedding``) wraps a Python
  callable ``embed(texts) -> vectors``; the product passes its real MiniLM model.
* ``ExtractiveReportWriter`` (type ``extractive-report-writer``) is a deterministic,
  LLM-free "completion" that answers graphrag's community-report request with a
  ``CommunityReportResponse`` made only of sentences copied verbatim from the
  prompt's input text units, titled with the community's top entity names.

The callables are not kept in any registry of ours: they travel inside the
``ModelConfig`` as extra fields (``ModelConfig`` allows extras) and graphrag_llm's
factory hands every extra field to the class constructor as a keyword argument.
"""

from __future__ import annotations

from . import _env  # noqa: F401  (must precede graphrag / litellm imports)

import csv
import io
import re
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

from graphrag.index.operations.summarize_communities.community_reports_extractor import (
    CommunityReportResponse,
    FindingModel,
)
from graphrag_llm.completion import LLMCompletion, register_completion
from graphrag_llm.config import ModelConfig
from graphrag_llm.embedding import LLMEmbedding, register_embedding
from graphrag_llm.types import LLMEmbedding as EmbeddingItem
from graphrag_llm.types import LLMEmbeddingResponse, LLMEmbeddingUsage
from graphrag_llm.utils import create_completion_response, structure_completion_response

EmbedFn = Callable[[list[str]], Sequence[Sequence[float]]]
"""``embed(texts) -> one vector per text`` (e.g. ``SentenceTransformer.encode``)."""
AnalyzeFn = Callable[[str], Sequence[str]]
"""``analyze(text) -> entity names found in text`` (see ``_extract``)."""

EMBEDDING_TYPE = "investigator-injected-embedding"
COMPLETION_TYPE = "extractive-report-writer"
MODEL_PROVIDER = "local"  # model_id becomes "local/<model>"; LiteLLM falls back to
# its bundled tiktoken cl100k_base for such ids (no hub tokenizer download).

REPORT_PROMPT = "{input_text}"
"""Community-report prompt template used with the extractive writer: the message is
exactly graphrag's context string (``----REPORTS-----`` / ``-----SOURCES-----`` CSV)."""


def _untraced(fn: Callable[[Any], Any], arg: Any) -> Any:
    """Call ``fn(arg)`` with tracemalloc paused.

    graphrag wraps every workflow in a tracemalloc profiler (``WorkflowProfiler``),
    which slows model inference about 1.8x. Pausing it only makes graphrag's
    ``stats.json`` memory figures leave out the embedding calls.
    """
    if not tracemalloc.is_tracing():
        return fn(arg)
    tracemalloc.stop()
    try:
        return fn(arg)
    finally:
        tracemalloc.start()


class _FactoryHandles:
    """The tokenizer and metrics store graphrag's model factory hands to every model."""

    _tokenizer: Any
    _metrics_store: Any

    @property
    def metrics_store(self) -> Any:
        """Metrics store given by the factory."""
        return self._metrics_store

    @property
    def tokenizer(self) -> Any:
        """Tokenizer given by the factory (LiteLLM -> bundled tiktoken)."""
        return self._tokenizer


class InjectedEmbedding(_FactoryHandles, LLMEmbedding):
    """graphrag_llm embedding backed by an injected ``embed`` callable."""

    def __init__(
        self,
        *,
        model_config: ModelConfig,
        tokenizer: Any,
        metrics_store: Any,
        embed: EmbedFn | None = None,
        **_: Any,
    ) -> None:
        if embed is None:
            msg = f"{EMBEDDING_TYPE}: ModelConfig needs an 'embed' callable extra field"
            raise ValueError(msg)
        self._embed = embed
        self._model = model_config.model
        self._tokenizer = tokenizer
        self._metrics_store = metrics_store

    def embedding(self, /, **kwargs: Any) -> LLMEmbeddingResponse:
        """Embed ``kwargs['input']`` (a list of strings) with the injected callable."""
        texts = [str(t) for t in kwargs["input"]]
        vectors = _untraced(self._embed, texts)
        if len(vectors) != len(texts):
            msg = f"embed returned {len(vectors)} vectors for {len(texts)} texts"
            raise ValueError(msg)
        return LLMEmbeddingResponse(
            object="list",
            data=[
                EmbeddingItem(object="embedding", index=i, embedding=[float(x) for x in v])
                for i, v in enumerate(vectors)
            ],
            model=self._model,
            usage=LLMEmbeddingUsage(prompt_tokens=0, total_tokens=0),
        )

    async def embedding_async(self, /, **kwargs: Any) -> LLMEmbeddingResponse:
        """Same as ``embedding`` (the callable is synchronous and CPU bound)."""
        return self.embedding(**kwargs)



class ExtractiveReportWriter(_FactoryHandles, LLMCompletion):
    """Deterministic completion model that writes extractive community reports."""

    def __init__(
        self,
        *,
        model_config: ModelConfig,
        tokenizer: Any,
        metrics_store: Any,
        analyze: AnalyzeFn | None = None,
        max_findings: int = 5,
        **_: Any,
    ) -> None:
        if analyze is None:
            msg = f"{COMPLETION_TYPE}: ModelConfig needs an 'analyze' callable extra field"
            raise ValueError(msg)
        self._analyze = analyze
        self._max_findings = max_findings
        self._model = model_config.model
        self._tokenizer = tokenizer
        self._metrics_store = metrics_store

    def completion(self, /, **kwargs: Any) -> Any:
        """Answer one request; fills ``formatted_response`` when a format is asked."""
        if kwargs.get("stream"):
            msg = f"{COMPLETION_TYPE} does not stream"
            raise ValueError(msg)
        report = write_extractive_report(
            _message_text(kwargs["messages"]), self._analyze, self._max_findings
        )
        content = report.model_dump_json()
        response = create_completion_response(content)
        response_format = kwargs.get("response_format")
        if response_format is not None:
            response.formatted_response = (
                report
                if response_format is CommunityReportResponse
                else structure_completion_response(content, response_format)
            )
        return response

    async def completion_async(self, /, **kwargs: Any) -> Any:
        """Same as ``completion``."""
        return self.completion(**kwargs)



def llm_report_model(model: str, api_base: str, api_key: str | None = None) -> ModelConfig:
    """A real LLM behind an OpenAI-compatible endpoint writes the community reports (via LiteLLM)."""
    return ModelConfig(type="litellm", model_provider="openai", model=model, api_base=api_base,
                       api_key=api_key or "not-needed")


def register_models() -> None:
    """Register both classes with graphrag_llm (idempotent, process-wide)."""
    register_embedding(EMBEDDING_TYPE, InjectedEmbedding)
    register_completion(COMPLETION_TYPE, ExtractiveReportWriter)


def embedding_model_config(embed: EmbedFn, name: str = "injected-embedder") -> ModelConfig:
    """ModelConfig selecting ``InjectedEmbedding`` with ``embed`` (an extra field)."""
    register_models()
    return ModelConfig(
        type=EMBEDDING_TYPE,
        model_provider=MODEL_PROVIDER,
        model=name,
        metrics=None,
        embed=embed,  # type: ignore[call-arg]
    )


def report_model_config(analyze: AnalyzeFn, max_findings: int = 5) -> ModelConfig:
    """ModelConfig selecting ``ExtractiveReportWriter`` with ``analyze``."""
    register_models()
    return ModelConfig(
        type=COMPLETION_TYPE,
        model_provider=MODEL_PROVIDER,
        model=COMPLETION_TYPE,
        metrics=None,
        analyze=analyze,
        max_findings=max_findings,  # type: ignore[call-arg]
    )


# --------------------------------------------------------------------------- report

_SOURCES = "-----SOURCES-----\n"
_REPORTS = "----REPORTS-----\n"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_LINE_MARK = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)")


def _message_text(messages: Any) -> str:
    if isinstance(messages, str):
        return messages
    parts: list[str] = []
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else getattr(m, "content", "")
        if isinstance(content, str):
            parts.append(content)
    return "\n".join(parts)


def _csv_column(block: str, column: str) -> list[str]:
    """One column of a ``DataFrame.to_csv`` block (RFC 4180 quoting, which ``csv`` reads back
    losslessly; ``pandas.read_csv`` per community report was most of a build's time)."""
    rows = csv.reader(io.StringIO(block))
    header = next(rows, None)
    if not header or column not in header:
        return []
    j = header.index(column)
    return [r[j] for r in rows if len(r) > j and r[j]]


def _names(analyze: AnalyzeFn, text: str) -> set[str]:
    return {n.strip() for n in analyze(text) if n.strip()}


def parse_report_input(prompt: str) -> list[str]:
    """Texts of graphrag's report context: sub-report contents, then text units."""
    texts: list[str] = []
    s = prompt.find(_SOURCES)
    r = prompt.find(_REPORTS)
    if r != -1:
        end = s if s > r else len(prompt)
        texts += _csv_column(prompt[r + len(_REPORTS) : end], "full_content")
    if s != -1:
        texts += _csv_column(prompt[s + len(_SOURCES) :], "text")
    return texts


def split_sentences(text: str) -> list[str]:
    """Non-heading lines, then sentences; list markers stripped; each is verbatim."""
    out: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith("#"):  # Markdown heading: not a sentence
            continue
        line = _LINE_MARK.sub("", line).strip()
        out += [s.strip() for s in _SENTENCE_END.split(line) if len(s.strip()) > 2]
    return out


def write_extractive_report(
    prompt: str, analyze: AnalyzeFn, max_findings: int = 5, per_finding: int = 2
) -> CommunityReportResponse:
    """Build a report only from sentences of the prompt's input texts.

    Entities are ranked by the number of input texts, then sentences, naming them
    (ties by name). Title: top three entity names. Summary: the (at most two)
    sentences naming most top entities. One finding per top entity: its name and
    up to ``per_finding`` sentences naming it, unused ones first. Sentences are joined
    with newlines, each a verbatim substring of the input. Rating: number of
    input texts, capped at 10. ``rating_explanation`` is empty (nothing invented).
    """
    texts = parse_report_input(prompt)
    sentences = list(dict.fromkeys(s for t in texts for s in split_sentences(t)))
    mentions = [_names(analyze, s) for s in sentences]
    n_texts: dict[str, int] = {}
    for t in texts:
        for e in _names(analyze, t):
            n_texts[e] = n_texts.get(e, 0) + 1
    n_sent: dict[str, int] = {}
    for m in mentions:
        for e in m:
            n_sent[e] = n_sent.get(e, 0) + 1
    ranked = sorted(n_sent, key=lambda e: (-n_texts.get(e, 0), -n_sent[e], e))
    top = ranked[:max_findings]

    by_cover = sorted(range(len(sentences)), key=lambda i: (-len(mentions[i] & set(top)), i))
    summary_ids = sorted(i for i in by_cover[:2] if mentions[i] & set(top)) or [
        i for i in range(min(1, len(sentences)))
    ]
    used = set(summary_ids)
    findings: list[FindingModel] = []
    for e in top:
        having = [i for i in range(len(sentences)) if e in mentions[i]]
        pick = sorted(
            ([i for i in having if i not in used] + [i for i in having if i in used])[:per_finding]
        )
        used.update(pick)
        findings.append(FindingModel(summary=e, explanation="\n".join(sentences[i] for i in pick)))
    title = " / ".join(top[:3]) or (sentences[0] if sentences else "")
    return CommunityReportResponse(
        title=title,
        summary="\n".join(sentences[i] for i in summary_ids),
        findings=findings,
        rating=float(min(10, len(texts))),
        rating_explanation="",
    )
