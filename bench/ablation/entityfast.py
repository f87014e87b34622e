"""Fast mirror of tools/graph/walk.py ranking for iterating on analyzers (not product code)."""
import sys, os, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np, scipy.sparse as sp
from harness import Data, SETS
from tools.basic import rrf, top_k
from tools.textentities import key as ekey
from tools.evaluation import recall_at_k, mean

def build(d, ex):
    ents = {}; rows, cols = [], []
    for i, tx in enumerate(d.texts):
        for n in ex.names(tx):
            rows.append(i); cols.append(ents.setdefault(n, len(ents)))
    M = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(len(d.texts), len(ents)))
    subj = []
    for t in d.titles:
        c = ex.canonical(t)
        subj.append(ents.get(c, -1) if c else -1)
    return ents, M, np.array(subj)

def weights(M, subj, hub=0.0, sw=3.0):
    W = M.tolil(copy=True)
    for i, e in enumerate(subj):
        if e >= 0: W[i, e] = sw
    W = sp.csr_array(W)
    if hub:
        df = np.asarray(M.sum(axis=0)).ravel()
        W = W @ sp.diags(np.maximum(df, 1.0) ** -hub)
    return W

def ppr(W, p, a=0.85, tol=1e-5):
    deg_c = np.asarray(W.sum(axis=1)).ravel(); deg_e = np.asarray(W.sum(axis=0)).ravel()
    inv_c = np.divide(1.0, deg_c, out=np.zeros_like(deg_c), where=deg_c > 0)
    inv_e = np.divide(1.0, deg_e, out=np.zeros_like(deg_e), where=deg_e > 0)
    to_c = (W @ sp.diags(a * inv_e)).tocsr(); to_e = (W.T @ sp.diags(a * inv_c)).tocsr()
    dang = np.flatnonzero(deg_c == 0)
    xe = p.copy(); xc = to_c @ xe
    for _ in range(200):
        xe2 = to_e @ xc + (a * xc[dang].sum() + 1 - a) * p
        xc2 = to_c @ xe2
        err = np.abs(xe2 - xe).sum() + np.abs(xc2 - xc).sum()
        xe, xc = xe2, xc2
        if err < tol: break
    return xc, xe

def run(d, ex, hub=0.0, log=None):
    ents, M, subj = build(d, ex)
    W = weights(M, subj, hub)
    support = np.asarray(M.sum(axis=0)).ravel()
    R = {2: [], 5: [], 10: []}; t = []
    for qi, q in enumerate(d.qs):
        t0 = time.perf_counter()
        dense = d.V @ d.Q[qi]
        seeds = [ents[n] for n in dict.fromkeys(ex.names(q.question)) if n in ents and support[ents[n]] > 0]
        ranked = []
        if seeds:
            p = np.zeros(len(ents))
            for j in seeds: p[j] = 1.0 / support[j]
            p /= p.sum()
            xc, _ = ppr(W, p)
            rows = np.flatnonzero(xc > 0); sc = xc[rows]
            final = np.log(sc) + 5 * dense[rows]
            order = np.lexsort((rows, -dense[rows], -final))[:10]
            ranked = [int(rows[i]) for i in order]
        if len(ranked) < 10:
            allowed = np.ones(len(d.texts), bool); allowed[ranked] = False
            rr = np.flatnonzero(allowed); depth = 40
            rk = {"dense": [int(rr[i]) for i in top_k(dense[rr], depth)]}
            lex = d.bm25.scores(q.question)[rr]
            lx = [int(rr[i]) for i in top_k(lex, depth) if lex[i] > 0]
            if lx: rk["lexical"] = lx
            ranked += [r for r, _, _ in rrf(rk)[:10 - len(ranked)]]
        t.append(time.perf_counter() - t0)
        ids = [d.ids[i] for i in ranked]
        for k in R: R[k].append(recall_at_k(ids, q.supporting_ids, k))
        if log is not None: log.append((q, ids, seeds))
    return {k: round(100 * mean(v), 1) for k, v in R.items()}, len(ents), round(1000 * float(np.median(t)), 1)


def misses(s, resolve):
    """Gold passages missing from the top 5: how many the walk reached, how many had no seed."""
    d = Data(s)
    ex = TextEntityExtractor.from_corpus(d.titles, d.texts, resolve=resolve)
    ents, M, subj = build(d, ex)
    W = weights(M, subj)
    support = np.asarray(M.sum(axis=0)).ravel()
    log = []
    print(s, "resolve" if resolve else "baseline", run(d, ex, 0, log))
    reached = missed = noseed = 0
    walked, hops = [], {}
    for q, ids, seeds in log:
        got = sum(g in ids[:5] for g in q.supporting_ids)
        h = hops.setdefault(q.id[0] if q.id[0].isdigit() else "-", [0, 0])
        h[0] += got; h[1] += len(q.supporting_ids)
        miss = [g for g in q.supporting_ids if g not in ids[:5]]
        if not miss:
            continue
        missed += len(miss)
        if not seeds:
            noseed += len(miss)
            continue
        p = np.zeros(len(ents))
        for j in seeds:
            p[j] = 1.0 / support[j]
        xc, _ = ppr(W, p / p.sum())
        walked.append(int((xc > 0).sum()))
        reached += sum(xc[d.ids.index(g)] > 0 for g in miss)
    print("  missed", missed, "reached by the walk", reached, "no seed", noseed,
          "median walked passages", int(np.median(walked)), "of", len(d.texts), "top-5 by hop", hops)


if __name__ == "__main__":
    from tools.textentities import TextEntityExtractor
    for s in sys.argv[1:] or ["musique"]:
        misses(s, False)
        misses(s, True)
