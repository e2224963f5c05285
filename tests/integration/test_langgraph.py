"""The LangGraph store on the real langgraph package: a compiled graph with ``store=`` writes and
searches long-term memory across threads; put/get/search (query, filter, paging)/delete,
list_namespaces and batch/abatch behave as LangGraph's contract says; namespaces are user and
agent scopes, and one user never reaches another's items."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, ListNamespacesOp, MatchCondition, PutOp, SearchOp

from agent_memory import Memory, MemoryClient, runtime
from agent_memory.integrations.langgraph import AgentMemoryStore
from tests.conftest import new_user
from tests.integration.conftest import LambdaTransport


def example() -> Any:
    """examples/langgraph_store.py, whose graph is the one a user starts from."""
    path = Path(__file__).resolve().parents[2] / "examples" / "langgraph_store.py"
    spec = importlib.util.spec_from_file_location("langgraph_store_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_a_compiled_graph_keeps_long_term_memory_across_threads(memory: Memory) -> None:
    ex = example()
    graph = ex.build(AgentMemoryStore(memory))
    u, other = new_user(), new_user()
    graph.invoke({"message": "remember: I am allergic to peanuts"}, context=ex.Context(u))
    graph.invoke({"message": "remember: I am allergic to penicillin"}, context=ex.Context(other))
    out = graph.invoke({"message": "what am I allergic to?"}, context=ex.Context(u))  # a new thread, no state
    assert out["memories"][0] == "remember: I am allergic to peanuts"
    assert all("penicillin" not in m for m in out["memories"])
    out = asyncio.run(graph.ainvoke({"message": "what am I allergic to?"}, context=ex.Context(other)))
    assert out["memories"] == ["remember: I am allergic to penicillin"]


def test_put_get_update_delete_and_versions(memory: Memory) -> None:
    store = AgentMemoryStore(memory)
    u = new_user()
    ns = ("memories", u)
    assert store.get(ns, "diet") is None
    store.put(ns, "diet", {"content": "The user is vegetarian", "since": 2019})
    first = store.get(ns, "diet")
    assert first is not None and first.value == {"content": "The user is vegetarian", "since": 2019}
    assert first.key == "diet" and first.namespace == ns
    store.put(ns, "diet", {"content": "The user is vegan now", "since": 2024})
    second = store.get(ns, "diet")
    assert second is not None and second.value["content"] == "The user is vegan now"
    assert second.created_at == first.created_at and second.updated_at > first.updated_at
    [hit] = store.search(ns, query="what does the user eat?")
    assert hit.key == "diet" and hit.value["since"] == 2024 and hit.score is not None
    versions = memory.versions(AgentMemoryStore._topic(None, "diet"), user_id=u)
    assert [v.is_active for v in versions] == [False, True]  # the old value is history, not gone
    store.delete(ns, "diet")
    assert store.get(ns, "diet") is None and store.search(ns, query="what does the user eat?") == []
    store.put(ns, "diet", {"content": "The user eats fish again"})
    again = store.get(ns, "diet")
    assert again is not None and again.value == {"content": "The user eats fish again"}


def test_any_json_value_is_kept_whole(memory: Memory) -> None:
    """A value is any JSON (deep, long strings, dotted keys): it is kept in the original, not in the
    bounded, filterable metadata."""
    store = AgentMemoryStore(memory)
    ns = ("memories", new_user())
    value = {"content": "The user's notes: " + "lorem ipsum " * 300, "deep": {"a": {"b": {"c": {"d": [1, 2]}}}},
             "dotted.key": True, "n": 2**60}
    store.put(ns, "notes", value)
    item = store.get(ns, "notes")
    assert item is not None and item.value == value
    with pytest.raises(ValueError, match="larger than 32000"):
        store.put(ns, "huge", {"content": "x" * 40_000})


def test_search_filters_pages_and_agent_namespaces(memory: Memory) -> None:
    store = AgentMemoryStore(memory)
    u = new_user()
    shared, travel, food = ("memories", u), ("memories", u, "travel"), ("memories", u, "food")
    for i, city in enumerate(["Lisbon", "Porto", "Madrid"]):
        store.put(travel, f"trip-{i}", {"content": f"The user visited {city}", "year": 2020 + i, "tags": ["trip"]})
    store.put(food, "fav", {"content": "The user's favourite dish is paella"})
    store.put(shared, "name", {"content": "The user's name is Ana"})
    assert {i.key for i in store.search(travel)} == {"trip-0", "trip-1", "trip-2"}
    assert [i.key for i in store.search(travel, filter={"year": {"$gte": 2021}}, query="cities visited")] in (
        [["trip-1", "trip-2"], ["trip-2", "trip-1"]])
    assert {i.key for i in store.search(travel, filter={"year": 2020})} == {"trip-0"}
    page1, page2 = store.search(travel, limit=2), store.search(travel, limit=2, offset=2)
    assert len(page1) == 2 and len(page2) == 1 and not {i.key for i in page1} & {i.key for i in page2}
    everything = store.search(shared)  # a prefix: the user's shared items and every agent's
    assert {i.key for i in everything} == {"trip-0", "trip-1", "trip-2", "fav", "name"}
    assert all(i.namespace == food for i in store.search(food, query="what did the user eat?"))
    assert store.get(food, "trip-0") is None  # a key lives in one namespace
    assert store.list_namespaces(prefix=("memories", u)) == [shared, food, travel]
    assert store.list_namespaces(prefix=("memories", u), max_depth=2) == [shared]
    assert store.list_namespaces(prefix=("memories", u), suffix=("travel",)) == [travel]
    with pytest.raises(InvalidNamespaceError):
        store.search(("memories",), query="anything")  # never across users
    for bad in [("other", u), ("memories", u, "a", "b"), ("memories", "../x"), ("memories", "a b")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(bad, "k", {"content": "x"})
    with pytest.raises(ValueError, match="unsupported filter operator"):
        store.search(travel, filter={"year": {"$regex": ".*"}})


def test_batch_and_abatch_answer_in_order(memory: Memory) -> None:
    store = AgentMemoryStore(memory)
    ns = ("memories", new_user())
    results = store.batch([PutOp(ns, "a", {"content": "The user plays chess"}), GetOp(ns, "a"),
                           SearchOp(ns, query="games"), GetOp(ns, "missing")])
    assert results[0] is None and results[3] is None
    assert results[1].value["content"] == "The user plays chess"  # type: ignore[union-attr]
    assert [i.key for i in results[2]] == ["a"]  # type: ignore[union-attr]

    async def run() -> list[Any]:
        await store.aput(ns, "b", {"content": "The user plays the cello"})
        return await store.abatch([GetOp(ns, "b"), ListNamespacesOp((MatchCondition("prefix", ns),))])

    got, spaces = asyncio.run(run())
    assert got.value["content"] == "The user plays the cello" and spaces == [ns]


def test_the_store_works_over_http_through_memory_client(memory: Memory) -> None:
    """The same store on MemoryClient: the real API handler behind it (puts are the import route)."""
    runtime.configure(memory.settings, memory=memory)
    try:
        with MemoryClient("http://api", transport=LambdaTransport()) as client:
            store = AgentMemoryStore(client)
            ns = ("memories", new_user(), "coach")
            store.put(ns, "goal", {"content": "The user trains for a marathon in May"})
            store.put(ns, "goal", {"content": "The user trains for a half marathon in June"})
            item = store.get(ns, "goal")
            assert item is not None and item.value["content"].endswith("half marathon in June")
            [hit] = store.search(ns, query="what race is the user training for?")
            assert hit.key == "goal" and store.list_namespaces(prefix=ns[:2]) == [ns]
            store.delete(ns, "goal")
            assert store.get(ns, "goal") is None
    finally:
        runtime.reset()
