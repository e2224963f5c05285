"""``agent-memory bench --tiering``: a synthetic year of memories, before and after index tiering.

Memories get ``created_at`` spread over the last 365 days and importance 0.1-1.0 (seeded), are
loaded, then: index rows and recall / index-only search latency; ``tier_all``; the same again;
and the time to re-hydrate the cold tier of the user with the most cold memories. Recalls use
``min_score=-1`` so every one finds hot memories and none triggers the automatic re-hydration,
which would change the index under the measurement.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from agent_memory.config import Settings
from agent_memory.evaluation.bench import _pcts, _timed, backend_name
from agent_memory.evaluation.synthetic import memories, questions
from agent_memory.filters import MemoryFilter
from agent_memory.model import utcnow

Progress = Callable[[str, int], None]


def run(n: int, users: int, settings: Settings, on_progress: Progress | None = None,
        queries: int = 200) -> dict[str, Any]:
    from agent_memory.service import Memory
    from agent_memory.tiering import load_cold, rehydrate, tier_all

    rng = random.Random(5)
    now = utcnow()
    m = Memory(settings)
    batch: list[dict[str, Any]] = []
    for item in memories(n, users):
        batch.append({"user_id": item.user_id, "content": item.content, "memory_type": item.memory_type,
                      "created_at": now - timedelta(days=rng.uniform(0, 365)),
                      "importance": round(rng.uniform(0.1, 1.0), 2)})
        if len(batch) == 1000:
            m.remember_many(batch)
            if on_progress:
                on_progress("load", len(batch))
            batch = []
    if batch:
        m.remember_many(batch)
        if on_progress:
            on_progress("load", len(batch))
    qs = questions(queries, users)
    vectors = [m.embedder.embed_query(q) for _, q in qs]

    def measure() -> dict[str, Any]:
        recall_ms = [_timed(partial(m.recall, user_id=u, query=q, min_score=-1.0, log=False)) for u, q in qs]
        search_ms = [_timed(partial(m.index.search, v, MemoryFilter(user_id=u), settings.candidate_limit))
                     for (u, _), v in zip(qs, vectors, strict=True)]
        if on_progress:
            on_progress("measure", 1)
        return {"index_rows": m.index.count(), "recall_ms": _pcts(recall_ms), "index_search_ms": _pcts(search_ms)}

    before = measure()
    t0 = time.perf_counter()
    report = tier_all(m)
    tier_s = time.perf_counter() - t0
    m.index.flush()
    after = measure()
    user, cold_n = max(((u, len(load_cold(m, u))) for u in {u for u, _ in qs}), key=lambda x: x[1])
    t0 = time.perf_counter()
    back = rehydrate(m, user, limit=10_000)
    rehydrate_s = time.perf_counter() - t0
    m.close()
    return {
        "memories": n, "users": users, "index": backend_name(settings.resolved_index_uri), "store": settings.store,
        "tier_after_days": settings.tier_after_days, "tier_max_importance": settings.tier_max_importance,
        "before": before, "after": after, "moved_cold": report.moved_cold, "tier_all_s": round(tier_s, 2),
        "rehydrate_one_user": {"cold_memories": cold_n, "rehydrated": back["rehydrated"],
                               "seconds": round(rehydrate_s, 2)},
    }
