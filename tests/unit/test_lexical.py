from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agent_memory.index.base import SearchHit
from agent_memory.lexical import (
    _stem,
    bm25_scores,
    doc_tokens,
    lexical_relevance,
    normalized,
    relative_weight,
    tokenize,
)
from agent_memory.model import IndexRecord
from agent_memory.ranking import RankingParams, fuse, rank

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def test_tokenize_words_stems_stopwords_and_cjk_bigrams() -> None:
    assert tokenize("Caroline went to the support groups") == ["carolin", "went", "support", "group"]
    assert tokenize("我对花生过敏") == ["对花", "花生", "生过", "过敏"]
    assert tokenize("的") == []


def test_what_an_apostrophe_leaves_behind_matches_nothing() -> None:
    """A contraction's tail is not a word: "I'm off Mondays" shares nothing with a question that
    says "I'm", and a possessive counts for its name only."""
    assert tokenize("I'm off Mondays, she'll call, we've won, don't, I'd go, they're here") == [
        "off", "monday", "call", "won", "don", "go", "here"]
    assert tokenize("Erin's wedding") == ["erin", "wed"]
    docs = ["I'm off Mondays and Tuesdays", "my rate is 800 a month into ETFs"]
    assert bm25_scores("how much will my portfolio be worth at the rate I'm investing?", docs)[0] == 0


def test_bm25_prefers_rarer_and_matching_terms() -> None:
    docs = ["Melanie: I painted a lake sunrise", "Caroline: I went to a support group", "Caroline: hi"]
    s = bm25_scores("When did Caroline go to the support group?", docs)
    assert s.argmax() == 1 and s[0] == 0
    assert normalized(s).max() == pytest.approx(1.0)
    assert bm25_scores("", docs).sum() == 0 and bm25_scores("x", []).size == 0
    zh = bm25_scores("花生过敏", ["我对花生过敏", "我喜欢喝拿铁"])
    assert zh[0] > 0 and zh[1] == 0


def test_query_scale_is_the_share_of_the_query_matched() -> None:
    """Scaled to the best match, one shared common word is a full match when nothing else shares
    a word ("I get seasick" for "how do I get a share link for a folder in my cloud storage?");
    scaled to the query's ceiling it is the small share of the query it is."""
    docs = ["I get seasick really badly", "Migrated from dropbox to google drive", "my cat is called Miso"]
    q = "how do I get a share link for a folder in my cloud storage?"
    assert normalized(bm25_scores(q, docs))[0] == pytest.approx(1.0)
    share = bm25_scores(q, docs, scale="query")
    assert 0 < share[0] < 0.3 and share[1] == share[2] == 0
    full = bm25_scores("cloud storage", ["my cloud storage is full", "cloud", "I like tea"], scale="query")
    assert full[0] == pytest.approx(1.0, abs=0.25) and full[0] > full[1] > full[2] == 0
    assert (full <= 1.0).all()


def test_a_small_store_blends_in_the_share_of_the_query_matched() -> None:
    """A handful of memories cannot say which words are common: there the query's own ceiling
    scales BM25 too; from ``small_store`` memories up only the best match does, as before."""
    q = "how do I get a share link for a folder in my cloud storage?"
    small = [doc_tokens(t) for t in ["I get seasick really badly", "I have two cats", "I live in Porto"]]
    best = lexical_relevance(q, small, small, small_store=0)
    share = bm25_scores(q, small, scale="query")
    blended = lexical_relevance(q, small, small, small_store=100)
    assert best[0] == pytest.approx(1.0) and share[0] < 0.3
    w = relative_weight(3, 100)
    assert w == pytest.approx(0.03) and relative_weight(500, 100) == 1.0 and relative_weight(3, 0) == 1.0
    assert blended[0] == pytest.approx(w * best[0] + (1 - w) * share[0])
    large = small + [doc_tokens(f"note number {i} about the garden") for i in range(100)]
    np.testing.assert_allclose(lexical_relevance(q, large, large, 100), lexical_relevance(q, large, large, 0))


def test_a_small_store_blends_in_the_similarity_over_the_best() -> None:
    """Min-max over two memories at 0.345 and 0.333 makes them 1 and 0, and a time boost (x2) on
    the second multiplies nothing; the similarity over the best keeps them close."""
    corpus = [rec("march", "s1", 0), rec("june", "s2", 0)]
    dense = [SearchHit(corpus[1], 0.345), SearchHit(corpus[0], 0.333)]
    relative = {c.record.id: c.relevance for c in fuse(dense, corpus, [0.0, 0.0], RankingParams(0.0), limit=5)}
    assert relative["march"] == 0.0 and relative["june"] > 0
    small = {c.record.id: c.relevance
             for c in fuse(dense, corpus, [0.0, 0.0], RankingParams(0.0, small_store=100), limit=5)}
    assert small["march"] > 0.9 * small["june"] > 0


def rec(mid: str, session: str, minute: int) -> IndexRecord:
    return IndexRecord(id=mid, user_id="u", session_id=session, memory_type="fact", summary=mid, importance=0.5,
                       created_at=NOW + timedelta(minutes=minute), topic_id=None, is_active=True, deleted_at=None,
                       source="user_said", storage_key=f"k/{mid}")


def test_fuse_adds_lexical_only_hits_and_neighbour_support() -> None:
    corpus = [rec("q", "s1", 0), rec("a", "s1", 1), rec("x", "s3", 0), rec("lex", "s2", 5)]
    dense = [SearchHit(corpus[0], 0.9), SearchHit(corpus[2], 0.1)]
    p = RankingParams(min_score=0.0, dense_weight=0.5, neighbour_weight=0.5)
    lexical = [0.0, 0.0, 0.0, 1.0]
    cands = {c.record.id: c for c in fuse(dense, corpus, lexical, p, limit=10)}
    assert set(cands) == {"q", "a", "x", "lex"}
    assert cands["lex"].similarity == pytest.approx(0.1)  # not found by dense: the floor
    assert cands["a"].relevance > cands["x"].relevance  # "a" sits next to the best dense match
    assert all(0 <= c.relevance <= 1 for c in cands.values() if c.relevance is not None)
    ranked = rank(list(cands.values()), NOW, p, top_k=2)
    assert next(r.hit.record.id for r in ranked if r.chosen) == "q"


def test_second_neighbour_shares_less_than_the_first_and_only_within_a_session() -> None:
    # one session of five turns in order, the best match in the middle, and a far session
    corpus = [rec(f"t{i}", "s1", i) for i in range(5)] + [rec("far", "s2", 1)]
    dense = [SearchHit(corpus[2], 0.9)] + [SearchHit(r, 0.1) for r in corpus if r.id != "t2"]
    lexical = [0.0] * len(corpus)
    p = RankingParams(min_score=0.0, dense_weight=1.0, neighbour_weight=0.5, second_neighbour_weight=0.25)
    rel = {c.record.id: c.relevance for c in fuse(dense, corpus, lexical, p, limit=10)}
    assert rel["t1"] == pytest.approx(rel["t3"]) and rel["t0"] == pytest.approx(rel["t4"])
    assert rel["t2"] > rel["t1"] > rel["t0"] > rel["far"]
    assert rel["far"] == 0.0
    off = RankingParams(min_score=0.0, dense_weight=1.0, neighbour_weight=0.5, second_neighbour_weight=0.0)
    rel_off = {c.record.id: c.relevance for c in fuse(dense, corpus, lexical, off, limit=10)}
    assert rel_off["t0"] == 0.0 and rel_off["t1"] > 0


def test_strong_lexical_match_passes_min_score() -> None:
    corpus = [rec("lex", "s", 0), rec("d", "s2", 0)]
    dense = [SearchHit(corpus[1], 0.5), SearchHit(corpus[0], 0.05)]
    p = RankingParams(min_score=0.3, lexical_min=0.5)
    ranked = {r.hit.record.id: r for r in rank(fuse(dense, corpus, [1.0, 0.0], p, 10), NOW, p, top_k=5)}
    assert ranked["lex"].chosen and ranked["d"].chosen
    p_no_lex = RankingParams(min_score=0.3, lexical_min=1.1)
    ranked = {r.hit.record.id: r for r in rank(fuse(dense, corpus, [1.0, 0.0], p_no_lex, 10), NOW, p_no_lex, 5)}
    assert ranked["lex"].reason == "below_min_score"


@pytest.mark.parametrize("context, summary", [
    ("Caroline: I went to the support group", "Melanie: that's great, 2023 was hard"),
    ("我对花生过敏", "点餐的时候要注意"), ("mixed 中文 text", "花生 allergy #123"), ("", "only the summary"),
    ("ends with CJK 花生", "生过敏 starts with CJK"), ("punctuation...", "...on both sides!"),
])
def test_joined_tokens_equal_the_tokens_of_the_joined_text(context: str, summary: str) -> None:
    # recall joins a memory's cached context and summary tokens instead of tokenizing the joined text
    joined = doc_tokens(context) + doc_tokens(summary)
    assert list(joined) == tokenize(f"{context} {summary}")
    docs = [f"{context} {summary}", "an unrelated memory about 花生"]
    assert bm25_scores("support group 花生 2023", [joined, doc_tokens(docs[1])]) == pytest.approx(
        bm25_scores("support group 花生 2023", docs))


def test_numbers_are_their_own_stems() -> None:
    assert tokenize("rent 1200 due on 15") == ["rent", "1200", "due", "15"]
    assert _stem("1200") == "1200"


def _bm25_reference(query: str, docs: list[str], k1: float = 0.9, b: float = 0.4) -> list[float]:
    """Okapi BM25 written out term by term, as the textbook has it."""
    import math

    q = set(tokenize(query))
    toks = [tokenize(d) for d in docs]
    avg = sum(map(len, toks)) / len(toks) or 1.0
    out = []
    for t in toks:
        score = 0.0
        for term in q:
            tf, df = t.count(term), sum(term in u for u in toks)
            if tf:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(t) / avg))
        out.append(score)
    return out


def test_bm25_equals_the_textbook_formula_on_random_documents() -> None:
    import random

    rng = random.Random(3)
    words = ["coffee", "black", "peanuts", "allergy", "Lisbon", "moved", "sister", "花生", "过敏", "咖啡", "2023", ""]
    for _ in range(30):
        docs = [" ".join(rng.choices(words, k=rng.randrange(0, 12))) for _ in range(rng.randrange(1, 15))]
        query = " ".join(rng.choices(words, k=rng.randrange(1, 5)))
        assert bm25_scores(query, docs).tolist() == pytest.approx(_bm25_reference(query, docs), rel=1e-12, abs=1e-12)
