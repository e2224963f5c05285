"""HelixDB backend: the embedded engine (``helix+embedded://<folder>``) or a HelixDB server
(``helix+http://host:6969``, ``helix+https://...``), through the ``helix-db`` SDK.

Each memory is one node labelled with the collection name. Where the engine searches (a
server; an embedded collection made before the packed vectors below), its vector index carries
``user_id`` as the tenant property, so every vector search names its user and the
engine searches that user's vectors only; the remaining conditions (active, deleted,
types, sources, importance) are post-filters on the candidates, and a request's ``filters``
(metadata, session, topic, dates) are applied to them in Python (:func:`agent_memory.filters.matches`,
the same semantics as the Milvus expression). Post-filtering can
return fewer rows than asked when many of the nearest are filtered out, so each
search also counts the user's rows and searches again, wider, when more could exist.

The engine's walk is approximate and, in helix-db-embedded 0.3.3, returns nothing at all for a
condition on an indexed field (topic, ids) when asked for more rows than the user holds. So each
search also counts the user's rows that pass its conditions: when the walk was asked for all of
them and returned fewer, those rows are read and scored exactly here (logged as a warning). A
search among given ids is always scored here: the walk never matches the ``id`` condition.

Queries are built with the SDK's DSL: values travel as typed JSON, never as query
text, so no user string can change a query's shape. Ids are still validated exactly
as for Milvus, so both backends accept and refuse the same inputs.

Embedded, vectors are held by this process, not by the engine's vector index: a new embedded
collection stores each vector as packed float32 bytes (base64 text, ``embedding_f32``) with no
vector index, and a search is exact, over the user's rows in numpy (the row cache of
:mod:`agent_memory.index.row_cache`, or the user's rows read for the search when the cache is
off). Why: the engine's per-user vector index made every write cost 3-7 ms per memory, growing
with the user's row count (helix-db-embedded 0.3.3, 100 writes to a user holding 0 / 700 rows:
396 / 711 ms with the index, 257 / 216 ms without), which held embedded ingest near 60 memories/s,
while the row cache had already taken the searches off the engine. A collection made before (or
a server's, ``helix+http``) keeps the engine's vector index and its search; the meta node says
which (``vectors``: ``engine`` or ``in_process``).

``$distance`` of the cosine metric is ``(1 - cos) / 2``; hits report ``1 - 2 * d``, the
cosine, which is what Milvus' IP on normalized vectors reports.

One embedded folder is opened once per process (a second handle would not see the
first one's writes) and by one process at a time: use the HTTP mode to share an index.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, TypeVar

import helixdb as hx
import numpy as np

from agent_memory.embed.base import Vectors
from agent_memory.errors import BackendUnavailableError, IndexSchemaError, ModelMismatchError, NotFoundError
from agent_memory.filters import MemoryFilter, checked_enum, checked_scope, matches, where_terms
from agent_memory.ids import validate_id, validate_memory_id
from agent_memory.index.base import INDEX_SCHEMA, SCALAR_FIELDS, SearchHit, VectorIndex, record_to_row, row_to_record
from agent_memory.index.helix_transport import PreEncodedRequest, install_fast_bytes_lowering
from agent_memory.index.row_cache import RowCache, UserRows, group, row_cache, search_rows, stack
from agent_memory.model import EmbeddingInfo, IndexRecord, to_ms

_log = logging.getLogger(__name__)

EMBEDDED = "helix+embedded://"
REMOTE = ("helix+http://", "helix+https://")
WRITE_BATCH = 200  # rows per request: one request per row is ~10x slower, huge ones fail
MAX_CANDIDATES = 16_384
INDEX_BUILD_TIMEOUT_S = 120.0
WRITE_RETRIES = 6
PLAN_RETRIES = 3
PLANNER_ERROR = "planner error: unsupported cascades plan"
T = TypeVar("T")
SEARCH_BATCH = 8
"""Searches per read request in :meth:`HelixIndex.search_many`. The engine plans a request as a
whole, and its planner's time grows faster than the request: 8 searches took 21-42 ms, 32 took
187 ms and 100 took 880 ms (one search alone: 7 ms), and a request of 100 once failed with
"planner error: unsupported cascades plan". Eight per request keeps the saving on calls."""
ID_LOOKUP_MAX = 64
"""Ids per ``is_in`` lookup. The engine answers ``is_in`` on the unique ``id`` index only for up
to 64 values; from 65 on it scans every node of the label (measured on helix-db-embedded 0.3.3:
64 ids 6 ms, 65 ids 85 ms at 2k nodes; 100 ids 2.6 s at 10k). Ingest batches of 100 (since
``ingest_batch_size`` went from 10 to 100) crossed that line, and every replace-by-id write
scanned the whole collection: the ten-fold slower ingest of issue 19. Longer id lists are
split into lookups of this size inside one request (one transaction)."""


def _to_node(row: dict[str, Any]) -> dict[str, Any]:
    """A row as node properties: ``metadata`` as JSON text (filtered after the search, in Python)."""
    return {**row, "metadata": json.dumps(row["metadata"], ensure_ascii=False, sort_keys=True)}


def _record(node: dict[str, Any]) -> IndexRecord:
    meta = node.get("metadata")
    return row_to_record({**node, "metadata": json.loads(meta) if isinstance(meta, str) and meta else {}})


def predicates(flt: MemoryFilter) -> tuple[str, list[hx.Predicate]]:
    """The validated user id and the post-filter predicates of ``flt`` (the same checks as
    :meth:`MemoryFilter.to_expr`, so a value Milvus refuses is refused here too)."""
    user_id = validate_id(flt.user_id, "user_id")
    P = hx.Predicate
    preds: list[hx.Predicate] = []
    if flt.active_only:
        preds.append(P.eq("is_active", True))
    if not flt.include_deleted:
        preds.append(P.eq("deleted_at", 0))
    if flt.memory_types is not None:
        preds.append(P.is_in("memory_type", checked_enum(flt.memory_types, "memory_type")))
    if flt.sources is not None:
        preds.append(P.is_in("source", checked_enum(flt.sources, "source")))
    if flt.min_importance is not None:
        preds.append(P.gte("importance", flt.checked_min_importance()))
    if flt.topic_id is not None:
        preds.append(P.eq("topic_id", validate_id(flt.topic_id, "topic_id")))
    if flt.session_id is not None:
        preds.append(P.eq("session_id", validate_id(flt.session_id, "session_id")))
    if flt.memory_ids is not None:
        preds.append(P.is_in("id", [validate_memory_id(m) for m in flt.memory_ids]))
    if flt.created_before_ms is not None:
        preds.append(P.lt("created_at", int(flt.created_before_ms)))
    if flt.agent_ids is not None:
        preds.append(P.is_in("agent_id", checked_scope(flt.agent_ids, "agent_id")))
    if flt.run_ids is not None:
        preds.append(P.is_in("run_id", checked_scope(flt.run_ids, "run_id")))
    if flt.where is not None:
        where_terms(flt.where)  # the same checks as Milvus; the conditions run in Python (``matches``)
    if flt.live_at_ms is not None:
        preds.append(P.or_([P.eq("expires_at", 0), P.gt("expires_at", int(flt.live_at_ms))]))
    if flt.expired_at_ms is not None:
        preds += [P.gt("expires_at", 0), P.lte("expires_at", int(flt.expired_at_ms))]
    return user_id, preds


def id_chunks(ids: list[str]) -> list[list[str]]:
    """``ids`` in lookups the engine answers from its id index (:data:`ID_LOOKUP_MAX` each)."""
    return [ids[i:i + ID_LOOKUP_MAX] for i in range(0, len(ids), ID_LOOKUP_MAX)]


def pack_vector(vector: Vectors) -> str:
    """A vector as the text property an in-process collection stores (float32, base64)."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def unpack_vector(text: str, dim: int) -> Vectors:
    out: Vectors = np.frombuffer(base64.b64decode(text), dtype="<f4")
    if out.shape != (dim,):
        raise BackendUnavailableError(f"a stored vector has {out.size} values, the collection {dim}")
    return out


class _SearchPlan(NamedTuple):
    """One search of a batch: the validated user, the engine's post-filters, the query vector."""

    user_id: str
    preds: list[hx.Predicate]
    vector: list[float]
    flt: MemoryFilter


class _Found(NamedTuple):
    """One search's answer from the engine: its rows (after the Python-side filters) with their
    distance, the user's row count, how many rows the engine returned and how many it should
    have (0 when the walk covered only part of the user's rows, where a miss cannot be told)."""

    hits: list[tuple[IndexRecord, float]]
    total: int
    returned: int
    expected: int

    @property
    def short(self) -> bool:
        return self.returned < self.expected


class _Shared:
    """One embedded engine handle per folder and process, reference counted."""

    lock: ClassVar[threading.Lock] = threading.Lock()
    handles: ClassVar[dict[str, tuple[hx.Client, int]]] = {}
    writers: ClassVar[dict[int, threading.Lock]] = {}

    @classmethod
    def open(cls, root: Path, database: str) -> hx.Client:
        key = f"{root.resolve()}::{database}"
        with cls.lock:
            client, refs = cls.handles.get(key, (None, 0))
            if client is None:
                root.mkdir(parents=True, exist_ok=True)
                client = hx.Client.embedded(hx.Disk(str(root.resolve()), database))
            cls.handles[key] = (client, refs + 1)
            return client

    @classmethod
    def write_lock(cls, client: hx.Client) -> threading.Lock:
        with cls.lock:
            return cls.writers.setdefault(id(client), threading.Lock())

    @classmethod
    def release(cls, client: hx.Client) -> None:
        with cls.lock:
            for key, (c, refs) in list(cls.handles.items()):
                if c is client:
                    if refs > 1:
                        cls.handles[key] = (c, refs - 1)
                    else:
                        del cls.handles[key]
                        c.close()
                    return


class HelixIndex(VectorIndex):
    def __init__(self, uri: str, collection: str, api_key: str | None = None, row_cache_rows: int = 0,
                 engine_vectors: bool | None = None) -> None:
        """``engine_vectors``: how a collection made here holds its vectors (None: in process when
        embedded, the engine's vector index on a server). An existing collection keeps its own."""
        self.uri = uri
        self.label = validate_id(collection, "collection").replace(".", "_").replace(":", "_")
        self.meta_label = f"{self.label}__meta"
        self._dim = 0
        self._embedded = uri.startswith(EMBEDDED)
        self._new_engine_vectors = not self._embedded if engine_vectors is None else engine_vectors
        self._engine_vectors = self._new_engine_vectors
        """This collection's vectors are in the engine's vector index (else: packed, searched here)."""
        self._cache: RowCache | None = None
        """Embedded only (one process owns the folder): each user's rows in numpy
        (:mod:`agent_memory.index.row_cache`). A server has other writers."""
        if self._embedded and row_cache_rows:
            self._cache = row_cache(uri.removeprefix(EMBEDDED) or ".", self.label, row_cache_rows)
        self._warmed = False
        try:
            if self._embedded:
                install_fast_bytes_lowering()
                self.client = _Shared.open(Path(uri.removeprefix(EMBEDDED) or "."), "agent_memory")
            elif uri.startswith(REMOTE):
                self.client = hx.Client.server(uri.removeprefix("helix+"), api_key=api_key)
            else:
                raise ValueError(f"not a HelixDB URI: {uri!r} (use {EMBEDDED}<folder> or helix+http://host:port)")
        except hx.HelixError as exc:
            hint = " (pip install 'agent-memory[helix]' for the embedded engine)" if self._embedded else ""
            raise BackendUnavailableError(f"cannot open HelixDB at {uri}: {exc}{hint}") from exc

    # -- schema ---------------------------------------------------------------
    def _vector_spec(self, dim: int) -> hx.IndexSpec:
        return hx.IndexSpec.node_vector(self.label, "embedding", dim, hx.VectorDistanceMetric.COSINE, "user_id")

    def _scalar_specs(self) -> list[hx.IndexSpec]:
        return [hx.IndexSpec.node_unique_equality(self.label, "id"),
                hx.IndexSpec.node_equality(self.label, "user_id"),
                hx.IndexSpec.node_equality(self.label, "topic_id")]

    def ensure(self, embedding: EmbeddingInfo) -> None:
        pin = embedding.model_dump()
        found = self._read(hx.read_batch().var_as(
            "m", hx.g().n_with_label(self.meta_label).value_map([*pin, "schema", "vectors"])).returning(["m"]))["m"]
        if found:
            have = found[0]
            if {k: have.get(k) for k in ("provider", "model", "dim")} != {
                    k: pin[k] for k in ("provider", "model", "dim")}:
                raise ModelMismatchError(
                    f"HelixDB index {self.label!r} at {self.uri} was built with embedding model "
                    f"{have} but the configured model is {pin}; run `agent-memory reindex` to "
                    "rebuild the index from the originals with the new model")
            if int(have.get("schema") or 1) < INDEX_SCHEMA:
                raise IndexSchemaError(
                    f"HelixDB index {self.label!r} at {self.uri} predates index schema {INDEX_SCHEMA} (schema "
                    f"{int(have.get('schema') or 1)}); run `agent-memory reindex` to rebuild it from the originals")
            self._dim = int(have["dim"])
            self._engine_vectors = (have.get("vectors") or "engine") == "engine"
            return
        self._engine_vectors = self._new_engine_vectors
        batch = hx.write_batch()
        specs = [*([self._vector_spec(embedding.dim)] if self._engine_vectors else []), *self._scalar_specs()]
        for i, spec in enumerate(specs):
            batch = batch.var_as(f"op{i}", hx.g().create_index_if_not_exists(spec))
        ops = self._write(batch.returning([f"op{i}" for i in range(len(specs))]))
        self._await_operations([op["operation_id"] for op in ops.values() if op.get("operation_id")])
        self._write(hx.write_batch().var_as("m", hx.g().add_n(
            self.meta_label, [*pin.items(), ("schema", INDEX_SCHEMA),
                              ("vectors", "engine" if self._engine_vectors else "in_process")])))
        self._dim = embedding.dim

    def _await_operations(self, operation_ids: list[str]) -> None:
        """Index creation is asynchronous: wait until every build has succeeded."""
        deadline = time.monotonic() + INDEX_BUILD_TIMEOUT_S
        for op in operation_ids:
            while True:
                status = self._read(hx.read_batch().var_as(
                    "s", hx.g().get_index_operation(op)).returning(["s"]))["s"]
                if status.get("status") == "succeeded":
                    break
                if status.get("status") in ("aborted", "failed") or time.monotonic() > deadline:
                    raise BackendUnavailableError(f"HelixDB index build {op} did not succeed: {status}")
                time.sleep(0.05)

    # -- writes ---------------------------------------------------------------
    def write(self, records: list[IndexRecord], vectors: Vectors) -> None:
        if not records:
            return
        if vectors.shape != (len(records), self._dim):
            raise ValueError(f"expected {len(records)} vectors of dim {self._dim}, got {vectors.shape}")
        field = self._vector_field
        add = hx.write_batch().var_as("n", hx.g().add_n(
            self.label, [(f, hx.PropertyInput.param(f)) for f in [*SCALAR_FIELDS, field]]))
        for start in range(0, len(records), WRITE_BATCH):
            part = records[start:start + WRITE_BATCH]
            rows = [self._node(r, v) for r, v in zip(part, vectors[start:start + WRITE_BATCH], strict=True)]
            # Replace = drop the existing node of each id, then add: one request, one transaction.
            # The ids are literal lists of at most ID_LOOKUP_MAX: ``is_in_param`` scans every node
            # (250 ms at 4k nodes), and so does a literal ``is_in`` of more than 64 values, while a
            # shorter literal one uses the unique index. Values are typed JSON either way.
            try:
                self._write(self._drop_ids(hx.write_batch(), [r.id for r in part]).for_each_param("rows", add),
                            rows=rows)
            except BaseException:
                self._forget(users={r.user_id for r in part})
                raise
            if self._cache is not None:
                self._cache.upsert([_record(n) for n in rows],
                                   np.asarray(vectors[start:start + WRITE_BATCH], dtype=np.float32))

    @property
    def _vector_field(self) -> str:
        return "embedding" if self._engine_vectors else "embedding_f32"

    def _node(self, record: IndexRecord, vector: Vectors) -> dict[str, Any]:
        if self._engine_vectors:
            return _to_node(record_to_row(record, vector.tolist()))
        row = _to_node(record_to_row(record, []))
        del row["embedding"]
        return {**row, "embedding_f32": pack_vector(vector)}

    def _by_ids(self, ids: list[str]) -> hx.Traversal:
        """Nodes of these ids, at most :data:`ID_LOOKUP_MAX` of them (so the id index answers)."""
        if len(ids) > ID_LOOKUP_MAX:
            raise ValueError(f"{len(ids)} ids in one lookup; split them (at most {ID_LOOKUP_MAX})")
        return hx.g().n_with_label_where(self.label, hx.Predicate.is_in("id", ids))

    def _drop_ids(self, batch: hx.WriteBatch, ids: list[str]) -> hx.WriteBatch:
        """``batch`` plus steps dropping the nodes of ``ids``, one indexed lookup per chunk."""
        for k, chunk in enumerate(id_chunks(ids)):
            batch = batch.var_as(f"drop{k}", self._by_ids(chunk).drop())
        return batch

    def set_state(self, memory_id: str, is_active: bool, deleted_at: datetime | None) -> None:
        try:
            self._set_state(memory_id, is_active, deleted_at)
        except BaseException:
            self._forget(ids=[memory_id])
            raise
        if self._cache is not None:
            self._cache.restate(memory_id, is_active, deleted_at)

    def _set_state(self, memory_id: str, is_active: bool, deleted_at: datetime | None) -> None:
        changed = self._write(hx.write_batch().var_as("x", hx.g().n_with_label_where(
            self.label, hx.Predicate.eq("id", validate_memory_id(memory_id)))
            .set_property("is_active", is_active)
            .set_property("deleted_at", to_ms(deleted_at) if deleted_at else 0)).returning(["x"]))["x"]
        if not changed:
            raise NotFoundError(f"memory {memory_id} is not in the index")

    def delete(self, memory_ids: list[str]) -> None:
        ids = [validate_memory_id(m) for m in memory_ids]
        try:
            for i in range(0, len(ids), WRITE_BATCH):
                self._write(self._drop_ids(hx.write_batch(), ids[i:i + WRITE_BATCH]))
        except BaseException:
            self._forget(ids=ids)
            raise
        if self._cache is not None:
            self._cache.remove(ids)

    def delete_user(self, user_id: str) -> int:
        user_id = validate_id(user_id, "user_id")
        try:
            found = self._write(hx.write_batch().var_as("n", self._of_user(user_id).count())
                                .var_as("d", self._of_user(user_id).drop()).returning(["n"]))
        finally:
            self._forget(users={user_id})
        return int(found["n"])

    def _of_user(self, user_id: str) -> hx.Traversal:
        return hx.g().n_with_label_where(self.label, hx.Predicate.eq("user_id", user_id))

    def drop(self) -> None:
        """Remove every node and index of this collection (a re-index starts clean)."""
        try:
            dim = self._read(hx.read_batch().var_as(
                "m", hx.g().n_with_label(self.meta_label).value_map(["dim"])).returning(["m"]))["m"]
            batch = (hx.write_batch().var_as("a", hx.g().n_with_label(self.label).drop())
                     .var_as("b", hx.g().n_with_label(self.meta_label).drop()))
            self._write(batch)
            specs = [*([self._vector_spec(int(dim[0]["dim"]))] if dim else []), *self._scalar_specs()]
            pending = []
            for spec in specs:
                with suppress(BackendUnavailableError):  # never created
                    op = self._write(hx.write_batch().var_as("x", hx.g().drop_index(spec)).returning(["x"]))["x"]
                    pending += [op["operation_id"]] if op.get("operation_id") else []
            # Dropping is asynchronous too: wait, or an ``ensure`` right after (a re-index into the
            # same collection) finds the index "busy in lifecycle state dropping".
            self._await_operations(pending)
        finally:
            self._dim = 0
            if self._cache is not None:
                self._cache.clear()

    # -- reads ----------------------------------------------------------------
    def _projection(self, distance: bool = False) -> list[hx.Projection]:
        return [hx.Projection.property(f) for f in SCALAR_FIELDS] + (
            [hx.Projection.property("$distance")] if distance else [])

    def search(self, vector: Vectors, flt: MemoryFilter, limit: int,
               strong: bool = False) -> list[SearchHit]:
        """Reads are always read-your-writes here, so ``strong`` changes nothing."""
        return self.search_many([(vector, flt)], limit, strong)[0]

    def search_many(self, queries: Sequence[tuple[Vectors, MemoryFilter]], limit: int,
                    strong: bool = False) -> list[list[SearchHit]]:
        """All the searches in one read request (a batch's change detection: one per new memory),
        then, for any whose post-filter kept fewer than ``limit`` of its nearest rows while its
        user has more, that search again over all of the user's rows. Embedded: exact, over each
        user's rows from the row cache (or read once per call when it is off)."""
        if self._dim and (self._cache is not None or not self._engine_vectors):
            for _, flt in queries:
                predicates(flt)  # the same validation, whichever path answers
            held: dict[str, UserRows] = {}  # without the cache: each user's rows read once per call
            for _, flt in queries:
                if flt.user_id not in held:
                    held[flt.user_id] = self._user_rows(flt.user_id)
            return [search_rows(held[flt.user_id], vector, flt, limit, cosine=True) for vector, flt in queries]
        plans = [_SearchPlan(*predicates(flt), [float(x) for x in vector.tolist()], flt) for vector, flt in queries]
        fetch = min(MAX_CANDIDATES, max(2 * limit, limit + 32))
        walked = [i for i, p in enumerate(plans) if p.flt.memory_ids is None]
        answers = [found for j in range(0, len(walked), SEARCH_BATCH)
                   for found in self._search_round([plans[i] for i in walked[j:j + SEARCH_BATCH]], fetch)]
        rounds = dict(zip(walked, answers, strict=True))
        out = []
        for i, plan in enumerate(plans):
            found = rounds.get(i)
            if found is None:
                # The engine's vector walk does not match its ``id`` property in a filter
                # (helix-db-embedded 0.3.3 returns nothing): a search among given ids scores them here.
                out.append(self._exact(plan, limit))
                continue
            if len(found.hits) < limit and found.total > fetch and fetch < MAX_CANDIDATES:
                found = self._search_round([plan], min(MAX_CANDIDATES, found.total))[0]  # take all the user's rows
            if found.short:
                # The walk was asked for every row of the user and came back with fewer than pass
                # the filter: the approximate search lost some. Score those rows exactly.
                _log.warning("HelixDB's vector search returned %d of the %d rows it should have; "
                             "searching them exactly", found.returned, found.expected)
                out.append(self._exact(plan, limit))
                continue
            hits = sorted(found.hits, key=lambda h: h[1])
            out.append([SearchHit(r, 1.0 - 2.0 * d) for r, d in hits[:limit]])
        return out

    def _exact(self, plan: _SearchPlan, limit: int) -> list[SearchHit]:
        """The plan's search over the user's rows that pass its filters, scored here (cosine, as
        the engine's ``1 - 2 * distance``): one read of those rows with their vectors."""
        return search_rows(self._read_user(plan.user_id, plan.preds), np.asarray(plan.vector, dtype=np.float32),
                           plan.flt, limit, cosine=True)

    def _search_round(self, plans: list[_SearchPlan], fetch: int) -> list[_Found]:
        """Each plan's ``fetch`` nearest rows of its user passing its filters, with ``$distance``,
        its user's row count and how many of them pass its filters, all from one read request."""
        if not plans:
            return []
        users = list(dict.fromkeys(p.user_id for p in plans))
        batch = hx.read_batch()
        for k, p in enumerate(plans):
            nearest = hx.g().vector_search_nodes(self.label, "embedding", p.vector, fetch, p.user_id)
            if p.preds:
                nearest = nearest.where(hx.Predicate.and_(p.preds))
                batch = batch.var_as(f"m{k}", self._of_user(p.user_id).where(hx.Predicate.and_(p.preds)).count())
            batch = batch.var_as(f"h{k}", nearest.project(self._projection(distance=True)))
        for j, user in enumerate(users):
            batch = batch.var_as(f"n{j}", self._of_user(user).count())
        try:
            found = self._read(batch.returning([*(f"h{k}" for k in range(len(plans))),
                                                *(f"m{k}" for k, p in enumerate(plans) if p.preds),
                                                *(f"n{j}" for j in range(len(users)))]))
        except BackendUnavailableError as exc:
            if len(plans) == 1 or "planner error" not in str(exc):
                raise
            return [r for p in plans for r in self._search_round([p], fetch)]  # the planner gave up: one by one
        totals = {user: int(found[f"n{j}"]) for j, user in enumerate(users)}
        out = []
        for k, p in enumerate(plans):
            rows = found[f"h{k}"]
            total = totals[p.user_id]
            passing = int(found[f"m{k}"]) if p.preds else total
            expected = min(fetch, passing) if total <= fetch else 0  # a partial walk may rightly miss some
            out.append(_Found([(r, float(h["$distance"])) for h in rows if matches(r := _record(h), p.flt.where)],
                              total, len(rows), expected))
        return out

    # -- the row cache (embedded) -------------------------------------------------
    def _forget(self, users: set[str] | None = None, ids: list[str] | None = None) -> None:
        if self._cache is not None:
            self._cache.forget(users or (), ids or ())

    def _rows_of(self, t: hx.Traversal) -> dict[str, UserRows]:
        field = self._vector_field
        rows = self._read(hx.read_batch().var_as(
            "r", t.project([*self._projection(), hx.Projection.property(field)])).returning(["r"]))["r"]
        vectors = [r[field] if self._engine_vectors else unpack_vector(r[field], self._dim) for r in rows]
        return group([_record(r) for r in rows], vectors, self._dim)

    def _user_rows(self, user_id: str) -> UserRows:
        """The user's rows and vectors: from the row cache, else read for this search."""
        cache = self._cache
        if cache is None:
            return self._read_user(user_id)
        if not self._warmed:
            # once per index object, when the whole collection fits: one read for every user
            self._warmed = True
            generation = cache.generation
            if self.count() <= cache.max_rows:
                cache.fill(self._rows_of(hx.g().n_with_label(self.label)), generation)
        rows = cache.get(user_id, lambda: self._read_user(user_id))
        assert rows is not None  # a user's rows are always read whole here
        return rows

    def _read_user(self, user_id: str, preds: list[hx.Predicate] | None = None) -> UserRows:
        """The user's rows with their vectors; only those passing ``preds`` when given."""
        rows = self._of_user(user_id)
        if preds:
            rows = rows.where(hx.Predicate.and_(preds))
        return self._rows_of(rows).get(user_id, UserRows([], stack([], self._dim)))

    def query(self, flt: MemoryFilter, limit: int = 10_000) -> list[IndexRecord]:
        user_id, preds = predicates(flt)
        # One source predicate (user first, so its equality index picks the rows) is faster than
        # a user lookup followed by ``where``: 2.7 vs 4.6 ms at 4k nodes.
        t = hx.g().n_with_label_where(self.label, hx.Predicate.and_([hx.Predicate.eq("user_id", user_id), *preds]))
        fetch = limit if flt.where is None else MAX_CANDIDATES  # ``filters`` are applied below, in Python
        rows = self._read(hx.read_batch().var_as("r", t.limit(fetch).project(self._projection())).returning(["r"]))
        return [rec for r in rows["r"] if matches(rec := _record(r), flt.where)][:limit]

    def get(self, memory_ids: list[str]) -> list[IndexRecord]:
        ids = [validate_memory_id(m) for m in memory_ids]
        if not ids:
            return []
        chunks = id_chunks(list(dict.fromkeys(ids)))
        batch = hx.read_batch()
        for k, chunk in enumerate(chunks):
            batch = batch.var_as(f"r{k}", self._by_ids(chunk).project(self._projection()))
        rows = self._read(batch.returning([f"r{k}" for k in range(len(chunks))]))
        return [_record(r) for k in range(len(chunks)) for r in rows[f"r{k}"]]

    def count(self) -> int:
        return int(self._read(hx.read_batch().var_as(
            "n", hx.g().n_with_label(self.label).count()).returning(["n"]))["n"])

    def ping(self) -> None:
        self._read(hx.read_batch().var_as("m", hx.g().n_with_label(self.meta_label).count()).returning(["m"]))

    def close(self) -> None:
        if self._embedded:
            _Shared.release(self.client)
        if self._cache is not None:
            # another process may open the folder once it is released: nothing held may outlive that
            self._cache.clear()

    # -- transport ------------------------------------------------------------
    def _read(self, batch: hx.ReadBatch, **params: Any) -> Any:
        return self._send(PreEncodedRequest.read(batch), params)

    def _write(self, batch: hx.WriteBatch, **params: Any) -> Any:
        """Write transactions are optimistic: two at once can conflict. Every write here is
        idempotent (replace by id, set properties, drop), so a conflict is retried with backoff;
        in-process writers also take turns on one lock per engine handle."""
        def attempt() -> Any:
            with _Shared.write_lock(self.client):
                return self._send(PreEncodedRequest.write(batch), params)
        return _retried(attempt, lambda message: "conflict" in message.lower(), WRITE_RETRIES, 0.02)

    def _send(self, request: PreEncodedRequest, params: dict[str, Any]) -> Any:
        """The engine's planner now and then finds no plan for a request it planned a moment before
        ("planner error: unsupported cascades plan: selected optimizer result did not contain a best
        physical alternative"; seen on a 100-search read and once in CI on a 180-row write on a
        loaded machine, not reproduced in 60 tries here). Nothing runs before a plan exists, so
        the same request is sent again, at most :data:`PLAN_RETRIES` times."""
        encoded = request.with_json_parameters(params)

        def attempt() -> Any:
            with _errors(self.uri):
                return self.client.query(encoded) or {}
        return _retried(attempt, lambda message: PLANNER_ERROR in message, PLAN_RETRIES, 0.05)


def _retried(call: Callable[[], T], transient: Callable[[str], bool], attempts: int, first_delay_s: float) -> T:
    """``call()``, made again after a failure whose message ``transient`` recognises (with
    exponential backoff from ``first_delay_s``), at most ``attempts`` times in all; any other
    failure, or the last one, is raised."""
    for attempt in range(attempts):
        try:
            return call()
        except BackendUnavailableError as exc:
            if not transient(str(exc)) or attempt == attempts - 1:
                raise
            time.sleep(first_delay_s * 2 ** attempt)
    raise AssertionError("unreachable")


@contextmanager
def _errors(uri: str) -> Iterator[None]:
    try:
        yield
    except hx.HelixError as exc:
        status = getattr(exc, "status_code", None)
        if status in (401, 403):
            raise BackendUnavailableError(
                f"HelixDB at {uri} refused the API key (HTTP {status}); set AGENT_MEMORY_INDEX_TOKEN") from exc
        where = f" (HTTP {status})" if status else ""
        raise BackendUnavailableError(f"HelixDB at {uri}{where}: {exc}") from exc
