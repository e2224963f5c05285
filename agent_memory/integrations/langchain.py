"""LangChain: a retriever over a user's memories and ``remember``/``recall`` tools.

``AgentMemoryRetriever(memory=m, user_id="u1")`` is a ``BaseRetriever``: ``invoke(query)`` gives
one ``Document`` per recalled memory, best first, with the memory's id, score, type, time and
metadata in ``Document.metadata``, so it drops into any chain that takes a retriever.
``memory_tools(m, user_id="u1")`` are ``StructuredTool``s for a tool-calling model; the user is
bound here, and a refusal from the service (a bad topic id, content too long) comes back to the
model as the tool's error message instead of stopping the run.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import field_validator

from agent_memory.errors import AgentMemoryError
from agent_memory.ids import validate_id
from agent_memory.integrations import tools
from agent_memory.integrations.tools import Backend, MemoryKind


class AgentMemoryRetriever(BaseRetriever):
    """The user's memories most relevant to a query, as LangChain documents."""

    memory: Any
    """:class:`agent_memory.Memory` or :class:`agent_memory.MemoryClient`."""
    user_id: str
    agent_id: str | None = None
    """Recall as this agent: its memories and the user's shared ones (None: all of the user's)."""
    top_k: int = 5
    min_score: float | None = None
    include_inferred: bool = False
    gate: bool | None = None
    """None: the service's recall gate decides (nothing for a general question); False: always search."""

    @field_validator("user_id", "agent_id")
    @classmethod
    def _ids(cls, v: str | None, info: Any) -> str | None:
        return None if v is None else validate_id(v, info.field_name)

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        hits = self.memory.recall(self.user_id, query, top_k=self.top_k, min_score=self.min_score,
                                  include_inferred=self.include_inferred, gate=self.gate, agent_id=self.agent_id)
        return [Document(page_content=h.content, id=h.memory_id, metadata={
            "memory_id": h.memory_id, "score": h.score, "similarity": h.similarity,
            "created_at": h.created_at.isoformat(), "memory_type": h.memory_type, "importance": h.importance,
            "topic_id": h.topic_id, "source": h.source, "session_id": h.session_id, "metadata": h.metadata})
            for h in hits]


def memory_tools(memory: Backend, user_id: str, *, agent_id: str | None = None,
                 session_id: str = "default") -> list[BaseTool]:
    """``remember`` and ``recall`` for one user, or one agent of the user (bound here, never taken
    from the model)."""
    user_id = validate_id(user_id, "user_id")
    agent_id = None if agent_id is None else validate_id(agent_id, "agent_id")

    def remember(content: str, memory_type: MemoryKind = "fact", importance: float | None = None,
                 topic_id: str | None = None) -> dict[str, Any]:
        try:
            return tools.remember(memory, user_id, content, memory_type, importance, topic_id, session_id, agent_id)
        except AgentMemoryError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc

    def recall(query: str, top_k: int = 5) -> dict[str, Any]:
        try:
            return tools.recall(memory, user_id, query, top_k, agent_id)
        except AgentMemoryError as exc:
            raise ToolException(f"{type(exc).__name__}: {exc}") from exc

    return [StructuredTool.from_function(remember, name="remember", description=tools.REMEMBER,
                                         handle_tool_error=True),
            StructuredTool.from_function(recall, name="recall", description=tools.RECALL, handle_tool_error=True)]
