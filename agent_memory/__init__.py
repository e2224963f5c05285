"""agent_memory: long-term memory for LLM agents (S3 originals + a vector index)."""

from agent_memory.config import Settings
from agent_memory.errors import (
    AgentMemoryError,
    BackendUnavailableError,
    ContentTooLargeError,
    InvalidInputError,
    ModelMismatchError,
    NotFoundError,
)
from agent_memory.model import RecallHit, RecallResult
from agent_memory.service import Memory

__all__ = [
    "AgentMemoryError", "BackendUnavailableError", "ContentTooLargeError", "InvalidInputError",
    "Memory", "ModelMismatchError", "NotFoundError", "RecallHit", "RecallResult", "Settings",
]
