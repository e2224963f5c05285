"""The LangGraph store and the mem0 facade on every backend: they read the index's scope and
metadata fields and write through the import path, which each backend must serve alike."""

from __future__ import annotations

from agent_memory import Memory
from agent_memory.integrations.langgraph import AgentMemoryStore
from agent_memory.integrations.mem0 import Memory as Mem0Facade
from tests.conftest import new_user


def test_langgraph_store(memory: Memory) -> None:
    store = AgentMemoryStore(memory)
    u = new_user()
    ns, agent_ns = ("memories", u), ("memories", u, "coach")
    store.put(ns, "diet", {"content": "The user is vegetarian"})
    store.put(ns, "diet", {"content": "The user is vegan", "since": 2024})
    store.put(agent_ns, "goal", {"content": "The user trains for a marathon"})
    item = store.get(ns, "diet")
    assert item is not None and item.value == {"content": "The user is vegan", "since": 2024}
    assert [i.key for i in store.search(ns, query="what does the user eat?", limit=1)] == ["diet"]
    assert [i.key for i in store.search(agent_ns)] == ["goal"]
    assert store.list_namespaces(prefix=ns) == [ns, agent_ns]
    store.delete(ns, "diet")
    assert store.get(ns, "diet") is None and {i.key for i in store.search(ns)} == {"goal"}


def test_mem0_facade(memory: Memory) -> None:
    m, u = Mem0Facade(memory), new_user()
    [first] = m.add("I am allergic to peanuts", user_id=u, metadata={"kind": "health"}, infer=False)["results"]
    m.add("I like sailing", user_id=u, agent_id="travel", infer=False)
    m.update(first["id"], text="I am allergic to peanuts and shellfish")
    got = m.get(first["id"])
    assert got is not None and got["memory"] == "I am allergic to peanuts and shellfish"
    assert [h["event"] for h in m.history(first["id"])] == ["ADD", "UPDATE"]
    found = m.search("what am I allergic to?", filters={"user_id": u, "kind": "health"})["results"]
    assert [r["id"] for r in found] == [first["id"]]
    listed = m.get_all(filters={"user_id": u, "agent_id": "travel"})["results"]
    assert [(r["memory"], r["agent_id"]) for r in listed] == [("I like sailing", "travel")]
