"""The S3 raw store's batch reads against a real S3 emulator process (moto server): the ingest
worker reads a batch's originals in parallel, keeps their order and gets one failure per key."""

from __future__ import annotations

import threading
import uuid
from typing import Any

import pytest

from agent_memory.errors import BackendUnavailableError, NotFoundError
from agent_memory.local.processes import ServerProcess
from agent_memory.store.s3 import S3Store, make_s3_client
from tests.conftest import make_bucket


class _CountingClient:
    """The real boto3 client, counting how many ``get_object`` calls are in flight at once."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def get_object(self, **kwargs: Any) -> Any:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return self._client.get_object(**kwargs)
        finally:
            with self._lock:
                self.in_flight -= 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


@pytest.fixture
def store(moto_server: ServerProcess) -> tuple[S3Store, _CountingClient]:
    bucket = f"raw-{uuid.uuid4().hex[:8]}"
    make_bucket(moto_server.url, bucket)
    client = _CountingClient(make_s3_client(moto_server.url, "us-east-1"))
    return S3Store(bucket, client), client


def test_get_each_reads_in_parallel_in_order_with_one_failure_per_key(
        store: tuple[S3Store, _CountingClient]) -> None:
    s3, client = store
    keys = [f"memories/u{i % 3}/{i:03d}.json" for i in range(40)]
    for i, key in enumerate(keys):
        if i not in (7, 23):
            s3.put_json(key, {"n": i, "text": "花生" * i})
    client.put_object(Bucket=s3.bucket, Key=keys[23], Body=b"{not json")  # a corrupt original
    got = s3.get_each(keys, workers=8)
    assert [g["n"] for i, g in enumerate(got) if i not in (7, 23)] == [i for i in range(40) if i not in (7, 23)]
    assert isinstance(got[7], NotFoundError) and isinstance(got[23], ValueError)
    assert 1 < client.most_in_flight <= 8, "reads should overlap, on at most `workers` threads"


def test_fetch_maps_missing_to_none_and_raises_when_the_store_is_down(
        store: tuple[S3Store, _CountingClient]) -> None:
    s3, _ = store
    s3.put_json("memories/u1/a.json", {"a": 1})
    assert s3.fetch(["memories/u1/a.json", "memories/u1/b.json"]).docs == {
        "memories/u1/a.json": {"a": 1}, "memories/u1/b.json": None}
    gone = S3Store(s3.bucket, make_s3_client("http://127.0.0.1:9", "us-east-1"))  # nothing listens there
    with pytest.raises(BackendUnavailableError):
        gone.fetch(["memories/u1/a.json", "memories/u1/b.json"])


def _fast_store(endpoint: str, bucket: str) -> S3Store:
    from agent_memory.store.s3 import make_s3_store

    s3 = make_s3_store(bucket, endpoint, "us-east-1")
    assert s3.gets is not None, "credentials are in the environment: batch reads should take the fast path"
    return s3


def _check_signed_reads(s3: S3Store) -> None:
    """What the ingest worker relies on, through the signed fast path: each key's document in
    order, NotFoundError for a missing one, the parse error of a corrupt one, ids with ':' (legal
    in a user id) signed right, and dot segments left to boto3."""
    keys = [f"memories/team:{i % 3}/{i:032x}.json" for i in range(30)]
    for i, key in enumerate(keys):
        if i != 4:
            s3.put_json(key, {"n": i, "text": "花生过敏 " * i})
    s3.client.put_object(Bucket=s3.bucket, Key=keys[9], Body=b"{not json")
    got = s3.get_each(keys, workers=8)
    assert [g["n"] for i, g in enumerate(got) if i not in (4, 9)] == [i for i in range(30) if i not in (4, 9)]
    assert isinstance(got[4], NotFoundError) and isinstance(got[9], ValueError)
    assert got[29]["text"] == "花生过敏 " * 29
    assert s3.gets is not None
    direct = s3.gets.get_json(keys[3])
    assert direct == {"n": 3, "text": "花生过敏 " * 3}, "the fast path itself, not the boto3 fallback, answers"


def test_signed_batch_reads_against_moto(moto_server: ServerProcess) -> None:
    bucket = f"raw-{uuid.uuid4().hex[:8]}"
    make_bucket(moto_server.url, bucket)
    _check_signed_reads(_fast_store(moto_server.url, bucket))


def test_signed_batch_reads_against_seaweedfs(tmp_path: Any) -> None:
    from agent_memory.local.seaweedfs import LoopbackSeaweedFS

    server = LoopbackSeaweedFS(tmp_path / "weed").start()
    try:
        make_bucket(server.url, "raw-weed")
        _check_signed_reads(_fast_store(server.url, "raw-weed"))
    finally:
        server.stop()


def test_signed_reads_hand_every_other_answer_to_boto3(moto_server: ServerProcess) -> None:
    """A missing bucket answers 404 too, but not NoSuchKey: the fast path hands it to boto3, whose
    error (BackendUnavailableError) reaches the worker, so a misconfigured bucket never reads as
    'this memory was deleted' (which would drop the batch's messages). Dot segments go to boto3
    before any request is signed."""
    from agent_memory.store.s3_gets import Unhandled

    s3 = _fast_store(moto_server.url, f"raw-missing-{uuid.uuid4().hex[:8]}")
    assert s3.gets is not None
    with pytest.raises(Unhandled):
        s3.gets.get_json("memories/u1/a.json")
    got = s3.get_each(["memories/u1/a.json", "memories/u1/b.json"])
    assert all(isinstance(g, BackendUnavailableError) for g in got), got
    with pytest.raises(Unhandled):
        s3.gets.get_json("memories/../u1/a.json")


def test_signed_reads_say_the_store_is_down() -> None:
    """Nothing listens: each key reads as BackendUnavailableError (the worker retries the batch),
    never as a missing original."""
    from agent_memory.store.s3 import make_s3_store

    gone = make_s3_store("raw-gone", "http://127.0.0.1:9", "us-east-1")
    assert gone.gets is not None
    got = gone.get_each(["memories/u1/a.json", "memories/u1/b.json"])
    assert all(isinstance(g, BackendUnavailableError) for g in got), got
    with pytest.raises(BackendUnavailableError):
        gone.fetch(["memories/u1/a.json", "memories/u1/b.json"])
