"""Read a mem0 dump: what ``mem0.Memory.get_all(filters=...)`` returns, saved as JSON.

Accepted shapes: the ``{"results": [...]}`` object ``get_all`` returns, a bare list of its items,
or JSON Lines of items. Each item (``id``, ``memory``, ``metadata``, ``created_at``,
``updated_at``, ``user_id``, ``agent_id``, ``run_id``, ``role``, ...) becomes an export record:

- the memory id is mem0's UUID without dashes (our ids are 32 hex), so importing the same dump
  twice, or a dump taken later, updates the same memories instead of adding copies;
- ``memory`` is the content, ``metadata`` is kept, ``created_at`` is kept (a naive time is
  taken as UTC, as mem0 writes UTC), ``updated_at`` and mem0's own fields go to provenance;
- a memory mem0 took from an ``assistant`` message is ``agent_inferred``, others ``user_said``;
- the user comes from the item, else from the import's ``--user``; mem0's ``agent_id`` and
  ``run_id`` are this service's scopes of the same names, ``expiration_date`` its ``expires_at``
  (the start of the next day, UTC, when mem0 stops showing the memory).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from agent_memory.model import utcnow
from agent_memory.portability.importer import Convert
from agent_memory.portability.records import FORMAT

_MEM0_FIELDS = ("id", "hash", "updated_at", "agent_id", "run_id", "role", "actor_id", "expiration_date")


def mem0_items(text: str) -> Iterator[tuple[str, Any]]:
    """``(where, item)`` pairs of a dump file's text, in any of the accepted shapes."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        doc = doc["results"]
    if isinstance(doc, list):
        yield from ((f"item {i}", item) for i, item in enumerate(doc, 1))
        return
    yield from ((f"line {i}", line) for i, line in enumerate(text.splitlines(), 1))


def mem0_converter(user_id: str | None, *, summary_chars: int = 512, importance: float = 0.5) -> Convert:
    """A converter from one mem0 item to an export record (validated afterwards as any record)."""

    def convert(item: dict[str, Any]) -> dict[str, Any]:
        content = item.get("memory")
        if not isinstance(content, str):
            raise ValueError("a mem0 item needs its text in 'memory'")
        try:
            memory_id = uuid.UUID(str(item.get("id"))).hex
        except ValueError:
            raise ValueError(f"mem0 id {str(item.get('id'))[:60]!r} is not a UUID") from None
        owner = item.get("user_id") or user_id
        if not owner:
            raise ValueError("the item has no user_id: give the user to import for (--user)")
        created = _utc(item.get("created_at")) or utcnow()
        metadata = item.get("metadata") or {}
        return {
            "format": FORMAT, "memory_id": memory_id, "user_id": owner, "session_id": "default",
            "content": content, "summary": content.strip()[:summary_chars],
            "memory_type": "task" if metadata.get("memory_type") == "procedural_memory" else "fact",
            "importance": importance, "source": "agent_inferred" if item.get("role") == "assistant" else "user_said",
            "agent_id": item.get("agent_id"), "run_id": item.get("run_id"),
            "expires_at": expiry_of(item.get("expiration_date")),
            "metadata": metadata, "created_at": created,
            "stored_at": _utc(item.get("updated_at")) or created,  # the same on every import of the item
            "provenance": {"kind": "import", "from": "mem0",
                           "mem0": {k: item[k] for k in _MEM0_FIELDS if item.get(k) is not None}},
        }

    return convert


def expiration_day(value: Any) -> str | None:
    """mem0's ``expiration_date`` (a ``YYYY-MM-DD`` text, a date or a datetime) as its day."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    try:
        return date.fromisoformat(str(value)[:10]).isoformat()
    except ValueError:
        raise ValueError("expiration_date must be a date in YYYY-MM-DD format") from None


def expiry_of(value: Any) -> datetime | None:
    """mem0 hides a memory from the day after its ``expiration_date``: that instant, in UTC."""
    day = expiration_day(value)
    return None if day is None else datetime.combine(date.fromisoformat(day) + timedelta(days=1), time(), UTC)


def _utc(value: Any) -> datetime | None:
    if not value:
        return None
    when = datetime.fromisoformat(str(value))
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when
