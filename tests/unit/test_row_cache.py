"""RowCache's bookkeeping: a load that raced a write is not kept, and the cache holds at most
``max_rows`` rows, dropping the least recently used users first."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np

from agent_memory.index.row_cache import RowCache, UserRows, stack
from agent_memory.model import IndexRecord


def _rows(user: str, n: int) -> UserRows:
    recs = [IndexRecord(id=f"{user}-{i}", user_id=user, session_id="s", memory_type="fact", summary="x",
                        importance=0.5, created_at=datetime(2026, 1, 1, tzinfo=UTC), topic_id=None, is_active=True,
                        deleted_at=None, source="user_said", storage_key="k") for i in range(n)]
    return UserRows(recs, stack(np.ones((n, 4)).tolist(), 4))


class Loads:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def of(self, user: str, n: int = 2, during: Callable[[], None] | None = None) -> Callable[[], UserRows]:
        def load() -> UserRows:
            self.seen.append(user)
            if during:
                during()
            return _rows(user, n)
        return load


def test_a_load_that_raced_a_write_is_answered_but_not_kept() -> None:
    cache, loads = RowCache(100), Loads()
    # a write finishes while the rows are being read
    rows = cache.get("u", loads.of("u", during=lambda: cache.forget(user_ids=["u"])))
    assert rows is not None and len(rows.records) == 2
    cache.get("u", loads.of("u"))
    cache.get("u", loads.of("u"))
    assert loads.seen == ["u", "u"], "read again after the race, then kept"


def test_least_recently_used_users_leave_first_and_memory_ids_find_their_owner() -> None:
    cache, loads = RowCache(5), Loads()
    cache.get("a", loads.of("a"))
    cache.get("b", loads.of("b"))
    cache.get("a", loads.of("a"))  # a is used again: b is now the oldest
    cache.get("c", loads.of("c"))  # 6 rows > 5: b leaves
    loads.seen.clear()
    for u in ("a", "c", "b"):
        cache.get(u, loads.of(u))
    assert loads.seen == ["b"]
    loads.seen.clear()
    cache.forget(memory_ids=["c-1"])
    cache.get("c", loads.of("c"))
    assert loads.seen == ["c"]
    assert cache.get("big", loads.of("big", 9)) is not None  # answered, never held
    cache.get("big", loads.of("big", 9))
    assert loads.seen == ["c", "big", "big"]
