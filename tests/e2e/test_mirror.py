"""The local mirror end to end, over HTTP, with real processes."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import httpx

from tests.e2e.conftest import RunningMirror, pid_alive


def wait_until(fn: Any, timeout_s: float = 30.0, every_s: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(every_s)
    raise TimeoutError("condition not met in time")


def s3_of(m: RunningMirror) -> Any:
    return boto3.client("s3", endpoint_url=m.info["emulator"], region_name="us-east-1",
                        aws_access_key_id="local", aws_secret_access_key="local")


def test_remember_recall_forget_over_http(mirror_factory: Any) -> None:
    m: RunningMirror = mirror_factory()
    with m.client() as c:
        assert httpx.post(f"{m.url}/v1/recall", json={"user_id": "u1", "query": "x"}).status_code == 403
        r = c.post("/v1/memories", json={"user_id": "u1", "content": "我对花生过敏", "importance": 0.9})
        assert r.status_code == 202, r.text
        [mid] = r.json()["memory_ids"]

        def recalled() -> list[str]:
            body = c.post("/v1/recall", json={"user_id": "u1", "query": "点餐时要注意什么"}).json()
            return [h["memory_id"] for h in body["memories"]]

        assert wait_until(recalled) == [mid]
        assert s3_of(m).head_object(Bucket=m.info["bucket"], Key=f"memories/u1/{mid}.json")
        assert c.get(f"/v1/memories/{mid}").json()["record"]["id"] == mid  # the index entry
        assert c.delete(f"/v1/memories/{mid}").status_code == 200
        assert recalled() == []
    pids = m.child_pids()
    assert pids and all(pid_alive(p) for p in pids)
    m.stop()
    assert m.proc.returncode == 0
    assert not any(pid_alive(p) for p in pids)
    assert not (m.data_dir / "mirror.pid").exists()


def test_bootstrap_matches_the_settings(mirror_factory: Any) -> None:
    from agent_memory.aws_resources import lifecycle_rules
    from agent_memory.config import Settings

    m: RunningMirror = mirror_factory()
    s3 = s3_of(m)
    bucket = m.info["bucket"]
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    rules = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    expected = lifecycle_rules(Settings())
    assert [(r["ID"], r.get("Transitions")) for r in rules] == [(e["ID"], e.get("Transitions")) for e in expected]
    block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert all(block.values())
    enc = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert enc["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    sqs = boto3.client("sqs", endpoint_url=m.info["emulator"], region_name="us-east-1",
                       aws_access_key_id="local", aws_secret_access_key="local")
    attrs = sqs.get_queue_attributes(QueueUrl=m.info["write_queue"], AttributeNames=["RedrivePolicy"])
    import json

    redrive = json.loads(attrs["Attributes"]["RedrivePolicy"])
    assert int(redrive["maxReceiveCount"]) == Settings().max_receive_count
    assert redrive["deadLetterTargetArn"].endswith(":agent-memory-write-dlq")
    m.stop()


def test_data_survives_a_restart(mirror_factory: Any) -> None:
    m: RunningMirror = mirror_factory()
    with m.client() as c:
        [mid] = c.post("/v1/memories", json={"user_id": "u9", "content": "I was born in Porto"}).json()["memory_ids"]
        wait_until(lambda: c.get("/v1/users/u9/memories").json()["memories"])
    m.stop()
    m2: RunningMirror = mirror_factory(data_dir=m.data_dir, api_port=m.api_port, emulator_port=m.emulator_port)
    with m2.client() as c:
        body = c.get(f"/v1/memories/{mid}").json()
        assert body["original"]["content"] == "I was born in Porto"
    m2.stop()


def test_crash_mid_batch_loses_and_duplicates_nothing(mirror_factory: Any) -> None:
    m: RunningMirror = mirror_factory()
    with m.client() as c, ThreadPoolExecutor(8) as pool:
        def post(i: int) -> str:
            r = c.post("/v1/memories", json={"user_id": "crash", "content": f"fact number {i} about crashes"})
            assert r.status_code == 202, r.text
            return str(r.json()["memory_ids"][0])

        acked = set(pool.map(post, range(200)))
    m.kill()  # SIGKILL while the poller is still working through the queue
    assert len(acked) == 200
    m2: RunningMirror = mirror_factory(data_dir=m.data_dir, api_port=m.api_port, emulator_port=m.emulator_port)
    with m2.client() as c:
        def timeline() -> list[str]:
            rows = c.get("/v1/users/crash/memories", params={"limit": 1000}).json()["memories"]
            return [r["id"] for r in rows]

        ids = wait_until(lambda: (t := timeline()) and len(t) >= 200 and t, timeout_s=60)
        time.sleep(2)
        ids = timeline()
    print(f"indexed by the start-up reconciler after the crash: {m2.info['reconciled_at_start']}")
    assert len(ids) == 200, "lost or duplicated memories"
    assert set(ids) == acked
    m2.stop()
