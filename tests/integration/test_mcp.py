"""The MCP server through the official SDK's client: stdio (a subprocess, as an IDE runs it) and
streamable HTTP on loopback. The user is bound by the server's configuration."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from agent_memory.local.processes import die_with_parent, free_port, wait_http


def data(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def stdio(tmp: Path, user: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "agent_memory.cli", "mcp", "--user", user, "--data-dir", str(tmp)])


def test_stdio_tools_remember_recall_forget_for_the_bound_user(tmp_path: Path) -> None:
    async def as_u1() -> None:
        async with Client(stdio(tmp_path, "mcp-u1"), read_timeout_seconds=120) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {"remember", "recall", "forget"} <= names
            [mid] = data(await c.call_tool("remember", {"content": "The user is allergic to peanuts",
                                                        "importance": 0.9}))["memory_ids"]
            found = data(await c.call_tool("recall", {"query": "does the user have food allergies?"}))
            assert found["memories"][0]["memory_id"] == mid and "peanuts" in found["context"]
            assert data(await c.call_tool("forget", {"memory_id": mid})) == {"forgotten": mid}
            after = data(await c.call_tool("recall", {"query": "does the user have food allergies?"}))
            assert mid not in [m["memory_id"] for m in after["memories"]]
            bad = await c.call_tool("remember", {"content": "x", "topic_id": "../../etc"})
            assert bad.is_error and "topic_id" in bad.content[0].text

    async def as_u2() -> None:
        async with Client(stdio(tmp_path, "mcp-u2"), read_timeout_seconds=120) as c:
            data(await c.call_tool("remember", {"content": "The user likes green tea"}))
            found = data(await c.call_tool("recall", {"query": "peanuts allergy food", "top_k": 10}))
            assert all("peanut" not in m["content"] for m in found["memories"])

    asyncio.run(as_u1())
    asyncio.run(as_u2())


def test_streamable_http_transport(tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "agent_memory.cli", "mcp", "--user", "mcp-http", "--transport",
                             "http", "--port", str(port), "--data-dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=(tmp_path / "mcp.log").open("ab"),
                            start_new_session=True, preexec_fn=die_with_parent)
    try:
        wait_http(f"http://127.0.0.1:{port}/mcp", 120, proc)

        async def run() -> None:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as c:
                data(await c.call_tool("remember", {"content": "用户下周去上海出差", "memory_type": "plan"}))
                found = data(await c.call_tool("recall", {"query": "下周的安排"}))
                assert "上海" in found["memories"][0]["content"]

        asyncio.run(run())
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_agent_bound_server_sees_its_own_and_shared_memories_only(tmp_path: Path, embedder: Any) -> None:
    from agent_memory import Memory, Settings
    from agent_memory.mcp_server import build_server

    m = Memory(Settings(data_dir=tmp_path, consistency_level="Strong"), embedder=embedder)
    [shared] = m.remember(user_id="u1", content="The user's name is Ana")
    [other] = m.remember(user_id="u1", content="The user's bank is Globex Bank", agent_id="finance")

    seats: list[str] = []

    async def run() -> None:
        async with Client(build_server(m, "u1", agent_id="travel")) as c:
            [mine] = data(await c.call_tool("remember", {"content": "The user prefers window seats"}))["memory_ids"]
            found = data(await c.call_tool("recall", {"query": "user name, bank and seats", "top_k": 10}))
            assert {x["memory_id"] for x in found["memories"]} <= {shared, mine} and other not in str(found)
            assert (await c.call_tool("forget", {"memory_id": other})).is_error  # another agent's: not found
            aisle_seats = "The user now wants aisle seats, window seats make them feel trapped"
            [aisle] = data(await c.call_tool("remember", {"content": aisle_seats}))["memory_ids"]
            linked = data(await c.call_tool("correct", {"memory_id": aisle, "decision": "new_version", "of": mine}))
            assert linked["is_active"] and linked["topic_id"]
            seats.append(mine)
            assert (await c.call_tool("correct", {"memory_id": aisle, "decision": "new_version",
                                                  "of": other})).is_error  # another agent's: not found

    asyncio.run(run())
    assert m.get(other, user_id="u1")["record"]["deleted_at"] is None
    assert {r.agent_id for r in m.timeline("u1", agent_id="travel") if r.agent_id} == {"travel"}
    assert not m.get(seats[0], user_id="u1")["record"]["is_active"]  # the window seats: history now
    m.close()
