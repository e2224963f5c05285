"""``agent-memory mcp``: remember / recall / forget / correct as MCP tools (official ``mcp`` SDK).

The user is bound when the server starts (``--user``), never taken from a tool call: the
model on the other side can only ever read and write that one user's memories. The
backend is the in-process :class:`Memory` (embedded defaults) or, with ``--api-url``, the
service over HTTP through :class:`MemoryClient`. Transports: stdio (for desktop agents and
IDEs) and streamable HTTP on 127.0.0.1 (``--transport http``).

Tool calls run the (blocking) memory calls in a worker thread so the server's event loop
stays responsive; errors come back to the model as tool errors with the service's message.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, TypeVar

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from agent_memory.errors import AgentMemoryError
from agent_memory.ids import validate_id
from agent_memory.model import RecallResult

T = TypeVar("T")
INSTRUCTIONS = (
    "Long-term memory for this user. Call `recall` before answering anything that may depend on "
    "what the user told you before (preferences, facts, plans); call `remember` with one short "
    "third-person statement when the user tells you something worth keeping; call `forget` when "
    "the user asks you to forget something; call `correct` when the user says a remembered value "
    "has changed but recall still shows the old one, or that two memories are different things.")


class Backend(Protocol):
    """What the tools need: :class:`agent_memory.Memory` and :class:`agent_memory.MemoryClient` both fit."""

    def remember(self, user_id: str, content: str | None = None, **kwargs: Any) -> list[str]: ...

    def recall(self, user_id: str, query: str, **kwargs: Any) -> RecallResult: ...

    def forget(self, memory_id: str, user_id: str | None = None, **kwargs: Any) -> Any: ...

    def correct(self, memory_id: str, user_id: str | None = None, **kwargs: Any) -> Any: ...


async def _call(fn: Callable[[], T]) -> T:
    """Run a blocking memory call off the event loop; the service's refusals reach the model as
    tool errors carrying their message (the SDK hides other exceptions' text)."""
    try:
        return await anyio.to_thread.run_sync(fn)
    except AgentMemoryError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc


def build_server(backend: Backend, user_id: str, agent_id: str | None = None) -> MCPServer:
    """The tools for one user, and with ``agent_id`` for one agent of that user: it remembers into
    that agent's scope and recalls its own and the user's shared memories (never another agent's);
    both are bound here, by configuration, never by a tool argument."""
    user_id = validate_id(user_id, "user_id")
    agent_id = None if agent_id is None else validate_id(agent_id, "agent_id")
    server: MCPServer = MCPServer("agent-memory", instructions=INSTRUCTIONS)

    @server.tool(description="Store one statement worth remembering about the user (a preference, fact, "
                             "plan, task or dated event). Returns the new memory ids.")
    async def remember(content: str, memory_type: Literal["preference", "fact", "task", "event", "plan"] = "fact",
                       importance: float | None = None, topic_id: str | None = None,
                       session_id: str = "default") -> dict[str, Any]:
        ids = await _call(lambda: backend.remember(
            user_id, content, memory_type=memory_type, importance=importance, topic_id=topic_id,
            session_id=session_id, agent_id=agent_id))
        return {"memory_ids": ids}

    @server.tool(description="Find the user's memories relevant to a question. Returns a `context` block "
                             "for your prompt and the memories, best first, with scores.")
    async def recall(query: str, top_k: int = 5) -> dict[str, Any]:
        result = await _call(lambda: backend.recall(user_id, query, top_k=top_k, agent_id=agent_id))
        return {"context": result.context, "memories": [
            {"memory_id": h.memory_id, "content": h.content, "score": round(h.score, 4),
             "memory_type": h.memory_type, "created_at": h.created_at.isoformat()} for h in result]}

    @server.tool(description="Forget one memory by id (a soft delete: it is never recalled again).")
    async def forget(memory_id: str) -> dict[str, Any]:
        await _call(lambda: backend.forget(memory_id, user_id=user_id, agent_id=agent_id))
        return {"forgotten": memory_id}

    @server.tool(description="Overrule the memory's change detector. decision='new_version' with `of`: "
                             "`memory_id` is the new value of the same thing as memory `of` (the newer one "
                             "becomes current, the older is kept as history). decision='unrelated': `memory_id` "
                             "was wrongly taken for a duplicate or new value of another memory; both stay current.")
    async def correct(memory_id: str, decision: Literal["unrelated", "new_version"],
                      of: str | None = None) -> dict[str, Any]:
        rec = await _call(lambda: backend.correct(memory_id, user_id=user_id, decision=decision, of=of,
                                                  agent_id=agent_id))
        return {"memory_id": rec.id, "is_active": rec.is_active, "topic_id": rec.topic_id}

    return server


def serve(backend: Backend, user_id: str, transport: Literal["stdio", "http"] = "stdio",
          port: int = 8765, agent_id: str | None = None) -> None:
    server = build_server(backend, user_id, agent_id)
    if transport == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=port)
