"""One pooled corpus from several multi-hop sets and distractor corpora, for retrieval at scale.

Each set's questions are asked against the pool rather than its own closed corpus. Passages that
appear in several files (same title and text) become one pooled passage, which keeps the id of
the file named first; every set's gold ids are mapped onto the pooled ids. A distractor file is
a bare list of ``{title, text}`` (as HippoRAG publishes its corpora) or ``{"corpus": [...]}``
with no questions; its passages get ids ``<file stem>-NNNNN`` unless they carry one.

``size`` subsamples the pool: every gold passage of every set is kept, the rest are drawn with
a seeded ``random.Random``, and the kept passages stay in pooled order.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from state import Frozen
from state.errors import CaseError
from tools.benchdata import Dataset, Passage, Question, load_dataset


class Pool(Frozen):
    """Several sets' questions over one corpus."""

    name: str
    """The files pooled, by stem, joined with ``+``."""
    corpus: tuple[Passage, ...]
    """The pooled passages: deduplicated on (title, text), in order of first appearance."""
    sets: dict[str, tuple[Question, ...]]
    """Each question set by name, its gold ids mapped onto pooled ids."""
    read: dict[str, int]
    """Passages read from each file, before deduplication."""
    merged: int
    """Passages dropped because an earlier file (or the same one) had the same title and text."""
    gold: int
    """Distinct pooled passages that are gold for some question (all kept by any subsample)."""
    seed: int | None = None
    """Seed of the subsample; None when the pool is whole."""

    def as_dataset(self) -> Dataset:
        """The pool as one dataset: every set's questions over the pooled corpus."""
        return Dataset(name=self.name, corpus=self.corpus,
                       questions=tuple(q for qs in self.sets.values() for q in qs))


def load_source(path: Path) -> Dataset:
    """A question set (any layout `load_dataset` reads) or a distractor corpus (no questions)."""
    try:
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseError(str(path), "<file>", "the pooled file to exist") from None
    except json.JSONDecodeError as exc:
        raise CaseError(str(path), f"line {exc.lineno}", "valid JSON") from None
    passages = data if isinstance(data, list) else data.get("corpus") if isinstance(data, dict) else None
    has_questions = isinstance(data, dict) and bool(data.get("questions") or data.get("data"))
    if isinstance(passages, list) and not has_questions and passages and "question" not in passages[0]:
        return Dataset(name=Path(path).stem, corpus=_passages(passages, Path(path)), questions=())
    return load_dataset(Path(path))


def _passages(raw: list[Any], path: Path) -> tuple[Passage, ...]:
    out: dict[tuple[str, str], Passage] = {}
    for i, p in enumerate(raw):
        if not isinstance(p, dict) or not isinstance(p.get("title"), str) or not isinstance(p.get("text"), str):
            raise CaseError(str(path), f"{i}", "a passage with 'title' and 'text'")
        pid = p.get("id") or p.get("idx")
        out.setdefault((p["title"], p["text"]),
                       Passage(id=str(pid) if pid is not None else f"{path.stem}-{i:05d}", title=p["title"],
                               text=p["text"]))
    return tuple(out.values())


def pool(sources: Sequence[Dataset], size: int | None = None, seed: int = 0) -> Pool:
    """Pool the sources (question sets and distractor corpora) into one corpus; with ``size``,
    keep every gold passage and a seeded sample of the rest, ``size`` passages in all."""
    by_key: dict[tuple[str, str], Passage] = {}
    ids: set[str] = set()
    sets: dict[str, tuple[Question, ...]] = {}
    read: dict[str, int] = {}
    for ds in sources:
        if ds.name in read:
            raise ValueError(f"{ds.name}: pooled twice")
        read[ds.name] = len(ds.corpus)
        local: dict[str, str] = {}
        for p in ds.corpus:
            kept = by_key.get((p.title, p.text))
            if kept is None:
                pid = p.id if p.id not in ids else f"{ds.name}:{p.id}"  # two files, one id, different text
                kept = by_key[(p.title, p.text)] = Passage(id=pid, title=p.title, text=p.text)
                ids.add(pid)
            local[p.id] = kept.id
        if ds.questions:
            sets[ds.name] = tuple(q.model_copy(update={
                "supporting_ids": tuple(dict.fromkeys(local[s] for s in q.supporting_ids))}) for q in ds.questions)
    corpus = tuple(by_key.values())
    gold = {s for qs in sets.values() for q in qs for s in q.supporting_ids}
    merged = sum(read.values()) - len(corpus)
    name = "+".join(read)
    if size is None or size >= len(corpus):
        return Pool(name=name, corpus=corpus, sets=sets, read=read, merged=merged, gold=len(gold))
    if size < len(gold):
        raise ValueError(f"a pool of {size} passages cannot hold the {len(gold)} gold passages")
    rest = [p.id for p in corpus if p.id not in gold]
    keep = gold | set(random.Random(seed).sample(rest, size - len(gold)))
    return Pool(name=name, corpus=tuple(p for p in corpus if p.id in keep), sets=sets, read=read, merged=merged,
                gold=len(gold), seed=seed)
