"""Pooled retrieval bench: several sets and a distractor corpus as one index, gold ids mapped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools.benchpool import load_source, pool

SHARED = {"title": "Maren Holt", "text": "Maren Holt was an engineer born in Drevik."}


def _write(tmp: Path) -> list[Path]:
    a = {"format": "investigator/multihop@1", "corpus": [
        {"id": "a1", "title": "Veltra Bridge", "text": "The Veltra Bridge was designed by Maren Holt."},
        {"id": "a2", **SHARED},
        {"id": "a3", "title": "Kalden", "text": "Kalden is a city on the river Osmire."}],
        "questions": [{"id": "qa", "question": "Where was the designer of the Veltra Bridge born?",
                       "supporting_ids": ["a1", "a2"]}]}
    b = {"format": "investigator/multihop@1", "corpus": [
        {"id": "b1", "title": "Drevik", "text": "Drevik is a fishing town known for its lighthouse."},
        {"id": "b9", **SHARED},  # the same passage as a2, under another id
        {"id": "a3", "title": "Lorna", "text": "Lorna is a country in the north."}],  # a2's neighbour's id, other text
        "questions": [{"id": "qb", "question": "What is the birthplace of Maren Holt known for?",
                       "supporting_ids": ["b9", "b1"]}]}
    distractors = [SHARED] + [{"title": f"Filler {i}", "text": f"Filler {i} is a village with {i} houses."}
                              for i in range(40)]
    paths = [tmp / "set-a.json", tmp / "set-b.json", tmp / "distractors.json"]
    for path, data in zip(paths, (a, b, distractors), strict=True):
        path.write_text(json.dumps(data))
    return paths


def test_pooling_merges_shared_passages_and_maps_gold_ids(tmp_path):
    pooled = pool([load_source(p) for p in _write(tmp_path)])
    assert pooled.read == {"set-a": 3, "set-b": 3, "distractors": 41}
    assert pooled.merged == 2 and len(pooled.corpus) == 45
    assert sum(1 for p in pooled.corpus if p.title == "Maren Holt") == 1
    ids = {p.id: p for p in pooled.corpus}
    assert len(ids) == len(pooled.corpus), "pooled ids are unique"
    assert ids["set-b:a3"].title == "Lorna" and ids["a3"].title == "Kalden"
    assert pooled.sets["set-a"][0].supporting_ids == ("a1", "a2")
    assert pooled.sets["set-b"][0].supporting_ids == ("a2", "b1"), "b9 is the same passage as a2"
    assert "distractors" not in pooled.sets and pooled.gold == 3
    assert ids["distractors-00001"].title == "Filler 0"


def test_a_subsample_keeps_every_gold_passage_and_is_seeded(tmp_path):
    sources = [load_source(p) for p in _write(tmp_path)]
    small = pool(sources, size=10, seed=3)
    assert len(small.corpus) == 10 and small.seed == 3
    kept = {p.id for p in small.corpus}
    assert {s for qs in small.sets.values() for q in qs for s in q.supporting_ids} <= kept
    assert small == pool(sources, size=10, seed=3)
    assert {p.id for p in pool(sources, size=10, seed=4).corpus} != kept
    order = [p.id for p in pool(sources).corpus]
    assert [p.id for p in small.corpus] == [i for i in order if i in kept], "kept passages stay in pooled order"
    with pytest.raises(ValueError, match="gold"):
        pool(sources, size=2)


def test_each_set_is_scored_against_the_pooled_index(tmp_path, embedder):
    from investigator.bench_pooled import run_pooled_bench, to_markdown

    lines: list[str] = []
    res = run_pooled_bench(_write(tmp_path), embedder, tmp_path, ["bm25", "dense"], size=20, seed=1,
                           progress=lines.append)
    assert res["pool"]["passages"] == 20 and res["pool"]["questions"] == {"set-a": 1, "set-b": 1}
    assert {"parse", "chunk", "embed", "write"} <= set(res["stages"])
    for name in ("bm25", "dense"):
        for set_name in ("set-a", "set-b"):
            r = res["tools"][name]["sets"][set_name]
            assert 0 <= r["recall@2"] <= r["recall@5"] <= r["recall@10"] <= 1
        assert res["tools"][name]["query_ms_p50"] > 0
    assert res["tools"]["dense"]["sets"]["set-a"]["recall@10"] == 1.0, "both gold passages are among 20"
    assert "| set-b | bm25 |" in to_markdown(res)
