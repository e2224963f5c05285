"""The bench's warning against the last committed result: which figures count as much worse."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from agent_memory.evaluation.bench_compare import committed_result, regressions


def result(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "index": "helixdb-embedded", "memories": 10_000, "users": 100, "store": "s3", "s3_server": "moto",
        "bulk_load_memories_per_s": 67.3, "ingest_worker_memories_per_s": 206.0,
        "ingest_without_store_reads_memories_per_s": 300.0, "recall_throughput_c8_per_s": 19.6,
        "recall_ms_c1": {"p50": 75.5, "p95": 139.9}, "index_search_ms": {"p50": 41.7, "p95": 70.7},
        "handler_cold_start": {"total_s": 1.2}, "rss_peak_mb": 1001.6,
    }
    for key, value in changes.items():
        if isinstance(value, dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


def test_the_issue_19_ingest_drop_is_flagged_and_noise_is_not() -> None:
    committed = result()
    now = result(ingest_worker_memories_per_s=20.6, ingest_without_store_reads_memories_per_s=21.8,
                 bulk_load_memories_per_s=47.0, recall_ms_c1={"p50": 90.0, "p95": 131.0})
    found = {r.measure: r for r in regressions(now, committed)}
    assert set(found) == {"ingest_worker_memories_per_s", "ingest_without_store_reads_memories_per_s"}
    assert round(found["ingest_worker_memories_per_s"].times_worse, 1) == 10.0
    assert "206" in str(found["ingest_worker_memories_per_s"])


def test_latency_counts_when_it_grows_and_improvements_never_do() -> None:
    committed = result()
    slower = result(index_search_ms={"p95": 150.0}, rss_peak_mb=2500.0)
    assert [r.measure for r in regressions(slower, committed)] == ["index_search_ms.p95", "rss_peak_mb"]
    faster = result(ingest_worker_memories_per_s=2000.0, recall_ms_c1={"p50": 5.0, "p95": 9.0})
    assert regressions(faster, committed) == []
    assert [r.measure for r in regressions(slower, committed, factor=3.0)] == []


def test_runs_of_another_size_or_store_are_not_compared_and_missing_figures_are_skipped() -> None:
    committed = result()
    assert regressions(result(memories=100_000, ingest_worker_memories_per_s=1.0), committed) == []
    assert regressions(result(s3_server="seaweedfs", ingest_worker_memories_per_s=1.0), committed) == []
    # probes of another size; a result from before the field existed probed with 1,000
    assert regressions(result(ingest_probe=100, ingest_worker_memories_per_s=1.0), committed) == []
    assert regressions(result(ingest_probe=1000, ingest_worker_memories_per_s=1.0), committed) != []
    older = {k: v for k, v in committed.items() if k != "recall_throughput_c8_per_s"}
    assert regressions(result(recall_throughput_c8_per_s=0.1), older) == []
    assert regressions(result(recall_throughput_c8_per_s=0), committed) == []  # not a figure


def test_the_committed_file_is_read_from_git_head_not_the_overwritten_copy(tmp_path: Path) -> None:
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(tmp_path)]
    subprocess.run([*git, "init", "-q"], check=True)
    results = tmp_path / "results"
    results.mkdir()
    path = results / "bench-helix-10k.json"
    path.write_text(json.dumps(result()))
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "r"], check=True)
    path.write_text(json.dumps(result(ingest_worker_memories_per_s=1.0)))
    assert committed_result(path) == result()
    new = results / "bench-helix-1k.json"  # not committed: the file on disk, then nothing
    assert committed_result(new) is None
    new.write_text(json.dumps(result(users=10)))
    assert committed_result(new) == result(users=10)
    new.write_text("not json")
    assert committed_result(new) is None
