"""Identifier rules and generation.

Ids end up in S3 keys and in index filter expressions, so they are checked
against one strict pattern before they go anywhere: an id that passes cannot
contain a quote, a slash, a space or a backslash, which is what makes the
quoted filters in :mod:`agent_memory.filters` safe.
"""

from __future__ import annotations

import os
import re
import time
import uuid

from agent_memory.errors import InvalidInputError

ID_PATTERN = re.compile(r"[A-Za-z0-9_\-.:]{1,128}")
_MEMORY_ID_PATTERN = re.compile(r"[0-9a-f]{32}")


def validate_id(value: object, kind: str = "id") -> str:
    """Return ``value`` if it is a valid id, else raise :class:`InvalidInputError`."""
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        shown = repr(value)[:60]
        raise InvalidInputError(
            f"invalid {kind} {shown}: use 1-128 letters, digits or '_-.:'"
        )
    if value in {".", ".."}:
        raise InvalidInputError(f"invalid {kind} {value!r}: '.' and '..' are reserved")
    return value


def validate_memory_id(value: object) -> str:
    """Memory ids are ours (32 lower-case hex), so anything else is refused outright."""
    if not isinstance(value, str) or not _MEMORY_ID_PATTERN.fullmatch(value):
        raise InvalidInputError(f"invalid memory_id {repr(value)[:60]}: expected 32 hex characters")
    return value


def new_memory_id() -> str:
    """A 32-hex id whose first 12 hex are milliseconds since the epoch: sorts by creation."""
    return f"{int(time.time() * 1000):012x}{os.urandom(10).hex()}"


def memory_id_for_key(user_id: str, idempotency_key: str, index: int = 0) -> str:
    """Deterministic id for an idempotent write: the same key always names the same memory."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"agent-memory:{user_id}:{idempotency_key}:{index}").hex
