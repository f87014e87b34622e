"""The basic tool: access and hard filters apply before ranking; exact identifiers stay findable."""

from __future__ import annotations

from pathlib import Path

import pytest

from state.case import Principal, load_case
from investigator.manifests import ManifestOnDisk
from tools.access import AccessPolicy, snapshot
from tools.basic import BasicRetrieval, rrf
from tools.corpus import load_manifest
from tools.retrieval import SearchQuery

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "cases" / "ALR-20260429-017"


@pytest.fixture(scope="module")
def tool(index_root, embedder):
    from investigator.config import Settings

    return BasicRetrieval(Settings(index_root=index_root).index_dir("ALR-20260429-017", REFERENCE) / "basic.duckdb",
                          embedder)


def test_an_unreadable_source_is_never_scored_or_returned(tool):
    case = load_case(REFERENCE)
    access = AccessPolicy(ManifestOnDisk(REFERENCE), case.principal).current()
    q = SearchQuery(text="order-service security review dependency-client", environment="prod", k=50)
    mask = tool.table.mask(q, access)
    secret = tool.table.source_ids == "order-service-security-review-2026q2"
    assert secret.any() and not (mask & secret).any(), "masked before any score is computed"
    assert all(h.source_id != "order-service-security-review-2026q2" for h in tool.search(q, access))
    everyone = snapshot(load_manifest(REFERENCE), Principal(id="auditor", groups=("security", "sre-oncall")))
    assert any(h.source_id == "order-service-security-review-2026q2" for h in tool.search(q, everyone)), \
        "the same query reaches it when the principal may read it"


def test_another_environment_is_filtered_out(tool):
    case = load_case(REFERENCE)
    access = AccessPolicy(ManifestOnDisk(REFERENCE), case.principal).current()
    hits = tool.search(SearchQuery(text="order-service staging retry_timeout 5000", environment="prod", k=30), access)
    envs = {tool.table.envs[tool.table.position[h.chunk_id]] for h in hits}
    assert envs <= {"prod", "*"}


def test_exact_identifiers_are_found_by_the_lexical_channel(tool):
    case = load_case(REFERENCE)
    access = AccessPolicy(ManifestOnDisk(REFERENCE), case.principal).current()
    hits = tool.search(SearchQuery(text="retry_timeout", environment="prod", k=5), access)
    assert hits and all("retry_timeout" in tool.table.texts[tool.table.position[h.chunk_id]] for h in hits[:3])
    assert any("lexical" in h.channel for h in hits)


def test_rank_fusion_rewards_agreement_between_channels():
    fused = rrf({"dense": [1, 2, 3], "lexical": [3, 4]})
    assert fused[0][0] == 3 and fused[0][2] == "dense+lexical"


def test_scoring_by_runs_equals_scoring_the_gathered_rows():
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from tools.basic import masked_scores

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.booleans(), min_size=1, max_size=40))
    def check(bits):
        rng = np.random.default_rng(len(bits))
        v = rng.standard_normal((len(bits), 8)).astype(np.float32)
        q = rng.standard_normal(8).astype(np.float32)
        m = np.array(bits, dtype=bool)
        assert np.allclose(masked_scores(v, m, q), v[m] @ q, rtol=1e-4, atol=1e-5)  # BLAS order differs

    check()


def test_bm25_tokens_fold_accents_and_case_and_drop_function_words():
    from tools.lexical import tokenize

    assert tokenize("Where is the Tekezé river?") == tokenize("where TEKEZE river") == ["tekeze", "river"]
    assert tokenize("set retry_timeout on order-service 4.19.0") == [
        "set", "retry_timeout", "retry", "timeout", "order-service", "order", "service", "4.19.0", "4", "19", "0"]


def test_the_sparse_bm25_equals_the_textbook_formula():
    import numpy as np

    from tools.lexical import BM25

    texts = ["order-service calls dependency-client", "retry_timeout of dependency-client is 2000 ms",
             "db pool", "retry retry timeout", ""]
    for q in ("dependency-client retry_timeout", "pool", "nothing-here", "retry"):
        assert np.allclose(BM25(texts).scores(q), _reference_scores(texts, q), atol=1e-5)


def _reference_scores(texts: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Textbook BM25, term by term."""
    import math
    from collections import Counter

    from tools.lexical import tokenize

    docs = [Counter(tokenize(t)) for t in texts]
    avg = sum(sum(d.values()) for d in docs) / len(docs)
    out = []
    for d in docs:
        length, score = sum(d.values()), 0.0
        for tok in set(tokenize(query)):
            df = sum(1 for x in docs if tok in x)
            if tok in d:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * d[tok] * (k1 + 1) / (d[tok] + k1 * (1 - b + b * length / avg))
        out.append(score)
    return out


def test_texts_with_no_word_but_stopwords_score_zero_instead_of_failing_the_build():
    """A corpus whose chunks hold only function words or punctuation (a divider page, an empty
    section) gives the lexical channel nothing to weigh: every query scores 0, nothing crashes."""
    from tools.lexical import BM25

    bm25 = BM25(["the a", "of --", ""])
    assert bm25.scores("timeout").tolist() == [0.0, 0.0, 0.0]
    assert bm25.scores("the").tolist() == [0.0, 0.0, 0.0]
