"""Recall across S3 storage classes on a moto server: GLACIER_IR originals read at once; GLACIER
and DEEP_ARCHIVE ones cannot (InvalidObjectState). A memory whose index row holds its whole content
is answered from the row, archived or not; one whose row does not (longer than
``index_content_bytes``) is served as the index summary, said to be one, S3 is asked for a restore,
and a later recall returns the full original."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.errors import ArchivedError
from agent_memory.local.processes import ServerProcess
from tests.conftest import make_bucket, new_user


@pytest.fixture(scope="module")
def s3_memory(moto_server: ServerProcess, tmp_path_factory: pytest.TempPathFactory,
              embedder: Embedder) -> Iterator[tuple[Memory, object]]:
    bucket = f"arch-{uuid.uuid4().hex[:8]}"
    make_bucket(moto_server.url, bucket)
    m = Memory(Settings(data_dir=Path(tmp_path_factory.mktemp("archive")), store="s3", bucket_name=bucket,
                        s3_endpoint_url=moto_server.url, consistency_level="Strong"), embedder=embedder)
    s3 = boto3.client("s3", endpoint_url=moto_server.url, region_name="us-east-1")
    yield m, s3
    m.close()


def transition(s3: object, memory: Memory, key: str, storage_class: str) -> None:
    """What the lifecycle rule does at 180 days (moto does not run transitions itself)."""
    bucket = memory.settings.bucket_name
    s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": key},  # type: ignore[attr-defined]
                   StorageClass=storage_class, MetadataDirective="COPY")


@pytest.mark.parametrize("storage_class", ["GLACIER", "DEEP_ARCHIVE"])
def test_archived_original_serves_the_summary_then_the_restored_original(
        s3_memory: tuple[Memory, object], storage_class: str) -> None:
    memory, s3 = s3_memory
    u = new_user()
    settings = memory.settings
    memory.settings = settings.model_copy(update={"index_content_bytes": 0})  # the row holds no content
    try:
        [mid] = memory.remember(user_id=u, content="My passport number ends in 4711", metadata={"doc": "passport"})
    finally:
        memory.settings = settings
    key = memory.storage_key(u, mid)
    transition(s3, memory, key, storage_class)
    with pytest.raises(ArchivedError):
        memory.store.get_json(key)

    [hit] = memory.recall(user_id=u, query="passport number")
    assert hit.memory_id == mid and hit.archived is True
    assert hit.content == hit.summary and hit.metadata == {"doc": "passport"}  # the index's copy, said to be one
    head = s3.head_object(Bucket=memory.settings.bucket_name, Key=key)  # type: ignore[attr-defined]
    assert head["StorageClass"] == storage_class and "Restore" in head  # a restore was requested
    assert memory.recalls(u)[0]["archived"] == [mid]

    [again] = memory.recall(user_id=u, query="passport number")  # moto restores at once
    assert again.archived is False and again.metadata == {"doc": "passport"}


def test_glacier_instant_retrieval_is_read_at_once(s3_memory: tuple[Memory, object]) -> None:
    memory, s3 = s3_memory
    u = new_user()
    [mid] = memory.remember(user_id=u, content="I am allergic to penicillin", metadata={"k": 1})
    transition(s3, memory, memory.storage_key(u, mid), "GLACIER_IR")
    [hit] = memory.recall(user_id=u, query="allergy")
    assert hit.archived is False and hit.metadata == {"k": 1}


def test_get_and_forget_of_an_archived_original(s3_memory: tuple[Memory, object]) -> None:
    memory, s3 = s3_memory
    u = new_user()
    [mid] = memory.remember(user_id=u, content="My locker code is 0815")
    key = memory.storage_key(u, mid)
    transition(s3, memory, key, "GLACIER")
    shown = memory.get(mid, user_id=u)
    assert shown["archived"] is True and shown["original"] is None and shown["record"]["id"] == mid
    transition(s3, memory, key, "DEEP_ARCHIVE")  # a fresh archived copy, no restore yet
    with pytest.raises(ArchivedError, match="restore was requested"):
        memory.forget(mid, user_id=u)
    assert memory.forget(mid, user_id=u).deleted_at is not None  # restored (at once on moto): works


def test_an_archived_original_held_by_its_row_is_recalled_whole_without_a_restore(
        s3_memory: tuple[Memory, object]) -> None:
    memory, s3 = s3_memory
    u = new_user()
    content = "My passport number ends in 4711. " + "It was issued in Lisbon and renewed twice. " * 20
    [mid] = memory.remember(user_id=u, content=content, metadata={"doc": "passport"})
    key = memory.storage_key(u, mid)
    transition(s3, memory, key, "DEEP_ARCHIVE")
    [hit] = memory.recall(user_id=u, query="passport number")
    assert hit.memory_id == mid and hit.archived is False
    assert hit.content == content and len(hit.summary) < len(content) and hit.metadata == {"doc": "passport"}
    head = s3.head_object(Bucket=memory.settings.bucket_name, Key=key)  # type: ignore[attr-defined]
    assert "Restore" not in head  # the original was not needed
