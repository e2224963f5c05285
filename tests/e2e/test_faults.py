"""Faults injected into `agent-memory up` with real processes: the index goes away while memories
flow (retries, DLQ, `agent-memory redrive`), and an original stored without its index job (a crash
between the S3 write and the enqueue). Every acknowledged memory ends indexed exactly once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest

from agent_memory.local.processes import ServerProcess, free_port
from tests.conftest import HELIX_API_KEY, start_helix_server
from tests.e2e.conftest import RunningMirror
from tests.e2e.test_mirror import wait_until


def helix(root: Path, port: int) -> ServerProcess:
    """The index process we can kill and bring back (same root, same port)."""
    return start_helix_server(root, port, root.parent / "helix.log")


def queue_depth(sqs: Any, url: str) -> int:
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
    return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])


def test_index_down_jobs_reach_the_dlq_and_redrive_indexes_each_once(
        mirror_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port, root = free_port(), tmp_path / "helix-data"
    root.mkdir()
    index = helix(root, port)
    monkeypatch.setenv("AGENT_MEMORY_INDEX_TOKEN", HELIX_API_KEY)
    monkeypatch.setenv("AGENT_MEMORY_MAX_RECEIVE_COUNT", "2")
    m: RunningMirror = mirror_factory("--index-uri", f"helix+http://127.0.0.1:{port}", "--visibility-timeout", "1")
    sqs = boto3.client("sqs", endpoint_url=m.info["emulator"], region_name="us-east-1")
    try:
        index.stop()  # the index goes away while memories keep arriving
        with m.client() as c:
            acked = []
            for i in range(20):
                r = c.post("/v1/memories", json={"user_id": "fault-idx", "content": f"fact {i}, index down"})
                assert r.status_code == 202, r.text  # S3 + queue are fine: accepted
                acked.extend(r.json()["memory_ids"])
            assert c.get("/health").json()["index"].startswith("unavailable")
        # each job is tried max_receive_count times, then SQS moves it to the DLQ
        wait_until(lambda: queue_depth(sqs, m.info["dead_letter_queue"]) >= 1
                   and queue_depth(sqs, m.info["write_queue"]) == 0, timeout_s=90, every_s=0.5)
        in_dlq = queue_depth(sqs, m.info["dead_letter_queue"])

        index = helix(root, port)  # the index is back, with its data
        out = subprocess.run([sys.executable, "-m", "agent_memory.cli", "redrive",
                              "--sqs-endpoint", m.info["emulator"]], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["moved"] == in_dlq
        with m.client() as c:
            def indexed() -> list[str]:
                rows = c.get("/v1/users/fault-idx/memories", params={"limit": 1000}).json()["memories"]
                return [r["id"] for r in rows]

            wait_until(lambda: len(indexed()) >= len(acked), timeout_s=60)
            ids = indexed()
        assert sorted(ids) == sorted(acked), "every memory indexed exactly once"
        assert queue_depth(sqs, m.info["dead_letter_queue"]) == 0
    finally:
        m.stop()
        index.stop()


def test_original_without_its_index_job_is_found_by_the_reconciler(mirror_factory: Any) -> None:
    """The API stopped between the S3 write and the enqueue: the original exists, no job does.
    The reconciler (every `make up`, and `agent-memory reindex --missing`) indexes it."""
    from agent_memory import Settings
    from agent_memory.service import Memory

    m: RunningMirror = mirror_factory()
    s = Settings(store="s3", s3_endpoint_url=m.info["s3"], bucket_name=m.info["bucket"],
                 data_dir=m.data_dir.parent / "stager", embedding_provider="hash")
    stager = Memory(s)  # writes originals exactly as the API does, then "crashes" before enqueueing
    staged = [stager.stage(stager.validate_remember(user_id="fault-crash", content=f"orphan {i}"))[0].memory_id
              for i in range(5)]
    stager.close()
    with m.client() as c:
        assert c.get("/v1/users/fault-crash/memories").json()["memories"] == []
    m.stop()
    m2: RunningMirror = mirror_factory(data_dir=m.data_dir, api_port=m.api_port, emulator_port=m.emulator_port)
    assert m2.info["reconciled_at_start"] == 5
    with m2.client() as c:
        rows = c.get("/v1/users/fault-crash/memories").json()["memories"]
    assert sorted(r["id"] for r in rows) == sorted(staged)
    m2.stop()


def test_short_soak_has_no_errors_and_loses_nothing(mirror: RunningMirror, tmp_path: Path) -> None:
    """The short variant of `agent-memory soak` (the README's figures come from the 2-minute run)."""
    key = (mirror.data_dir / "api_key").read_text().strip()
    out = subprocess.run([sys.executable, "-m", "agent_memory.cli", "soak", "--url", mirror.url, "--api-key", key,
                          "--clients", "8", "--duration", "8", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    result = json.loads((tmp_path / "soak.json").read_text())
    assert result["errors"] == 0 and result["missing"] == 0 and result["duplicates"] == 0
    assert result["acknowledged"] > 8 and result["indexed_with_original"] == result["acknowledged"]
