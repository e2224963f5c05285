"""S3 key layout. Ids are validated here, so no key can leave its user's folder."""

from __future__ import annotations

from agent_memory.ids import validate_id, validate_memory_id


def original_key(prefix: str, user_id: str, memory_id: str) -> str:
    """``memories/{user_id}/{memory_id}.json``"""
    return f"{prefix}{validate_id(user_id, 'user_id')}/{validate_memory_id(memory_id)}.json"


def user_prefix(prefix: str, user_id: str) -> str:
    return f"{prefix}{validate_id(user_id, 'user_id')}/"
