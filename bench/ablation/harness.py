import json, os, sys, time, math
import numpy as np, scipy.sparse as sp
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))

from tools.benchdata import load_dataset
from tools.textentities import TextEntityExtractor
from tools.lexical import BM25
from tools.evaluation import recall_at_k, mrr, ndcg_at_k, mean

SETS = ["musique", "2wiki", "hotpotqa"]
_emb = {}
def embedder(variant):
    if variant not in _emb:
        from tools.onnx_embedding import OnnxMiniLMEmbedder
        _emb[variant] = OnnxMiniLMEmbedder(variant).load()
    return _emb[variant]

class Data:
    def __init__(self, name, variant="fp32"):
        self.ds = load_dataset(str(__import__("pathlib").Path(__file__).resolve().parents[3] / "shared" / "bench" / "multihop-dev" / f"{name}-dev100.json"))
        self.name = name
        self.ids = [p.id for p in self.ds.corpus]
        self.texts = [f"{p.title}\n{p.text}" for p in self.ds.corpus]
        self.titles = [p.title for p in self.ds.corpus]
        self.qs = self.ds.questions
        f = f"/tmp/investigator-ablation-{name}-{variant}.npz"
        if os.path.exists(f):
            z = np.load(f); self.V, self.Q = z["V"], z["Q"]
        else:
            e = embedder(variant)
            self.V = e.embed(self.texts); self.Q = e.embed([q.question for q in self.qs])
            np.savez(f, V=self.V, Q=self.Q)
        self.bm25 = BM25(self.texts)

def evaluate(d, rank_fn, k=10):
    r2, r5, r10, mr, nd = [], [], [], [], []
    for qi, q in enumerate(d.qs):
        order = rank_fn(qi, q)[:k]
        ids = [d.ids[i] for i in order]
        r2.append(recall_at_k(ids, q.supporting_ids, 2)); r5.append(recall_at_k(ids, q.supporting_ids, 5))
        r10.append(recall_at_k(ids, q.supporting_ids, 10)); mr.append(mrr(ids, q.supporting_ids))
        nd.append(ndcg_at_k(ids, {s: 1.0 for s in q.supporting_ids}, 5))
    return dict(r2=mean(r2), r5=mean(r5), r10=mean(r10), mrr=mean(mr), ndcg5=mean(nd))

def topk(scores, k):
    return list(np.lexsort((np.arange(len(scores)), -scores))[:k])

def rrf_rank(rankings, k=60, weights=None):
    s = {}
    for c, rows in enumerate(rankings):
        w = 1.0 if weights is None else weights[c]
        for r, row in enumerate(rows):
            s[row] = s.get(row, 0) + w / (k + r + 1)
    return sorted(s, key=lambda r: (-s[r], r))
