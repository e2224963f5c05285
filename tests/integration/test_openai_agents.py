"""The OpenAI Agents SDK adapter with a real ``Agent`` run by ``Runner`` on the SDK's own
``ScriptedModel`` (no network): the model calls ``remember`` and ``recall``, the tools act for
the user of the run context only, and the hook puts recalled memories into the instructions the
model receives."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agents import Agent, RunConfig, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from agent_memory import Memory
from agent_memory.integrations.openai_agents import MemoryContext, memory_tools, with_memories
from tests.conftest import new_user

set_tracing_disabled(True)  # the SDK would export traces to OpenAI when a key is set




def test_the_agent_remembers_and_recalls_through_its_tools_for_the_context_user(memory: Memory) -> None:
    u, other = new_user(), new_user()
    memory.remember(other, "I am allergic to shellfish")
    model = ScriptedModel([
        [function_call("remember", {"content": "The user is vegetarian", "memory_type": "preference",
                                    "importance": 0.8}, call_id="c1")],
        [function_call("recall", {"query": "what does the user eat?"}, call_id="c2")],
        [function_call("remember", {"content": "x", "topic_id": "../../etc"}, call_id="c3")],
        [assistant_message("Noted: vegetarian.")],
    ])
    agent = Agent(name="assistant", instructions="Be brief.", model=model, tools=memory_tools(memory))
    result = asyncio.run(Runner.run(agent, "I'm vegetarian, remember that.", context=MemoryContext(u)))
    assert result.final_output == "Noted: vegetarian."
    model.assert_complete()
    outputs = {i["call_id"]: i["output"] for i in model.calls[-1].input if i.get("type") == "function_call_output"}
    [stored] = json.loads(outputs["c1"])["memory_ids"]
    recalled = json.loads(outputs["c2"])
    assert recalled["memories"][0]["memory_id"] == stored and "vegetarian" in recalled["context"]
    assert "shellfish" not in outputs["c2"]  # another user's memory never reaches this run
    assert "invalid topic_id" in outputs["c3"]  # a refusal comes back to the model, the run goes on
    assert memory.get(stored, user_id=u)["original"]["memory_type"] == "preference"


def test_the_hook_puts_recalled_memories_into_the_instructions(memory: Memory) -> None:
    u = new_user()
    memory.remember(u, "I am flying to Lisbon on Friday", memory_type="plan")
    memory.remember(new_user(), "I am flying to Tokyo on Friday", memory_type="plan")
    model = ScriptedModel([[assistant_message("Have a good flight to Lisbon!")]])
    agent = Agent(name="assistant", instructions="You are a travel assistant.", model=model)
    run_config = RunConfig(call_model_input_filter=with_memories(memory))
    result = asyncio.run(Runner.run(agent, "When is my flight?", context=MemoryContext(u), run_config=run_config))
    assert result.final_output == "Have a good flight to Lisbon!"
    sent = model.first_call.system_instructions if model.first_call else ""
    assert sent.startswith("You are a travel assistant.") and "Lisbon" in sent and "Tokyo" not in sent
    with pytest.raises(Exception, match="no user"):
        asyncio.run(Runner.run(agent, "When is my flight?", run_config=run_config))


def test_tools_bound_to_a_user_ignore_the_context(memory: Memory, tmp_path: Path) -> None:
    u = new_user()
    model = ScriptedModel([[function_call("remember", {"content": "The user likes chess"}, call_id="c1")],
                           [assistant_message("ok")]])
    agent = Agent(name="a", model=model, tools=memory_tools(memory, user_id=u))
    asyncio.run(Runner.run(agent, "I like chess", context=MemoryContext(new_user())))
    assert [r.summary for r in memory.timeline(u)] == ["The user likes chess"]


def test_an_agent_in_the_context_sees_its_own_and_shared_memories_never_another_agents(memory: Memory) -> None:
    u = new_user()
    memory.remember(u, "I am flying to Lisbon on Friday", memory_type="plan")  # shared
    memory.remember(u, "The planner booked a hotel in Lisbon for Friday", agent_id="planner")
    model = ScriptedModel([[function_call("remember", {"content": "The coder fixed the Lisbon booking bug"},
                                          call_id="c1")],
                           [assistant_message("done")]])
    agent = Agent(name="coder", instructions="You write code.", model=model, tools=memory_tools(memory))
    asyncio.run(Runner.run(agent, "What about my Lisbon trip?", context=MemoryContext(u, agent_id="coder"),
                           run_config=RunConfig(call_model_input_filter=with_memories(memory))))
    sent = model.first_call.system_instructions if model.first_call else ""
    assert "flying to Lisbon" in sent and "hotel" not in sent  # the planner's memory stays the planner's
    [row] = [r for r in memory.timeline(u) if "bug" in r.summary]
    assert row.agent_id == "coder"
