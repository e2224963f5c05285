"""Overruling the change detector (``Memory.correct``) on every backend. The links are made by the
rules (an exact repeat is a duplicate) and by ``correct`` itself, so these tests do not depend on
what the change model happens to call a change; ``tests/e2e/test_client.py`` undoes a link the
real model made, through the HTTP API."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory import ConflictError, InvalidInputError, Memory, NotFoundError
from tests.conftest import new_user


def _state(memory: Memory, u: str, mid: str) -> tuple[bool, str | None]:
    rec = memory.get(mid, user_id=u)["record"]
    return rec["is_active"], rec["topic_id"]


def test_a_duplicate_undone_is_active_and_recalled(memory: Memory) -> None:
    u = new_user()
    [first] = memory.remember(user_id=u, content="My locker code at the gym is 4321")
    [again] = memory.remember(user_id=u, content="My locker code at the gym is 4321")
    assert memory.get(again, user_id=u)["original"]["state"]["duplicate_of"] == first
    assert memory.get(first, user_id=u)["original"]["state"]["confirmations"] == 1

    rec = memory.correct(again, u, decision="unrelated")
    assert rec.is_active and rec.id == again
    shown = memory.get(again, user_id=u)["original"]
    assert shown["state"]["duplicate_of"] is None
    change = shown["provenance"]["change"]
    assert change["decision"] == "unrelated" and change["decided_by"] == "caller"
    assert change["was"]["decision"] == "duplicate" and change["was"]["memory_id"] == first
    assert memory.get(first, user_id=u)["original"]["state"]["confirmations"] == 0
    hits = memory.recall(user_id=u, query="what is my gym locker code?", min_score=-1, gate=False)
    assert {first, again} <= {h.memory_id for h in hits}


def test_linking_and_unlinking_versions_by_hand(memory: Memory) -> None:
    u = new_user()
    now = datetime.now(UTC)
    [a] = memory.remember(user_id=u, content="I live in Lisbon, near the river", created_at=now - timedelta(days=20))
    [b] = memory.remember(user_id=u, content="I play the cello on weekends", created_at=now - timedelta(days=10))
    [c] = memory.remember(user_id=u, content="My favourite tea is genmaicha")
    assert [_state(memory, u, m) for m in (a, b, c)] == [(True, None)] * 3

    memory.correct(b, u, decision="new_version", of=a)
    topic = _state(memory, u, a)[1]
    assert topic and _state(memory, u, a) == (False, topic) and _state(memory, u, b) == (True, topic)
    memory.correct(c, u, decision="new_version", of=b)
    assert [(v.id, v.is_active) for v in memory.versions(topic, user_id=u)] == [(a, False), (b, False), (c, True)]

    # the middle one was never a version: it leaves, stands alone, and the chain closes over it
    rec = memory.correct(b, u, decision="unrelated")
    assert rec.is_active and rec.topic_id is None
    assert [(v.id, v.is_active) for v in memory.versions(topic, user_id=u)] == [(a, False), (c, True)]
    assert memory.get(a, user_id=u)["original"]["state"]["superseded_by"] == c
    # the newest one was not either: the oldest is current again
    memory.correct(c, u, decision="unrelated")
    assert [(v.id, v.is_active) for v in memory.versions(topic, user_id=u)] == [(a, True)]
    hits = memory.recall(user_id=u, query="where do I live?", min_score=-1, gate=False)
    assert a in [h.memory_id for h in hits]
    assert all(memory.get(m, user_id=u)["record"]["is_active"] for m in (a, b, c))


def test_an_older_memory_named_as_the_new_version_stays_behind_the_newer(memory: Memory) -> None:
    """The topic rule holds for the caller too: the latest ``created_at`` is current."""
    u = new_user()
    [old] = memory.remember(user_id=u, content="I drive a blue Corolla",
                            created_at=datetime.now(UTC) - timedelta(days=5))
    [new] = memory.remember(user_id=u, content="My sister teaches maths in Leeds")
    memory.correct(old, u, decision="new_version", of=new)
    assert _state(memory, u, new)[0] and not _state(memory, u, old)[0]
    assert memory.get(old, user_id=u)["original"]["state"]["superseded_by"] == new


def test_a_memory_moved_out_of_the_callers_topic_leaves_that_topic_a_current_value(memory: Memory) -> None:
    u = new_user()
    [lisbon] = memory.remember(user_id=u, content="I live in Lisbon", topic_id="city",
                               created_at=datetime.now(UTC) - timedelta(days=9))
    [job] = memory.remember(user_id=u, content="I work at a bakery", created_at=datetime.now(UTC) - timedelta(days=3))
    [moved] = memory.remember(user_id=u, content="I now bake at Padaria Sol", topic_id="city")
    assert not _state(memory, u, lisbon)[0]
    memory.correct(moved, u, decision="new_version", of=job)  # the caller filed it under the wrong topic
    assert _state(memory, u, lisbon) == (True, "city") and not _state(memory, u, job)[0]
    assert [v.id for v in memory.versions("city", user_id=u)] == [lisbon]


def test_corrections_that_cannot_apply_are_refused_and_change_nothing(memory: Memory) -> None:
    u, other = new_user(), new_user()
    [a] = memory.remember(user_id=u, content="I am allergic to penicillin")
    [b] = memory.remember(user_id=u, content="I have two cats, Miso and Tofu")
    [given] = memory.remember(user_id=u, content="I work at Acme", topic_id="employer")
    [theirs] = memory.remember(user_id=other, content="I collect vinyl records")
    with pytest.raises(ConflictError, match="not linked"):
        memory.correct(a, u, decision="unrelated")  # nothing linked it
    with pytest.raises(ConflictError, match="not linked"):
        memory.correct(given, u, decision="unrelated")  # its topic is the caller's
    with pytest.raises(InvalidInputError, match="needs `of`"):
        memory.correct(a, u, decision="new_version")
    with pytest.raises(InvalidInputError):
        memory.correct(a, u, decision="duplicate")
    with pytest.raises(InvalidInputError, match="itself"):
        memory.correct(a, u, decision="new_version", of=a)
    with pytest.raises(InvalidInputError):
        memory.correct(a, u, decision="new_version", of="../x")
    with pytest.raises(NotFoundError):
        memory.correct(a, u, decision="new_version", of=theirs)  # another user's memory
    with pytest.raises(NotFoundError):
        memory.correct(theirs, u, decision="unrelated")
    memory.correct(b, u, decision="new_version", of=a)
    with pytest.raises(ConflictError, match=f"superseded by {b}"):
        memory.correct(a, u, decision="unrelated")  # the older side: correct the newer one
    memory.forget(b, user_id=u)
    with pytest.raises(ConflictError, match="restore it first"):
        memory.correct(b, u, decision="unrelated")
    [scoped] = memory.remember(user_id=u, content="The deploy key is in the vault", agent_id="ops")
    with pytest.raises(ConflictError, match="another agent"):
        memory.correct(scoped, u, decision="new_version", of=given, agent_id="ops")
    assert memory.get(theirs, user_id=other)["record"]["is_active"]
    assert memory.get(given, user_id=u)["record"]["is_active"] and _state(memory, u, scoped) == (True, None)


def test_corrections_come_back_as_labelled_pairs_older_first(memory: Memory) -> None:
    """What `agent-memory corrections` exports for `train judge --extra-pairs`: one pair per
    corrected memory, the latest verdict, (older, newer) as said, none for an untouched memory."""
    u, other = new_user(), new_user()
    now = datetime.now(UTC)
    code = "My locker code at the gym is 4321"
    memory.remember(user_id=u, content=code, created_at=now - timedelta(days=3))
    [dup_b] = memory.remember(user_id=u, content=code, created_at=now - timedelta(days=2))
    [city] = memory.remember(user_id=u, content="I live in Lisbon", created_at=now - timedelta(days=9))
    [move] = memory.remember(user_id=u, content="I play the cello on weekends", created_at=now)
    memory.remember(user_id=other, content="I drive a blue Civic")
    assert memory.corrections(u) == []

    memory.correct(dup_b, u, decision="unrelated")
    memory.correct(move, u, decision="new_version", of=city)
    rows = {r["label"]: r for r in memory.corrections(u)}
    assert set(rows) == {"unrelated", "new_version"}
    assert (rows["unrelated"]["existing"], rows["unrelated"]["was"]) == (code, "duplicate")
    assert (rows["new_version"]["existing"], rows["new_version"]["new"]) == (
        "I live in Lisbon", "I play the cello on weekends")
    assert rows["new_version"]["was"] == "unrelated" and rows["new_version"]["lang"] == "en"
    assert memory.corrections(other) == []

    memory.correct(move, u, decision="unrelated")  # corrected again: the latest verdict counts
    assert sorted(r["label"] for r in memory.corrections(u)) == ["unrelated", "unrelated"]
    assert {r["id"] for r in memory.corrections()} >= {f"correction-{dup_b}", f"correction-{move}"}
