"""Export and import (agent_memory.portability): a round trip between two independent services
keeps every memory whole (versions, deletions, metadata, created_at), a second import changes
nothing, a bad record names its line and nothing is written, ids of another user are refused;
through Memory, the CLI, the Lambda API and MemoryClient."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_memory import Memory, MemoryClient, Settings, runtime
from agent_memory.embed.base import Embedder
from agent_memory.errors import InvalidInputError
from agent_memory.portability import FORMAT, export_page, import_records, iter_pages, parse_records
from tests.conftest import new_user
from tests.integration.conftest import LambdaTransport


def memory(root: Path, embedder: Embedder) -> Memory:
    return Memory(Settings(data_dir=root, consistency_level="Strong"), embedder=embedder)


def seed(m: Memory, u: str) -> dict[str, str]:
    """Memories in every state an export must carry."""
    past = datetime.now(UTC) - timedelta(days=400)
    [old] = m.remember(u, "I work at Initech", topic_id="employer", created_at=past, session_id="s1",
                       metadata={"team": "tps", "level": 3})
    [new] = m.remember(u, "I moved to Globex last month", topic_id="employer", context="Where do you work now?")
    [gone] = m.remember(u, "My locker code is 4411", memory_type="fact", importance=0.9)
    m.forget(gone)
    [guess] = m.remember(u, "The user probably likes jazz", source="agent_inferred", memory_type="preference")
    return {"old": old, "new": new, "gone": gone, "guess": guess}


def lines_of(m: Memory, u: str) -> list[str]:
    return [json.dumps(r) for page in iter_pages(m, u, page_size=2) for r in page.records]


def without_embedding(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "embedding"}


def test_round_trip_keeps_everything_and_a_second_import_changes_nothing(tmp_path: Path,
                                                                        embedder: Embedder) -> None:
    src, dst = memory(tmp_path / "a", embedder), memory(tmp_path / "b", embedder)
    u = new_user()
    ids = seed(src, u)
    lines = lines_of(src, u)
    exported = {r["memory_id"]: r for r in map(json.loads, lines)}
    assert set(exported) == set(ids.values()) and {r["format"] for r in exported.values()} == {FORMAT}
    old, new = exported[ids["old"]], exported[ids["new"]]
    assert old["state"]["is_active"] is False and old["state"]["superseded_by"] == ids["new"]
    assert new["state"]["supersedes"] == [ids["old"]] and new["context"] == "Where do you work now?"
    assert old["metadata"] == {"team": "tps", "level": 3} and old["session_id"] == "s1"
    assert exported[ids["gone"]]["state"]["deleted_at"] is not None
    assert exported[ids["guess"]]["source"] == "agent_inferred"

    records = parse_records(((f"line {i}", line) for i, line in enumerate(lines, 1)), user_id=u)
    report = import_records(dst, records)
    assert (report.created, report.updated, report.unchanged, report.indexed) == (4, 0, 0, 4)
    again = {r["memory_id"]: r for r in map(json.loads, lines_of(dst, u))}
    assert {k: without_embedding(v) for k, v in again.items()} == {
        k: without_embedding(v) for k, v in exported.items()}
    # the index answers as the source did: the current version, not the superseded or the forgotten
    hits = dst.recall(u, "where does the user work?", gate=False)
    assert hits[0].memory_id == ids["new"] and ids["old"] not in [h.memory_id for h in hits]
    assert ids["gone"] not in [h.memory_id for h in dst.recall(u, "locker code", gate=False)]
    assert [r.id for r in dst.versions("employer", user_id=u)] == [ids["old"], ids["new"]]
    kept = datetime.fromisoformat(old["created_at"])  # the index keeps milliseconds
    assert dst.timeline(u, include_deleted=True, include_inactive=True)[-1].created_at == kept.replace(
        microsecond=kept.microsecond // 1000 * 1000)

    report = import_records(dst, parse_records(((f"line {i}", x) for i, x in enumerate(lines, 1)), user_id=u))
    assert (report.created, report.updated, report.unchanged, report.indexed) == (0, 0, 4, 0)


def test_a_bad_record_names_its_line_and_nothing_is_written(tmp_path: Path, embedder: Embedder) -> None:
    src, dst = memory(tmp_path / "a", embedder), memory(tmp_path / "b", embedder)
    u = new_user()
    seed(src, u)
    lines = lines_of(src, u)
    bad = json.loads(lines[1])
    bad["topic_id"] = "../../other-user/x"
    lines[1] = json.dumps(bad)
    lines.insert(3, "{not json")
    with pytest.raises(InvalidInputError) as err:
        parse_records(((f"line {i}", x) for i, x in enumerate(lines, 1)), user_id=u)
    assert "line 2: invalid topic_id" in str(err.value) and "line 4: not JSON" in str(err.value)
    assert "nothing imported" in str(err.value)
    with pytest.raises(InvalidInputError, match="line 1: user_id"):
        parse_records([("line 1", lines[0])], user_id="someone-else")
    with pytest.raises(InvalidInputError, match=r"line 2: memory_id \w+ repeats line 1"):
        parse_records([("line 1", lines[0]), ("line 2", lines[0])])
    dotted = {**json.loads(lines[0]), "metadata": {"a.b": 1}}  # the same bounds as a remember request
    with pytest.raises(InvalidInputError, match=r"line 1: metadata: metadata key 'a\.b'"):
        parse_records([("line 1", dotted)])
    unknown = {**json.loads(lines[0]), "colour": "red"}
    with pytest.raises(InvalidInputError, match="line 1: colour: Extra inputs"):
        parse_records([("line 1", unknown)])
    assert list(dst.store.list_keys("")) == [] and dst.index.count() == 0


def test_a_memory_id_of_another_user_is_refused(tmp_path: Path, embedder: Embedder) -> None:
    m = memory(tmp_path / "a", embedder)
    victim, attacker = new_user("victim"), new_user("attacker")
    [mid] = m.remember(victim, "My bank PIN hint is my cat's name")
    [record] = export_page(m, victim).records
    stolen = {**record, "user_id": attacker, "content": "overwritten"}
    with pytest.raises(InvalidInputError, match=f"memory_id {mid} belongs to another user"):
        import_records(m, parse_records([("line 1", stolen)], user_id=attacker))
    assert m.get(mid)["original"]["content"] == "My bank PIN hint is my cat's name"
    assert m.timeline(attacker) == []


def test_cli_export_then_import_into_another_data_dir(tmp_path: Path, embedder: Embedder) -> None:
    # export reads the originals (the store), so the CLI's own index file can differ from this one
    src = Memory(Settings(data_dir=tmp_path / "a", index_uri=str(tmp_path / "seed.db")), embedder=embedder)
    u = new_user()
    ids = seed(src, u)
    cli = [sys.executable, "-m", "agent_memory.cli"]
    out = tmp_path / "u.jsonl"
    done = subprocess.run([*cli, "export", "--user", u, "--out", str(out), "--data-dir", str(tmp_path / "a")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert {json.loads(x)["memory_id"] for x in out.read_text().splitlines()} == set(ids.values())
    bad = tmp_path / "bad.jsonl"
    bad.write_text(out.read_text() + '{"format": "agent-memory/v1"}\n')
    done = subprocess.run([*cli, "import", str(bad), "--data-dir", str(tmp_path / "b")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "line 5: memory_id: Field required" in done.stderr.replace("\n", " ")
    done = subprocess.run([*cli, "import", str(out), "--user", u, "--data-dir", str(tmp_path / "b")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"created": 4, "updated": 0, "unchanged": 0, "indexed": 4, "records": 4}
    assert "import" in done.stderr  # the progress bar


def test_http_export_pages_and_import_through_the_client(tmp_path: Path, embedder: Embedder) -> None:
    src = memory(tmp_path / "a", embedder)
    u = new_user()
    ids = seed(src, u)
    runtime.configure(src.settings, memory=src)
    try:
        with MemoryClient("http://api", transport=LambdaTransport()) as c:
            page = c._http.get(f"/v1/users/{u}/export", params={"limit": 3})
            assert page.status_code == 200 and page.headers["content-type"] == "application/x-ndjson"
            assert page.headers["x-export-format"] == FORMAT and len(page.text.splitlines()) == 3
            assert page.headers["x-next-after"] == json.loads(page.text.splitlines()[-1])["memory_id"]
            records = list(c.export(u, page_size=3))
            assert {r["memory_id"] for r in records} == set(ids.values())
            assert c._http.get("/v1/users/..%2Fx/export").status_code in (404, 422)
            assert c._http.get(f"/v1/users/{u}/export", params={"after": "zz"}).status_code == 422
            dst = memory(tmp_path / "b", embedder)
            runtime.configure(dst.settings, memory=dst)
            assert c.import_records(u, records, batch_size=3) == {
                "records": 4, "created": 4, "updated": 0, "unchanged": 0, "indexed": 4}
            assert c.import_records(u, records)["unchanged"] == 4
            broken = [*records[:2], {**records[2], "importance": 7}]
            with pytest.raises(InvalidInputError, match="record 3: importance"):
                c.import_records(u, broken)  # refused before anything is sent
            other = new_user()
            answer = c._http.post(f"/v1/users/{other}/import", json={"records": records[:1]})
            assert answer.status_code == 422 and "record 1: user_id" in answer.json()["message"]
            assert c.timeline(other) == []
            openapi = c._http.get("/openapi.json").json()
            assert {"/v1/users/{user_id}/export", "/v1/users/{user_id}/import"} <= set(openapi["paths"])
    finally:
        runtime.reset()
