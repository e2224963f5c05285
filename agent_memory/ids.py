"""Identifier rules and generation.

Ids end up in S3 keys and in index filter expressions, so they are checked
against one strict pattern before they go anywhere: an id that passes cannot
contain a quote, a slash, a space or a backslash, which is what makes the
quoted filters in :mod:`agent_memory.filters` safe.
"""

from __future__ import annotations

import os
import re
import threading
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


_RANDOM_BITS = 80
_last = [0, 0]  # the last id's milliseconds and random part, in this process
_lock = threading.Lock()


def new_memory_id() -> str:
    """A 32-hex id whose first 12 hex are milliseconds since the epoch: sorts by creation.

    Within a process the ids are strictly increasing, as ULID's monotonic mode makes them: an id
    made in the same millisecond as the last one (or after the clock stepped back) takes the last
    one's random part plus one. Why: recall orders the memories of a session by creation time,
    then id, to find each one's neighbours, and a batch (``remember_many``, one message's
    statements) shares one ``created_at``. With a fresh random part the neighbours of a batch's
    memories were drawn anew in every process, and the same store ranked differently from run to
    run (0.01 of the change evaluation's first hits)."""
    with _lock:
        ms = int(time.time() * 1000)
        if ms > _last[0]:
            rnd = int.from_bytes(os.urandom(_RANDOM_BITS // 8), "big")
        else:
            ms, rnd = _last[0], _last[1] + 1
            if rnd >> _RANDOM_BITS:  # the random part ran over: borrow the next millisecond
                ms, rnd = ms + 1, int.from_bytes(os.urandom(_RANDOM_BITS // 8), "big")
        _last[:] = [ms, rnd]
    return f"{ms:012x}{rnd:020x}"


def memory_id_for_key(user_id: str, idempotency_key: str, index: int = 0) -> str:
    """Deterministic id for an idempotent write: the same key always names the same memory."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"agent-memory:{user_id}:{idempotency_key}:{index}").hex
