"""Cut sources into chunks with stable content-hash ids and exact character offsets."""

from __future__ import annotations

import re
from datetime import datetime

from state import Frozen, stable_id
from tools.corpus import SourceDoc

MAX_CHARS = 700
LOG_LINES_PER_CHUNK = 6
_PARA = re.compile(r"\n\s*\n")


class Chunk(Frozen):
    """A span of one source version, the unit both retrieval tools index."""

    id: str
    source_id: str
    kind: str
    environment: str
    service: str
    version: str
    revision: str
    status: str
    trust: str
    title: str
    start: int
    end: int
    text: str
    ts: datetime | None = None


def _make(doc: SourceDoc, start: int, end: int, ts: datetime | None = None) -> Chunk:
    return Chunk(
        id=stable_id(doc.id, doc.revision, start, end),
        source_id=doc.id, kind=doc.kind, environment=doc.entry.environment, service=doc.entry.service,
        version=doc.version, revision=doc.revision, status=doc.status, trust=doc.entry.trust,
        title=doc.title, start=start, end=end, text=doc.text[start:end], ts=ts,
    )


def _paragraphs(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    pos = start
    for m in _PARA.finditer(text, start, end):
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, end))
    out = []
    for s, e in spans:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            out.append((s, e))
    return out


def _pack(text: str, paras: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge paragraphs up to MAX_CHARS; a heading starts a new chunk and stays with its body."""
    chunks: list[tuple[int, int]] = []
    cur: tuple[int, int] | None = None
    for s, e in paras:
        if cur is not None:
            bare_heading = text[cur[0]] == "#" and "\n" not in text[cur[0]:cur[1]]
            if (text[s] == "#" and not bare_heading) or (e - cur[0] > MAX_CHARS and not bare_heading):
                chunks.append(cur)
                cur = None
        cur = (s, e) if cur is None else (cur[0], e)
    if cur is not None:
        chunks.append(cur)
    return chunks


def chunk_source(doc: SourceDoc) -> list[Chunk]:
    """Chunks of one source. Metric series, traces and Kubernetes output are served by the
    structured tools (time windows, entities), not by text search."""
    if doc.kind in ("metric", "trace", "kubernetes"):
        return []
    if doc.kind == "log":
        out = []
        for i in range(0, len(doc.events), LOG_LINES_PER_CHUNK):
            group = doc.events[i:i + LOG_LINES_PER_CHUNK]
            out.append(_make(doc, group[0].start, group[-1].end, ts=group[0].ts))
        return out
    if doc.front is None:  # records: one chunk per file, split by top-level lines if long
        paras = _paragraphs(doc.text, 0, len(doc.text))
        spans = _pack(doc.text, paras) if len(doc.text) > MAX_CHARS * 2 else [(paras[0][0], paras[-1][1])] if paras else []
        ts = doc.changes[0].started_at if len(doc.changes) == 1 else None
        return [_make(doc, s, e, ts=ts) for s, e in spans]
    return [_make(doc, s, e) for s, e in _pack(doc.text, _paragraphs(doc.text, doc.body_start, len(doc.text)))]
