from harness import *
from tools.textentities import key as ekey

class G:
    def __init__(self, d):
        self.d = d
        t = time.time()
        self.ex = TextEntityExtractor.from_corpus(d.titles, d.texts)
        ents = {}
        rows, cols = [], []
        for i, tx in enumerate(d.texts):
            for n in self.ex.names(tx):
                rows.append(i); cols.append(ents.setdefault(n, len(ents)))
        self.ents = ents
        self.M = sp.csr_array((np.ones(len(rows)), (rows, cols)), shape=(len(d.texts), len(ents)))
        self.df = np.asarray(self.M.sum(axis=0)).ravel()
        self.subj = np.array([ents.get(ekey(t), -1) for t in d.titles])
        self.build_s = time.time() - t

    def ppr(self, W, p_e, p_c=None, damping=0.85, iters=100):
        n_c, n_e = W.shape
        deg_c = np.asarray(W.sum(axis=1)).ravel(); deg_e = np.asarray(W.sum(axis=0)).ravel()
        inv_c = np.divide(1.0, deg_c, out=np.zeros_like(deg_c), where=deg_c > 0)
        inv_e = np.divide(1.0, deg_e, out=np.zeros_like(deg_e), where=deg_e > 0)
        WT = W.T.tocsr()
        tele = np.concatenate([p_c if p_c is not None else np.zeros(n_c), p_e]); tele /= tele.sum()
        x = tele.copy()
        for _ in range(iters):
            xc, xe = x[:n_c], x[n_c:]
            nc = W @ (xe * inv_e); ne = WT @ (xc * inv_c)
            dang = xc[deg_c == 0].sum() + xe[deg_e == 0].sum()
            nx_ = damping * np.concatenate([nc, ne]) + (damping * dang + 1 - damping) * tele
            if np.abs(nx_ - x).sum() < 1e-8: x = nx_; break
            x = nx_
        return x[:n_c], x[n_c:]

def make_W(g, subject_weight=3.0, hub=None):
    M = g.M.tocoo()
    w = np.ones_like(M.data, dtype=float)
    if hub == "idf":
        w = w * np.log(len(g.d.texts) / g.df[M.col])
    elif hub == "inv":
        w = w / g.df[M.col]
    elif hub == "sqrt":
        w = w / np.sqrt(g.df[M.col])
    W = sp.coo_array((w, (M.row, M.col)), shape=M.shape).tolil()
    for i, e in enumerate(g.subj):
        if e >= 0:
            base = W[i, e] if W[i, e] else (1.0 if hub is None else 1.0)
            W[i, e] = subject_weight * (1.0 if hub is None else base if base else 1.0)
    return sp.csr_array(W)


def any_case_names(ex, text):
    """The dropped question matcher: keys in any case, lone lower-case words skipped."""
    from tools.textentities import is_capitalised, word_spans
    words = word_spans(text)
    found, i = {}, 0
    while i < len(words):
        w, orig = words[i][0], words[i][1]
        lengths = ex._lengths.get(w)
        proper = is_capitalised(orig) or orig[:1].isdigit()
        if lengths:
            for n in lengths:
                if i + n <= len(words):
                    k = " ".join(x[0] for x in words[i:i + n])
                    if k in ex.kinds and (proper or n > 1):
                        found.setdefault(k, None); i += n
                        break
            else:
                i += 1
            continue
        i += 1
    return list(found)
