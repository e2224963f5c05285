"""The row cache of the embedded indexes (agent_memory.index.row_cache), on a real Milvus Lite file
and a real embedded HelixDB folder: every filter the service builds gives the rows the index's own
search gives, and every write is seen by the next search, through the same index object and
through another one on the same file."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from agent_memory.conditions import Filters
from agent_memory.errors import BackendUnavailableError
from agent_memory.filters import MemoryFilter
from agent_memory.index import milvus
from agent_memory.index.base import VectorIndex
from agent_memory.index.helix import HelixIndex
from agent_memory.index.milvus import MilvusIndex
from agent_memory.model import EmbeddingInfo, IndexRecord, to_ms

DIM = 16
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def mid(i: int) -> str:
    return f"{i:032x}"


def _records(rng: np.random.Generator) -> list[IndexRecord]:
    out = []
    for i in range(180):
        out.append(IndexRecord(
            id=mid(i), user_id=f"u{i % 3}", session_id=f"s{i % 4}",
            memory_type=["fact", "preference", "event", "plan"][i % 4], summary=f"memory {i}",
            importance=[0.25, 0.5, 0.75][i % 3 if i % 2 else (i + 1) % 3], created_at=T0 + timedelta(days=i),
            topic_id=f"t{i % 5}" if i % 2 else None, is_active=i % 7 != 0,
            deleted_at=T0 + timedelta(days=400) if i % 11 == 0 else None,
            source="user_said" if i % 5 else "agent_inferred", storage_key=f"k/{i}",
            agent_id=["planner", None, "coder"][i % 3 if i % 5 else 1], run_id="r1" if i % 6 == 0 else None,
            expires_at=T0 + timedelta(days=100 + i) if i % 4 == 1 else None,
            metadata={"project": ["apollo", "zeus"][i % 2], "rank": i % 10}))
    return out


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


FILTERS = [
    MemoryFilter(user_id="u0"),
    MemoryFilter(user_id="u1", active_only=False, include_deleted=True, sources=None),
    MemoryFilter(user_id="u2", memory_types=["fact", "plan"], min_importance=0.5),
    MemoryFilter(user_id="u0", topic_id="t3", active_only=False),
    MemoryFilter(user_id="u1", session_id="s1", sources=("user_said", "agent_inferred")),
    MemoryFilter(user_id="u2", memory_ids=[mid(2), mid(5), mid(8), mid(11), mid(1)], active_only=False),
    MemoryFilter(user_id="u0", created_before_ms=to_ms(T0 + timedelta(days=90))),
    MemoryFilter(user_id="u1", agent_ids=["", "planner"], run_ids=["", "r1"]),
    MemoryFilter(user_id="u2", live_at_ms=to_ms(T0 + timedelta(days=200)), sources=None),
    MemoryFilter(user_id="u1", expired_at_ms=to_ms(T0 + timedelta(days=220)), active_only=False, sources=None),
    MemoryFilter(user_id="u0", where=Filters.model_validate({"metadata": {"project": "zeus", "rank": {"gte": 5}}}),
                 sources=None),
    MemoryFilter(user_id="nobody"),
]


INFO = EmbeddingInfo(provider="test", model="random", version="1", dim=DIM)
Indexes = tuple[VectorIndex, VectorIndex, np.random.Generator]


def _open(kind: str, tmp_path: Path, rows: int) -> VectorIndex:
    index: VectorIndex
    if kind == "lite":
        index = MilvusIndex(str(tmp_path / "cache.db"), "memories", consistency_level="Strong", row_cache_rows=rows)
    else:  # "helix": over the engine's vector index (a collection made before); "helix-packed": vectors held here
        index = HelixIndex(f"helix+embedded://{tmp_path / 'helix'}", "memories", row_cache_rows=rows,
                           engine_vectors=kind == "helix")
    index.ensure(INFO)
    return index


@pytest.fixture(params=["lite", "helix", "helix-packed"])
def lite(request: pytest.FixtureRequest, tmp_path: Path) -> Indexes:
    cached = _open(request.param, tmp_path, 10_000)
    plain = _open(request.param, tmp_path, 0)
    rng = np.random.default_rng(3)
    cached.write(_records(rng), _unit(rng, 180))
    cached.flush()
    return cached, plain, rng


@pytest.mark.parametrize("k", range(len(FILTERS)))
def test_the_cache_answers_what_lite_answers(lite: Indexes,
                                             k: int) -> None:
    cached, plain, rng = lite
    flt = FILTERS[k]
    # the rows the engine's own filter selects, whatever their rank
    assert {h.record.id for h in cached.search(_unit(rng, 1)[0], flt, limit=500)} == {r.id for r in plain.query(flt)}
    # and the engine's own ranking, over more rows than the user holds. HelixDB's vector search
    # with a condition on an indexed field (topic, ids) returns nothing when asked for more rows
    # than the user holds, and with the ids condition at any limit (helix-db-embedded 0.3.3): the
    # index sees that it got fewer rows than pass the filter and scores them exactly instead
    for q in _unit(rng, 3):
        mine = cached.search(q, flt, limit=500)
        theirs = plain.search(q, flt, limit=500)
        assert [h.record.id for h in mine] == [h.record.id for h in theirs]
        assert np.allclose([h.similarity for h in mine], [h.similarity for h in theirs], atol=1e-5)
        assert [h.record for h in mine] == [h.record for h in theirs]
    assert cached._cache is not None and plain._cache is None  # type: ignore[attr-defined]


def test_limit_keeps_the_most_similar(lite: Indexes) -> None:
    cached, plain, rng = lite
    q = _unit(rng, 1)[0]
    top = cached.search(q, MemoryFilter(user_id="u1"), limit=5)
    every = plain.search(q, MemoryFilter(user_id="u1"), limit=500)
    assert [h.record.id for h in top] == [h.record.id for h in every[:5]]


def test_every_write_is_seen_by_the_next_search(lite: Indexes,
                                                tmp_path: Path) -> None:
    cached, plain, rng = lite
    other = _open("lite" if isinstance(cached, MilvusIndex) else "helix", tmp_path, 10_000)
    q = _unit(rng, 1)[0]

    def ids(index: VectorIndex, user: str = "u1") -> set[str]:
        every = MemoryFilter(user_id=user, active_only=False, include_deleted=True, sources=None)
        assert [h.record for h in index.search(q, every, limit=500)] == \
            [h.record for h in plain.search(q, every, limit=500)], "the held rows are Lite's rows"
        return {h.record.id for h in index.search(q, MemoryFilter(user_id=user), limit=500)}

    before = ids(cached)
    assert ids(other) == before
    new = IndexRecord(id=mid(999), user_id="u1", session_id="s", memory_type="fact", summary="new", importance=0.7,
                      created_at=T0, topic_id=None, is_active=True, deleted_at=None, source="user_said",
                      storage_key="k/new")
    other.write([new], q.reshape(1, DIM))
    assert ids(cached) == before | {mid(999)}
    cached.set_state(mid(999), False, None)
    assert ids(other) == before
    other.set_state(mid(999), True, T0 + timedelta(days=3, microseconds=1500))  # deleted: kept in ms
    assert ids(cached) == before
    other.set_state(mid(999), True, None)
    cached.delete([mid(999)])
    assert ids(other) == before
    assert ids(cached, "u2")
    other.delete_user("u2")
    assert not ids(cached, "u2")
    assert ids(cached) == before
    other.drop()
    with contextlib.suppress(BackendUnavailableError):  # gone: nothing may come from the cache
        assert not cached.search(q, MemoryFilter(user_id="u1"), limit=5)


def test_a_collection_larger_than_one_query_is_read_in_pages(
        lite: Indexes, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _, plain, rng = lite
    if not isinstance(plain, MilvusIndex):
        pytest.skip("Milvus Lite's query window; HelixDB reads the collection in one request")
    monkeypatch.setattr(milvus, "MAX_QUERY_WINDOW", 100)  # 180 rows: 16 pages by the id's first digit
    fresh = MilvusIndex(str(tmp_path / "cache.db"), "memories", consistency_level="Strong", row_cache_rows=10_000)
    fresh.ensure(EmbeddingInfo(provider="test", model="random", version="1", dim=DIM))
    assert fresh._cache is not None
    fresh._cache.clear()
    q = _unit(rng, 1)[0]
    for k, user in enumerate(("u0", "u1", "u2")):
        flt = MemoryFilter(user_id=user, active_only=False, include_deleted=True, sources=None)
        assert [h.record for h in fresh.search(q, flt, 500)] == [h.record for h in plain.search(q, flt, 500)]
        if k == 0:  # the first search read every user's rows
            assert sorted(fresh._cache._users) == ["u0", "u1", "u2"]
            assert sum(len(r.records) for r in fresh._cache._users.values()) == 180


def test_closing_an_index_lets_go_of_its_rows(lite: Indexes, tmp_path: Path) -> None:
    """Once released, the file may be opened by another process: the rows held must not outlive
    that (and a long-lived process opening many stores must not keep them all)."""
    cached, _, rng = lite
    cached.search(_unit(rng, 1)[0], MemoryFilter(user_id="u0"), limit=5)
    cache = cached._cache  # type: ignore[attr-defined]
    assert cache._users
    cached.close()
    assert not cache._users
