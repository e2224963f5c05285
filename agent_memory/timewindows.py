"""Dates named in a recall query, as time windows that recall favours.

Why: "what did Tim say about his injury on 16 November 2023?" or "我上个月说过什么" name *when*,
and neither BM25 nor an embedding knows that a memory written on that day is the one meant. Recall
multiplies the relevance of memories created inside a window by ``1 + time_boost`` (a boost, not a
filter: people talk about an event days after it, and a wrong guess must not hide the answer).

Understood, in English and Chinese: full dates ("16 November, 2023", "November 16, 2023",
"2023-11-16", "2023年11月16日"), a month of a year ("December 2023", "2023年12月"), a year ("in
2023", "2023年"), a month alone ("in June", "6月": its most recent occurrence up to now), and
relative spans resolved against ``now`` (yesterday, today, last/this week, month, year; 昨天, 今天,
上周, 本周, 上个月, 这个月, 去年, 今年). Everything else yields no window, so recall is unchanged.
Only regular expressions over the query: no date library, nothing to load at cold start.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
           "october", "november", "december")
_MONTH_NUMBER = {name: i + 1 for i, name in enumerate(_MONTHS)} | {
    name[:3]: i + 1 for i, name in enumerate(_MONTHS)} | {"sept": 9}
_MON = r"(" + "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"

# Order matters: each pattern removes what it matched before the next, wider one runs.
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MON},?\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MON}\s+{_DAY},?\s+{_YEAR}\b", re.IGNORECASE)
_ISO_DATE = re.compile(rf"\b{_YEAR}-(\d{{1,2}})-(\d{{1,2}})\b")
_ZH_DATE = re.compile(rf"{_YEAR}\s*年\s*(\d{{1,2}})\s*月\s*(\d{{1,2}})\s*[日号]")
_ZH_MONTH_YEAR = re.compile(rf"{_YEAR}\s*年\s*(\d{{1,2}})\s*月")
_MONTH_YEAR = re.compile(rf"\b{_MON},?\s+{_YEAR}\b", re.IGNORECASE)
_ZH_YEAR = re.compile(rf"{_YEAR}\s*年")
_YEAR_ALONE = re.compile(rf"\b(?:in|during|of|since|year)\s+{_YEAR}\b", re.IGNORECASE)
_MONTH_ALONE = re.compile(r"\b(?:in|during|of|last)\s+(" + "|".join(_MONTHS) + r")\b", re.IGNORECASE)
_ZH_MONTH_ALONE = re.compile(r"(?<![\d年])(\d{1,2})\s*月(?!\s*\d)")

_Span = tuple[datetime, datetime]

_RELATIVE: dict[str, tuple[str, int]] = {
    # phrase -> (unit, how many units back)
    "yesterday": ("day", 1), "today": ("day", 0), "昨天": ("day", 1), "今天": ("day", 0),
    "last week": ("week", 1), "this week": ("week", 0), "上周": ("week", 1), "上个星期": ("week", 1),
    "本周": ("week", 0), "这周": ("week", 0), "这个星期": ("week", 0),
    "last month": ("month", 1), "this month": ("month", 0), "上个月": ("month", 1), "上月": ("month", 1),
    "这个月": ("month", 0), "本月": ("month", 0),
    "last year": ("year", 1), "this year": ("year", 0), "去年": ("year", 1), "今年": ("year", 0),
}
_RELATIVE_PATTERN = re.compile(
    "|".join(rf"\b{re.escape(p)}\b" if p.isascii() else re.escape(p) for p in _RELATIVE), re.IGNORECASE)


@dataclass(frozen=True)
class TimeWindow:
    """[start, end) in UTC, and the words of the query it came from (for the recall log)."""

    start: datetime
    end: datetime
    said: str

    def contains(self, moment: datetime, slack: timedelta) -> bool:
        """Inside the window, or up to ``slack`` after it (an event is talked about afterwards)."""
        return self.start <= moment < self.end + slack


def _day(year: int, month: int, day: int) -> _Span | None:
    try:
        start = datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return None
    return start, start + timedelta(days=1)


def _month(year: int, month: int) -> _Span | None:
    if not 1 <= month <= 12:
        return None
    start = datetime(year, month, 1, tzinfo=UTC)
    return start, datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)


def _year(year: int) -> _Span:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def _latest_month(month: int, now: datetime) -> _Span | None:
    """The most recent ``month`` that has begun by ``now``."""
    return _month(now.year if month <= now.month else now.year - 1, month)


def _relative(unit: str, back: int, now: datetime) -> _Span:
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "day":
        start = today - timedelta(days=back)
        return start, start + timedelta(days=1)
    if unit == "week":
        start = today - timedelta(days=today.weekday() + 7 * back)
        return start, start + timedelta(days=7)
    if unit == "month":
        index = today.year * 12 + today.month - 1 - back
        window = _month(index // 12, index % 12 + 1)
        assert window is not None
        return window
    return _year(today.year - back)


def time_windows(query: str, now: datetime) -> list[TimeWindow]:
    """Every window the query names (empty for most queries)."""
    found: list[TimeWindow] = []
    text = query

    def take(pattern: re.Pattern[str], to_window: Callable[[re.Match[str]], _Span | None]) -> None:
        nonlocal text
        for m in pattern.finditer(text):
            window = to_window(m)
            if window is not None:
                found.append(TimeWindow(window[0], window[1], m.group(0).strip()))
        text = pattern.sub(" ", text)

    take(_DAY_MONTH_YEAR, lambda m: _day(int(m[3]), _MONTH_NUMBER[m[2].lower()], int(m[1])))
    take(_MONTH_DAY_YEAR, lambda m: _day(int(m[3]), _MONTH_NUMBER[m[1].lower()], int(m[2])))
    take(_ISO_DATE, lambda m: _day(int(m[1]), int(m[2]), int(m[3])))
    take(_ZH_DATE, lambda m: _day(int(m[1]), int(m[2]), int(m[3])))
    take(_ZH_MONTH_YEAR, lambda m: _month(int(m[1]), int(m[2])))
    take(_MONTH_YEAR, lambda m: _month(int(m[2]), _MONTH_NUMBER[m[1].lower()]))
    take(_ZH_YEAR, lambda m: _year(int(m[1])))
    take(_YEAR_ALONE, lambda m: _year(int(m[1])))
    take(_RELATIVE_PATTERN, lambda m: _relative(*_RELATIVE[m[0].lower()], now))
    take(_MONTH_ALONE, lambda m: _latest_month(_MONTH_NUMBER[m[1].lower()], now))
    take(_ZH_MONTH_ALONE, lambda m: _latest_month(int(m[1]), now))
    return found
