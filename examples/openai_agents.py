"""OpenAI Agents SDK: memory tools, and recalled memories put into the agent's instructions.

Offline by default: the SDK's ``ScriptedModel`` plays the model (it calls ``remember`` once, then
answers), and the script prints the instructions the model received. Set ``AGENTS_MODEL`` (and
``OPENAI_API_KEY``) to run a real model instead.

Run: .venv/bin/python examples/openai_agents.py   (needs the openai-agents extra)
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from agents import Agent, RunConfig, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from agent_memory import Memory, Settings
from agent_memory.integrations.openai_agents import MemoryContext, memory_tools, with_memories


def model() -> Any:
    if os.environ.get("AGENTS_MODEL"):
        return os.environ["AGENTS_MODEL"]
    set_tracing_disabled(True)  # nothing leaves the machine
    return ScriptedModel([
        [function_call("remember", {"content": "The user's flight to Lisbon leaves Friday at 9:40",
                                    "memory_type": "plan"}, call_id="call-1")],
        [assistant_message("Noted your Friday flight.")],
        [assistant_message("Your flight to Lisbon leaves on Friday at 9:40.")],
    ])


async def main() -> None:
    memory = Memory(Settings(data_dir=Path(".local-example")))
    memory.erase_user("agents-user")  # start clean
    llm = model()
    agent = Agent(name="assistant", instructions="You are a concise travel assistant.", model=llm,
                  tools=memory_tools(memory))
    config = RunConfig(call_model_input_filter=with_memories(memory))
    context = MemoryContext(user_id="agents-user")
    first = await Runner.run(agent, "My flight to Lisbon leaves Friday at 9:40.", context=context, run_config=config)
    print("agent:", first.final_output)
    later = await Runner.run(agent, "When is my flight?", context=context, run_config=config)  # a new run
    print("agent:", later.final_output)
    if isinstance(llm, ScriptedModel) and llm.last_call is not None:
        print("instructions the model got:\n" + (llm.last_call.system_instructions or ""))


if __name__ == "__main__":
    asyncio.run(main())
