"""The daily canary. It exercises the whole path (store, embed, index, recall) the way a
user does and reports one boolean that an alarm can watch."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from agent_memory.errors import AgentMemoryError

if TYPE_CHECKING:
    from agent_memory.service import Memory


def run_selfcheck(memory: Memory) -> dict[str, Any]:
    user = memory.settings.canary_user_id
    token = os.urandom(4).hex()
    content = f"Canary {token}: the lighthouse keeper paints the front door teal every spring."
    t0 = time.perf_counter()
    result: dict[str, Any] = {"ok": False, "user_id": user}
    try:
        [mid] = memory.remember(user_id=user, content=content, session_id="selfcheck",
                                importance=1.0, idempotency_key=f"canary-{token}")
        hits = memory.recall(user_id=user, query="What colour does the lighthouse keeper paint the door?",
                             top_k=1, min_score=-1.0, consistency="strong", log=False)
        result["memory_id"] = mid
        result["first_hit"] = hits[0].memory_id if hits else None
        result["ok"] = bool(hits) and hits[0].memory_id == mid
        if not result["ok"]:
            result["error"] = "canary memory did not rank first"
    except AgentMemoryError as exc:
        result["error"] = f"{type(exc).__name__}: {exc}"
    finally:
        try:
            memory.erase_user(user)
        except AgentMemoryError as exc:
            result["ok"] = False
            result["cleanup_error"] = str(exc)
    result["latency_ms"] = round((time.perf_counter() - t0) * 1000, 1)
    return result
