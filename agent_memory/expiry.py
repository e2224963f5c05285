"""Expiry: memories past their ``expires_at`` are erased for good by the daily job.

A memory gets ``expires_at`` at ``remember`` (given, or ``ttl_days`` from storing, or the
``ttl_days_by_type`` default for its type). From that instant it is never recalled (recall and
the timeline filter on it, so nothing waits for this job) and never absorbs a new memory as its
duplicate or older version. This job then removes it like an erasure: every S3 version of its
original (and of the stored document of a chunked one), its index row, its entry in the cold
manifest, and its text in the recall log (the entries keep that it was a candidate, not what it
said). It runs inside the daily maintenance function (:mod:`lambdas.tier`), before tiering, with
the memory service's clock, so tests move time instead of waiting for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from agent_memory.filters import MemoryFilter
from agent_memory.model import to_ms
from agent_memory.store import cold

if TYPE_CHECKING:
    from agent_memory.service import Memory


@dataclass
class ExpiryReport:
    users: int = 0
    expired: int = 0
    """Memories erased because they expired."""
    index_entries: int = 0
    object_versions: int = 0
    recall_logs_scrubbed: int = 0
    """Recall-log entries rewritten without the erased memories' text."""
    per_user: dict[str, int] = field(default_factory=dict)


def expire_user(memory: Memory, user_id: str, now: datetime | None = None,
                report: ExpiryReport | None = None) -> ExpiryReport:
    """Erase every memory of ``user_id`` expired at ``now`` (default: the service's clock)."""
    now = now or memory.clock()
    report = report or ExpiryReport()
    flt = MemoryFilter(user_id=user_id, active_only=False, include_deleted=True, sources=None,
                       expired_at_ms=to_ms(now))
    rows = {r.id: r for r in memory.index.query(flt)}
    for r in cold.load_cold(memory.store, memory.settings.cold_prefix, user_id):
        if r.expires_at is not None and r.expires_at <= now:
            rows.setdefault(r.id, r)
    report.users += 1
    if rows:
        counts = memory.erase_records(user_id, list(rows.values()))
        report.expired += len(rows)
        report.index_entries += counts["index_entries"]
        report.object_versions += counts["object_versions"]
        report.recall_logs_scrubbed += counts["recall_logs_scrubbed"]
        report.per_user[user_id] = len(rows)
    return report


def expire_all(memory: Memory, now: datetime | None = None,
               on_user: Callable[[str], None] | None = None) -> ExpiryReport:
    """The daily job: every user with originals in the store, one after the other."""
    now = now or memory.clock()
    report = ExpiryReport()
    for user in [u["user_id"] for u in memory.users(limit=10_000)]:
        expire_user(memory, user, now, report)
        if on_user:
            on_user(user)
    return report
