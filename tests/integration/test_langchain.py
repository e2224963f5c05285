"""The LangChain adapter with the real langchain-core: the retriever in a runnable chain, the
tools invoked as a tool-calling model's calls are (ToolCall in, ToolMessage out), errors coming
back as tool errors, and one user never reaching another's memories."""

from __future__ import annotations

import json

import pytest
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableLambda

from agent_memory import Memory
from agent_memory.integrations.langchain import AgentMemoryRetriever, memory_tools
from tests.conftest import new_user


def test_retriever_in_a_chain_returns_the_users_memories_as_documents(memory: Memory) -> None:
    u, other = new_user(), new_user()
    [mid] = memory.remember(u, "I am allergic to peanuts", importance=0.9, metadata={"via": "chat"})
    memory.remember(u, "I live in Porto")
    memory.remember(other, "I am allergic to penicillin")
    retriever = AgentMemoryRetriever(memory=memory, user_id=u, top_k=3)
    docs = retriever.invoke("what am I allergic to?")
    assert isinstance(docs[0], Document) and docs[0].page_content == "I am allergic to peanuts"
    assert docs[0].id == mid and docs[0].metadata["memory_id"] == mid and docs[0].metadata["metadata"] == {
        "via": "chat"}
    assert docs[0].metadata["score"] > 0 and docs[0].metadata["memory_type"] == "fact"
    assert all("penicillin" not in d.page_content for d in docs)
    chain = retriever | RunnableLambda(lambda ds: "\n".join(d.page_content for d in ds))
    assert "peanuts" in chain.invoke("what am I allergic to?")
    assert retriever.invoke("what is the capital of France?") == []  # the recall gate: nothing personal asked
    with pytest.raises(ValueError, match="invalid user_id"):
        AgentMemoryRetriever(memory=memory, user_id="../x")


def test_tools_take_model_tool_calls_for_the_bound_user(memory: Memory) -> None:
    u, other = new_user(), new_user()
    memory.remember(other, "My passport number is X1234567")
    remember, recall = memory_tools(memory, user_id=u)
    assert {remember.name, recall.name} == {"remember", "recall"} and "memories" in recall.description
    assert set(remember.args) == {"content", "memory_type", "importance", "topic_id"}  # no user argument
    stored = remember.invoke({"type": "tool_call", "id": "c1", "name": "remember",
                              "args": {"content": "The user's passport expires in March", "memory_type": "fact"}})
    assert isinstance(stored, ToolMessage) and stored.tool_call_id == "c1"
    [mid] = json.loads(stored.content)["memory_ids"] if isinstance(stored.content, str) else []
    found = recall.invoke({"type": "tool_call", "id": "c2", "name": "recall",
                           "args": {"query": "when does my passport expire?"}})
    body = json.loads(found.content)
    assert body["memories"][0]["memory_id"] == mid and "March" in body["context"]
    assert "X1234567" not in found.content
    refused = remember.invoke({"type": "tool_call", "id": "c3", "name": "remember",
                               "args": {"content": "x", "topic_id": "../../etc"}})
    assert refused.status == "error" and "invalid topic_id" in refused.content


def test_tools_and_retriever_bound_to_an_agent(memory: Memory) -> None:
    u = new_user()
    remember, _ = memory_tools(memory, user_id=u, agent_id="coder")
    remember.invoke({"content": "The repo uses tabs for indentation"})
    memory.remember(u, "The user writes Python")  # shared
    as_coder = AgentMemoryRetriever(memory=memory, user_id=u, agent_id="coder", gate=False)
    as_planner = AgentMemoryRetriever(memory=memory, user_id=u, agent_id="planner", gate=False)
    assert "The repo uses tabs for indentation" in [d.page_content for d in as_coder.invoke("does the repo use tabs?")]
    assert all("tabs" not in d.page_content for d in as_planner.invoke("does the repo use tabs?"))
