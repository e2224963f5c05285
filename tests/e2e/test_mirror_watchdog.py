"""`make up --index milvus` runs its own Milvus server: when that server dies or stops answering
(a laptop that slept leaves it "service not ready ... Abnormal"), the mirror's watchdog restarts
it in place and the running service carries on, with what it held before."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_memory import MemoryClient
from agent_memory.embed.base import Embedder
from agent_memory.errors import BackendUnavailableError
from agent_memory.local.milvus_server import LoopbackMilvus
from agent_memory.local.mirror import Mirror, MirrorOptions
from agent_memory.local.watchdog import Watchdog


@pytest.fixture
def mirror(tmp_path: Path, embedder: Embedder) -> Iterator[Mirror]:
    m = Mirror(MirrorOptions(data_dir=tmp_path / "mirror", api_port=0, emulator_port=0, index="milvus",
                             embedder=embedder, watchdog_every_s=1.0))
    try:
        m.start()
        yield m
    finally:
        m.stop()


def _recalled(c: MemoryClient, user: str, query: str, want: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if want in {h.memory_id for h in c.recall(user, query, min_score=-1, gate=False)}:
                return
        except BackendUnavailableError:  # 503 while the server restarts
            pass
        assert time.monotonic() < deadline, f"{want} not recalled within {timeout_s}s"
        time.sleep(0.5)


@pytest.mark.milvus_server
def test_a_dead_milvus_server_is_restarted_and_the_service_carries_on(mirror: Mirror) -> None:
    [server] = [s for s in mirror._servers if isinstance(s, LoopbackMilvus)]
    [dog] = [p for p in mirror._parts if isinstance(p, Watchdog)]
    user = f"w-{uuid.uuid4().hex[:10]}"
    with MemoryClient(mirror.api_url, mirror.api_key, retries=5) as c:
        [before] = c.remember(user, "I am allergic to peanuts")
        _recalled(c, user, "allergies", before)
        assert server.proc is not None
        os.killpg(server.proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 240
        while dog.restarts < 1:
            assert time.monotonic() < deadline, "the watchdog did not restart the server"
            time.sleep(0.5)
        assert server.healthy()
        _recalled(c, user, "allergies", before)  # the same runtime, its client reconnected
        [after] = c.remember(user, "My sister lives in Porto")
        _recalled(c, user, "where does my sister live", after)
