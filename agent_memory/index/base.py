"""The vector index interface every backend (Milvus, HelixDB) implements.

The index is a derived, rebuildable view of the originals in the raw store: it
holds what search and filtering need (summary, type, importance, dates, state,
the original's key), the original's content when it is short enough (recall then needs no
read of the original) and the vector. It never holds anything the store lacks.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from agent_memory.embed.base import Vectors
from agent_memory.filters import MemoryFilter, index_metadata, stored_metadata
from agent_memory.model import EmbeddingInfo, IndexRecord, from_ms, to_ms

SCALAR_FIELDS = ["id", "user_id", "session_id", "memory_type", "summary", "importance",
                 "created_at", "topic_id", "is_active", "deleted_at", "source", "storage_key", "context",
                 "agent_id", "run_id", "expires_at", "metadata", "content", "content_held"]
INDEX_SCHEMA = 3
"""The index's field set. 2 added ``agent_id``, ``run_id``, ``expires_at`` and ``metadata``; 3 added
``content`` and ``content_held`` (recall answers from the row). An index built before is refused
with :class:`IndexSchemaError` until ``agent-memory reindex`` rebuilds it from the originals (neither
Milvus 2.3 nor Lite can add a field to a collection); the local mirror does that itself at start."""


def row_content(rec: IndexRecord) -> str:
    """The ``content`` field: empty when the row does not hold the content, and when the content
    is the summary itself (most statements), so a search carries no second copy of it."""
    return "" if rec.content is None or rec.content == rec.summary else rec.content


def record_to_row(rec: IndexRecord, vector: list[float]) -> dict[str, Any]:
    """The flat row both backends store: times as epoch ms, ``deleted_at`` 0 and ``topic_id`` ""
    for none (neither engine filters nulls the same way)."""
    return {
        "id": rec.id, "user_id": rec.user_id, "session_id": rec.session_id,
        "memory_type": rec.memory_type, "summary": rec.summary, "importance": float(rec.importance),
        "created_at": to_ms(rec.created_at), "topic_id": rec.topic_id or "",
        "is_active": rec.is_active, "deleted_at": to_ms(rec.deleted_at) if rec.deleted_at else 0,
        "source": rec.source, "storage_key": rec.storage_key, "context": rec.context,
        "agent_id": rec.agent_id or "", "run_id": rec.run_id or "",
        "expires_at": to_ms(rec.expires_at) if rec.expires_at else 0,
        "metadata": index_metadata(rec.metadata), "content": row_content(rec),
        "content_held": rec.content is not None, "embedding": vector,
    }


def row_to_record(ent: dict[str, Any]) -> IndexRecord:
    return IndexRecord(
        id=ent["id"], user_id=ent["user_id"], session_id=ent["session_id"],
        memory_type=ent["memory_type"], summary=ent["summary"], importance=float(ent["importance"]),
        created_at=from_ms(int(ent["created_at"])), topic_id=ent["topic_id"] or None,
        is_active=bool(ent["is_active"]),
        deleted_at=from_ms(int(ent["deleted_at"])) if ent["deleted_at"] else None,
        source=ent["source"], storage_key=ent["storage_key"], context=ent.get("context") or "",
        agent_id=ent.get("agent_id") or None, run_id=ent.get("run_id") or None,
        expires_at=from_ms(int(ent["expires_at"])) if ent.get("expires_at") else None,
        metadata=stored_metadata(ent.get("metadata") or {}),
        content=(ent.get("content") or ent["summary"]) if ent.get("content_held") else None,
    )


@dataclass(frozen=True)
class SearchHit:
    record: IndexRecord
    similarity: float


class VectorIndex(ABC):
    uri: str

    @abstractmethod
    def ensure(self, embedding: EmbeddingInfo) -> None:
        """Create the collection for this model, or check an existing one was built with it
        (:class:`ModelMismatchError` otherwise)."""

    @abstractmethod
    def write(self, records: list[IndexRecord], vectors: Vectors) -> None:
        """Insert or replace rows by id."""

    @abstractmethod
    def search(self, vector: Vectors, flt: MemoryFilter, limit: int,
               strong: bool = False) -> list[SearchHit]:
        """Nearest rows passing ``flt``, most similar first."""

    def search_many(self, queries: Sequence[tuple[Vectors, MemoryFilter]], limit: int,
                    strong: bool = False) -> list[list[SearchHit]]:
        """:meth:`search` for each ``(vector, filter)``, in order. The change detector searches once
        per new memory of a batch; a backend that can answer several searches in one request
        (HelixDB: one read, one event loop, one transaction) overrides this."""
        return [self.search(vector, flt, limit, strong) for vector, flt in queries]

    @abstractmethod
    def query(self, flt: MemoryFilter, limit: int = 10_000) -> list[IndexRecord]:
        """Rows passing ``flt`` (read-your-writes), in no particular order."""

    @abstractmethod
    def get(self, memory_ids: list[str]) -> list[IndexRecord]:
        """Rows by id, whoever owns them (callers check ownership)."""

    @abstractmethod
    def set_state(self, memory_id: str, is_active: bool, deleted_at: datetime | None) -> None:
        """Change the mutable fields of one row, keeping its vector."""

    @abstractmethod
    def delete(self, memory_ids: list[str]) -> None:
        """Remove rows by id (tiering moves them out; the originals stay)."""

    @abstractmethod
    def delete_user(self, user_id: str) -> int:
        """Remove every row of one user; return how many there were."""

    @abstractmethod
    def count(self) -> int: ...

    @abstractmethod
    def ping(self) -> None:
        """Raise :class:`BackendUnavailableError` when unreachable."""

    @abstractmethod
    def drop(self) -> None:
        """Remove the whole collection (re-index into a fresh one)."""

    def flush(self) -> None:  # noqa: B027 - optional hook
        """Make recent writes efficiently searchable (after bulk loads)."""

    def wait_indexed(self, timeout_s: float = 600.0) -> float:
        """Block until rows written so far are in the vector index (not only searchable by brute
        force); returns the seconds waited. Benchmarks call it so they measure the steady state,
        not a server still building its index. Immediate where indexing is synchronous."""
        return 0.0

    def compact(self, timeout_s: float = 900.0) -> float:
        """Ask the engine to merge its small segments and index the merged ones now, and block until
        it has; returns the seconds waited. Immediate where the engine has no such background work.

        Why a bench calls it: after a bulk load and a few small writes a Milvus server compacts
        and rebuilds HNSW for a minute or more, on the cores the timed recalls run on (27-48 ms of
        server CPU per search in that window against 8-11 ms after it, at 100k rows). A deployment
        reaches the compacted state long before such a load is queried; a bench timing recalls
        inside the window measures the compaction, not the search."""
        return 0.0

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""
