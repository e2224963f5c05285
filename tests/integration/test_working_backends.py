"""Working memory on each backend through the real thing: a redis-server process, DynamoDB on a
moto server process (the table made by the mirror's bootstrap), and the in-process dict."""

from __future__ import annotations

import time
import uuid

import pytest

from agent_memory import Settings
from agent_memory.local.bootstrap import ensure_working_table
from agent_memory.local.processes import ServerProcess
from agent_memory.working import WorkingMemory, WorkingStore, make_working_store


@pytest.fixture(params=["memory", "redis", "dynamodb"])
def store(request: pytest.FixtureRequest) -> WorkingStore:
    if request.param == "redis":
        return make_working_store(Settings(working_store="redis",
                                           working_redis_url=request.getfixturevalue("redis_server")))
    if request.param == "dynamodb":
        import boto3

        moto: ServerProcess = request.getfixturevalue("moto_server")
        s = Settings(working_store="dynamodb", dynamodb_endpoint_url=moto.url,
                     working_table_name=f"working-{uuid.uuid4().hex[:8]}")
        ensure_working_table(boto3.client("dynamodb", endpoint_url=moto.url, region_name="us-east-1"), s)
        ensure_working_table(boto3.client("dynamodb", endpoint_url=moto.url, region_name="us-east-1"), s)  # idempotent
        return make_working_store(s)
    return make_working_store(Settings())


def test_working_memory_round_trip_isolation_and_ttl(store: WorkingStore) -> None:
    user, other = f"u-{uuid.uuid4().hex[:6]}", f"v-{uuid.uuid4().hex[:6]}"
    w = WorkingMemory(store, user, "s1", default_ttl_s=60)
    w.set("plan", {"steps": ["订机票", "book hotel"], "done": 1})
    w.set("flash", "short-lived", ttl_s=1)
    w.set("plan", {"steps": ["订机票", "book hotel"], "done": 2})  # overwrite
    assert w.get("plan") == {"steps": ["订机票", "book hotel"], "done": 2}
    assert set(w.items()) == {"plan", "flash"}
    assert WorkingMemory(store, other, "s1", 60).items() == {}
    assert WorkingMemory(store, user, "s2", 60).get("plan") is None
    time.sleep(2.1)
    assert w.get("flash") is None and set(w.items()) == {"plan"}
    assert w.delete("plan") is True and w.delete("plan") is False
    w.set("a", 1)
    w.set("b", 2)
    assert w.clear() == 2 and w.items() == {}
