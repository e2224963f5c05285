"""The daily canary. It exercises the whole path (store, embed, index, recall) the way a
user does and reports one boolean that an alarm can watch."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any, Protocol

from agent_memory.config import Settings
from agent_memory.errors import AgentMemoryError


class CanaryTarget(Protocol):
    """What the canary needs of :class:`agent_memory.Memory` (so this module needs no import of
    it: the facade calls the canary, never the other way round)."""

    settings: Settings

    def remember(self, user_id: str, content: str | None = None, *, session_id: str = ..., importance: float | None
                 = ..., idempotency_key: str | None = ...) -> list[str]: ...

    def recall(self, user_id: str, query: str, *, top_k: int | None = ..., min_score: float | None = ...,
               consistency: str | None = ..., log: bool = ..., gate: bool | None = ...) -> Sequence[Any]: ...

    def erase_user(self, user_id: str) -> dict[str, int]: ...


def run_selfcheck(memory: CanaryTarget) -> dict[str, Any]:
    user = memory.settings.canary_user_id
    token = os.urandom(4).hex()
    content = f"Canary {token}: the lighthouse keeper paints the front door teal every spring."
    t0 = time.perf_counter()
    result: dict[str, Any] = {"ok": False, "user_id": user}
    try:
        [mid] = memory.remember(user_id=user, content=content, session_id="selfcheck",
                                importance=1.0, idempotency_key=f"canary-{token}")
        hits = memory.recall(user_id=user, query="What colour does the lighthouse keeper paint the door?",
                             top_k=1, min_score=-1.0, consistency="strong", log=False, gate=False)
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
