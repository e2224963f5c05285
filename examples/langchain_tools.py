"""LangChain: the user's memories as a retriever, and ``remember``/``recall`` as tools.

The tools are called here the way a tool-calling model's calls arrive (a ``ToolCall``), so the
example runs offline; hand ``memory_tools(...)`` to ``model.bind_tools`` or an agent instead.

Run: .venv/bin/python examples/langchain_tools.py   (needs the langchain extra; offline)
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from agent_memory import Memory, Settings
from agent_memory.integrations.langchain import AgentMemoryRetriever, memory_tools

memory = Memory(Settings(data_dir=Path(".local-example")))
user = "langchain-user"
memory.erase_user(user)  # start clean

remember, recall = memory_tools(memory, user_id=user)  # the user is bound here, never by the model
remember.invoke({"type": "tool_call", "id": "call-1", "name": "remember",
                 "args": {"content": "The user prefers trains to planes", "memory_type": "preference"}})
print(recall.invoke({"type": "tool_call", "id": "call-2", "name": "recall",
                     "args": {"query": "how does the user like to travel?"}}).content)



def bullets(docs: list[Document]) -> str:
    return "\n".join(f"- {d.page_content}" for d in docs)


retriever = AgentMemoryRetriever(memory=memory, user_id=user, top_k=3)
chain = retriever | RunnableLambda(bullets)
print("retrieved:\n" + chain.invoke("how should I book the trip to Paris?"))
