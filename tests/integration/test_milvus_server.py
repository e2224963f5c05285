"""The loopback Milvus server the suite and ``make up`` run: it can tell when it stopped answering,
and a restart keeps its address and its collections (the suite restarts it between tests when a
stalled machine left it "service not ready ... Abnormal")."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest

from agent_memory.embed.hashing import HashingEmbedder
from agent_memory.index.milvus import MilvusIndex
from agent_memory.local.milvus_server import LoopbackMilvus
from agent_memory.model import IndexRecord, utcnow


@pytest.mark.milvus_server
def test_a_restarted_server_keeps_its_address_and_its_collections(tmp_path: Path) -> None:
    server = LoopbackMilvus(tmp_path / "milvus").start()
    try:
        uri = server.uri
        assert server.healthy()
        embedder = HashingEmbedder()
        index = MilvusIndex(uri, f"r_{uuid.uuid4().hex[:8]}", consistency_level="Strong")
        index.ensure(embedder.info)
        records = [IndexRecord(id=uuid.uuid4().hex, user_id="u", session_id="s", memory_type="fact",
                               summary=f"m{i}", importance=0.5, created_at=utcnow(), topic_id=None,
                               is_active=True, deleted_at=None, source="user_said", storage_key=f"k{i}")
                   for i in range(20)]
        index.write(records, np.asarray(embedder.embed_documents([r.summary for r in records])))
        index.flush()
        index.close()

        server.restart()
        assert server.uri == uri and server.healthy()
        reopened = MilvusIndex(uri, index.collection, consistency_level="Strong")
        reopened.ensure(embedder.info)
        assert reopened.count() == 20
        reopened.close()

        server.stop()
        assert not server.healthy()
    finally:
        server.stop()
