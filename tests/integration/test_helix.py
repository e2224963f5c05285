"""HelixDB specifics beyond the shared behaviour suite: the API key of the HTTP mode, post-filter
widening, persistence, and moving a Milvus-indexed store to HelixDB with `agent-memory reindex`."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import helixdb as hx
import numpy as np
import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.errors import BackendUnavailableError
from agent_memory.evaluation.synthetic import memories, questions
from agent_memory.filters import MemoryFilter
from agent_memory.index.helix import SEARCH_BATCH, HelixIndex
from agent_memory.model import EmbeddingInfo, IndexRecord

DIM = 8
ENGINE_INDEXED_IS_IN = 64
"""helix-db-embedded 0.3.3 answers ``is_in`` from an index for at most this many values."""
INFO = EmbeddingInfo(provider="test", model="unit-vectors", version="1", dim=DIM)


def record(i: int, user: str, deleted: bool = False) -> IndexRecord:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return IndexRecord(id=f"{i:032x}", user_id=user, session_id="s", memory_type="fact", summary=f"m{i}",
                       importance=0.5, created_at=now, topic_id=None, is_active=True,
                       deleted_at=now if deleted else None, source="user_said", storage_key=f"k/{i}")


def test_http_mode_refuses_a_wrong_api_key(helix_server: str) -> None:
    with pytest.raises(BackendUnavailableError, match="401"):
        HelixIndex(helix_server, "keyed", api_key="wrong").ensure(INFO)
    with pytest.raises(BackendUnavailableError, match="401"):
        HelixIndex(helix_server, "keyed").ping()


def test_search_widens_when_the_post_filter_drops_the_nearest(tmp_path: Path) -> None:
    """50 deleted rows lie nearest the query; a search for 5 must still find the 5 live ones."""
    index = HelixIndex(f"helix+embedded://{tmp_path}", "widen", engine_vectors=True)
    index.ensure(INFO)
    rng = np.random.default_rng(3)
    query = np.zeros(DIM, dtype=np.float32)
    query[0] = 1.0
    near = np.tile(query, (50, 1)) + rng.normal(0, 0.01, (50, DIM)).astype(np.float32)
    far = np.tile(np.eye(DIM, dtype=np.float32)[1], (10, 1)) + rng.normal(0, 0.01, (10, DIM)).astype(np.float32)
    vectors = np.vstack([near, far])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [record(i, "u1", deleted=i < 50) for i in range(60)]
    index.write(records, vectors)
    index.write([record(100 + i, "u2") for i in range(5)], np.tile(query, (5, 1)))  # nearer, other user

    hits = index.search(query, MemoryFilter(user_id="u1"), limit=5)
    assert len(hits) == 5
    assert {h.record.id for h in hits} <= {r.id for r in records[50:]}
    assert all(-1.0 <= h.similarity < 0.2 for h in hits)  # cosine scale, like Milvus
    with_deleted = index.search(query, MemoryFilter(user_id="u1", include_deleted=True), limit=5)
    assert {h.record.id for h in with_deleted} <= {r.id for r in records[:50]}
    assert with_deleted[0].similarity > 0.99
    index.close()

    reopened = HelixIndex(f"helix+embedded://{tmp_path}", "widen", engine_vectors=True)
    reopened.ensure(INFO)
    assert reopened.count() == 65
    reopened.close()


def test_reindex_moves_a_milvus_store_to_helix_with_the_same_top_results(
        tmp_path: Path, embedder: Embedder) -> None:
    users = 4
    lite = Memory(Settings(data_dir=tmp_path), embedder=embedder)
    lite.remember_many([{"user_id": m.user_id, "content": m.content, "memory_type": m.memory_type}
                        for m in memories(240, users)])
    qs = questions(24, users)
    before = [[h.memory_id for h in lite.recall(user_id=u, query=q, top_k=5, log=False)] for u, q in qs]
    lite.close()

    target = f"helix+embedded://{tmp_path / 'helix'}"
    out = subprocess.run([sys.executable, "-m", "agent_memory.cli", "reindex", "--to", target,
                          "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "indexed 240" in out.stdout

    helix = Memory(Settings(data_dir=tmp_path, index_uri=target), embedder=embedder)
    after = [[h.memory_id for h in helix.recall(user_id=u, query=q, top_k=5, log=False)] for u, q in qs]
    helix.close()
    overlap = [len(set(b) & set(a)) / max(1, len(b)) for b, a in zip(before, after, strict=True)]
    mean = sum(overlap) / len(overlap)
    print(f"top-5 overlap Milvus Lite -> HelixDB embedded: {mean:.3f} over {len(qs)} queries")
    assert all(before) and mean >= 0.95


def _id_lookup_sizes(node: object) -> list[int]:
    """The value counts of every ``is_in`` on ``id`` in a serialized request
    (``{"is_in": {"value": {"property": "id"}, "values": {"constant": {"string_array": [...]}}}}``)."""
    if isinstance(node, list):
        return [n for value in node for n in _id_lookup_sizes(value)]
    if not isinstance(node, dict):
        return []
    found = [n for value in node.values() for n in _id_lookup_sizes(value)]
    lookup = node.get("is_in")
    if isinstance(lookup, dict) and lookup.get("value") == {"property": "id"}:
        found.append(len(lookup["values"]["constant"]["string_array"]))
    return found


def test_batches_over_64_ids_replace_get_and_delete_through_indexed_lookups(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ingest writes 100 rows at a time. The engine answers ``is_in`` from the id index only up to
    64 values and scans every node beyond (issue 19: 21 memories/s at 10k), so each request must
    split its ids; and splitting must keep replace-by-id, get and delete exact."""
    index = HelixIndex(f"helix+embedded://{tmp_path}", "chunks")
    index.ensure(INFO)
    sent: list[object] = []
    query = index.client.query

    def spy(request: hx.QueryRequest) -> object:
        sent.append(json.loads(request.to_json_string()))
        return query(request)

    monkeypatch.setattr(index.client, "query", spy)
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(150, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.write([record(i, "u1") for i in range(150)], vectors)
    index.write([record(1000 + i, "u2") for i in range(3)], vectors[:3])
    renamed = [record(i, "u1").model_copy(update={"summary": f"v2 {i}"}) for i in range(150)]
    index.write(renamed, vectors)  # a replace of all 150: no second copy of any
    assert index.count() == 153
    got = index.get([r.id for r in renamed] + [renamed[0].id])
    assert sorted(r.id for r in got) == sorted(r.id for r in renamed)
    assert {r.summary for r in got} == {f"v2 {i}" for i in range(150)}
    index.delete([r.id for r in renamed[:130]])
    assert index.count() == 23
    assert {r.id for r in index.get([r.id for r in renamed])} == {r.id for r in renamed[130:]}
    assert len(index.query(MemoryFilter(user_id="u2"))) == 3  # the other user's rows untouched

    sizes = [n for request in sent for n in _id_lookup_sizes(request)]
    assert sizes and max(sizes) <= ENGINE_INDEXED_IS_IN
    assert ENGINE_INDEXED_IS_IN in sizes  # the lists were split into full lookups, not shortened
    index.close()


def test_search_many_is_one_request_with_the_answers_of_single_searches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The change detector searches once per new memory of a batch: HelixDB answers them in reads of
    SEARCH_BATCH searches, and each answer must be what :meth:`search` alone gives (tenants, filters,
    widening)."""
    index = HelixIndex(f"helix+embedded://{tmp_path}", "many", engine_vectors=True)
    index.ensure(INFO)
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(90, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [record(i, f"u{i % 3}", deleted=i < 45 and i % 3 == 0) for i in range(90)]
    index.write(records, vectors)
    queries = [(vectors[i], MemoryFilter(user_id=f"u{i % 3}")) for i in range(6)]
    queries += [(vectors[7], MemoryFilter(user_id="u1", memory_ids=[r.id for r in records[1:40:3]])),
                (vectors[0], MemoryFilter(user_id="u0", include_deleted=True)),
                (vectors[3], MemoryFilter(user_id="nobody"))]
    singles = [index.search(v, f, limit=12) for v, f in queries]
    reads: list[object] = []
    query = index.client.query

    def spy(request: hx.QueryRequest) -> object:
        reads.append(request)
        return query(request)

    monkeypatch.setattr(index.client, "query", spy)
    many = index.search_many(queries, limit=12)
    assert [[(h.record.id, round(h.similarity, 5)) for h in hits] for hits in many] == \
        [[(h.record.id, round(h.similarity, 5)) for h in hits] for hits in singles]
    assert len(queries) == SEARCH_BATCH + 1
    assert len(reads) == 2  # the 8 walks in one request, the search among ids in one; no widening
    assert all(h.record.user_id == f.user_id for hits, (_, f) in zip(many, queries, strict=True) for h in hits)
    assert all(h.record.deleted_at is None for h in many[0])  # u0: the 15 deleted rows filtered out
    assert many[-1] == [] and index.search_many([], limit=5) == []
    among = {r.id for r in records[1:40:3]}  # the search among given ids: their 12 nearest, exactly
    assert len(many[6]) == 12 and {h.record.id for h in many[6]} <= among
    assert many[6][0].record.id == records[7].id and many[6][0].similarity > 0.999

    reads.clear()  # user w: its 50 nearest rows deleted, so only that search widens, in a second read
    near = np.tile(np.eye(DIM, dtype=np.float32)[0], (50, 1)) + rng.normal(0, 0.01, (50, DIM)).astype(np.float32)
    far = np.tile(np.eye(DIM, dtype=np.float32)[1], (10, 1)) + rng.normal(0, 0.01, (10, DIM)).astype(np.float32)
    w_vectors = np.vstack([near, far])
    w_vectors /= np.linalg.norm(w_vectors, axis=1, keepdims=True)
    index.write([record(200 + i, "w", deleted=i < 50) for i in range(60)], w_vectors)
    wide = index.search_many([(np.eye(DIM, dtype=np.float32)[0], MemoryFilter(user_id="w")), queries[1]], limit=5)
    assert len(reads) == 1 + 1 + 1  # the write, the batch, the widened search
    assert len(wide[0]) == 5 and all(h.record.deleted_at is None and h.record.user_id == "w" for h in wide[0])
    assert [h.record.id for h in wide[1]] == [h.record.id for h in singles[1][:5]]
    index.close()


def test_rows_the_approximate_walk_lost_are_found_by_an_exact_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """HelixDB's vector search is approximate. When it was asked for more rows than the user has
    and returned fewer than pass the filter (a CI run once recalled the wrong chunk of a document
    this way), the user's rows are scored exactly instead. The engine's answer is altered here to
    lose the nearest row; everything else is the real engine."""
    index = HelixIndex(f"helix+embedded://{tmp_path}", "lost", engine_vectors=True)
    index.ensure(INFO)
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(40, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [record(i, f"u{i % 2}", deleted=i in (2, 4)) for i in range(40)]
    index.write(records, vectors)
    flt = MemoryFilter(user_id="u0")
    truth = index.search(vectors[0], flt, limit=5)
    assert truth[0].record.id == records[0].id

    read = index._read

    def lossy(batch: Any) -> dict[str, Any]:
        answer = read(batch)
        for name, rows in answer.items():
            if name.startswith("h") and rows:
                answer[name] = sorted(rows, key=lambda r: r["$distance"])[1:]  # the walk missed the nearest
        return answer

    monkeypatch.setattr(index, "_read", lossy)
    with caplog.at_level("WARNING", logger="agent_memory.index.helix"):
        found = index.search(vectors[0], flt, limit=5)
    assert [(h.record.id, round(h.similarity, 5)) for h in found] == [
        (h.record.id, round(h.similarity, 5)) for h in truth]
    assert "returned 17 of the 18 rows" in caplog.text  # u0: 20 rows, 2 of them deleted
    many = index.search_many([(vectors[0], flt), (vectors[1], MemoryFilter(user_id="u1"))], limit=3)
    assert many[0][0].record.id == records[0].id and many[1][0].record.id == records[1].id

    caplog.clear()  # a walk over part of the user's rows may rightly leave some out: no exact search
    # Distinct vectors. With 60 copies of one vector this failed once (CI, 2026-12-06; 6 local runs
    # passed), most likely because a walk over ties returned fewer than 5 rows, so the search rightly
    # asked for all 60 and the lossy read above made that answer short (not confirmed).
    big = rng.normal(size=(60, DIM)).astype(np.float32)
    index.write([record(100 + i, "big") for i in range(60)], big / np.linalg.norm(big, axis=1, keepdims=True))
    with caplog.at_level("WARNING", logger="agent_memory.index.helix"):
        assert len(index.search(vectors[0], MemoryFilter(user_id="big"), limit=5)) == 5
    assert "searching them exactly" not in caplog.text
    index.close()


def test_search_many_falls_back_to_single_searches_when_the_planner_gives_up(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A large read once failed in the engine's planner ("unsupported cascades plan"): the same
    searches are then answered one per request, with the same results."""
    index = HelixIndex(f"helix+embedded://{tmp_path}", "planner", engine_vectors=True)
    index.ensure(INFO)
    vectors = np.random.default_rng(2).normal(size=(12, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    index.write([record(i, f"u{i % 2}") for i in range(12)], vectors)
    queries = [(vectors[i], MemoryFilter(user_id=f"u{i % 2}")) for i in range(3)]
    singles = [index.search(v, f, limit=3) for v, f in queries]
    read = index._read
    failed: list[int] = []

    def flaky(batch: hx.ReadBatch, **params: object) -> object:
        if not failed:
            failed.append(1)
            raise BackendUnavailableError("HelixDB: Query error: planner error: unsupported cascades plan")
        return read(batch, **params)

    monkeypatch.setattr(index, "_read", flaky)
    assert index.search_many(queries, limit=3) == singles and failed == [1]
    index.close()


@pytest.mark.parametrize("failures", [2, 3])
def test_a_request_the_planner_gave_up_on_is_sent_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failures: int) -> None:
    """The planner refused a 180-row write once in CI; nothing runs before a plan exists, so the
    write is sent again (at most three times in all) and lands once, or the error surfaces."""
    index = HelixIndex(f"helix+embedded://{tmp_path}", "replan", engine_vectors=True)
    index.ensure(INFO)
    query = index.client.query
    calls: list[int] = []

    def flaky(request: object) -> object:
        calls.append(1)
        if len(calls) <= failures:
            raise hx.HelixError("InvalidRequest", "Query error: planner error: unsupported cascades plan: "
                                "selected optimizer result did not contain a best physical alternative")
        return query(request)

    monkeypatch.setattr(index.client, "query", flaky)
    vectors = np.eye(DIM, dtype=np.float32)[:3]
    records = [record(i, "u1") for i in range(3)]
    if failures < 3:
        index.write(records, vectors)
        assert len(calls) == failures + 1
        monkeypatch.setattr(index.client, "query", query)
        assert [r.id for r in index.get([r.id for r in records])] == [r.id for r in records]
    else:
        with pytest.raises(BackendUnavailableError, match="planner error"):
            index.write(records, vectors)
        assert len(calls) == 3
        monkeypatch.setattr(index.client, "query", query)
        assert index.get([r.id for r in records]) == []
    calls.clear()

    def refused(request: object) -> object:
        calls.append(1)
        raise hx.HelixError("InvalidRequest", "Query error: no such label")

    monkeypatch.setattr(index.client, "query", refused)
    with pytest.raises(BackendUnavailableError, match="no such label"):
        index.count()
    assert calls == [1]  # any other error is not retried
    monkeypatch.setattr(index.client, "query", query)
    index.close()


def test_an_embedded_collection_holds_its_vectors_packed_and_searches_them_exactly(tmp_path: Path) -> None:
    """A new embedded collection has no engine vector index (its per-user index made each write
    cost 3-7 ms): vectors are packed float32 text and a search is exact over the user's rows, with
    or without the row cache. A collection made with the engine's index keeps it when reopened."""
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(40, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [record(i, f"u{i % 2}", deleted=i % 5 == 0) for i in range(40)]
    uri = f"helix+embedded://{tmp_path / 'packed'}"
    index = HelixIndex(uri, "packed")
    index.ensure(INFO)
    index.write(records, vectors)
    stored = index._read(hx.read_batch().var_as("r", hx.g().n_with_label("packed").limit(1).project(
        [hx.Projection.property("embedding_f32"), hx.Projection.property("embedding")])).returning(["r"]))["r"][0]
    assert isinstance(stored["embedding_f32"], str) and stored.get("embedding") is None
    for q in rng.normal(size=(3, DIM)).astype(np.float32):
        live = [i for i in range(40) if i % 2 == 1 and i % 5 != 0]
        cos = vectors[live] @ q / np.linalg.norm(q)
        expected = [records[live[j]].id for j in np.argsort(-cos)[:6]]
        for rows in (0, 1_000):  # read per search, and from the row cache
            searcher = HelixIndex(uri, "packed", row_cache_rows=rows)
            searcher.ensure(INFO)
            hits = searcher.search(q, MemoryFilter(user_id="u1"), limit=6)
            assert [h.record.id for h in hits] == expected
            assert np.allclose([h.similarity for h in hits], np.sort(cos)[::-1][:6], atol=1e-5)
            searcher.close()
    index.close()

    HelixIndex(uri, "engine", engine_vectors=True).ensure(INFO)
    reopened = HelixIndex(uri, "engine")  # the default for embedded is packed; the collection says engine
    reopened.ensure(INFO)
    reopened.write(records[:4], vectors[:4])
    assert reopened._engine_vectors
    assert [h.record.id for h in reopened.search(vectors[1], MemoryFilter(user_id="u1"), limit=1)] == [records[1].id]
    reopened.close()


def test_a_packed_vector_of_the_wrong_size_is_an_error() -> None:
    from agent_memory.index.helix import pack_vector, unpack_vector

    v = np.arange(DIM, dtype=np.float32)
    assert np.array_equal(unpack_vector(pack_vector(v), DIM), v)
    with pytest.raises(BackendUnavailableError, match="values"):
        unpack_vector(pack_vector(v[:3]), DIM)
