"""Multi-hop retrieval datasets: one documented JSON format, plus the public layouts.

Native format (`investigator/multihop@1`)::

    {"format": "investigator/multihop@1",
     "corpus": [{"id": "p1", "title": "…", "text": "…"}, …],
     "questions": [{"id": "q1", "question": "…", "supporting_ids": ["p1", "p7"], "answer": "…"}, …]}

Also accepted, as distributed with multi-hop retrieval research code:
- MuSiQue: a list of questions, each with `paragraphs: [{title, paragraph_text, is_supporting}]`;
- HotpotQA / 2WikiMultiHopQA: a list of questions with `context: [[title, [sentences]]]` and
  `supporting_facts: [[title, sentence_index]]`;
- any of the two above under `{"questions": […]}` with a separate `corpus: [{title, text}]`
  (ids default to titles; supporting facts by title are mapped to ids).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from state import Frozen, stable_id
from state.errors import CaseError


class Passage(Frozen):
    id: str
    title: str
    text: str


class Question(Frozen):
    id: str
    question: str
    supporting_ids: tuple[str, ...]
    answer: str = ""


class Dataset(Frozen):
    name: str
    corpus: tuple[Passage, ...]
    questions: tuple[Question, ...]


class _Corpus:
    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str], Passage] = {}
        self.by_title: dict[str, list[str]] = {}

    def add(self, title: str, text: str, pid: str | None = None) -> str:
        key = (title, text)
        if key not in self.by_key:
            pid = pid or (title if title not in self.by_title else f"{title}#{stable_id(text)[:6]}")
            self.by_key[key] = Passage(id=str(pid), title=title, text=text)
            self.by_title.setdefault(title, []).append(str(pid))
        return self.by_key[key].id


def _question(raw: dict[str, Any], corpus: _Corpus, path: Path, i: int) -> Question:
    qid = str(raw.get("id") or raw.get("_id") or f"q{i}")
    text = raw.get("question")
    if not isinstance(text, str):
        raise CaseError(str(path), f"questions.{i}.question", "a question string")
    support: list[str] = []
    if "supporting_ids" in raw:
        support = [str(s) for s in raw["supporting_ids"]]
    if "paragraphs" in raw:  # MuSiQue
        for p in raw["paragraphs"]:
            pid = corpus.add(p.get("title", ""), p.get("paragraph_text") or p.get("text", ""))
            if p.get("is_supporting"):
                support.append(pid)
    if "context" in raw:  # HotpotQA / 2Wiki
        for title, sentences in raw["context"]:
            corpus.add(title, " ".join(sentences) if isinstance(sentences, list) else str(sentences))
    if "supporting_facts" in raw and not support:
        for title, *_rest in raw["supporting_facts"]:
            support += corpus.by_title.get(title, [])
    support = list(dict.fromkeys(support))
    if not support:
        raise CaseError(str(path), f"questions.{i}", "supporting_ids, paragraphs with is_supporting, or supporting_facts")
    return Question(id=qid, question=text, supporting_ids=tuple(support), answer=str(raw.get("answer", "")))


def load_dataset(path: Path) -> Dataset:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CaseError(str(path), "<file>", "the dataset file to exist") from None
    except json.JSONDecodeError as exc:
        raise CaseError(str(path), f"line {exc.lineno}", "valid JSON") from None
    corpus = _Corpus()
    questions_raw = data if isinstance(data, list) else data.get("questions") or data.get("data")
    if isinstance(data, dict):
        for i, p in enumerate(data.get("corpus", [])):
            if "text" not in p or "title" not in p:
                raise CaseError(str(path), f"corpus.{i}", "a passage with 'title' and 'text'")
            corpus.add(p["title"], p["text"], p.get("id") or p.get("idx"))
    if not isinstance(questions_raw, list) or not questions_raw:
        raise CaseError(str(path), "questions", "a non-empty list of questions")
    questions = tuple(_question(q, corpus, path, i) for i, q in enumerate(questions_raw))
    known = {p.id for p in corpus.by_key.values()}
    for q in questions:
        missing = [s for s in q.supporting_ids if s not in known]
        if missing:
            raise CaseError(str(path), f"questions.{q.id}.supporting_ids", f"ids present in the corpus, missing {missing}")
    return Dataset(name=Path(path).stem, corpus=tuple(corpus.by_key.values()), questions=questions)
