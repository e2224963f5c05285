"""Export, erase, import on every backend: the user comes back as exported (versions, deletions,
scopes, metadata, created_at), recall answers as before, and a second import changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agent_memory import Memory
from tests.conftest import new_user


def test_export_erase_import_restores_the_user(memory: Memory) -> None:
    u = new_user()
    past = datetime.now(UTC) - timedelta(days=30)
    [old] = memory.remember(u, "I live in Berlin", topic_id="home", created_at=past, metadata={"src": "chat"})
    [new] = memory.remember(u, "I moved to Munich", topic_id="home")
    [gone] = memory.remember(u, "My gym code is 2580")
    memory.forget(gone)
    [coder] = memory.remember(u, "The repo uses tabs", agent_id="coder", run_id="r1")
    exported = list(memory.export(u))
    assert {r["memory_id"] for r in exported} == {old, new, gone, coder}
    assert list(memory.export(u, page_size=1)) == exported  # one page per memory, each after the last
    memory.erase_user(u)
    assert memory.timeline(u, include_inactive=True, include_deleted=True) == []

    assert memory.import_records(u, exported)["created"] == 4
    again = {r["memory_id"]: r for r in memory.export(u)}
    for r in exported:
        assert {k: v for k, v in again[r["memory_id"]].items() if k != "embedding"} == {
            k: v for k, v in r.items() if k != "embedding"}
    assert [h.memory_id for h in memory.recall(u, "where do I live?", gate=False)][:1] == [new]
    assert gone not in {h.memory_id for h in memory.recall(u, "gym code", gate=False)}
    tabs = "does the repo use tabs?"
    assert [h.memory_id for h in memory.recall(u, tabs, agent_id="coder", gate=False)][:1] == [coder]
    assert coder not in {h.memory_id for h in memory.recall(u, tabs, agent_id="planner", gate=False)}
    assert [r.id for r in memory.versions("home", user_id=u)] == [old, new]
    assert memory.import_records(u, exported) == {"records": 4, "created": 0, "updated": 0, "unchanged": 4,
                                                  "indexed": 0}
