"""The ONNX Runtime MiniLM: same model as sentence-transformers, exported offline, with a fallback."""

from __future__ import annotations

import numpy as np
import pytest

from tools.embedding import MiniLMEmbedder, SentenceTransformerEmbedder

TEXTS = ["order-service latency rose after dependency-client 2.4.0 changed retry_timeout",
         "Pál Gábor was a Hungarian film director.",
         "short",
         "A much longer passage about the Veltra Bridge, which spans the river Osmire in the city of Kalden; "
         "it was designed by the engineer Maren Holt and opened in 1911 after six years of work. " * 3]


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    return SentenceTransformerEmbedder().embed(TEXTS)


def test_fp32_onnx_gives_the_sentence_transformers_vectors(reference):
    onnx = MiniLMEmbedder("onnx-fp32")
    got = onnx.embed(TEXTS)
    assert onnx.runtime == "onnx-fp32" and onnx.name == SentenceTransformerEmbedder.name
    assert got.shape == (4, 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    assert (got * reference).sum(axis=1).min() > 0.9999
    # batching and length sorting change nothing: one text at a time gives the same rows
    assert np.allclose(np.vstack([onnx.embed([t]) for t in TEXTS]), got, atol=1e-5)


def test_int8_onnx_vectors_are_close_and_named_apart(reference):
    int8 = MiniLMEmbedder("onnx-int8")
    got = int8.embed(TEXTS)
    assert int8.name == "all-MiniLM-L6-v2-onnx-int8"  # an index records which vectors it holds
    assert (got * reference).sum(axis=1).min() > 0.97
    # dynamic quantisation scales activations per batch, so a row depends a little on its batch
    one_by_one = np.vstack([int8.embed([t]) for t in TEXTS])
    assert (one_by_one * got).sum(axis=1).min() > 0.97


def test_the_export_goes_to_the_cache_once_and_keys_on_the_weights(tmp_path):
    from tools.onnx_embedding import export, onnx_path

    path = export("fp32", root=tmp_path)
    assert path == onnx_path("fp32", root=tmp_path) and path.exists()
    mtime = path.stat().st_mtime_ns
    assert export("fp32", root=tmp_path).stat().st_mtime_ns == mtime
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary leftovers


def test_without_onnx_runtime_the_embedder_falls_back_to_sentence_transformers(monkeypatch, reference):
    import tools.onnx_embedding as onnx_embedding

    def broken(*_a, **_k):
        raise ImportError("no onnxruntime here")

    monkeypatch.setattr(onnx_embedding, "export", broken)
    emb = MiniLMEmbedder("onnx-int8")
    got = emb.embed(TEXTS[:2])
    assert emb.runtime == "torch" and emb.name == "all-MiniLM-L6-v2"
    assert np.allclose(got, reference[:2], atol=1e-5)


def test_the_runtime_can_be_chosen_by_environment(monkeypatch):
    monkeypatch.delenv("INVESTIGATOR_EMBED_RUNTIME", raising=False)
    assert MiniLMEmbedder().runtime == "onnx-fp32" and MiniLMEmbedder().name == "all-MiniLM-L6-v2"
    monkeypatch.setenv("INVESTIGATOR_EMBED_RUNTIME", "torch")
    assert MiniLMEmbedder().runtime == "torch"
    monkeypatch.setenv("INVESTIGATOR_EMBED_RUNTIME", "tpu")
    with pytest.raises(ValueError, match="INVESTIGATOR_EMBED_RUNTIME"):
        MiniLMEmbedder()
