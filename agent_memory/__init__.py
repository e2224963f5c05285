"""agent_memory: long-term memory for LLM agents (S3 originals + a vector index)."""

from agent_memory.client import AsyncMemoryClient, MemoryClient
from agent_memory.config import Settings
from agent_memory.errors import (
    AgentMemoryError,
    AuthenticationError,
    BackendUnavailableError,
    ContentTooLargeError,
    InvalidInputError,
    ModelMismatchError,
    NotFoundError,
)
from agent_memory.model import RecallHit, RecallResult
from agent_memory.service import Memory

__all__ = [
    "AgentMemoryError", "AsyncMemoryClient", "AuthenticationError", "BackendUnavailableError",
    "ContentTooLargeError", "InvalidInputError", "Memory", "MemoryClient", "ModelMismatchError",
    "NotFoundError", "RecallHit", "RecallResult", "Settings",
]
