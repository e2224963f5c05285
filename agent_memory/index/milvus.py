"""Milvus backend: Milvus Lite (a file path) or a Milvus server / Zilliz (an http(s) URI).

Settings follow the design: HNSW (M=16, efConstruction=256) on normalized vectors
with the IP metric, ef=128 at search, ``user_id`` as the partition key, Bounded
consistency for recall and Strong for everything that must read its own writes.
Replacing a row is done as delete-then-insert: ``upsert`` on Milvus 2.3.5 loses
rows of a partition-key collection (seen on our machines).
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from typing import Any

import numpy as np
from pymilvus import DataType, MilvusClient
from pymilvus.exceptions import MilvusException

from agent_memory.config import INDEX_CONTENT_FIELD_BYTES
from agent_memory.embed.base import Vectors
from agent_memory.errors import BackendUnavailableError, IndexSchemaError, ModelMismatchError, NotFoundError
from agent_memory.filters import MemoryFilter, quote
from agent_memory.ids import validate_id, validate_memory_id
from agent_memory.index.base import INDEX_SCHEMA, SCALAR_FIELDS, SearchHit, VectorIndex, record_to_row, row_to_record
from agent_memory.index.row_cache import RowCache, UserRows, group, row_cache, search_rows, stack
from agent_memory.model import CONTEXT_INDEX_CHARS, EmbeddingInfo, IndexRecord, to_ms

META_PROPERTY = "agent_memory.embedding"
MAX_QUERY_WINDOW = 16_384  # Milvus caps offset + limit of one query
FLUSH_EVERY = 1_000


class MilvusIndex(VectorIndex):
    def __init__(self, uri: str, collection: str, token: str | None = None,
                 consistency_level: str = "Bounded", row_cache_rows: int = 0) -> None:
        self.uri = uri
        self.collection = collection
        self.consistency_level = consistency_level
        self._dim = 0
        self._unflushed = 0
        self._row_locks = [threading.Lock() for _ in range(64)]
        self.is_server = "://" in uri
        """A Milvus server or Zilliz (a URI), not a Milvus Lite file: writes need no read first, and
        the server seals and indexes segments itself (no periodic flush)."""
        self._cache = row_cache(uri, collection, row_cache_rows) if row_cache_rows and not self.is_server else None
        """Milvus Lite: each user's rows in numpy (:mod:`agent_memory.index.row_cache`)."""
        self._warmed = False
        try:
            self.client = MilvusClient(uri=uri, token=token or "")
        except MilvusException as exc:
            raise BackendUnavailableError(f"cannot open Milvus at {uri}: {exc}") from exc
        except Exception as exc:  # connection errors surface as assorted gRPC/OS errors
            raise BackendUnavailableError(f"cannot open Milvus at {uri}: {exc}") from exc

    # -- schema ---------------------------------------------------------------
    def ensure(self, embedding: EmbeddingInfo) -> None:
        pin = embedding.model_dump()
        if self.client.has_collection(self.collection):
            desc = self.client.describe_collection(self.collection)
            props = desc.get("properties", {})
            found = json.loads(props[META_PROPERTY]) if META_PROPERTY in props else None
            if found is None or {k: found.get(k) for k in ("provider", "model", "dim")} != {
                k: pin[k] for k in ("provider", "model", "dim")
            }:
                raise ModelMismatchError(
                    f"collection {self.collection!r} at {self.uri} was built with embedding model "
                    f"{found} but the configured model is {pin}; run `agent-memory reindex` to "
                    "rebuild the index from the originals with the new model")
            fields = {f["name"] for f in desc.get("fields", [])}
            missing = sorted(set(SCALAR_FIELDS) - fields)
            if missing:
                raise IndexSchemaError(
                    f"collection {self.collection!r} at {self.uri} predates index schema {INDEX_SCHEMA} (no "
                    f"{', '.join(missing)}); run `agent-memory reindex` to rebuild it from the originals")
            self._dim = int(found["dim"])
            self.client.load_collection(self.collection)
            return
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("user_id", DataType.VARCHAR, max_length=128, is_partition_key=True)
        schema.add_field("session_id", DataType.VARCHAR, max_length=128)
        schema.add_field("memory_type", DataType.VARCHAR, max_length=32)
        schema.add_field("summary", DataType.VARCHAR, max_length=4096)
        schema.add_field("importance", DataType.FLOAT)
        schema.add_field("created_at", DataType.INT64)
        schema.add_field("topic_id", DataType.VARCHAR, max_length=128)
        schema.add_field("is_active", DataType.BOOL)
        schema.add_field("deleted_at", DataType.INT64)
        schema.add_field("source", DataType.VARCHAR, max_length=32)
        schema.add_field("storage_key", DataType.VARCHAR, max_length=512)
        schema.add_field("context", DataType.VARCHAR, max_length=4 * CONTEXT_INDEX_CHARS)
        schema.add_field("agent_id", DataType.VARCHAR, max_length=128)
        schema.add_field("run_id", DataType.VARCHAR, max_length=128)
        schema.add_field("expires_at", DataType.INT64)
        schema.add_field("metadata", DataType.JSON)
        schema.add_field("content", DataType.VARCHAR, max_length=INDEX_CONTENT_FIELD_BYTES)
        schema.add_field("content_held", DataType.BOOL)
        schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=embedding.dim)
        index_params = self.client.prepare_index_params()
        index_params.add_index(field_name="embedding", index_type="HNSW", metric_type="IP",
                               params={"M": 16, "efConstruction": 256})
        # the model pin goes in with the collection: a Milvus 2.3.5 server forgets properties set
        # afterwards (alter_collection_properties) when it restarts, and the collection would then
        # look as if it had been built with no model at all
        self.client.create_collection(self.collection, schema=schema, index_params=index_params,
                                      consistency_level=self.consistency_level,
                                      properties={META_PROPERTY: json.dumps(pin)})
        self._dim = embedding.dim

    # -- writes ---------------------------------------------------------------
    def write(self, records: list[IndexRecord], vectors: Vectors) -> None:
        if not records:
            return
        if vectors.shape != (len(records), self._dim):
            raise ValueError(f"expected {len(records)} vectors of dim {self._dim}, got {vectors.shape}")
        rows = [record_to_row(r, v.tolist()) for r, v in zip(records, vectors, strict=True)]
        ids = [r.id for r in records]
        if self.is_server:
            # Delete blindly, then insert (a re-delivery or re-index replaces the row): the server
            # orders both by timestamp, and reading first would be a Strong query that waits for a
            # time tick on every batch (measured: it held the ingest worker at ~20 memories/s).
            # Not ``upsert``: pymilvus 3.0's upsert reports success against a Milvus 2.3.5 server
            # and stores nothing (found by the behaviour suite).
            self._call(self.client.delete, self.collection, ids=ids)
            self._call(self.client.insert, self.collection, rows)
            return
        # Lite: delete only rows that exist — deletes of unknown ids are not free there, Milvus Lite
        # keeps them in its delete log and every later search pays for it.
        existing = [r.id for r in self.get(ids)]
        if existing:
            self._call(self.client.delete, self.collection, ids=existing)
        try:
            self._call(self.client.insert, self.collection, rows)
        except BaseException:
            self._forget(users={r.user_id for r in records})
            raise
        if self._cache is not None:
            self._cache.upsert([_as_stored(r) for r in rows], np.asarray(vectors, dtype=np.float32))
        self._unflushed += len(rows)
        if self._unflushed >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Seal what was written so searches use the HNSW index. Milvus Lite searches unflushed rows
        by brute force in Python: measured 550 ms p50 at 10k rows before a flush, 20 ms after; with
        500 rows unflushed 42 ms, flushed 22 ms. Flushing every 100 rows instead of 1,000 was tried
        and dropped: the Lite ingest worker fell from 789 to 146 memories/s and recall did not get
        faster end to end (``agent-memory bench``), so a tail of up to 1,000 rows stays unflushed.

        A server seals and indexes segments by itself and searches growing ones natively; a flush
        there waits for the segments to be persisted (seconds under load: it was the bulk load's
        bottleneck at 100k) and leaves small segments to compact, so it is skipped."""
        if self.is_server:
            return
        self._call(self.client.flush, self.collection)
        self._unflushed = 0

    def wait_indexed(self, timeout_s: float = 600.0) -> float:
        """A Milvus server builds HNSW for sealed segments in the background, on the same cores."""
        if not self.is_server:
            return 0.0
        t0 = time.monotonic()
        self._call(self.client.flush, self.collection)  # seal the growing segments so they get indexed
        while time.monotonic() - t0 < timeout_s:
            info = self._call(self.client.describe_index, self.collection, "embedding")
            if int(info.get("pending_index_rows", 0)) == 0 and \
                    int(info.get("indexed_rows", 0)) >= int(info.get("total_rows", 0)):
                break
            time.sleep(1.0)
        return time.monotonic() - t0

    def compact(self, timeout_s: float = 900.0) -> float:
        """A server only (Lite has no background compaction): a manual compaction, polled until
        the server reports it completed or ``timeout_s`` passes (a plan the server cannot run ends
        only at its own compaction timeout, 180 s by default), then :meth:`wait_indexed` for the
        merged segments' index."""
        if not self.is_server:
            return 0.0
        t0 = time.monotonic()
        # segments still being flushed when the plan is made can leave it waiting for the timeout
        self.wait_indexed(timeout_s)
        job = self._call(self.client.compact, self.collection)
        while time.monotonic() - t0 < timeout_s:
            if self._call(self.client.get_compaction_state, job) == "Completed":
                break
            time.sleep(1.0)
        self.wait_indexed(max(1.0, timeout_s - (time.monotonic() - t0)))
        return time.monotonic() - t0

    def set_state(self, memory_id: str, is_active: bool, deleted_at: datetime | None) -> None:
        """Read the row, then delete + insert it changed (no working upsert on 2.3.5). Serialized per
        row within the process, so two threads never see the row between the delete and the insert."""
        with self._row_locks[hash(memory_id) % len(self._row_locks)]:
            self._set_state(memory_id, is_active, deleted_at)

    def _set_state(self, memory_id: str, is_active: bool, deleted_at: datetime | None) -> None:
        found = self._call(self.client.query, self.collection,
                           filter=f"id == {quote(validate_memory_id(memory_id))}",
                           output_fields=[*SCALAR_FIELDS, "embedding"], consistency_level="Strong")
        if not found:
            raise NotFoundError(f"memory {memory_id} is not in the index")
        row = dict(found[0])
        row["is_active"] = is_active
        row["deleted_at"] = to_ms(deleted_at) if deleted_at else 0
        row["embedding"] = [float(x) for x in row["embedding"]]
        try:
            self._call(self.client.delete, self.collection, ids=[memory_id])
            self._call(self.client.insert, self.collection, [row])
        except BaseException:
            self._forget(users={row["user_id"]})
            raise
        if self._cache is not None:
            self._cache.upsert([_as_stored(row)], np.asarray([row["embedding"]], dtype=np.float32))

    def delete(self, memory_ids: list[str]) -> None:
        ids = [validate_memory_id(m) for m in memory_ids]
        try:
            for i in range(0, len(ids), 1000):
                self._call(self.client.delete, self.collection, ids=ids[i:i + 1000])
        except BaseException:
            self._forget(ids=ids)
            raise
        if self._cache is not None:
            self._cache.remove(ids)

    def delete_user(self, user_id: str) -> int:
        flt = f"user_id == {quote(validate_id(user_id, 'user_id'))}"
        n = len(self._call(self.client.query, self.collection, filter=flt, output_fields=["id"],
                           limit=MAX_QUERY_WINDOW, consistency_level="Strong"))
        try:
            self._call(self.client.delete, self.collection, filter=flt)
        finally:
            self._forget(users={user_id})
        return n

    def drop(self) -> None:
        if self.client.has_collection(self.collection):
            self.client.drop_collection(self.collection)
        if self._cache is not None:
            self._cache.clear()

    # -- reads ----------------------------------------------------------------
    def search(self, vector: Vectors, flt: MemoryFilter, limit: int,
               strong: bool = False) -> list[SearchHit]:
        expr = flt.to_expr()  # validates the filter's ids, whichever path answers
        rows = self._user_rows(flt.user_id) if self._cache is not None else None
        if rows is not None:
            return search_rows(rows, vector, flt, limit)
        res = self._call(
            self.client.search, self.collection, data=[vector.tolist()], filter=expr,
            limit=limit, output_fields=SCALAR_FIELDS,
            search_params={"metric_type": "IP", "params": {"ef": max(128, limit)}},
            consistency_level="Strong" if strong else self.consistency_level,
        )
        return [SearchHit(row_to_record(h["entity"] | {"id": h["id"]}), float(h["distance"])) for h in res[0]]

    # -- the row cache (Milvus Lite) -------------------------------------------
    def _forget(self, users: set[str] | None = None, ids: list[str] | None = None) -> None:
        if self._cache is not None:
            self._cache.forget(users or (), ids or ())

    def _rows_where(self, expr: str) -> list[dict[str, Any]] | None:
        """Rows with their vectors, or None when there are more than one query returns."""
        rows: list[dict[str, Any]] = self._call(
            self.client.query, self.collection, filter=expr, output_fields=[*SCALAR_FIELDS, "embedding"],
            limit=MAX_QUERY_WINDOW, consistency_level="Strong")
        return None if len(rows) >= MAX_QUERY_WINDOW else rows

    def _grouped(self, rows: list[dict[str, Any]]) -> dict[str, UserRows]:
        return group([row_to_record(r) for r in rows], [r["embedding"] for r in rows], self._dim)

    def _warm(self, cache: RowCache) -> None:
        """Once per index object, when the whole collection fits in the cache: read it all, in one
        query or one per last hex digit of the id (a query returns at most ``MAX_QUERY_WINDOW``
        rows), instead of one query per user at that user's first recall (each pays Lite's filter
        over every row: ~90 ms at 10k)."""
        self._warmed = True
        generation = cache.generation
        n = self.count()
        if n > cache.max_rows:
            return
        # the last digit: ids begin with their creation time (:func:`agent_memory.ids.new_memory_id`)
        pages = ['id != ""'] if n < MAX_QUERY_WINDOW else [f'id like "%{d}"' for d in "0123456789abcdef"]
        rows: list[dict[str, Any]] = []
        for expr in pages:
            page = self._rows_where(expr)
            if page is None:
                return  # a page was cut short: leave it to the per-user loads
            rows += page
        cache.fill(self._grouped(rows), generation)

    def _user_rows(self, user_id: str) -> UserRows | None:
        cache = self._cache
        if cache is None or not self._dim:
            return None
        if not self._warmed:
            self._warm(cache)

        def load() -> UserRows | None:
            rows = self._rows_where(f"user_id == {quote(user_id)}")
            if rows is None:
                return None  # more than one query returns: let Lite search them
            return self._grouped(rows).get(user_id, UserRows([], stack([], self._dim)))
        return cache.get(user_id, load)

    def query(self, flt: MemoryFilter, limit: int = 10_000) -> list[IndexRecord]:
        rows = self._call(self.client.query, self.collection, filter=flt.to_expr(),
                          output_fields=SCALAR_FIELDS, limit=min(limit, MAX_QUERY_WINDOW),
                          consistency_level="Strong")
        return [row_to_record(r) for r in rows]

    def get(self, memory_ids: list[str]) -> list[IndexRecord]:
        ids = [validate_memory_id(m) for m in memory_ids]
        if not ids:
            return []
        rows = self._call(self.client.query, self.collection,
                          filter=f"id in [{', '.join(quote(i) for i in ids)}]",
                          output_fields=SCALAR_FIELDS, consistency_level="Strong")
        return [row_to_record(r) for r in rows]

    def count(self) -> int:
        rows = self._call(self.client.query, self.collection, filter="", output_fields=["count(*)"],
                          consistency_level="Strong")
        return int(rows[0]["count(*)"])

    def ping(self) -> None:
        self._call(self.client.has_collection, self.collection)

    def close(self) -> None:
        self.client.close()
        if self._cache is not None:
            # another process may open the file once it is released: nothing held may outlive that
            self._cache.clear()

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MilvusException as exc:
            raise BackendUnavailableError(f"Milvus call {fn.__name__} failed: {exc}") from exc


def _as_stored(row: dict[str, Any]) -> IndexRecord:
    """A row as a read from Lite gives it back (FLOAT importance is float32 there)."""
    return row_to_record(row | {"importance": float(np.float32(row["importance"]))})
