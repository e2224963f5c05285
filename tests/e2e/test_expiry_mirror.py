"""Expiry through the local mirror's scheduled maintenance job, on each index backend, with a clock
the test moves: memories go in over HTTP (API -> queue -> ingest), stop being recalled the moment
they expire, and the scheduled job (the tier/maintenance handler on its timer) erases them — index
row and every S3 version on the emulator — and reports the counts."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from agent_memory import MemoryClient, NotFoundError
from agent_memory.embed.base import Embedder
from agent_memory.local.lambda_runtime import Timer
from agent_memory.local.mirror import Mirror, MirrorOptions
from tests.behaviour.test_expiry import Clock


@pytest.fixture(params=["lite", "helix", pytest.param("milvus", marks=pytest.mark.milvus_server)])
def running(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> Iterator[tuple[Mirror, Clock]]:
    clock = Clock()
    index_uri = request.getfixturevalue("milvus_server") if request.param == "milvus" else None
    mirror = Mirror(MirrorOptions(data_dir=tmp_path / "mirror", api_port=0, emulator_port=0,
                                  index="helix" if request.param == "helix" else "lite", index_uri=index_uri,
                                  maintenance_every_s=0.5, clock=clock, embedder=embedder))
    try:
        mirror.start()
        yield mirror, clock
    finally:
        mirror.stop()


def _maintenance(mirror: Mirror) -> Timer:
    return next(p for p in mirror._parts if isinstance(p, Timer) and p.rule_name == "agent-memory-tiering")


def test_the_scheduled_job_erases_expired_memories(running: tuple[Mirror, Clock]) -> None:
    mirror, clock = running
    assert mirror.settings is not None
    u = f"x-{uuid.uuid4().hex[:10]}"
    with MemoryClient(mirror.api_url, mirror.api_key) as c:
        [brief] = c.remember(u, "The guest wifi password is sunflower42", ttl_days=1)
        [lasting] = c.remember(u, "I am allergic to peanuts")
        assert c.get(brief, user_id=u)["record"]["expires_at"] is not None

        def recalled() -> set[str]:
            return {h.memory_id for h in c.recall(u, "wifi password and allergies", min_score=-1, gate=False)}

        assert recalled() == {brief, lasting}
        clock.advance(days=1, seconds=1)
        assert recalled() == {lasting}  # at once: recall never waits for the job
        timer = _maintenance(mirror)
        deadline = time.monotonic() + 60
        report: dict[str, Any] = {}
        while not report.get("expired", {}).get("expired"):
            assert time.monotonic() < deadline, f"no maintenance run erased it: {timer.last_result}"
            time.sleep(0.2)
            report = timer.last_result or {}
        assert report["expired"]["index_entries"] == 1 and report["expired"]["object_versions"] >= 1
        with pytest.raises(NotFoundError):
            c.get(brief, user_id=u)
        assert [r.id for r in c.timeline(u, include_expired=True, include_inactive=True,
                                         include_deleted=True)] == [lasting]
    s3 = boto3.client("s3", endpoint_url=mirror.settings.s3_endpoint_url, region_name=mirror.settings.aws_region)
    versions = s3.list_object_versions(Bucket=mirror.settings.bucket_name, Prefix=f"memories/{u}/")
    keys = {v["Key"] for v in [*versions.get("Versions", []), *versions.get("DeleteMarkers", [])]}
    assert keys == {f"memories/{u}/{lasting}.json"}
