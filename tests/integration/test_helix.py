"""HelixDB specifics beyond the shared behaviour suite: the API key of the HTTP mode, post-filter
widening, persistence, and moving a Milvus-indexed store to HelixDB with `agent-memory reindex`."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.errors import BackendUnavailableError
from agent_memory.evaluation.synthetic import memories, questions
from agent_memory.filters import MemoryFilter
from agent_memory.index.helix import HelixIndex
from agent_memory.model import EmbeddingInfo, IndexRecord

DIM = 8
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
    index = HelixIndex(f"helix+embedded://{tmp_path}", "widen")
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

    reopened = HelixIndex(f"helix+embedded://{tmp_path}", "widen")
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
