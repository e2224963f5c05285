"""Bounds on a memory's ``metadata``, checked before anything is written.

Metadata became filterable (``recall(filters=...)``), so it is held to the same standard as the
other fields: a JSON object of at most :data:`MAX_DEPTH` levels, :data:`MAX_KEYS` keys in all,
keys of :data:`KEY_PATTERN` (no dots: a dot separates the levels of a filter path), values that
are strings, numbers, booleans, null, lists or objects, and at most ``max_metadata_bytes`` in all
(a setting). Each refusal names the limit it broke. The walk is iterative: a body nested a
thousand levels deep is refused, never a ``RecursionError`` (a 500).

Date-valued strings (ISO 8601: ``2026-05-01``, ``2026-05-01T09:30:00+02:00``) are recognised
here too, for date ranges in filters (:func:`date_ms`).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

MAX_DEPTH = 5
"""Levels of nesting: ``{"a": 1}`` is one level, ``{"a": {"b": [1]}}`` three."""
MAX_KEYS = 64
"""Keys in all, at every level."""
MAX_LIST = 100
MAX_STRING = 2_000
"""Characters in one string value."""
MAX_INT = 2**53
"""Larger integers lose precision in JSON readers (and in the index's JSON field)."""
KEY_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_\-]{0,63}")
DATE_PATTERN = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?")


def check_key(key: object, where: str) -> str:
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise ValueError(f"metadata key {repr(key)[:70]} at {where or 'the top level'} is not allowed: use 1-64 "
                         "letters, digits, '_' or '-', not starting with '-' (key pattern)")
    return key


def check_string(value: str, where: str) -> str:
    if len(value) > MAX_STRING:
        raise ValueError(f"metadata value at {where} has {len(value)} characters; the limit is {MAX_STRING}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"metadata value at {where} is not valid Unicode (a lone surrogate)") from None
    return value


def check_number(value: int | float, where: str) -> int | float:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and abs(value) > MAX_INT:
        raise ValueError(f"metadata number at {where} is beyond ±2^53 (the largest exact JSON integer)")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"metadata number at {where} must be finite")
    return value


def check_metadata(metadata: object) -> dict[str, Any]:
    """``metadata`` if it is within every bound; ``ValueError`` naming the first broken one."""
    if not isinstance(metadata, dict):
        raise ValueError("metadata must be a JSON object")
    keys = 0
    stack: list[tuple[Any, int, str]] = [(metadata, 1, "")]
    while stack:
        value, depth, where = stack.pop()
        if isinstance(value, dict | list) and depth > MAX_DEPTH:
            raise ValueError(f"metadata is nested deeper than {MAX_DEPTH} levels (at {where}; max depth "
                             f"{MAX_DEPTH})")
        if isinstance(value, dict):
            keys += len(value)
            if keys > MAX_KEYS:
                raise ValueError(f"metadata has more than {MAX_KEYS} keys (max keys {MAX_KEYS}, at every level)")
            for k, v in value.items():
                check_key(k, where)
                stack.append((v, depth + 1, f"{where}.{k}" if where else k))
        elif isinstance(value, list):
            if len(value) > MAX_LIST:
                raise ValueError(f"metadata list at {where} has {len(value)} items; the limit is {MAX_LIST}")
            stack.extend((v, depth + 1, f"{where}[{i}]") for i, v in enumerate(value))
        elif isinstance(value, str):
            check_string(value, where)
        elif isinstance(value, int | float):
            check_number(value, where)
        elif value is not None:
            raise ValueError(f"metadata value at {where} is a {type(value).__name__}: use strings, numbers, "
                             "booleans, null, lists or objects (value types)")
    return metadata


def date_ms(value: object) -> int | None:
    """Epoch milliseconds of an ISO-8601 date or date-time string (no zone: UTC), else None."""
    if not isinstance(value, str) or not DATE_PATTERN.fullmatch(value):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:  # 2026-13-45
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1000)


def dates_by_path(metadata: dict[str, Any]) -> dict[str, int]:
    """Every date-valued string reached through objects (not lists), by dotted path, as epoch ms."""
    found: dict[str, int] = {}
    stack: list[tuple[dict[str, Any], str]] = [(metadata, "")]
    while stack:
        obj, prefix = stack.pop()
        for k, v in obj.items():
            path = f"{prefix}{k}"
            if isinstance(v, dict):
                stack.append((v, f"{path}."))
            elif (ms := date_ms(v)) is not None:
                found[path] = ms
    return found


def lookup(metadata: dict[str, Any], path: str) -> tuple[bool, Any]:
    """``(True, value)`` at a dotted path through objects, ``(False, None)`` when absent."""
    value: Any = metadata
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return False, None
        value = value[key]
    return True, value
