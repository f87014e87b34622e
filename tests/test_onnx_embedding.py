"""The ONNX Runtime MiniLM: the sentence-transformers model as a graph built without torch, with a fallback.

The vectors must stay those of sentence-transformers (indexes and caches keep the same model
name): checked against sentence-transformers itself where the ``[torch]`` extra is installed,
and everywhere against figures it gave for the same texts (recorded with sentence-transformers
6.3.0 on torch 2.13.0+cpu).
"""

from __future__ import annotations

from importlib.util import find_spec

import numpy as np
import pytest

from tools.embedding import MODEL, MiniLMEmbedder, SentenceTransformerEmbedder

TEXTS = ["order-service latency rose after dependency-client 2.4.0 changed retry_timeout",
         "Pál Gábor was a Hungarian film director.",
         "short",
         "A much longer passage about the Veltra Bridge, which spans the river Osmire in the city of Kalden; "
         "it was designed by the engineer Maren Holt and opened in 1911 after six years of work. " * 3]

# sentence-transformers' vectors for TEXTS: the first six components, the last three, and each
# vector's dot product with a fixed random direction (all 384 components weigh in)
ST_HEAD = np.array([[-0.0335717, -0.0072877, 0.0842325, -0.0021004, -0.026262, -0.0463616],
                    [-0.0231837, -0.0234363, -0.0681487, -0.0053615, 0.0476216, 0.0171839],
                    [0.0167688, 0.106482, 0.0199964, 0.0469164, -0.0054551, -0.0091615],
                    [-0.0840502, 0.0741017, 0.0462984, 0.0272619, -0.0812785, -0.1100662]])
ST_TAIL = np.array([[-0.0326725, -0.0268448, -0.0457746],
                    [-0.0073464, -0.0045628, -0.0427067],
                    [-0.0233707, 0.0288386, 0.0324828],
                    [0.0692029, -0.0188932, 0.0560392]])
ST_PROJECTION = np.array([0.357844, -0.30764, -0.792779, -0.750688])

needs_torch = pytest.mark.skipif(find_spec("sentence_transformers") is None,
                                 reason="sentence-transformers (the [torch] extra) is not installed: "
                                        "make install TORCH=1 compares against the reference runtime")


@pytest.fixture(scope="module")
def fp32() -> np.ndarray:
    return MiniLMEmbedder("onnx-fp32").embed(TEXTS)


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    return SentenceTransformerEmbedder().embed(TEXTS)


def test_fp32_onnx_gives_the_recorded_sentence_transformers_vectors(fp32):
    onnx = MiniLMEmbedder("onnx-fp32")
    got = onnx.embed(TEXTS)
    assert onnx.runtime == "onnx-fp32" and onnx.name == MODEL == SentenceTransformerEmbedder.name
    assert got.shape == (4, 384) and got.dtype == np.float32
    assert np.allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    assert np.abs(got[:, :6] - ST_HEAD).max() < 1e-5 and np.abs(got[:, -3:] - ST_TAIL).max() < 1e-5
    direction = np.random.default_rng(0).standard_normal(384).astype(np.float32)
    assert np.abs(got @ direction - ST_PROJECTION).max() < 1e-4
    # batching and length sorting change nothing: one text at a time gives the same rows
    assert np.allclose(np.vstack([onnx.embed([t]) for t in TEXTS]), got, atol=1e-5)


@needs_torch
def test_fp32_onnx_gives_the_sentence_transformers_vectors(fp32, reference):
    assert np.abs(fp32 - reference).max() < 1e-5
    assert (fp32 * reference).sum(axis=1).min() > 0.99999


@needs_torch
def test_the_recorded_vectors_are_what_sentence_transformers_gives_here(reference):
    assert np.abs(reference[:, :6] - ST_HEAD).max() < 1e-5 and np.abs(reference[:, -3:] - ST_TAIL).max() < 1e-5


def test_int8_onnx_vectors_are_close_and_named_apart(fp32):
    int8 = MiniLMEmbedder("onnx-int8")
    got = int8.embed(TEXTS)
    assert int8.name == "all-MiniLM-L6-v2-onnx-int8"  # an index records which vectors it holds
    assert (got * fp32).sum(axis=1).min() > 0.97
    # dynamic quantisation scales activations per batch, so a row depends a little on its batch
    one_by_one = np.vstack([int8.embed([t]) for t in TEXTS])
    assert (one_by_one * got).sum(axis=1).min() > 0.97


def test_the_graph_is_built_without_torch_into_the_cache_once_keyed_on_the_weights(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    from tools.onnx_embedding import export, onnx_path

    code = ("import sys, pathlib; from tools.onnx_embedding import export; export('fp32', root=pathlib.Path(sys.argv[1]))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers', 'sentence_transformers')))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.strip() == "[]"
    path = onnx_path("fp32", root=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary leftovers
    mtime = path.stat().st_mtime_ns
    assert export("fp32", root=tmp_path) == path and path.stat().st_mtime_ns == mtime


def _break_onnx(monkeypatch) -> None:
    import tools.onnx_embedding as onnx_embedding

    def broken(*_a, **_k):
        raise ImportError("no onnxruntime here")

    monkeypatch.setattr(onnx_embedding, "export", broken)


@needs_torch
def test_without_onnx_runtime_the_embedder_falls_back_to_sentence_transformers(monkeypatch, reference):
    _break_onnx(monkeypatch)
    emb = MiniLMEmbedder("onnx-int8")
    got = emb.embed(TEXTS[:2])
    assert emb.runtime == "torch" and emb.name == "all-MiniLM-L6-v2"
    assert np.allclose(got, reference[:2], atol=1e-5)


def test_without_onnx_runtime_nor_torch_the_error_names_both(monkeypatch):
    import tools.embedding as embedding

    _break_onnx(monkeypatch)
    monkeypatch.setattr(embedding, "find_spec", lambda name: None if name == "sentence_transformers" else find_spec(name))
    with pytest.raises(RuntimeError, match=r"no onnxruntime here.*TORCH=1"):
        MiniLMEmbedder("onnx-fp32").embed(TEXTS[:1])


def test_the_runtime_can_be_chosen_by_environment(monkeypatch):
    monkeypatch.delenv("INVESTIGATOR_EMBED_RUNTIME", raising=False)
    assert MiniLMEmbedder().runtime == "onnx-fp32" and MiniLMEmbedder().name == "all-MiniLM-L6-v2"
    monkeypatch.setenv("INVESTIGATOR_EMBED_RUNTIME", "torch")
    assert MiniLMEmbedder().runtime == "torch"
    monkeypatch.setenv("INVESTIGATOR_EMBED_RUNTIME", "tpu")
    with pytest.raises(ValueError, match="INVESTIGATOR_EMBED_RUNTIME"):
        MiniLMEmbedder()
