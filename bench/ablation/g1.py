from graphexp import *
import itertools
CFG = dict(sw=3.0, hub=None, seedw="inv", dense_seed=0.0, fallback="dense", final="ppr", damping=0.85)
def run(cfgs):
    res = {}
    for s in SETS:
        d = Data(s); g = G(d)
        Ws = {}
        for name, cfg in cfgs.items():
            c = {**CFG, **cfg}
            kW = (c["sw"], c["hub"])
            if kW not in Ws: Ws[kW] = make_W(g, c["sw"], c["hub"])
            W = Ws[kW]
            def fn(qi, q, c=c, W=W):
                dense = d.V @ d.Q[qi]
                names = [n for n in g.ex.names(q.question) if n in g.ents]
                seeds = [g.ents[n] for n in names]
                if not seeds and c["dense_seed"] == 0:
                    if c["fallback"] == "basic":
                        return rrf_rank([topk(dense, 40), topk(d.bm25.scores(q.question), 40)])
                    return topk(dense, 10)
                p_e = np.zeros(len(g.ents))
                for e in seeds:
                    p_e[e] += {"inv": 1 / g.df[e], "idf": math.log(len(d.texts) / g.df[e]), "one": 1.0}[c["seedw"]]
                p_c = None
                if c["dense_seed"]:
                    z = np.clip(dense, 0, None); 
                    top = topk(dense, c.get("dense_k", len(dense)))
                    p_c = np.zeros(len(dense)); p_c[top] = z[top]
                    p_c = p_c / p_c.sum() * c["dense_seed"] * (p_e.sum() if p_e.sum() > 0 else 1)
                xc, xe = g.ppr(W, p_e, p_c, c["damping"])
                if c["final"] == "ppr":
                    order = list(np.lexsort((-dense, -np.round(xc, 12))))
                    walked = [i for i in order if xc[i] > 0][:10]
                    rest = [i for i in topk(dense, 20) if i not in set(walked)]
                    return (walked + rest)[:10]
                if c["final"] == "mix":
                    sc = np.log(xc + 1e-12) + c["beta"] * dense
                    if c.get("gamma"):
                        b = d.bm25.scores(q.question); sc = sc + c["gamma"] * b / (b.max() or 1)
                    sc[xc <= 0] = -np.inf
                    order = [i for i in np.lexsort((-dense, -sc)) if xc[i] > 0][:10]
                    rest = [i for i in topk(dense, 20) if i not in set(order)]
                    return (order + rest)[:10]
                if c["final"] == "rrf":
                    return rrf_rank([topk(xc, 40), topk(dense, 40)])
            r = evaluate(d, fn)
            res.setdefault(name, {})[s] = r
            print(f"{s:9s} {name:28s}", " ".join(f"{k}={v:.3f}" for k, v in r.items()), flush=True)
    print()
    for name in cfgs:
        print(f"{name:28s} R5 " + " ".join(f"{res[name][s]['r5']:.3f}" for s in SETS) + "  R2 " + " ".join(f"{res[name][s]['r2']:.3f}" for s in SETS))
if __name__ == "__main__":
    run({
        "v0": {},
        "v0+basicfb": dict(fallback="basic"),
        "hub-idf": dict(hub="idf", fallback="basic"),
        "hub-inv": dict(hub="inv", fallback="basic"),
        "hub-sqrt": dict(hub="sqrt", fallback="basic"),
        "dseed.05": dict(dense_seed=0.05, fallback="basic"),
        "dseed.5": dict(dense_seed=0.5, fallback="basic"),
        "dseed1": dict(dense_seed=1.0, fallback="basic"),
        "rrf": dict(final="rrf", fallback="basic"),
    })
