"""mem0 as a peer column, through the real ``mem0ai`` package, offline, on tiny inputs.

What would make the columns wrong, and the test that catches it: our embedding wrapped unlike our
own use (dense-only mem0 must rank exactly as our plain dense baseline), mem0 ids mapped back to
the wrong turns (same), BM25 silently off because fastembed could not load ``Qdrant/bm25`` offline
(the default search must report BM25 scores and rank differently from dense only), and the
commands' wiring (``eval locomo --peer``, ``bench --peer``).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from agent_memory.cli import app
from agent_memory.embed.base import Embedder
from agent_memory.evaluation import bench, locomo
from agent_memory.evaluation.bench import _pcts
from agent_memory.evaluation.peers import bench_columns, configurations, open_peers, require

# found, not imported: the adapter imports mem0 itself, with its telemetry off
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mem0") is None, reason="agent-memory[peers] not installed")

SESSION_1 = [
    ("Ana", "Hi Ben! How was your weekend?"),
    ("Ben", "Great, I adopted a grey kitten called Pixel."),
    ("Ana", "Lovely. I started pottery classes on Tuesday evenings."),
    ("Ben", "Nice, my sister Clara moved to Osaka last month for a job at a bank."),
    ("Ana", "Osaka is wonderful, I went there in 2019 for a conference."),
    ("Ben", "I am training for the Berlin marathon in September."),
    ("Ana", "How many kilometres do you run each week?"),
    ("Ben", "About forty, mostly along the river before work."),
    ("Ana", "My knee still hurts from skiing, so I switched to swimming."),
    ("Ben", "Swimming is gentle. Do you go to the pool near the library?"),
    ("Ana", "Yes, the one with the glass roof, three mornings a week."),
    ("Ben", "I keep burning my sourdough bread, any tips?"),
    ("Ana", "Lower the oven to 220 degrees and use a Dutch oven."),
    ("Ben", "Thanks! Also, Pixel keeps chewing my headphone cables."),
]
SESSION_2 = [
    ("Ana", "My pottery teacher says my bowls are improving."),
    ("Ben", "Pixel knocked over my coffee this morning."),
    ("Ana", "Did you finish the marathon training plan?"),
    ("Ben", "Almost, the long run is 32 kilometres on Sunday."),
    ("Ana", "I am reading a novel about a lighthouse keeper in Norway."),
    ("Ben", "Clara sent me a photo of cherry blossoms in Osaka."),
    ("Ana", "We should visit her next spring."),
    ("Ben", "My sourdough finally came out right at 220 degrees."),
    ("Ana", "I glazed my first vase in a deep blue colour."),
    ("Ben", "Work is busy, we launch the new mobile app on Friday."),
    ("Ana", "Good luck with the launch! Is it the banking app?"),
    ("Ben", "No, a recipe app for bakers."),
]
QUESTIONS = [
    ("What is the name of Ben's kitten?", ["D1:2"], 4),
    ("Where did Ben's sister move?", ["D1:4"], 4),
    ("What classes is Ana taking?", ["D1:3", "D2:1"], 1),
    ("Which marathon is Ben training for?", ["D1:6"], 4),
    ("At what temperature should sourdough be baked?", ["D1:13", "D2:8"], 1),
    ("What exercise does Ana do because of her knee?", ["D1:9"], 4),
    ("What did Ana glaze?", ["D2:9"], 4),
    ("What app is Ben's team launching?", ["D2:10", "D2:12"], 1),
]


def small_locomo(path: Path) -> Path:
    """26 turns in two sessions and 8 questions, in LoCoMo's format."""
    def session(n: int, turns: list[tuple[str, str]]) -> list[dict[str, str]]:
        return [{"speaker": s, "dia_id": f"D{n}:{i}", "text": t} for i, (s, t) in enumerate(turns, 1)]

    data = [{"sample_id": "small", "conversation": {
        "speaker_a": "Ana", "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": session(1, SESSION_1),
        "session_2_date_time": "10:00 am on 20 May, 2023", "session_2": session(2, SESSION_2)},
        "qa": [{"question": q, "answer": "", "evidence": e, "category": c} for q, e, c in QUESTIONS]}]
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def eval_result(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data = small_locomo(tmp_path_factory.mktemp("locomo") / "small.json")
    return locomo.run(data, extracted=False, peers=["mem0"])


def test_dense_only_mem0_ranks_exactly_as_our_plain_dense_baseline(eval_result: dict[str, Any]) -> None:
    """The same vectors, the same cosine, the ids mapped back to the right turns: every question's
    top 20 identical to our plain dense search's, cut at mem0's 0.1 similarity floor (26 turns, so
    the whole order above the floor is compared)."""
    check = eval_result["peers"]["mem0 (dense only)"]["same_ranking_as"]
    assert check == {"baseline": "dense", "questions": len(QUESTIONS), "identical_top20": len(QUESTIONS)}
    assert eval_result["methods"]["mem0 (dense only)"]["recall_at"] == eval_result["methods"]["dense"]["recall_at"]


def test_default_mem0_reports_recall_latency_throughput_and_ratios(eval_result: dict[str, Any]) -> None:
    methods, peers = eval_result["methods"], eval_result["peers"]
    assert list(peers) == configurations("mem0")
    mem0 = peers["mem0"]
    assert mem0["config"]["package"] == "mem0ai==2.2.1" and "BM25" in mem0["config"]["search"]
    assert mem0["add_memories_per_s"] > 0 and methods["mem0"]["latency_ms"]["p50"] > 0
    ratios = mem0["ratio_to_ours"]
    ours = methods["agent-memory"]
    assert ratios["recall_at"]["20"] == pytest.approx(methods["mem0"]["recall_at"]["20"] / ours["recall_at"]["20"],
                                                      abs=1e-3)
    assert set(ratios["recall_at_10_by_category"]) == {"multi-hop", "single-hop"}
    assert ratios["search_latency_p50"] > 0 and ratios["add_throughput"] > 0
    assert "same_ranking_as" not in mem0


def test_default_search_uses_bm25_from_the_offline_fastembed_cache(embedder: Embedder, tmp_path: Path) -> None:
    """mem0 drops BM25 without a word when fastembed can't load ``Qdrant/bm25``; here it must
    score keywords, and so rank unlike its dense-only configuration."""
    peers = open_peers("mem0", embedder, tmp_path)
    try:
        texts = [f"{s}: {t}" for s, t in SESSION_1 + SESSION_2]
        turn_of = {name: {i: n for n, i in enumerate(peer.add("u1", texts))} for name, peer in peers.items()}
        explained = peers["mem0"].memory.search("sourdough oven degrees", top_k=5, filters={"user_id": "u1"},
                                                explain=True)["results"]
        assert max(r["score_details"]["bm25_score"] for r in explained) > 0.5
        rankings = {name: [[turn_of[name][i] for i in peer.search("u1", q, 5)] for q, _, _ in QUESTIONS]
                    for name, peer in peers.items()}
        assert rankings["mem0"] != rankings["mem0 (dense only)"]
        assert peers["mem0"].search("u2", "sourdough", 5) == []  # another user's memories never come back
    finally:
        for peer in peers.values():
            peer.close()


def test_our_embeddings_wrapper_returns_our_vectors(embedder: Embedder) -> None:
    from agent_memory.evaluation.peers.mem0 import OurEmbeddings

    wrapped = OurEmbeddings(embedder)
    text = "Ben adopted a grey kitten called Pixel."
    np.testing.assert_allclose(wrapped.embed_query(text), embedder.embed_query(text), rtol=0, atol=1e-7)
    np.testing.assert_allclose(wrapped.embed_documents([text, "x"]), embedder.embed_documents([text, "x"]), atol=1e-7)


def test_bench_columns_time_the_same_data_and_queries(embedder: Embedder, tmp_path: Path) -> None:
    queries = [("bench-u00000", "What do I like to drink?"), ("bench-u00001", "When is my rent due?")] * 3
    peer = bench_columns.run("mem0", embedder, 40, 2, queries, _pcts)
    assert peer["memories"] == 40 and peer["add_memories_per_s"] > 0
    assert peer["search_ms_c1"]["n"] == peer["search_ms_c8"]["n"] == len(queries)
    ours = {"recall_ms_c1": {"p50": 10.0, "p95": 20.0}, "recall_ms_c8": {"p50": 40.0, "p95": 80.0},
            "bulk_load_memories_per_s": 100.0, "ingest_worker_memories_per_s": 200.0}
    r = bench_columns.ratios(peer, ours)
    assert r["search_p95_c8_vs_recall"] == pytest.approx(peer["search_ms_c8"]["p95"] / 80.0, abs=1e-3)
    assert r["add_vs_ingest_worker"] == pytest.approx(peer["add_memories_per_s"] / 200.0, abs=1e-3)
    latency = {"p50": 1.0, "p95": 2.0, "p99": 3.0}
    plotted = {"recall_ms_c1": latency, "recall_ms_c8": latency, "index_search_ms": latency,
               "recall_phases_ms_c1": {"search": latency}, "memories": 40, "users": 2, "index": "milvus-lite",
               "store": "file", "cpu_count": 2, "peers": {"mem0": peer}}
    bench.plot(plotted, tmp_path / "bench.png")  # the peer's bars beside ours
    assert (tmp_path / "bench.png").stat().st_size > 1000


def test_eval_command_with_a_peer_prints_the_ratio_table(tmp_path: Path) -> None:
    data = small_locomo(tmp_path / "small.json")
    out = CliRunner().invoke(app, ["eval", "locomo", "--data", str(data), "--peer", "mem0", "--out", str(tmp_path)],
                            env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    assert "peers / agent-memory" in out.output and "8/8 top 20 = dense" in out.output
    saved = json.loads((tmp_path / "locomo.json").read_text())
    assert set(saved[0]["peers"]) == {"mem0", "mem0 (dense only)"}


def test_unknown_peer_fails_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="available: mem0"):
        require("letta")
    out = CliRunner().invoke(app, ["bench", "-n", "10", "--peer", "letta", "--out", str(tmp_path)])
    assert out.exit_code != 0 and "available: mem0" in out.output
    assert not list(tmp_path.iterdir())
