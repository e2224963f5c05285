"""A LangGraph graph with long-term memory: ``compile(store=AgentMemoryStore(memory))``.

One node writes what the user asks to remember into the user's namespace; another searches it
for every message. Two runs (two threads, no shared state) show the memory outliving the thread.

Run: .venv/bin/python examples/langgraph_store.py   (needs the langgraph extra; offline)
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from agent_memory import Memory, Settings
from agent_memory.integrations.langgraph import AgentMemoryStore


@dataclass
class Context:
    user_id: str


class State(TypedDict, total=False):
    message: str
    memories: list[str]


def remember(state: State, runtime: Runtime[Context]) -> State:
    if runtime.store is not None and state["message"].lower().startswith("remember"):
        runtime.store.put(("memories", runtime.context.user_id), uuid.uuid4().hex, {"content": state["message"]})
    return {}


def recall(state: State, runtime: Runtime[Context]) -> State:
    assert runtime.store is not None
    found = runtime.store.search(("memories", runtime.context.user_id), query=state["message"], limit=3)
    return {"memories": [item.value["content"] for item in found]}


def build(store: BaseStore) -> CompiledStateGraph[State, Context, State, State]:
    builder = StateGraph(State, context_schema=Context)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def main() -> None:
    memory = Memory(Settings(data_dir=Path(".local-example")))
    memory.erase_user("graph-user")  # start clean
    graph = build(AgentMemoryStore(memory))
    graph.invoke({"message": "Remember that I am allergic to peanuts"}, context=Context("graph-user"))
    result = graph.invoke({"message": "What should I avoid eating?"}, context=Context("graph-user"))  # new thread
    print("recalled:", result["memories"])


if __name__ == "__main__":
    main()
