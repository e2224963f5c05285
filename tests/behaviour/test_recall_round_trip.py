"""Recall in one round trip: a memory whose index row holds its whole content is answered from
the row (no read of the original), a longer one from its original; and every recall is logged,
with the log written off the recall's path."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from agent_memory import Memory
from tests.conftest import new_user

LONG = "I keep my climbing gear in the blue locker at the gym on Baker Street. " * 14  # ~1 KB


def test_recall_answers_from_the_index_row_without_reading_the_original(memory: Memory) -> None:
    u = new_user()
    [mid] = memory.remember(user_id=u, content=LONG, metadata={"place": "gym"})
    # Remove the original behind the service's back: only a recall that reads it can notice.
    memory.store.delete_all_versions(memory.storage_key(u, mid))
    [hit] = memory.recall(user_id=u, query="where is my climbing gear")
    assert hit.memory_id == mid and hit.content in (LONG, LONG.strip())
    assert len(hit.summary) < len(hit.content) and hit.metadata == {"place": "gym"}
    # Asked to read the originals, recall checks each against the store: a gone one is never shown.
    assert memory.recall(user_id=u, query="where is my climbing gear", fetch_originals=True) == []


def test_a_memory_longer_than_the_row_holds_is_read_from_its_original(memory: Memory) -> None:
    u = new_user()
    settings = memory.settings
    memory.settings = settings.model_copy(update={"index_content_bytes": 200})
    try:
        [long_id] = memory.remember(user_id=u, content=LONG)
        [short_id] = memory.remember(user_id=u, content="My climbing shoes are size 42.")
    finally:
        memory.settings = settings
    hits = {h.memory_id: h for h in memory.recall(user_id=u, query="climbing gear and shoes", top_k=5)}
    assert hits[long_id].content in (LONG, LONG.strip()) and hits[short_id].content == "My climbing shoes are size 42."
    memory.store.delete_all_versions(memory.storage_key(u, long_id))
    ids = [h.memory_id for h in memory.recall(user_id=u, query="climbing gear and shoes", top_k=5)]
    assert long_id not in ids and short_id in ids  # its original is gone: never shown


def test_an_erased_scope_leaves_no_row_to_answer_from(memory: Memory) -> None:
    u = new_user()
    [mine] = memory.remember(user_id=u, content="The planner agent books trains, never flights.", agent_id="planner")
    [shared] = memory.remember(user_id=u, content="I prefer trains to flights.")
    memory.erase_user(u, agent_id="planner")
    ids = {h.memory_id for h in memory.recall(user_id=u, query="trains or flights", min_score=-1, top_k=20)}
    assert mine not in ids and shared in ids


def test_every_recall_is_logged(memory: Memory) -> None:
    u = new_user()
    memory.remember(user_id=u, content="I am allergic to peanuts.")
    queries = [f"what am I allergic to ({i})" for i in range(40)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda q: memory.recall(user_id=u, query=q), queries))
    logged = {e["recall_id"]: e for e in memory.recalls(u, limit=500)}
    assert {r.recall_id for r in results} <= set(logged)
    assert all(logged[r.recall_id]["chosen"] == [h.memory_id for h in r] for r in results)
    assert len(logged) == len(results)  # one entry each, none twice
