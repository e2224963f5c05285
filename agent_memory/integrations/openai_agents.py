"""OpenAI Agents SDK: ``remember``/``recall`` function tools and a hook that puts the user's
recalled memories into the agent's instructions before each model call.

The user comes from the run's context (``Runner.run(agent, text, context=MemoryContext("u1"))``,
or any context object with a ``user_id``), or is bound when the tools are made; never from the
model. The hook is a ``RunConfig(call_model_input_filter=with_memories(m))``: it recalls against
the latest user message and rebuilds the instructions with
:func:`agent_memory.prompt.system_prompt` (memories in the system prompt, where seed 2 measured
them to work best), so an agent gets its long-term memory without calling a tool at all. Memory
calls are blocking; both run them off the event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from dataclasses import dataclass
from typing import Any

from agents import RunContextWrapper, Tool, function_tool
from agents.run_config import CallModelData, CallModelInputFilter, ModelInputData

from agent_memory.errors import AgentMemoryError, InvalidInputError
from agent_memory.ids import validate_id
from agent_memory.integrations import tools
from agent_memory.integrations.tools import Backend, MemoryKind
from agent_memory.model import RecallResult
from agent_memory.prompt import system_prompt


@dataclass
class MemoryContext:
    """A run context naming the user (and session) the agent serves."""

    user_id: str
    agent_id: str | None = None
    """The agent's own scope (its memories and the user's shared ones); None: the user's."""
    session_id: str = "default"


def _user(bound: str | None, context: Any) -> str:
    user = bound or getattr(context, "user_id", None)
    if user is None:
        raise InvalidInputError("no user: bind user_id or run with context=MemoryContext(user_id=...)")
    return validate_id(user, "user_id")


def _agent(bound: str | None, context: Any) -> str | None:
    agent = bound or getattr(context, "agent_id", None)
    return None if agent is None else validate_id(agent, "agent_id")


def _tool_error(ctx: RunContextWrapper[Any], error: Exception) -> str:
    """The service's refusals are written for people: the model sees them and can fix its call.
    Other errors keep the SDK's generic text (their message may hold internals)."""
    if isinstance(error, AgentMemoryError):
        return f"{type(error).__name__}: {error}"
    return "An error occurred while running the tool. Please try again."


def memory_tools(memory: Backend, user_id: str | None = None, agent_id: str | None = None) -> list[Tool]:
    """``remember`` and ``recall`` tools (answers as JSON text; the SDK would send a dict's Python
    repr); a service refusal reaches the model as the tool's error."""

    @function_tool(name_override="remember", description_override=tools.REMEMBER, failure_error_function=_tool_error)
    async def remember(ctx: RunContextWrapper[Any], content: str, memory_type: MemoryKind = "fact",
                       importance: float | None = None, topic_id: str | None = None) -> str:
        user = _user(user_id, ctx.context)
        session = getattr(ctx.context, "session_id", "default")
        return json.dumps(await asyncio.to_thread(tools.remember, memory, user, content, memory_type, importance,
                                                  topic_id, session, _agent(agent_id, ctx.context)))

    @function_tool(name_override="recall", description_override=tools.RECALL, failure_error_function=_tool_error)
    async def recall(ctx: RunContextWrapper[Any], query: str, top_k: int = 5) -> str:
        found = await asyncio.to_thread(tools.recall, memory, _user(user_id, ctx.context), query, top_k,
                                        _agent(agent_id, ctx.context))
        return json.dumps(found, ensure_ascii=False)

    return [remember, recall]


def latest_user_text(items: list[Any]) -> str | None:
    """The text of the last user message among the model's input items (plain or content parts)."""
    for item in reversed(items):
        if not isinstance(item, dict) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        parts = [p.get("text", "") for p in content or [] if isinstance(p, dict) and p.get("type") == "input_text"]
        return "\n".join(parts) or None
    return None


def with_memories(memory: Backend, user_id: str | None = None, *, agent_id: str | None = None, top_k: int = 5,
                  max_tokens: int = 600, then: CallModelInputFilter | None = None) -> CallModelInputFilter:
    """A ``call_model_input_filter`` that puts the user's memories relevant to the latest user
    message into the instructions (recalled once per message, not again after each tool call).
    ``then`` runs another filter afterwards."""
    last: dict[tuple[str, str | None, str], RecallResult] = {}

    async def put_memories(data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        query = latest_user_text(list(model_data.input))
        if query and query.strip():
            user, agent = _user(user_id, data.context), _agent(agent_id, data.context)
            key = (user, agent, query)
            if key not in last:
                last.clear()
                last[key] = await asyncio.to_thread(memory.recall, user, query, top_k=top_k, agent_id=agent)
            model_data = ModelInputData(input=model_data.input, instructions=system_prompt(
                model_data.instructions or "", last[key], max_tokens=max_tokens))
        if then is None:
            return model_data
        out = then(CallModelData(model_data=model_data, agent=data.agent, context=data.context))
        return await out if inspect.isawaitable(out) else out

    return put_memories
