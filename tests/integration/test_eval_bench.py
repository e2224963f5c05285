"""The eval and bench commands on small inputs: they run end to end and report sane numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory import Settings
from agent_memory.evaluation import bench, locomo

LOCOMO_DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "locomo" / "locomo_dev.json"


def tiny_locomo(path: Path) -> Path:
    turns = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "Hi Ben! How was your weekend?"},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Great, I adopted a grey kitten called Pixel."},
        {"speaker": "Ana", "dia_id": "D1:3", "text": "Lovely. I started pottery classes on Tuesday."},
        {"speaker": "Ben", "dia_id": "D1:4", "text": "Nice, my sister moved to Osaka last month."},
    ]
    later = [
        {"speaker": "Ana", "dia_id": "D2:1", "text": "My pottery teacher says my bowls are improving."},
        {"speaker": "Ben", "dia_id": "D2:2", "text": "Pixel knocked over my coffee this morning."},
    ]
    data = [{"sample_id": "tiny", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns,
        "session_2_date_time": "10:00 am on 20 May, 2023", "session_2": later},
        "qa": [{"question": "What is the name of Ben's kitten?", "answer": "Pixel", "evidence": ["D1:2"],
                "category": 4},
               {"question": "Where did Ben's sister move?", "answer": "Osaka", "evidence": ["D1:4"], "category": 4},
               {"question": "What classes is Ana taking?", "answer": "pottery", "evidence": ["D1:3", "D2:1"],
                "category": 1},
               {"question": "adversarial", "answer": "", "evidence": ["D1:1"], "category": 5}]}]
    path.write_text(json.dumps(data))
    return path


def test_locomo_eval_on_a_tiny_conversation(tmp_path: Path) -> None:
    convs = locomo.load(tiny_locomo(tmp_path / "tiny.json"))
    assert [t.context for t in convs[0].turns][:2] == [None, "Ana: Hi Ben! How was your weekend?"]
    assert convs[0].turns[4].context is None  # a new session starts without context
    assert len(convs[0].questions) == 3  # category 5 is left out
    result = locomo.run(tmp_path / "tiny.json")
    ours = result["methods"]["agent-memory"]
    assert set(result["methods"]) == {"agent-memory", "dense", "bm25", "agent-memory (extracted)"}
    assert ours["recall_at"]["5"] == 100.0
    # the second mode: the pipeline keeps what is about the speakers and drops the greeting
    x = result["extraction"]
    assert x["turns"] == 6 and 0 < x["turns_kept"] < 6
    assert 0 < x["evidence_kept_pct"] <= 100
    assert result["methods"]["agent-memory (extracted)"]["recall_at"]["20"] > 0
    turns_only = locomo.run(tmp_path / "tiny.json", extracted=False)
    assert "agent-memory (extracted)" not in turns_only["methods"] and turns_only["extraction"] is None
    assert ours["latency_ms"]["p50"] > 0
    locomo.plot([result], tmp_path / "plot.png")
    assert (tmp_path / "plot.png").stat().st_size > 1000


@pytest.mark.skipif(not LOCOMO_DEV.exists(), reason="LoCoMo dev split not beside the repository (../shared)")
def test_locomo_dev_split_loads_in_place() -> None:
    convs = locomo.load(LOCOMO_DEV)
    assert len(convs) == 6 and sum(len(c.questions) for c in convs) > 800


def test_bench_runs_and_reports(tmp_path: Path) -> None:
    settings = bench.temp_settings(Settings(), None, "file", None, None)
    result = bench.run(200, 5, settings, recall_queries=20, label="tiny", probe=200)
    assert result["memories"] == 200 and result["bulk_load_memories_per_s"] > 0
    # the same recalls timed before and after the compaction step (at once on an embedded index)
    assert result["compacted"] and result["compaction_wait_s"] == 0 and not result["compaction_timed_out"]
    assert result["recall_ms_c1_before_compaction"]["n"] == result["recall_ms_c1"]["n"] == 20
    for key in ("recall_ms_c1", "recall_ms_c8", "index_search_ms", "remember_api_stage_ms"):
        assert 0 < result[key]["p50"] <= result[key]["p95"] <= result[key]["p99"]
    assert result["handler_init_s"] > 0 and result["rss_peak_mb"] > 0
    assert set(result["handlers_cold_start"]) == {"api", "ingest", "tier", "selfcheck"}
    runs = result["handler_cold_start_runs"]
    assert len(runs) == bench.COLD_START_RUNS and result["handler_cold_start"] in runs
    cost = sorted(r["import_s"] + r["model_s"] for r in runs)
    cold = result["handler_cold_start"]
    assert cold["import_s"] + cold["model_s"] == cost[len(cost) // 2]
    assert all(h["model_s"] > 0 for h in result["handlers_cold_start"].values())
    assert result["ingest_batch_size"] == settings.ingest_batch_size
    assert result["ingest_worker_memories_per_s"] > 0 and result["ingest_without_store_reads_memories_per_s"] > 0
    # where a slow recall's time went: each phase's wall time beside the recalling thread's CPU
    phases = {"embed", "gate", "search", "rank", "fetch"}
    assert set(result["recall_phase_cpu_ms_c1"]) == phases
    tail = result["recall_phases_slowest_5pct_c1"]
    assert set(tail) == phases and tail["embed"]["cpu_ms"] > 0
    assert all(0 <= v["cpu_ms"] <= v["wall_ms"] + 0.05 for v in tail.values()), tail
    bench.plot(result, tmp_path / "bench.png")
    assert (tmp_path / "bench.png").stat().st_size > 1000


def test_bench_probe_size_and_no_cold_starts() -> None:
    """A run asked for small probes and no handler starts does that, and says so in its result."""
    settings = bench.temp_settings(Settings(), None, "file", None, None)
    result = bench.run(50, 2, settings, recall_queries=5, label="tinier", probe=20, cold_start_runs=0)
    assert result["ingest_probe"] == 20 and result["ingest_worker_judged_probe"] == 20
    assert result["remember_api_stage_ms"]["n"] == 20 and result["ingest_worker_memories_per_s"] > 0
    assert result["handler_cold_start"] is None and result["handler_cold_start_runs"] == []
    assert result["handlers_cold_start"] is None and result["handler_init_s"] is None


@pytest.mark.milvus_server
def test_bench_on_a_milvus_server_measures_after_its_index_is_built(milvus_server: str) -> None:
    settings = bench.temp_settings(Settings(), milvus_server, "file", None, None)
    # without the compaction step: a small collection's compaction and the server's quiet after it
    # took 20-180 s here (test_wait_indexed_... covers compact() on the server)
    result = bench.run(150, 4, settings, recall_queries=10, label="tiny-server", compact=False, probe=100,
                       cold_start_runs=1)
    assert result["index"] == "milvus-server" and result["index_build_wait_s"] >= 0
    assert result["compacted"] is False and result["compaction_wait_s"] == 0
    assert result["recall_ms_c1_before_compaction"]["n"] == result["recall_ms_c1"]["n"] == 10
    assert set(result["recall_phases_ms_c1"]) == {"embed", "gate", "search", "rank", "fetch", "log"}
    assert result["ingest_worker_judged_memories_per_s"] > 0
    assert result["ingest_probe"] == 100 and result["ingest_worker_judged_probe"] == 100
    assert len(result["handler_cold_start_runs"]) == 1
    cold = result["handler_cold_start"]
    assert min(cold.values()) > 0
    assert cold["total_s"] == pytest.approx(cold["import_s"] + cold["clients_s"] + cold["model_s"], abs=0.01)


@pytest.mark.milvus_server
def test_wait_indexed_returns_when_the_server_has_indexed_every_row(milvus_server: str) -> None:
    import uuid

    import numpy as np

    from agent_memory.embed.hashing import HashingEmbedder
    from agent_memory.filters import MemoryFilter
    from agent_memory.index.milvus import MilvusIndex
    from agent_memory.model import IndexRecord, utcnow

    embedder = HashingEmbedder()
    index = MilvusIndex(milvus_server, f"w_{uuid.uuid4().hex[:8]}")
    index.ensure(embedder.info)
    try:
        records = [IndexRecord(id=uuid.uuid4().hex, user_id="u", session_id="s", memory_type="fact", summary=f"m{i}",
                               importance=0.5, created_at=utcnow(), topic_id=None, is_active=True, deleted_at=None,
                               source="user_said", storage_key=f"k{i}") for i in range(300)]
        index.write(records, np.asarray(embedder.embed_documents([r.summary for r in records])))
        assert index.wait_indexed(timeout_s=120) >= 0
        info = index.client.describe_index(index.collection, "embedding")
        assert info["pending_index_rows"] == 0 and info["indexed_rows"] == info["total_rows"] == 300
        assert index.count() == 300
        # deletes and small writes leave segments to merge: compact() returns within its bound
        # (the server may keep a plan until its own 180 s timeout) and every live row is still
        # there, indexed and searchable
        index.delete([r.id for r in records[:50]])
        more = [r.model_copy(update={"id": uuid.uuid4().hex, "summary": f"n{i}"}) for i, r in enumerate(records[:40])]
        index.write(more, np.asarray(embedder.embed_documents([r.summary for r in more])))
        index.flush()
        assert 0 <= index.compact(timeout_s=30) < 90
        index.wait_indexed(timeout_s=120)  # a compaction ending at the bound may still be indexing
        info = index.client.describe_index(index.collection, "embedding")
        assert info["pending_index_rows"] == 0 and index.count() == 290
        vector = np.asarray(embedder.embed_documents(["n3"]))[0]
        hits = index.search(vector, MemoryFilter(user_id="u"), limit=5, strong=True)
        assert hits[0].record.id == more[3].id
    finally:
        index.drop()


def test_compact_returns_at_once_on_an_embedded_index(tmp_path: Path) -> None:
    from agent_memory.index.milvus import MilvusIndex

    index = MilvusIndex(str(tmp_path / "lite.db"), "c")
    assert index.compact() == 0.0
    index.close()


def test_bench_command_against_seaweedfs_as_the_s3_server(tmp_path: Path) -> None:
    """`agent-memory bench --s3 seaweedfs`: the same run with a real S3 server (Go) instead of moto."""
    from typer.testing import CliRunner

    from agent_memory.cli import app

    out = CliRunner().invoke(app, ["bench", "-n", "120", "--users", "3", "--queries", "5", "--s3", "seaweedfs",
                                   "--probe", "100", "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    result = json.loads((tmp_path / "bench-lite-0k-seaweedfs.json").read_text())
    assert result["s3_server"] == "seaweedfs" and result["store"] == "s3"
    assert result["recall_ms_c1"]["p50"] > 0 and result["ingest_worker_memories_per_s"] > 0
    assert result["ingest_probe"] == 100 and result["handler_cold_start"]["total_s"] > 0
    bad = CliRunner().invoke(app, ["bench", "-n", "10", "--s3", "minio", "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "seaweedfs" in bad.output


def test_bench_cold_start_command_reports_the_median_recall_handler_start(tmp_path: Path) -> None:
    """`agent-memory bench --cold-start N`: the handlers' cold starts alone, the recall handler N times."""
    from typer.testing import CliRunner

    from agent_memory.cli import app

    out = CliRunner().invoke(app, ["bench", "--cold-start", "3", "--out", str(tmp_path)])
    assert out.exit_code == 0, out.output
    result = json.loads((tmp_path / "cold-start.json").read_text())
    runs, api = result["api_runs"], result["handlers"]["api"]
    assert len(runs) == 3 and api in runs and set(result["handlers"]) == set(bench.HANDLERS)
    costs = sorted(r["import_s"] + r["model_s"] for r in runs)
    assert result["api_import_plus_model_s"] == round(costs[1], 3) > 0
    assert all(h["import_s"] > 0 and h["model_s"] > 0 for h in result["handlers"].values())
    assert not list(tmp_path.glob("bench-*.json"))  # nothing else was run
