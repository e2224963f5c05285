"""A peer on the bench's synthetic data (``agent-memory bench --peer mem0``), after our run.

The same memories (``synthetic.memories(n, users)``, in the same 1,000-memory batches as our bulk
load, one ``add`` per user within a batch: a peer call carries one user's messages), then the same
recall queries, warmed the same way, with 1 and 8 concurrent callers. The peer runs after our
Memory is closed, in the same process, with the same embedder object, so neither competes with the
other for the two cores. Ratios are peer / ours from this one run.
"""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from agent_memory.embed.base import Embedder
from agent_memory.evaluation.peers import open_peers, ratio
from agent_memory.evaluation.synthetic import memories

BATCH = 1000
TOP_K = 5
"""Memories per search: our recall's default ``top_k``."""


def run(name: str, embedder: Embedder, n: int, users: int, queries: list[tuple[str, str]],
        percentiles: Callable[[list[float]], dict[str, float]],
        on_progress: Callable[[str, int], None] | None = None) -> dict[str, Any]:
    """Load, then time searches; ``percentiles`` is the bench's own summary of a latency list."""

    def tick(stage: str, k: int) -> None:
        if on_progress:
            on_progress(stage, k)

    with tempfile.TemporaryDirectory(prefix=f"agent-memory-peer-{name}-") as tmp:
        peer = open_peers(name, embedder, Path(tmp), variants=False)[name]
        try:
            add_s = 0.0
            by_user: dict[str, list[str]] = defaultdict(list)
            for i, item in enumerate(memories(n, users), 1):
                by_user[item.user_id].append(item.content)
                if i % BATCH == 0 or i == n:
                    t0 = time.perf_counter()
                    for user, texts in by_user.items():
                        peer.add(user, texts)
                    add_s += time.perf_counter() - t0
                    tick("peer-load", sum(len(t) for t in by_user.values()))
                    by_user.clear()
            for user, q in queries[:20]:  # warm caches, as our recall is warmed
                peer.search(user, q, TOP_K)

            def one(uq: tuple[str, str]) -> float:
                t0 = time.perf_counter()
                peer.search(uq[0], uq[1], TOP_K)
                tick("peer-search", 1)
                return (time.perf_counter() - t0) * 1000

            c1 = [one(uq) for uq in queries]
            with ThreadPoolExecutor(8) as pool:
                c8 = list(pool.map(one, queries))
            config = peer.describe()
        finally:
            peer.close()
    return {"config": config, "memories": n, "users": users, "top_k": TOP_K,
            "add_memories_per_s": round(n / add_s, 1) if add_s else None,
            "search_ms_c1": percentiles(c1), "search_ms_c8": percentiles(c8),
            "search_throughput_c8_per_s": round(len(c8) / (sum(c8) / 1000 / 8), 1)}


def ratios(peer: dict[str, Any], ours: dict[str, Any]) -> dict[str, float | None]:
    """Peer / ours for the bench's headline figures (``ours`` is :func:`bench.run`'s result)."""
    out: dict[str, float | None] = {}
    for c in ("c1", "c8"):
        for p in ("p50", "p95"):
            out[f"search_{p}_{c}_vs_recall"] = ratio(peer[f"search_ms_{c}"].get(p), ours[f"recall_ms_{c}"].get(p))
    out["add_vs_bulk_load"] = ratio(peer["add_memories_per_s"], ours["bulk_load_memories_per_s"])
    out["add_vs_ingest_worker"] = ratio(peer["add_memories_per_s"], ours["ingest_worker_memories_per_s"])
    return out
