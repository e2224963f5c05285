"""``agent-memory soak``: concurrent clients remembering and recalling against a running service,
then a consistency check: every acknowledged memory must be in the store and in the index.

Each client is a :class:`MemoryClient` with its own user, alternating ``remember(wait=False)``
(the agent's hot path: stored and queued) and ``recall``. After the run it waits for the queue
to drain and reads every acknowledged id back (index record and S3 original).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agent_memory.client import MemoryClient
from agent_memory.errors import AgentMemoryError, NotFoundError
from agent_memory.evaluation.bench import _pcts

TOPICS = ["coffee", "travel", "work", "family", "health", "music", "books", "sport"]


def run(url: str, api_key: str | None, clients: int = 8, duration_s: float = 120.0,
        settle_s: float = 120.0, on_tick: Callable[[], None] | None = None) -> dict[str, Any]:
    run_id = uuid.uuid4().hex[:8]
    lock = threading.Lock()
    acked: dict[str, str] = {}
    remember_ms: list[float] = []
    recall_ms: list[float] = []
    errors: list[str] = []
    stop_at = time.monotonic() + duration_s

    def client(n: int) -> None:
        user = f"soak-{run_id}-{n}"
        with MemoryClient(url, api_key, retries=0, timeout=30) as c:
            i = 0
            while time.monotonic() < stop_at:
                topic = TOPICS[i % len(TOPICS)]
                try:
                    t0 = time.perf_counter()
                    ids = c.remember(user, f"soak fact {i} about {topic}: client {n} says {uuid.uuid4().hex[:6]}",
                                     wait=False)
                    t1 = time.perf_counter()
                    c.recall(user, f"what about {topic}?", log=False)
                    t2 = time.perf_counter()
                    with lock:
                        acked.update((mid, user) for mid in ids)
                        remember_ms.append((t1 - t0) * 1000)
                        recall_ms.append((t2 - t1) * 1000)
                except AgentMemoryError as exc:
                    with lock:
                        errors.append(f"{type(exc).__name__}: {exc}"[:300])
                if on_tick:
                    on_tick()
                i += 1

    t_start = time.monotonic()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    elapsed = time.monotonic() - t_start

    # consistency: every acknowledged memory ends up indexed, with its original in the store
    missing = dict(acked)
    deadline = time.monotonic() + settle_s
    with MemoryClient(url, api_key, timeout=30) as c:
        while missing and time.monotonic() < deadline:
            for mid, user in list(missing.items()):
                try:
                    doc = c.get(mid, user_id=user)
                    if doc["original"]["memory_id"] == mid and doc["record"]["storage_key"]:
                        del missing[mid]
                except NotFoundError:
                    pass
            if missing:
                time.sleep(1)
        rows = [r for u in sorted(set(acked.values())) for r in c.timeline(u, limit=1000, include_inactive=True)]
    texts = [r.summary for r in rows]  # every request's text is unique: a repeated one is a duplicate
    duplicates = len(texts) - len(set(texts))
    unacknowledged = sum(r.id not in acked for r in rows)
    ops = len(remember_ms) + len(recall_ms)
    return {
        "url": url, "clients": clients, "duration_s": round(elapsed, 1),
        "operations": ops, "throughput_ops_per_s": round(ops / elapsed, 1),
        "remember_ms": _pcts(remember_ms), "recall_ms": _pcts(recall_ms),
        "errors": len(errors), "error_samples": errors[:5],
        "acknowledged": len(acked), "indexed_with_original": len(acked) - len(missing),
        "missing": len(missing), "duplicates": duplicates,
        "stored_without_acknowledgement": unacknowledged,
    }
