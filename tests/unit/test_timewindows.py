"""Dates named in a query become time windows that recall favours (never a filter)."""

from datetime import UTC, date, datetime, timedelta

import pytest

from agent_memory.index.base import SearchHit
from agent_memory.model import IndexRecord
from agent_memory.ranking import RankingParams, fuse, rank
from agent_memory.timewindows import time_windows

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)  # a Monday


def spans(query: str) -> list[tuple[date, date]]:
    return [(w.start.date(), w.end.date()) for w in time_windows(query, NOW)]


@pytest.mark.parametrize(("query", "expected"), [
    ("What did Tim say about his injury on 16 November, 2023?", [(date(2023, 11, 16), date(2023, 11, 17))]),
    ("What painting did she show on October 13, 2023?", [(date(2023, 10, 13), date(2023, 10, 14))]),
    ("the 3rd of Sept 2024 meeting", [(date(2024, 9, 3), date(2024, 9, 4))]),
    ("notes from 2024-02-29", [(date(2024, 2, 29), date(2024, 3, 1))]),
    ("2023年5月7日我去了哪里", [(date(2023, 5, 7), date(2023, 5, 8))]),
    ("workout class in December 2023", [(date(2023, 12, 1), date(2024, 1, 1))]),
    ("2023年12月的计划", [(date(2023, 12, 1), date(2024, 1, 1))]),
    ("trips in 2023", [(date(2023, 1, 1), date(2024, 1, 1))]),
    ("2022年去过哪里", [(date(2022, 1, 1), date(2023, 1, 1))]),
    ("camping in June", [(date(2026, 6, 1), date(2026, 7, 1))]),
    ("what happened in December", [(date(2025, 12, 1), date(2026, 1, 1))]),  # not begun yet this year
    ("6月份的计划", [(date(2026, 6, 1), date(2026, 7, 1))]),
    ("what did I say yesterday", [(date(2026, 11, 29), date(2026, 11, 30))]),
    ("what did I say last week", [(date(2026, 11, 23), date(2026, 11, 30))]),
    ("我上个月说过什么", [(date(2026, 10, 1), date(2026, 11, 1))]),
    ("去年的目标", [(date(2025, 1, 1), date(2026, 1, 1))]),
    ("this year so far", [(date(2026, 1, 1), date(2027, 1, 1))]),
])
def test_named_dates_become_windows(query: str, expected: list[tuple[date, date]]) -> None:
    assert spans(query) == expected


@pytest.mark.parametrize("query", [
    "May I ask what I like to drink?", "点餐时要注意什么", "I have 2000 photos", "on 31 February, 2023",
    "room 2023", "",
])
def test_queries_without_dates_have_no_window(query: str) -> None:
    assert spans(query) == []


def test_january_last_month_crosses_the_year() -> None:
    windows = time_windows("last month", datetime(2027, 1, 10, tzinfo=UTC))
    assert [(w.start.date(), w.end.date(), w.said) for w in windows] == [(date(2026, 12, 1), date(2027, 1, 1),
                                                                           "last month")]


def rec(mid: str, created: datetime) -> IndexRecord:
    return IndexRecord(id=mid, user_id="u", session_id=mid, memory_type="fact", summary=mid, importance=0.5,
                       created_at=created, topic_id=None, is_active=True, deleted_at=None,
                       source="user_said", storage_key=f"k/{mid}")


def test_a_window_boosts_memories_inside_it_and_a_little_after() -> None:
    on_the_day = rec("day", datetime(2023, 11, 16, 9, tzinfo=UTC))
    days_after = rec("after", datetime(2023, 11, 20, tzinfo=UTC))
    far = rec("far", datetime(2023, 3, 1, tzinfo=UTC))
    noise = rec("noise", datetime(2023, 6, 1, tzinfo=UTC))
    corpus = [on_the_day, days_after, far, noise]
    dense = [SearchHit(far, 0.60), SearchHit(on_the_day, 0.55), SearchHit(days_after, 0.50), SearchHit(noise, 0.1)]
    windows = time_windows("what did I say about my injury on 16 November 2023?", NOW)
    plain = RankingParams(min_score=0.0, dense_weight=1.0, neighbour_weight=0.0)
    timed = RankingParams(min_score=0.0, dense_weight=1.0, neighbour_weight=0.0, windows=tuple(windows))
    order = [r.hit.record.id for r in rank(fuse(dense, corpus, [0.0] * 4, plain, 10), NOW, plain, 4)]
    assert order[0] == "far"
    ranked = rank(fuse(dense, corpus, [0.0] * 4, timed, 10), NOW, timed, 4)
    assert [r.hit.record.id for r in ranked][:2] == ["day", "after"]
    assert {r.hit.record.id: r.parts.time_weight for r in ranked} == {"day": 2.0, "after": 2.0, "far": 1.0,
                                                                  "noise": 1.0}
    assert timed.time_weight(days_after.created_at + timedelta(days=10)) == 1.0  # beyond the slack
