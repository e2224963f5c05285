"""The recall-time order of a later value and the value it may replace (fake change model)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from agent_memory.model import IndexRecord, ScoreParts
from agent_memory.newer_first import REASON, PairProbability, order
from agent_memory.ranking import Candidate, Ranked

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _ranked(summary: str, score: float, days: float, chosen: bool = True) -> Ranked:
    rec = IndexRecord(id=summary, user_id="u", session_id="s", memory_type="fact", summary=summary, importance=0.5,
                      created_at=T0 + timedelta(days=days), topic_id=None, is_active=True, deleted_at=None,
                      source="api", storage_key="k")
    parts = ScoreParts(score=score, similarity=score, relevance=score, decay=1.0, importance_weight=1.0,
                       type_weight=1.0)
    return Ranked(Candidate(rec, score), parts, chosen, "chosen" if chosen else "below_min_score")


def _model(changes: dict[tuple[str, str], float]) -> tuple[PairProbability, list[tuple[str, str]]]:
    asked: list[tuple[str, str]] = []

    def p(pairs: Sequence[tuple[str, str]]) -> list[float]:
        asked.extend(pairs)
        return [changes.get(pair, 0.0) for pair in pairs]
    return p, asked


def _ids(ranked: list[Ranked]) -> list[str]:
    return [r.hit.record.id for r in ranked]


def test_a_later_value_the_model_may_call_a_change_goes_first() -> None:
    p, _ = _model({("lives in Lisbon", "moved to Berlin"): 0.3})
    out, moves = order([_ranked("lives in Lisbon", 0.9, 0), _ranked("moved to Berlin", 0.8, 30),
                        _ranked("vegan", 0.5, 0)], p)
    assert _ids(out) == ["moved to Berlin", "lives in Lisbon", "vegan"]
    assert [r.reason for r in out] == [REASON, "chosen", "chosen"]
    assert moves == [{"memory_id": "moved to Berlin", "ahead_of": "lives in Lisbon", "p_new_version": 0.3}]


def test_under_the_model_bar_the_order_stays() -> None:
    p, asked = _model({("has a dog", "got a cat"): 0.1})
    out, moves = order([_ranked("has a dog", 0.9, 0), _ranked("got a cat", 0.8, 30)], p)
    assert _ids(out) == ["has a dog", "got a cat"] and asked == [("has a dog", "got a cat")] and moves == []


def test_a_weak_match_a_same_day_statement_or_an_older_one_is_not_asked_about() -> None:
    p, asked = _model({})
    order([_ranked("a", 0.9, 0), _ranked("b", 0.5, 30),   # scores 0.56 of the one above
           _ranked("c", 0.45, 30.5),                      # half a day after b
           _ranked("d", 0.44, 0)], p)                     # older than c
    assert asked == []


def test_a_value_changed_twice_ends_up_first_and_unchosen_hits_stay_behind() -> None:
    p, _ = _model({("v1", "v2"): 0.9, ("v2", "v3"): 0.9, ("v1", "v3"): 0.9, ("x", "v3"): 0.0})
    out, _ = order([_ranked("v1", 1.0, 0), _ranked("v2", 0.95, 10), _ranked("v3", 0.9, 20),
                    _ranked("x", 0.1, 40, chosen=False)], p)
    assert _ids(out) == ["v3", "v2", "v1", "x"]
    assert out[-1].reason == "below_min_score"
