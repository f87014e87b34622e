from graphexp import *
from g1 import CFG
import oldlexical
from tools.textentities import key as ekey

def graph_ranker(d, g, W, c):
    def fn(qi, q):
        dense = d.V @ d.Q[qi]
        qn = any_case_names(g.ex, q.question) if c.get("query_mode", True) else g.ex.names(q.question)
        seeds = [g.ents[n] for n in qn if n in g.ents]
        if not seeds:
            if c["fallback"] == "basic":
                return rrf_rank([topk(dense, 40), topk(d.bm25.scores(q.question), 40)])
            return topk(dense, 10)
        p_e = np.zeros(len(g.ents))
        for e in seeds: p_e[e] += 1 / g.df[e]
        xc, xe = g.ppr(W, p_e)
        if c["final"] == "ppr":
            sc = np.round(xc, 12)
        else:
            sc = np.log(xc + 1e-300) + c["beta"] * dense
        order = [i for i in np.lexsort((-dense, -sc)) if xc[i] > 0][:10]
        rest = rrf_rank([topk(dense, 40), topk(d.bm25.scores(q.question), 40)]) if c["fallback"] == "basic" else topk(dense, 20)
        return (order + [i for i in rest if i not in set(order)])[:10]
    return fn

rows = {}
def put(name, s, r):
    rows.setdefault(name, {})[s] = r

for s in SETS:
    d = Data(s)
    # baselines: new BM25 tokenizer vs old
    put("bm25 (old tokenizer)", s, evaluate(d, lambda qi, q, b=oldlexical.BM25(d.texts): topk(b.scores(q.question), 10)))
    put("bm25 (new tokenizer)", s, evaluate(d, lambda qi, q: topk(d.bm25.scores(q.question), 10)))
    put("dense", s, evaluate(d, lambda qi, q: topk(d.V @ d.Q[qi], 10)))
    ob = oldlexical.BM25(d.texts)
    put("basic, old BM25 (depth 20)", s, evaluate(d, lambda qi, q: rrf_rank([topk(d.V @ d.Q[qi], 20), [i for i in topk(ob.scores(q.question), 20)]])))
    put("basic, new BM25 (depth 20)", s, evaluate(d, lambda qi, q: rrf_rank([topk(d.V @ d.Q[qi], 20), [i for i in topk(d.bm25.scores(q.question), 20)]])))
    # old graph: titles only, case-sensitive exact, PPR only, dense fallback
    titles = {t: i for i, t in enumerate(sorted(set(d.titles)))}
    import re
    pat = re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(re.escape(t) for t in sorted(titles, key=lambda t: (-len(t), t))) + r")(?![A-Za-z0-9_-])")
    class OldEx:
        def __init__(self): self.kinds = titles
        def names(self, text): return list(dict.fromkeys(m.group(1) for m in pat.finditer(text)))
        query_names = names  # noqa
    g_old = G.__new__(G); g_old.d = d; g_old.ex = OldEx()
    ents = {}; rr, cc = [], []
    for i, tx in enumerate(d.texts):
        for n in g_old.ex.names(tx): rr.append(i); cc.append(ents.setdefault(n, len(ents)))
    g_old.ents = ents; g_old.M = sp.csr_array((np.ones(len(rr)), (rr, cc)), shape=(len(d.texts), len(ents)))
    g_old.df = np.asarray(g_old.M.sum(axis=0)).ravel(); g_old.subj = np.array([ents.get(t, -1) for t in d.titles])
    W = make_W(g_old, 3.0, None)
    put("A graph as before: exact titles, PPR, dense fallback", s, evaluate(d, graph_ranker(d, g_old, W, dict(final="ppr", fallback="dense", query_mode=False))))
    # titles only, folded keys
    g = G(d)
    full = g.ex
    g.ex = TextEntityExtractor({ekey(t): "title" for t in d.titles})
    ents = {}; rr, cc = [], []
    for i, tx in enumerate(d.texts):
        for n in g.ex.names(tx): rr.append(i); cc.append(ents.setdefault(n, len(ents)))
    g2 = G.__new__(G); g2.d = d; g2.ex = g.ex; g2.ents = ents
    g2.M = sp.csr_array((np.ones(len(rr)), (rr, cc)), shape=(len(d.texts), len(ents)))
    g2.df = np.asarray(g2.M.sum(axis=0)).ravel(); g2.subj = np.array([ents.get(ekey(t), -1) for t in d.titles])
    W2 = make_W(g2, 3.0, None)
    put("B + folded title keys (case, accents, disambiguator)", s, evaluate(d, graph_ranker(d, g2, W2, dict(final="ppr", fallback="dense"))))
    g = G(d); W = make_W(g, 3.0, None)
    put("C + capitalised names as entities", s, evaluate(d, graph_ranker(d, g, W, dict(final="ppr", fallback="dense"))))
    put("D + basic (dense+BM25) fallback", s, evaluate(d, graph_ranker(d, g, W, dict(final="ppr", fallback="basic"))))
    put("E + rank walked by log PPR + 5 cos (= graph)", s, evaluate(d, graph_ranker(d, g, W, dict(final="mix", beta=5, fallback="basic"))))
    put("F titles only + fallback + mix, passage-mode questions", s, evaluate(d, graph_ranker(d, g2, W2, dict(final="mix", beta=5, fallback="basic", query_mode=False))))
    put("F' titles only + fallback + mix, query-mode", s, evaluate(d, graph_ranker(d, g2, W2, dict(final="mix", beta=5, fallback="basic", query_mode=True))))
    import tools.lexical as L
    class Fold(oldlexical.BM25): pass
    def tok_fold(text):
        out = []
        for tok in L._TOKEN.findall(L.fold(text)):
            parts = [p for p in L._PARTS.split(tok) if p]
            out.append(tok)
            if len(parts) > 1: out.extend(parts)
        return out
    import types
    saved = oldlexical.tokenize
    oldlexical.tokenize = tok_fold
    bf = oldlexical.BM25(d.texts)
    put("bm25 fold only (stopwords kept)", s, evaluate(d, lambda qi, q: topk(bf.scores(q.question), 10)))
    oldlexical.tokenize = saved
    put("E without query-mode matching (case-sensitive questions)", s, evaluate(d, graph_ranker(d, g, W, dict(final="mix", beta=5, fallback="basic", query_mode=False))))
    print(s, "done", flush=True)

print("| ranking | " + " | ".join(f"{s} R@2 | {s} R@5 | {s} R@10" for s in SETS) + " |")
for name, r in rows.items():
    print(f"| {name} | " + " | ".join(f"{r[s]['r2']:.3f} | {r[s]['r5']:.3f} | {r[s]['r10']:.3f}" for s in SETS) + " |")
json.dump(rows, open(__import__("pathlib").Path(__file__).parent / "ablation.json", "w"), indent=1)
