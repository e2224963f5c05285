"""agent_memory: long-term memory for LLM agents (S3 originals + a vector index)."""

from typing import TYPE_CHECKING, Any

from agent_memory.config import Settings
from agent_memory.errors import (
    AgentMemoryError,
    AuthenticationError,
    BackendUnavailableError,
    ConflictError,
    ContentTooLargeError,
    InvalidInputError,
    ModelMismatchError,
    NotFoundError,
)
from agent_memory.model import RecallHit, RecallResult
from agent_memory.service import Memory

if TYPE_CHECKING:
    from agent_memory.client import AsyncMemoryClient, MemoryClient


def __getattr__(name: str) -> Any:
    """The HTTP clients load on first use: the Lambda handlers import this package and never need
    httpx, and every import is paid again at each cold start."""
    if name in ("MemoryClient", "AsyncMemoryClient"):
        from agent_memory import client

        return getattr(client, name)
    raise AttributeError(f"module 'agent_memory' has no attribute {name!r}")


__all__ = [
    "AgentMemoryError", "AsyncMemoryClient", "AuthenticationError", "BackendUnavailableError",
    "ConflictError", "ContentTooLargeError", "InvalidInputError", "Memory", "MemoryClient", "ModelMismatchError",
    "NotFoundError", "RecallHit", "RecallResult", "Settings",
]
