"""One suite, three ways in: the in-process ``Memory``, ``MemoryClient`` and ``AsyncMemoryClient``
against ``agent-memory up`` (a subprocess on free ports). Same calls, same results, same
exceptions, so the clients cannot drift from the library. Client-only behaviour (retries,
authentication, wait=False) follows."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_memory import (
    AsyncMemoryClient,
    AuthenticationError,
    BackendUnavailableError,
    ConflictError,
    InvalidInputError,
    Memory,
    MemoryClient,
    NotFoundError,
    RecallResult,
    Settings,
)
from agent_memory.embed.base import Embedder
from agent_memory.model import IndexRecord
from tests.e2e.conftest import RunningMirror


class Synced:
    """Runs an async object's coroutine methods on one private loop, so the shared suite can call
    AsyncMemoryClient like the others (and still exercise its own code paths)."""

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._target, self._loop = target, loop

    def __getattr__(self, name: str) -> Callable[..., Any]:
        attr = getattr(self._target, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            out = attr(*args, **kwargs)
            if asyncio.iscoroutine(out):
                return self._loop.run_until_complete(out)
            return Synced(out, self._loop) if name == "working" else out

        return call


@pytest.fixture(scope="module")
def in_process(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    m = Memory(Settings(data_dir=tmp_path_factory.mktemp("inproc"), consistency_level="Strong"),
               embedder=embedder)
    yield m
    m.close()


@pytest.fixture(params=["memory", "client", "async-client"])
def api(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "memory":
        yield request.getfixturevalue("in_process")
        return
    m: RunningMirror = request.getfixturevalue("mirror")
    key = (m.data_dir / "api_key").read_text().strip()
    if request.param == "client":
        with MemoryClient(m.url, key) as c:
            yield c
        return
    loop = asyncio.new_event_loop()
    client = AsyncMemoryClient(m.url, key)
    yield Synced(client, loop)
    loop.run_until_complete(client.aclose())
    loop.close()


def user() -> str:
    return f"c-{uuid.uuid4().hex[:10]}"


def test_remember_then_recall(api: Any) -> None:
    u = user()
    [mid] = api.remember(u, "我对花生过敏", importance=0.9)
    api.remember(u, "I take my coffee black", memory_type="preference")
    hits = api.recall(u, "点餐时要注意什么", top_k=3)
    assert isinstance(hits, RecallResult)
    assert hits[0].memory_id == mid and hits[0].content == "我对花生过敏"
    assert hits[0].parts.similarity > 0 and "我对花生过敏" in hits.context and hits.recall_id
    assert api.recalls(u)[0]["query"] == "点餐时要注意什么"
    shown = api.get(mid, user_id=u)
    assert shown["original"]["content"] == "我对花生过敏" and shown["record"]["importance"] == pytest.approx(0.9)


def test_versions_forget_restore_timeline_erase(api: Any) -> None:
    u = user()
    old = datetime.now(UTC) - timedelta(days=30)
    [first] = api.remember(u, "I work at Acme", topic_id="employer", created_at=old)
    [second] = api.remember(u, "I now work at Globex", topic_id="employer")
    versions = api.versions("employer", user_id=u)
    assert [v.id for v in versions] == [first, second] and [v.is_active for v in versions] == [False, True]
    assert all(isinstance(v, IndexRecord) for v in versions)

    gone = api.forget(second, user_id=u)
    assert isinstance(gone, IndexRecord) and gone.deleted_at is not None
    assert second not in [h.memory_id for h in api.recall(u, "where do I work", min_score=-1)]
    assert [r.id for r in api.timeline(u, include_deleted=True)] == [second]
    assert api.restore(second, user_id=u).deleted_at is None
    assert api.recall(u, "where do I work")[0].memory_id == second
    assert {r.id for r in api.timeline(u, include_inactive=True)} == {first, second}

    erased = api.erase_user(u)
    assert erased["index_entries"] == 2 and erased["object_versions"] >= 2
    assert api.timeline(u, include_inactive=True, include_deleted=True) == []


def test_a_change_the_model_made_is_undone_and_redone(api: Any) -> None:
    """The change model's real verdict, overruled through each client: undone, the stale memory is
    current again beside the other; redone by hand, the newer one is current."""
    u = user()
    [acme] = api.remember(u, "I work at Acme as a backend developer", created_at=datetime.now(UTC) - timedelta(days=40))
    [globex] = api.remember(u, "I left Acme last month, I'm at Globex now")
    assert api.get(globex, user_id=u)["original"]["provenance"]["change"]["decision"] == "new_version"
    assert not api.get(acme, user_id=u)["record"]["is_active"]

    rec = api.correct(globex, u, decision="unrelated")
    assert isinstance(rec, IndexRecord) and rec.is_active and rec.topic_id is None
    assert api.get(acme, user_id=u)["record"]["is_active"]
    assert {acme, globex} <= {h.memory_id for h in api.recall(u, "where do I work?", min_score=-1, gate=False)}
    with pytest.raises(ConflictError):
        api.correct(globex, u, decision="unrelated")  # nothing links it any more
    with pytest.raises(InvalidInputError):
        api.correct(globex, u, decision="new_version")  # of which memory?

    api.correct(globex, u, decision="new_version", of=acme)
    assert not api.get(acme, user_id=u)["record"]["is_active"]
    change = api.get(globex, user_id=u)["original"]["provenance"]["change"]
    assert (change["decided_by"], change["memory_id"], change["was"]["decision"]) == ("caller", acme, "unrelated")
    assert api.recall(u, "where do I work?")[0].memory_id == globex


def test_agent_and_run_scopes(api: Any) -> None:
    u = user()
    [shared] = api.remember(u, "The team meets on Mondays")
    [mine] = api.remember(u, "The deploy key is in the vault", agent_id="ops", run_id="r1")
    [theirs] = api.remember(u, "The deploy key is in the drawer", agent_id="dev")
    hits = api.recall(u, "where is the deploy key", agent_id="ops", min_score=-1, gate=False)
    assert {h.memory_id for h in hits} == {shared, mine}
    assert {(h.agent_id, h.run_id) for h in hits if h.memory_id == mine} == {("ops", "r1")}
    assert {h.memory_id for h in api.recall(u, "deploy key", agent_id="ops", run_id="r2", min_score=-1,
                                            gate=False)} == {shared}
    assert {r.id for r in api.timeline(u, agent_id="dev")} == {shared, theirs}
    assert [v.agent_id for v in api.timeline(u, run_id="r1") if v.id == mine] == ["ops"]
    with pytest.raises(NotFoundError):
        api.get(mine, user_id=u, agent_id="dev")
    with pytest.raises(NotFoundError):
        api.forget(mine, user_id=u, agent_id="dev")
    with pytest.raises(InvalidInputError):
        api.recall(u, "deploy key", agent_id='ops" or agent_id != "')
    with pytest.raises(InvalidInputError):
        api.timeline(u, agent_id="../ops")
    assert api.erase_user(u, agent_id="ops")["index_entries"] == 1
    assert {r.id for r in api.timeline(u)} == {shared, theirs}
    assert api.erase_user(u)["index_entries"] == 2


def test_metadata_filters(api: Any) -> None:
    u = user()
    [apollo] = api.remember(u, "Apollo review moved to Friday", metadata={"project": "apollo", "p": 3,
                                                                           "due": "2026-03-01"})
    [gemini] = api.remember(u, "Gemini budget is tight", metadata={"project": "gemini", "p": 1}, session_id="s2")
    hits = api.recall(u, "what is going on", min_score=-1, gate=False,
                      filters={"metadata": {"project": {"in": ["apollo", "mercury"]}, "due": {"lt": "2026-04-01"}}})
    assert [h.memory_id for h in hits] == [apollo] and hits[0].metadata["p"] == 3
    assert [r.id for r in api.timeline(u, filters={"metadata": {"p": {"lte": 2}}, "session_id": "s2"})] == [gemini]
    with pytest.raises(InvalidInputError):
        api.recall(u, "x", filters={"metadata": {'p"] or true or metadata["p': 1}})
    with pytest.raises(InvalidInputError):
        api.remember(u, "too deep", metadata={"a": {"b": {"c": {"d": {"e": {"f": 1}}}}}})


def test_expiry_fields(api: Any) -> None:
    u = user()
    at = (datetime.now(UTC) + timedelta(days=3)).replace(microsecond=0)
    [fixed] = api.remember(u, "The hotel door code is 4471", expires_at=at)
    [ttl] = api.remember(u, "My parking spot is B12", ttl_days=0.5)
    [never] = api.remember(u, "I am allergic to peanuts")
    rows = {r.id: r.expires_at for r in api.timeline(u)}
    assert rows[fixed] == at and rows[never] is None
    assert timedelta(hours=11) < rows[ttl] - datetime.now(UTC) <= timedelta(hours=12)
    hits = {h.memory_id: h.expires_at for h in api.recall(u, "door code", min_score=-1, gate=False)}
    assert hits[fixed] == at
    with pytest.raises(InvalidInputError, match="in the past"):
        api.remember(u, "x", expires_at=datetime.now(UTC) - timedelta(hours=1))
    with pytest.raises(InvalidInputError, match="at most one"):
        api.remember(u, "x", expires_at=at, ttl_days=1)
    assert len(api.timeline(u, include_expired=True)) == 3


def test_idempotency_key_makes_one_memory(api: Any) -> None:
    u = user()
    a = api.remember(u, "My locker code is 0815", idempotency_key="locker-1")
    b = api.remember(u, "My locker code is 0815", idempotency_key="locker-1")
    assert a == b and len(api.timeline(u)) == 1


def test_errors_are_the_same_exceptions(api: Any) -> None:
    u = user()
    [mid] = api.remember(u, "private fact")
    with pytest.raises(NotFoundError):
        api.get(mid, user_id=user())  # another user's memory does not exist for them
    with pytest.raises(NotFoundError):
        api.get("0" * 32)
    with pytest.raises(InvalidInputError):
        api.remember("../etc", "x")
    with pytest.raises(InvalidInputError):
        api.recall(u, "   ")
    with pytest.raises(InvalidInputError):
        api.recall(u, "x", memory_types=["secret"])


def test_working_memory(api: Any) -> None:
    u = user()
    w = api.working("task-1", user_id=u)
    w.set("step", {"n": 2, "of": 4})
    w.set("note", "用户选了蓝色", ttl_s=600)
    assert w.get("step") == {"n": 2, "of": 4} and w.get("missing", "dflt") == "dflt"
    assert w.items() == {"note": "用户选了蓝色", "step": {"n": 2, "of": 4}}
    assert api.working("task-1", user_id=user()).items() == {}
    assert w.delete("note") is True and w.delete("note") is False
    assert w.clear() == 1 and w.items() == {}
    # never in the long-term index
    assert api.timeline(u, include_inactive=True, include_deleted=True) == []


# ------------------------------------------------------------------ client-only behaviour


def test_retries_on_503_and_429_then_succeeds() -> None:
    calls: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(503, json={"error": "BackendUnavailableError", "message": "index down"})
        if len(calls) == 2:
            return httpx.Response(429, headers={"retry-after": "0"}, json={"message": "slow down"})
        return httpx.Response(200, json={"status": "ok"})

    with MemoryClient("http://test", "k", transport=httpx.MockTransport(handler), backoff=0.01) as c:
        assert c.health() == {"status": "ok"} and len(calls) == 3
    calls.clear()
    with (MemoryClient("http://test", "k", transport=httpx.MockTransport(handler), retries=1, backoff=0.01) as c,
          pytest.raises(BackendUnavailableError, match="429")):
        c.health()


def test_remember_retry_reuses_one_idempotency_key() -> None:
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        import json

        bodies.append(json.loads(request.content))
        if len(bodies) == 1:
            raise httpx.ReadTimeout("lost answer", request=request)
        return httpx.Response(202, json={"memory_ids": ["a" * 32], "status": "queued"})

    with MemoryClient("http://test", transport=httpx.MockTransport(handler), backoff=0.01) as c:
        assert c.remember("u1", "x", wait=False) == ["a" * 32]
    assert len(bodies) == 2 and bodies[0]["idempotency_key"] == bodies[1]["idempotency_key"]


def test_unreachable_and_unauthorized(mirror: RunningMirror, tmp_path: Path) -> None:
    from agent_memory.local.processes import free_port

    with (MemoryClient(f"http://127.0.0.1:{free_port()}", retries=1, backoff=0.01) as c,
          pytest.raises(BackendUnavailableError, match="cannot reach")):
        c.health()
    with MemoryClient(mirror.url, "wrong-key") as c, pytest.raises(AuthenticationError):
        c.recall("u1", "anything")


def test_wait_false_returns_before_indexing_and_memory_arrives(mirror: RunningMirror) -> None:
    key = (mirror.data_dir / "api_key").read_text().strip()
    u = user()
    with MemoryClient(mirror.url, key) as c:
        [mid] = c.remember(u, "The wifi password is hunter2", wait=False)
        import time

        deadline = time.monotonic() + 30
        while not [h for h in c.recall(u, "wifi password", log=False) if h.memory_id == mid]:
            assert time.monotonic() < deadline
            time.sleep(0.1)


def test_agent_example_against_the_mirror(mirror: RunningMirror, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    from tests.integration.test_examples import ROOT, check_agent_output

    key = (mirror.data_dir / "api_key").read_text().strip()
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "agent.py")], cwd=tmp_path, capture_output=True,
                         text=True, timeout=180, env={**os.environ, "AGENT_MEMORY_API_URL": mirror.url,
                                                      "AGENT_MEMORY_API_KEY": key, "AGENT_USER": user()})
    assert out.returncode == 0, out.stderr
    check_agent_output(out.stdout)
