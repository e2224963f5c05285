"""Filters at recall and in the timeline, on every backend (Milvus: the JSON field; HelixDB: the
post-filter with widening), and metadata bounds. Every backend must return the same sets."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agent_memory import InvalidInputError, Memory
from tests.conftest import new_user

TEXTS = {"apollo_hi": "Ana leads the Apollo launch review", "apollo_lo": "The Apollo docs need a spelling pass",
         "gemini": "Gemini's budget is due in February", "quoted": "A vendor sent us a strange quote",
         "bare": "We had pizza at the offsite"}
NOTES = [  # (name, metadata, session, memory_type, topic, days ago)
    ("apollo_hi", {"project": "apollo", "priority": 3, "due": "2026-03-01", "team": {"lead": "ana"}, "ok": True},
     "s1", "task", None, 1),
    ("apollo_lo", {"project": "apollo", "priority": 1, "due": "2026-05-20T10:00:00+02:00", "ok": False},
     "s2", "fact", None, 20),
    ("gemini", {"project": "gemini", "priority": 2.5, "due": "2026-02-10", "team": {"lead": "bo"}},
     "s1", "plan", "budget", 40),
    ("quoted", {"project": 'x" or user_id != "', "priority": "3"}, "s3", "fact", None, 2),
    ("bare", {}, "s2", "event", None, 5),
]


@pytest.fixture
def noted(memory: Memory) -> tuple[str, dict[str, str]]:
    u = new_user()
    ids = {}
    now = datetime.now(UTC)
    for name, meta, session, mtype, topic, days in NOTES:
        [ids[name]] = memory.remember(user_id=u, content=TEXTS[name], metadata=meta,
                                      session_id=session, memory_type=mtype, topic_id=topic,
                                      created_at=now - timedelta(days=days))
    memory.remember(user_id=new_user(), content=TEXTS["apollo_hi"],
                    metadata={"project": "apollo", "priority": 3})  # another user's twin: never returned
    return u, ids


CASES: list[tuple[dict[str, Any], set[str]]] = [
    ({"metadata": {"project": "apollo"}}, {"apollo_hi", "apollo_lo"}),
    ({"metadata": {"project": {"in": ["gemini", "apollo"]}}}, {"apollo_hi", "apollo_lo", "gemini"}),
    ({"metadata": {"priority": {"gte": 2}}}, {"apollo_hi", "gemini"}),  # the string "3" is not a number
    ({"metadata": {"priority": {"gt": 1, "lt": 3}}}, {"gemini"}),
    ({"metadata": {"priority": 3}}, {"apollo_hi"}),
    ({"metadata": {"priority": "3"}}, {"quoted"}),
    ({"metadata": {"ok": True}}, {"apollo_hi"}),
    ({"metadata": {"team.lead": "bo"}}, {"gemini"}),
    ({"metadata": {"due": {"gte": "2026-02-15", "lt": "2026-05-20T09:00:00+00:00"}}}, {"apollo_hi", "apollo_lo"}),
    ({"metadata": {"due": {"lt": "2026-05-20T08:00:00Z"}}}, {"apollo_hi", "gemini"}),
    ({"metadata": {"project": 'x" or user_id != "'}}, {"quoted"}),
    ({"metadata": {"missing": 1}}, set()),
    ({"session_id": "s1"}, {"apollo_hi", "gemini"}),
    ({"session_id": ["s2", "s3"], "memory_types": ["fact"]}, {"apollo_lo", "quoted"}),
    ({"topic_id": "budget"}, {"gemini"}),
    ({"created_at": {"gte": (datetime.now(UTC) - timedelta(days=10)).isoformat()}},
     {"apollo_hi", "quoted", "bare"}),
    ({"metadata": {"project": "apollo", "priority": {"lte": 1}}, "session_id": "s2"}, {"apollo_lo"}),
]


@pytest.mark.parametrize(("filters", "expected"), CASES, ids=[str(i) for i in range(len(CASES))])
def test_recall_and_timeline_filters(memory: Memory, noted: tuple[str, dict[str, str]], filters: dict[str, Any],
                                     expected: set[str]) -> None:
    u, ids = noted
    want = {ids[n] for n in expected}
    hits = memory.recall(user_id=u, query="project roadmap review", filters=filters, min_score=-1, top_k=50,
                         gate=False, log=False)
    assert {h.memory_id for h in hits} == want
    assert {r.id for r in memory.timeline(u, filters=filters)} == want


def test_the_filter_is_recorded_and_metadata_comes_back(memory: Memory, noted: tuple[str, dict[str, str]]) -> None:
    u, _ = noted
    [hit] = memory.recall(user_id=u, query="roadmap", filters={"metadata": {"team.lead": "ana"}}, min_score=-1,
                          gate=False)
    assert hit.metadata["team"] == {"lead": "ana"} and hit.metadata["due"] == "2026-03-01"
    assert 'metadata["team"]["lead"] == "ana"' in memory.recalls(u)[0]["filter"]
    [row] = memory.timeline(u, filters={"metadata": {"team.lead": "ana"}})
    assert row.metadata == NOTES[0][1]  # the index keeps its date shadow to itself


@pytest.mark.parametrize("filters", [
    {"metadata": {'a"]': 1}}, {"metadata": {"a b": 1}}, {"metadata": {"": 1}}, {"metadata": {"-x": 1}},
    {"metadata": {"a.b.c.d.e.f": 1}}, {"metadata": {"项目": 1}}, {"metadata": {"p": "line\nbreak"}},
    {"metadata": {"p": {"gte": "soon"}}}, {"metadata": {"p": {"gte": 1, "lt": "2026-01-01"}}},
    {"metadata": {"p": {}}}, {"metadata": {"p": {"ne": 1}}}, {"metadata": {"p": {"in": []}}},
    {"metadata": {"p": [1, 2]}}, {"metadata": {"p": None}}, {"metadata": {"p": float("nan")}},
    {"session_id": 's1" or session_id != "'}, {"memory_types": ["fact\" or 1==1"]}, {"topic_id": []},
    {"created_at": {"gte": "2026-01-01T00:00:00"}}, {"user_id": "someone-else"}, {"metadata": "project"},
])
def test_hostile_filters_are_refused_never_widened(memory: Memory, noted: tuple[str, dict[str, str]],
                                                   filters: dict[str, Any]) -> None:
    u, _ = noted
    with pytest.raises(InvalidInputError):
        memory.recall(user_id=u, query="roadmap", filters=filters, min_score=-1, gate=False)
    with pytest.raises(InvalidInputError):
        memory.timeline(u, filters=filters)


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": 1}
    for _ in range(levels - 1):
        value = {"k": value}
    return value


@pytest.mark.parametrize(("metadata", "limit"), [
    (_nested(300), "max depth 5"), (_nested(6), "max depth 5"),
    ({f"k{i}": i for i in range(65)}, "max keys 64"), ({"bad key": 1}, "key pattern"),
    ({"a": {"b.c": 1}}, "key pattern"), ({"n": 2**60}, "2^53"), ({"s": "x" * 2001}, "limit is 2000"),
    ({"l": list(range(101))}, "limit is 100"), ({"d": datetime.now(UTC)}, "value types"),
    ({"s": "\ud800"}, "Unicode"), ({"blob": "x" * 1900, **{f"k{i}": "y" * 1900 for i in range(4)}}, "8192 bytes"),
])
def test_metadata_bounds_are_422_naming_the_limit_and_nothing_is_written(memory: Memory, metadata: dict[str, Any],
                                                                         limit: str) -> None:
    u = new_user()
    with pytest.raises(InvalidInputError, match=limit.replace("^", r"\^")):
        memory.remember(user_id=u, content="note with metadata", metadata=metadata)
    assert memory.timeline(u, include_inactive=True, include_deleted=True) == []
    assert list(memory.store.list_keys(f"memories/{u}/")) == []


def test_metadata_within_bounds_is_kept_whole(memory: Memory) -> None:
    u = new_user()
    meta = {"a": {"b": {"c": {"d": [1, "x", None, True]}}}, "f": 1.5, "n": None, "emoji": "😀 \u2028"}
    [mid] = memory.remember(user_id=u, content="deep but allowed", metadata=meta)
    assert memory.get(mid, user_id=u)["original"]["metadata"] == meta
    assert [r.id for r in memory.timeline(u, filters={"metadata": {"emoji": "😀 \u2028"}})] == [mid]
