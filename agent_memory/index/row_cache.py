"""Each user's index rows and vectors held in this process, for an embedded index to search in numpy.

Why: Milvus Lite 3.x is pure Python running in the caller's process (a gRPC server on a thread).
Its filtered top-100 search over 10,000 rows cost 43-86 ms by itself (fresh process, one caller),
most of it evaluating the filter, walking HNSW with a bitmap and encoding protobuf — for a user who
holds a hundred rows. A matrix product over those hundred rows takes microseconds.

The embedded HelixDB engine is served the same way (its filtered searches cost 83 / 118 ms at 10k,
and a vector search with a condition on an indexed field, a topic or a list of ids, returned
nothing in some cases: see tests/integration/test_row_cache.py).

Why it is safe only for an embedded index: Milvus Lite takes an exclusive lock on its folder, and an
embedded HelixDB folder is opened by one process, so every write to it passes through this process
and updates what it touches here. A Milvus or HelixDB server has other writers (the ingest Lambda,
other recall containers) and is never cached.

Consistency: a write updates the users held after it reaches the index (or, when it failed half
way, drops them) and bumps a generation counter; a load that began before is not kept (it may have
read the old rows), so a search never answers from rows older than a write that finished before it
began.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from agent_memory.embed.base import Vectors
from agent_memory.filters import MemoryFilter
from agent_memory.index.base import SearchHit
from agent_memory.model import IndexRecord, from_ms, to_ms


@dataclass(frozen=True)
class UserRows:
    records: list[IndexRecord]
    vectors: Vectors
    """One row per record, float32, in the same order."""


Loader = Callable[[], "UserRows | None"]


class RowCache:
    """Least recently used users' rows, at most ``max_rows`` rows in all. Thread-safe."""

    def __init__(self, max_rows: int) -> None:
        self.max_rows = max_rows
        self._users: OrderedDict[str, UserRows] = OrderedDict()
        self._owner: dict[str, str] = {}
        self._rows = 0
        self._generation = 0
        self._lock = threading.Lock()

    def get(self, user_id: str, load: Loader) -> UserRows | None:
        """The user's rows, loaded with ``load`` on a miss (``None``: too many to hold; the caller
        searches the index itself)."""
        with self._lock:
            hit = self._users.get(user_id)
            if hit is not None:
                self._users.move_to_end(user_id)
                return hit
            generation = self._generation
        rows = load()
        if rows is not None and len(rows.records) <= self.max_rows:
            with self._lock:
                if generation == self._generation and user_id not in self._users:
                    self._put(user_id, rows)
        return rows

    def fill(self, by_user: dict[str, UserRows], generation: int) -> None:
        """Hold many users' rows at once (a warm-up read of the whole index), unless a write
        happened since ``generation`` was read."""
        with self._lock:
            if generation != self._generation:
                return
            for user_id, rows in by_user.items():
                if user_id not in self._users and self._rows + len(rows.records) <= self.max_rows:
                    self._put(user_id, rows)

    @property
    def generation(self) -> int:
        with self._lock:
            return self._generation

    def _put(self, user_id: str, rows: UserRows) -> None:
        self._users[user_id] = rows
        self._rows += len(rows.records)
        self._owner.update((r.id, user_id) for r in rows.records)
        while self._rows > self.max_rows and len(self._users) > 1:
            self._evict(next(iter(self._users)))

    def _evict(self, user_id: str) -> None:
        rows = self._users.pop(user_id, None)
        if rows is not None:
            self._rows -= len(rows.records)
            for r in rows.records:
                self._owner.pop(r.id, None)

    def upsert(self, records: list[IndexRecord], vectors: Vectors) -> None:
        """Rows just written (replacing any with the same id) into the users held: the agent loop
        remembers after a turn and recalls before the next, so dropping the user on each write
        would make most recalls read Lite again."""
        with self._lock:
            self._generation += 1
            by_user: dict[str, list[int]] = {}
            for i, r in enumerate(records):
                by_user.setdefault(r.user_id, []).append(i)
            for user_id, idx in by_user.items():
                held = self._users.get(user_id)
                if held is None:
                    continue
                new_ids = {records[i].id for i in idx}
                kept = [k for k, r in enumerate(held.records) if r.id not in new_ids]
                self._replace(user_id, UserRows([held.records[k] for k in kept] + [records[i] for i in idx],
                                                np.vstack([held.vectors[kept], vectors[idx]]).astype(np.float32)))

    def remove(self, memory_ids: Iterable[str]) -> None:
        """Rows just deleted, out of the users held."""
        with self._lock:
            self._generation += 1
            gone = set(memory_ids)
            for user_id in {self._owner[m] for m in gone if m in self._owner}:
                held = self._users[user_id]
                kept = [k for k, r in enumerate(held.records) if r.id not in gone]
                self._replace(user_id, UserRows([held.records[k] for k in kept], held.vectors[kept]))

    def restate(self, memory_id: str, is_active: bool, deleted_at: datetime | None) -> None:
        """A row whose state was just changed in place (HelixDB sets the two properties without
        reading the row back), changed the same way here."""
        with self._lock:
            self._generation += 1
            user_id = self._owner.get(memory_id)
            if user_id is None:
                return
            held = self._users[user_id]
            stored = from_ms(to_ms(deleted_at)) if deleted_at else None  # the index keeps milliseconds
            records = [r.model_copy(update={"is_active": is_active, "deleted_at": stored})
                       if r.id == memory_id else r for r in held.records]
            self._users[user_id] = UserRows(records, held.vectors)

    def _replace(self, user_id: str, rows: UserRows) -> None:
        self._evict(user_id)
        self._put(user_id, rows)

    def forget(self, user_ids: Iterable[str] = (), memory_ids: Iterable[str] = ()) -> None:
        """Drop these users' rows and the rows' of whoever owns these memories."""
        with self._lock:
            self._generation += 1
            for m in memory_ids:
                owner = self._owner.get(m)
                if owner is not None:
                    self._evict(owner)
            for u in user_ids:
                self._evict(u)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._users.clear()
            self._owner.clear()
            self._rows = 0


_CACHES: dict[tuple[str, str], RowCache] = {}
_CACHES_LOCK = threading.Lock()


def row_cache(location: str, collection: str, max_rows: int) -> RowCache:
    """One cache per embedded index (its file or folder) and collection in this process: every
    index object on it (the service's, a re-index's, a tiering job's) writes through the same one,
    sized by the first (two caches of one index would each miss the other's writes)."""
    key = (os.path.realpath(location), collection)
    with _CACHES_LOCK:
        return _CACHES.setdefault(key, RowCache(max_rows))


def stack(vectors: Sequence[Sequence[float]] | Sequence[Vectors], dim: int) -> Vectors:
    """Rows' vectors as one float32 matrix (an empty user gives a 0 x dim one)."""
    out: Vectors = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), dim)
    return out


def search_rows(rows: UserRows, vector: Vectors, flt: MemoryFilter, limit: int,
                cosine: bool = False) -> list[SearchHit]:
    """What the index's search answers (inner product, or cosine for HelixDB; most similar
    first) over one user's held rows: exact, where an HNSW walk is approximate."""
    keep = [i for i, r in enumerate(rows.records) if flt.admits(r)]
    if not keep or limit <= 0:
        return []
    q = np.asarray(vector, dtype=np.float32).ravel()
    held = rows.vectors[keep]
    scores = held @ q
    if cosine:
        scores = scores / np.maximum(np.linalg.norm(held, axis=1) * float(np.linalg.norm(q)), 1e-12)
    order = np.argsort(-scores, kind="stable")[:limit]
    return [SearchHit(rows.records[keep[i]], float(scores[i])) for i in order]


def group(records: list[IndexRecord], vectors: Sequence[Sequence[float]] | Sequence[Vectors],
          dim: int) -> dict[str, UserRows]:
    """Rows read from an index, by user."""
    by_user: dict[str, tuple[list[IndexRecord], list[Any]]] = {}
    for r, v in zip(records, vectors, strict=True):
        recs, vecs = by_user.setdefault(r.user_id, ([], []))
        recs.append(r)
        vecs.append(v)
    return {u: UserRows(recs, stack(vecs, dim)) for u, (recs, vecs) in by_user.items()}
