"""Expiry on every backend, with a clock the test moves: an expired memory is never recalled or put
in a prompt, and the expiry job erases it (index row, every S3 version, cold manifest entry)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory import InvalidInputError, Memory, NotFoundError
from agent_memory.expiry import expire_user
from agent_memory.tiering import tier_user
from tests.conftest import new_user


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC).replace(microsecond=0)  # the index keeps milliseconds

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> Clock:
    c = Clock()
    monkeypatch.setattr(memory, "clock", c)
    monkeypatch.setattr(memory, "settings", memory.settings.model_copy(update={"ttl_days_by_type": {"task": 2}}))
    return c


def _versions(memory: Memory, key: str) -> int:
    """Object versions under ``key`` (S3: every version and delete marker; files: the file)."""
    client = getattr(memory.store, "client", None)
    if client is None:
        return len(list(memory.store.list_keys(key)))
    page = client.list_object_versions(Bucket=memory.settings.bucket_name, Prefix=key)
    return len(page.get("Versions", [])) + len(page.get("DeleteMarkers", []))


def test_expired_memories_are_never_recalled_then_erased(memory: Memory, clock: Clock) -> None:
    u = new_user()
    [day] = memory.remember(user_id=u, content="My parking spot today is B12", ttl_days=1)
    [task] = memory.remember(user_id=u, content="Buy a birthday present for Ana", memory_type="task")  # type default
    [fixed] = memory.remember(user_id=u, content="The hotel door code is 4471",
                              expires_at=clock.now + timedelta(hours=60))
    [keeps] = memory.remember(user_id=u, content="I am allergic to peanuts")
    memory.forget(keeps, user_id=u)
    memory.restore(keeps, user_id=u)  # a second version of its original, kept
    rows = {r.id: r for r in memory.timeline(u)}
    assert rows[day].expires_at == clock.now + timedelta(days=1) and rows[keeps].expires_at is None
    assert rows[task].expires_at == clock.now + timedelta(days=2)
    assert memory.get(fixed, user_id=u)["original"]["expires_at"] is not None

    def recalled() -> set[str]:
        hits = memory.recall(user_id=u, query="parking spot, present, door code, allergies", min_score=-1,
                             top_k=20, gate=False)
        return {h.memory_id for h in hits}

    assert recalled() == {day, task, fixed, keeps}
    clock.advance(days=1, seconds=1)
    result = memory.recall(user_id=u, query="where is my parking spot", min_score=-1, top_k=20, gate=False)
    assert day not in {h.memory_id for h in result} and "B12" not in result.context  # never in a prompt
    assert recalled() == {task, fixed, keeps}
    assert {r.id for r in memory.timeline(u)} == {task, fixed, keeps}
    assert day in {r.id for r in memory.timeline(u, include_expired=True)}

    clock.advance(days=2)
    assert recalled() == {keeps}
    key = memory.storage_key(u, day)
    assert _versions(memory, key) >= 1
    assert any("B12" in str(r["candidates"]) for r in memory.recalls(u))
    report = expire_user(memory, u)
    assert (report.expired, report.index_entries) == (3, 3) and report.object_versions >= 3
    assert report.recall_logs_scrubbed >= 1 and not any("B12" in str(r["candidates"]) for r in memory.recalls(u))
    for mid in (day, task, fixed):
        assert _versions(memory, memory.storage_key(u, mid)) == 0
        with pytest.raises(NotFoundError):
            memory.get(mid, user_id=u)
    assert {r.id for r in memory.timeline(u, include_expired=True, include_inactive=True,
                                          include_deleted=True)} == {keeps}
    versioned = getattr(memory.store, "client", None) is not None  # S3 keeps versions, files do not
    assert _versions(memory, memory.storage_key(u, keeps)) >= (2 if versioned else 1)  # untouched
    assert expire_user(memory, u).expired == 0


def test_an_expired_memory_absorbs_nothing(memory: Memory, clock: Clock) -> None:
    u = new_user()
    [old] = memory.remember(user_id=u, content="I live in Lisbon", topic_id="city", ttl_days=1)
    clock.advance(days=2)
    [again] = memory.remember(user_id=u, content="I live in Lisbon")  # not a duplicate of an expired one
    [row] = memory.timeline(u, include_inactive=True)
    assert row.id == again and row.is_active
    assert memory.get(old, user_id=u)["original"]["state"]["confirmations"] == 0
    expire_user(memory, u)
    assert memory.versions("city", user_id=u) == []
    assert [r.id for r in memory.timeline(u, include_inactive=True, include_expired=True)] == [again]


def test_cold_memories_expire_too(memory: Memory, clock: Clock) -> None:
    u = new_user()
    [cold] = memory.remember(user_id=u, content="I once lived in a lighthouse", importance=0.1, ttl_days=5,
                             created_at=clock.now - timedelta(days=400))
    assert tier_user(memory, u).moved_cold == 1
    assert [r.tier for r in memory.timeline(u)] == ["cold"]
    clock.advance(days=6)
    assert memory.timeline(u) == []
    assert expire_user(memory, u).expired == 1
    assert memory.timeline(u, include_expired=True) == [] and _versions(memory, memory.storage_key(u, cold)) == 0


@pytest.mark.parametrize(("fields", "message"), [
    ({"expires_at": datetime.now(UTC) - timedelta(minutes=1)}, "in the past"),
    ({"expires_at": datetime(2030, 1, 1)}, "timezone-aware"),
    ({"ttl_days": 0}, "greater than 0"), ({"ttl_days": -1}, "greater than 0"), ({"ttl_days": 40_000}, "36500"),
    ({"ttl_days": 1, "expires_at": datetime.now(UTC) + timedelta(days=1)}, "at most one"),
])
def test_bad_expiry_is_refused_and_nothing_written(memory: Memory, fields: dict[str, object], message: str) -> None:
    u = new_user()
    with pytest.raises(InvalidInputError, match=message):
        memory.remember(user_id=u, content="x", **fields)  # type: ignore[arg-type]
    assert list(memory.store.list_keys(f"memories/{u}/")) == []
