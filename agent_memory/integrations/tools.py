"""What a ``remember`` and a ``recall`` tool do and say, once, for every framework adapter
(LangChain, the OpenAI Agents SDK): the model gets the same tools and the same answers whatever
runs it. The user is never a tool argument: each adapter binds it from its own configuration or
run context, so a model can only reach the memories of the user it serves. With an agent bound
too, the tools write that agent's memories and recall its own and the user's shared ones (the
service's scopes), never another agent's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Union

from agent_memory.ids import validate_id

if TYPE_CHECKING:
    from agent_memory.client import MemoryClient
    from agent_memory.service import Memory

Backend = Union["Memory", "MemoryClient"]
"""In-process :class:`agent_memory.Memory` or the HTTP :class:`agent_memory.MemoryClient`."""
MemoryKind = Literal["preference", "fact", "task", "event", "plan"]

REMEMBER = ("Store one statement worth remembering about the user: a preference, fact, plan, task or dated "
            "event, as one short third-person sentence. Returns the new memory ids.")
RECALL = ("Find the user's memories relevant to a question before answering anything that may depend on what "
          "they told you before. Returns a `context` block for your answer and the memories, best first.")


def remember(backend: Backend, user_id: str, content: str, memory_type: MemoryKind = "fact",
             importance: float | None = None, topic_id: str | None = None,
             session_id: str = "default", agent_id: str | None = None) -> dict[str, Any]:
    ids = backend.remember(validate_id(user_id, "user_id"), content, memory_type=memory_type,
                           importance=importance, topic_id=topic_id, session_id=session_id, agent_id=agent_id)
    return {"memory_ids": ids}


def recall(backend: Backend, user_id: str, query: str, top_k: int = 5, agent_id: str | None = None) -> dict[str, Any]:
    result = backend.recall(validate_id(user_id, "user_id"), query, top_k=top_k, agent_id=agent_id)
    return {"context": result.context, "memories": [
        {"memory_id": h.memory_id, "content": h.content, "score": round(h.score, 4), "memory_type": h.memory_type,
         "created_at": h.created_at.isoformat()} for h in result]}
