"""Multi-hop datasets load from the native format and from the public layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from state.errors import CaseError
from tools.benchdata import load_dataset

FIXTURE = Path(__file__).parent / "fixtures" / "multihop_small.json"


def test_the_shipped_fixture_loads():
    ds = load_dataset(FIXTURE)
    assert len(ds.corpus) == 24 and len(ds.questions) == 10
    assert all(len(q.supporting_ids) == 2 for q in ds.questions)


def test_musique_layout(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps([{"id": "2hop_1", "question": "Where was X born?", "answer": "Y", "paragraphs": [
        {"idx": 0, "title": "X", "paragraph_text": "X was born in Y.", "is_supporting": True},
        {"idx": 1, "title": "Z", "paragraph_text": "Z is elsewhere.", "is_supporting": False}]}]))
    ds = load_dataset(path)
    assert [p.title for p in ds.corpus] == ["X", "Z"] and ds.questions[0].supporting_ids == ("X",)


def test_hotpot_and_2wiki_layout_map_supporting_titles_to_ids(tmp_path):
    path = tmp_path / "h.json"
    path.write_text(json.dumps([{"_id": "a1", "question": "q?", "answer": "yes",
                                 "supporting_facts": [["A", 0], ["B", 1]],
                                 "context": [["A", ["a0.", "a1."]], ["B", ["b0.", "b1."]], ["C", ["c0."]]]}]))
    ds = load_dataset(path)
    assert ds.questions[0].supporting_ids == ("A", "B") and len(ds.corpus) == 3


def test_a_separate_corpus_of_title_and_text(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"corpus": [{"title": "A", "text": "a"}, {"title": "B", "text": "b"}],
                                "questions": [{"question": "q", "supporting_facts": [["B", 0]]}]}))
    assert load_dataset(path).questions[0].supporting_ids == ("B",)


def test_unknown_supporting_ids_are_a_clear_error(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"corpus": [{"id": "p1", "title": "A", "text": "a"}],
                                "questions": [{"id": "q", "question": "q", "supporting_ids": ["p9"]}]}))
    with pytest.raises(CaseError, match="p9"):
        load_dataset(path)


def test_the_retrieval_bench_scores_every_tool_on_the_fixture(tmp_path, embedder):
    from investigator.bench import run_retrieval_bench

    from investigator.bench import TOOLS

    res = run_retrieval_bench(load_dataset(FIXTURE), embedder, tmp_path, list(TOOLS))
    assert set(res["tools"]) == {"bm25", "dense", "basic", "graph", "graph-ppr", "graph+dense"}
    for name, r in res["tools"].items():
        assert 0 <= r["recall@2"] <= r["recall@5"] <= r["recall@10"] <= 1, name
        assert r["build_seconds"] >= 0 and r["query_ms_p50"] > 0
    assert res["tools"]["basic"]["recall@5"] >= 0.9, "dense retrieval finds both hops of most questions"
