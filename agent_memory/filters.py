"""Build Milvus boolean filter expressions without pasting user strings.

Neither Milvus Lite 3.2.2 nor Milvus 2.3.5 supports filter templating, so the
safety rests on two layers kept in this one module: every id is first checked
by :func:`agent_memory.ids.validate_id` (no quote or backslash can pass), and
every string literal is still emitted through :func:`quote`, which escapes like
JSON. Enumerations (types, sources) are checked against their closed sets.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.config import MEMORY_TYPES, SOURCES
from agent_memory.errors import InvalidInputError
from agent_memory.ids import validate_id, validate_memory_id


def quote(value: str) -> str:
    """A string literal Milvus reads back as exactly ``value``."""
    return json.dumps(value, ensure_ascii=False)


def _in_list(field_name: str, values: Iterable[str]) -> str:
    return f"{field_name} in [{', '.join(quote(v) for v in values)}]"


_ENUMS: dict[str, Sequence[str]] = {"memory_type": MEMORY_TYPES, "source": SOURCES}


def checked_enum(values: Sequence[str], kind: str) -> list[str]:
    """``values`` if each is a known ``kind`` (memory_type or source); refused otherwise."""
    allowed = _ENUMS[kind]
    out = []
    for v in values:
        if v not in allowed:
            raise InvalidInputError(f"unknown {kind} {repr(v)[:60]}; allowed: {', '.join(allowed)}")
        out.append(v)
    if not out:
        raise InvalidInputError(f"{kind} list must not be empty")
    return out


def index_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata as the index keeps it for filtering (a copy of the original's)."""
    return dict(metadata)


def stored_metadata(indexed: dict[str, Any]) -> dict[str, Any]:
    """The original's metadata back from an index row (undoes :func:`index_metadata`)."""
    return dict(indexed)


def checked_scope(values: Sequence[str], kind: str) -> list[str]:
    """Scope values to match: each a valid id, or ``""`` for memories without that scope."""
    out = [v if v == "" else validate_id(v, kind) for v in values]
    if not out:
        raise InvalidInputError(f"{kind} list must not be empty")
    return out


def visible(scope_id: str | None, kind: str) -> list[str] | None:
    """What a request scoped to ``scope_id`` (an ``agent_id`` or a ``run_id``) may see: that scope's
    memories and those without one (shared); ``None`` (no scope given): no restriction."""
    return None if scope_id is None else ["", validate_id(scope_id, kind)]


def exactly(scope_id: str | None, kind: str) -> list[str] | None:
    """Only the memories of exactly this scope (never the shared ones); ``None``: no restriction."""
    return None if scope_id is None else [validate_id(scope_id, kind)]


@dataclass(frozen=True)
class MemoryFilter:
    """What a search or listing may return. ``user_id`` is mandatory: no query spans users."""

    user_id: str
    active_only: bool = True
    include_deleted: bool = False
    memory_types: Sequence[str] | None = None
    sources: Sequence[str] | None = ("user_said",)
    min_importance: float | None = None
    topic_id: str | None = None
    session_id: str | None = None
    memory_ids: Sequence[str] | None = None
    created_before_ms: int | None = None
    agent_ids: Sequence[str] | None = None
    """Rows whose ``agent_id`` is one of these (``""``: no agent, the user's shared memories)."""
    run_ids: Sequence[str] | None = None

    def to_expr(self) -> str:
        parts = [f"user_id == {quote(validate_id(self.user_id, 'user_id'))}"]
        if self.active_only:
            parts.append("is_active == true")
        if not self.include_deleted:
            parts.append("deleted_at == 0")
        if self.memory_types is not None:
            parts.append(_in_list("memory_type", checked_enum(self.memory_types, "memory_type")))
        if self.sources is not None:
            parts.append(_in_list("source", checked_enum(self.sources, "source")))
        if self.min_importance is not None:
            parts.append(f"importance >= {self.checked_min_importance()!r}")
        if self.topic_id is not None:
            parts.append(f"topic_id == {quote(validate_id(self.topic_id, 'topic_id'))}")
        if self.session_id is not None:
            parts.append(f"session_id == {quote(validate_id(self.session_id, 'session_id'))}")
        if self.memory_ids is not None:
            parts.append(_in_list("id", [validate_memory_id(m) for m in self.memory_ids]))
        if self.created_before_ms is not None:
            parts.append(f"created_at < {int(self.created_before_ms)}")
        if self.agent_ids is not None:
            parts.append(_in_list("agent_id", checked_scope(self.agent_ids, "agent_id")))
        if self.run_ids is not None:
            parts.append(_in_list("run_id", checked_scope(self.run_ids, "run_id")))
        return " and ".join(parts)

    def checked_min_importance(self) -> float:
        value = float(self.min_importance if self.min_importance is not None else 0.0)
        if not 0.0 <= value <= 1.0:
            raise InvalidInputError("min_importance must be between 0 and 1")
        return value
