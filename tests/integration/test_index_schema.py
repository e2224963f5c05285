"""An index built before schema 2 (no agent_id, run_id, expires_at, metadata) is refused with a
clear error naming `agent-memory reindex`, and the reindex from the originals fixes it."""

from __future__ import annotations

import json
from pathlib import Path

import helixdb as hx
import pytest
from pymilvus import DataType, MilvusClient

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.errors import IndexSchemaError
from agent_memory.index import open_index
from agent_memory.index.milvus import META_PROPERTY
from agent_memory.reindex import reindex
from agent_memory.store.keys import original_key


def _old_milvus_collection(uri: str, collection: str, embedder: Embedder) -> None:
    client = MilvusClient(uri=uri)
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field("user_id", DataType.VARCHAR, max_length=128, is_partition_key=True)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=embedder.info.dim)
    params = client.prepare_index_params()
    params.add_index(field_name="embedding", index_type="HNSW", metric_type="IP",
                     params={"M": 16, "efConstruction": 64})
    client.create_collection(collection, schema=schema, index_params=params)
    client.alter_collection_properties(collection, properties={META_PROPERTY: json.dumps(embedder.info.model_dump())})
    client.close()


def _old_helix_index(uri: str, collection: str, embedder: Embedder) -> None:
    index = open_index(Settings(), uri=uri, collection=collection)
    index.ensure(embedder.info)
    meta = index.meta_label  # type: ignore[attr-defined]
    index._write(hx.write_batch().var_as("d", hx.g().n_with_label(meta).drop()))  # type: ignore[attr-defined]
    index._write(hx.write_batch().var_as(  # type: ignore[attr-defined]
        "m", hx.g().add_n(meta, list(embedder.info.model_dump().items()))))
    index.close()


@pytest.mark.parametrize("backend", ["lite", "helix"])
def test_an_old_index_is_refused_until_reindexed(backend: str, tmp_path: Path, embedder: Embedder) -> None:
    uri = str(tmp_path / "old.db") if backend == "lite" else f"helix+embedded://{tmp_path / 'helix'}"
    s = Settings(data_dir=tmp_path, index_uri=uri, collection_name="memories_v1", consistency_level="Strong")
    m = Memory(s, embedder=embedder)
    [mid] = m.remember(user_id="u1", content="I keep bees", agent_id="garden", metadata={"hive": 3})
    m.index.drop()
    m.close()
    (_old_milvus_collection if backend == "lite" else _old_helix_index)(uri, "memories_v1", embedder)
    with pytest.raises(IndexSchemaError, match="agent-memory reindex"):
        Memory(s, embedder=embedder)
    target = open_index(s)
    originals = list(Memory.iter_originals(_StoreOnly(s)))  # type: ignore[arg-type]
    report = reindex(originals, lambda o: original_key(s.key_prefix, o.user_id, o.memory_id), embedder, target)
    target.close()
    assert report.indexed == 1
    m = Memory(s, embedder=embedder)
    [rec] = m.timeline("u1", agent_id="garden")
    assert (rec.id, rec.agent_id, rec.metadata) == (mid, "garden", {"hive": 3})
    m.close()


class _StoreOnly:
    """What :meth:`Memory.iter_originals` needs, without opening the (refused) index."""

    def __init__(self, s: Settings) -> None:
        from agent_memory.store import make_store

        self.settings, self.store = s, make_store(s)


def test_the_mirror_rebuilds_an_old_index_at_start(tmp_path: Path, embedder: Embedder) -> None:
    from agent_memory import MemoryClient
    from agent_memory.local.mirror import Mirror, MirrorOptions

    options = MirrorOptions(data_dir=tmp_path / "mirror", api_port=0, emulator_port=0, embedder=embedder)
    mirror = Mirror(options).start()
    try:
        with MemoryClient(mirror.api_url, mirror.api_key) as c:
            [mid] = c.remember("u1", "I keep bees", agent_id="garden", metadata={"hive": 3})
    finally:
        mirror.stop()
    uri = str(options.data_dir / "memory.db")
    client = MilvusClient(uri=uri)
    client.drop_collection("agent_memory")
    client.close()
    _old_milvus_collection(uri, "agent_memory", embedder)  # as an index built before schema 2
    mirror = Mirror(options).start()  # S3 (moto, replayed) still holds the original
    try:
        assert mirror.migrated is not None and mirror.migrated.indexed == 1
        with MemoryClient(mirror.api_url, mirror.api_key) as c:
            [rec] = c.timeline("u1", agent_id="garden", filters={"metadata": {"hive": 3}})
            assert rec.id == mid
    finally:
        mirror.stop()
