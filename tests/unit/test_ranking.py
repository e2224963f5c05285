from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.index.base import SearchHit
from agent_memory.model import IndexRecord, RecallHit, ScoreParts
from agent_memory.prompt import build_context
from agent_memory.ranking import RankingParams, importance_weight, rank, time_decay

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def hit(sim: float, age_days: float = 0, importance: float = 0.5, mtype: str = "fact", mid: str = "a") -> SearchHit:
    rec = IndexRecord(id=mid, user_id="u", session_id="s", memory_type=mtype, summary=mid,
                      importance=importance, created_at=NOW - timedelta(days=age_days), topic_id=None,
                      is_active=True, deleted_at=None, source="user_said", storage_key=f"k/{mid}")
    return SearchHit(rec, sim)


def test_decay_halves_above_the_floor() -> None:
    assert time_decay(0, 30, 0.0) == pytest.approx(1.0)
    assert time_decay(30, 30, 0.0) == pytest.approx(0.5)
    assert time_decay(60, 30, 0.5) == pytest.approx(0.5 + 0.5 * 0.25)
    assert time_decay(10_000, 30, 0.6) == pytest.approx(0.6)
    assert time_decay(-5, 30, 0.0) == pytest.approx(1.0)  # future dates do not boost


def test_importance_weight_is_clamped() -> None:
    assert importance_weight(0, 0.6) == pytest.approx(0.6)
    assert importance_weight(1, 0.6) == pytest.approx(1.0)
    assert importance_weight(5, 0.6) == pytest.approx(1.0)


def test_score_is_the_product_and_order_follows_it() -> None:
    p = RankingParams(min_score=0.2, half_life_days=30, decay_floor=0.0, importance_floor=0.0,
                      type_priority={"event": 0.5})
    ranked = rank([hit(0.9, age_days=30, mid="old"), hit(0.6, mid="new", importance=1.0),
                   hit(0.95, mtype="event", importance=1.0, mid="event")], NOW, p, top_k=5)
    assert [r.hit.record.id for r in ranked] == ["new", "event", "old"]
    for r in ranked:
        parts = r.parts
        assert parts.score == pytest.approx(parts.similarity * parts.decay * parts.importance_weight
                                            * parts.type_weight)


def test_min_score_and_top_k_explain_every_rejection() -> None:
    p = RankingParams(min_score=0.5)
    ranked = rank([hit(0.9, mid="a"), hit(0.8, mid="b"), hit(0.7, mid="c"), hit(0.3, mid="d")], NOW, p, top_k=2)
    reasons = {r.hit.record.id: r.reason for r in ranked}
    assert reasons == {"a": "chosen", "b": "chosen", "c": "beyond_top_k", "d": "below_min_score"}


def _recall_hit(content: str, days: int, source: str = "user_said") -> RecallHit:
    parts = ScoreParts(similarity=1, decay=1, importance_weight=1, type_weight=1, score=1)
    return RecallHit(memory_id=content, content=content, summary=content, score=1, similarity=1, parts=parts,
                     created_at=NOW - timedelta(days=days), memory_type="fact", importance=0.5,
                     topic_id=None, source=source, session_id="s")


def test_context_is_oldest_first_labelled_and_bounded() -> None:
    ctx = build_context([_recall_hit("new fact", 1), _recall_hit("old fact", 100),
                         _recall_hit("guess", 5, "agent_inferred")])
    lines = ctx.splitlines()
    assert "old fact" in lines[1] and "guess" in lines[2] and "new fact" in lines[3]
    assert "inferred" in lines[2]
    assert build_context([]) == ""
    long = build_context([_recall_hit("x" * 500, i) for i in range(50)], max_chars=1000)
    assert len(long) <= 1000


def test_token_budget_keeps_the_best_memories_in_time_order() -> None:
    from agent_memory.prompt import estimate_tokens, system_prompt

    assert estimate_tokens("我对花生过敏") == 6 and estimate_tokens("abcdefgh") == 2
    hits = [_recall_hit(f"memory number {i} " + "词" * 40, days=i) for i in range(10)]
    for i, h in enumerate(hits):
        h.score = 1.0 - i / 10  # the newest scores best
    prompt = system_prompt("You are a helpful assistant.", hits, max_tokens=150)
    block = prompt.split("\n\n", 1)[1]
    assert prompt.startswith("You are a helpful assistant.") and estimate_tokens(block) <= 150
    kept = [line for line in block.splitlines()[1:]]
    assert 0 < len(kept) < 10
    numbers = [int(line.split("memory number ")[1].split()[0]) for line in kept]
    assert numbers == sorted(numbers, reverse=True)  # oldest first = highest "days" first
    assert set(numbers) == set(range(len(kept)))  # the best-scored ones were kept
    assert system_prompt("Base.", []) == "Base."


def test_a_superseded_version_lends_its_match_to_its_successor_and_never_comes_back() -> None:
    from agent_memory.ranking import Candidate, carry_versions

    def cand(mid: str, sim: float, active: bool, topic: str | None, relevance: float | None = None) -> Candidate:
        rec = hit(sim, mid=mid).record.model_copy(update={"is_active": active, "topic_id": topic})
        return Candidate(rec, sim, 0.0, relevance)

    old = cand("acme", 0.6, False, "job", 0.9)  # "I work at Acme": the question's words
    new = cand("globex", 0.1, True, "job", 0.2)  # "I left, I'm at Globex now": the answer
    other = cand("cat", 0.3, True, None, 0.5)
    stale = cand("stale", 0.9, False, "gone", 1.0)  # superseded, its successor not among them
    out = carry_versions([old, new, other, stale])
    assert [c.record.id for c in out] == ["globex", "cat"]  # inactive rows never come back
    assert out[0].relevance == 0.9 and out[0].similarity == 0.6 and out[0].via == "acme"
    parts = rank(out, NOW, RankingParams(min_score=0.2), top_k=5)
    assert parts[0].parts.via_version == "acme" and parts[1].hit.via is None
