"""Index tiering: old, unimportant, unrecalled memories leave the vector index; S3 keeps them.

Seed 1 keeps only the last months of vectors in the index and re-hydrates older memories
from S3 when needed. Here a memory goes **cold** when it is older than ``tier_after_days``,
below ``tier_max_importance`` and not chosen by any recall in the last
``tier_recent_recall_days`` (the active version of a topic always stays hot: it is the current
value, and new versions are resolved against the index). Going cold, in this order (S3 first, as every write):

1. the original's state says ``tier: cold`` (skipped for an original in an archive storage
   class: it cannot be rewritten until restored; the manifest below still lists it);
2. the user's **cold manifest** (``cold/{user_id}/manifest.json``) gains its index record, so
   the timeline, versions, ``get`` and ``forget`` still see it without a vector;
3. its row leaves the index.

A crash between steps leaves a memory in both the manifest and the index, which the next run
(and re-hydration) tolerate. **Re-hydration** (``recall(include_cold=True)``, or automatically
when a recall finds nothing hot) re-embeds up to ``rehydrate_limit`` of the user's cold
memories, newest first, indexes them and takes them off the manifest. The reconciler and
``reindex`` leave cold originals cold; ``erase_user`` deletes the manifest too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from agent_memory.errors import ArchivedError, NotFoundError
from agent_memory.filters import MemoryFilter
from agent_memory.model import IndexRecord, Original
from agent_memory.store import cold
from agent_memory.store.keys import user_prefix

if TYPE_CHECKING:
    from agent_memory.service import Memory


def load_cold(memory: Memory, user_id: str) -> list[IndexRecord]:
    return cold.load_cold(memory.store, memory.settings.cold_prefix, user_id)


def save_cold(memory: Memory, user_id: str, records: list[IndexRecord]) -> None:
    cold.save_cold(memory.store, memory.settings.cold_prefix, user_id, records)


def recently_recalled(memory: Memory, user_id: str, since: datetime) -> set[str]:
    """Ids chosen by the user's recalls since ``since`` (recall-log keys start with a timestamp)."""
    memory.recall_log.flush()
    stamp = since.strftime("%Y%m%dT%H%M%S")
    prefix = user_prefix(memory.settings.recall_log_prefix, user_id)
    keys = [k for k in memory.store.list_keys(prefix) if k.removeprefix(prefix) >= stamp]
    docs = memory.store.get_many(keys)
    return {mid for d in docs.values() if d for mid in d.get("chosen", [])}


@dataclass
class TierReport:
    users: int = 0
    examined: int = 0
    moved_cold: int = 0
    kept_recently_recalled: int = 0
    archived_originals: int = 0
    per_user: dict[str, int] = field(default_factory=dict)


def tier_user(memory: Memory, user_id: str, now: datetime | None = None, dry_run: bool = False,
              report: TierReport | None = None) -> TierReport:
    s = memory.settings
    now = now or memory.clock()
    report = report or TierReport()
    cutoff = now - timedelta(days=s.tier_after_days)
    rows = memory.index.query(MemoryFilter(user_id=user_id, active_only=False, include_deleted=True, sources=None,
                                           created_before_ms=int(cutoff.timestamp() * 1000)))
    # The active version of a topic stays hot: it is the current value (employer, city...), and
    # new versions are resolved against the index.
    eligible = [r for r in rows if r.importance < s.tier_max_importance and not (r.topic_id and r.is_active)]
    report.users += 1
    report.examined += len(rows)
    if not eligible:
        return report
    recent = recently_recalled(memory, user_id, now - timedelta(days=s.tier_recent_recall_days))
    todo = [r for r in eligible if r.id not in recent]
    report.kept_recently_recalled += len(eligible) - len(todo)
    if not todo or dry_run:
        report.moved_cold += 0 if dry_run else len(todo)
        report.per_user[user_id] = len(todo)
        return report
    for r in todo:  # 1. the originals, where they can be rewritten
        try:
            original = Original.model_validate(memory.store.get_json(r.storage_key))
        except ArchivedError:
            report.archived_originals += 1
            continue
        except NotFoundError:
            continue
        original.state.tier, original.state.cold_at = "cold", now
        memory.store.put_json(r.storage_key, original.model_dump(mode="json"))
    moved = [r.model_copy(update={"tier": "cold"}) for r in todo]
    save_cold(memory, user_id, [*load_cold(memory, user_id), *moved])  # 2. the manifest
    memory.index.delete([r.id for r in todo])  # 3. the index
    report.moved_cold += len(todo)
    report.per_user[user_id] = len(todo)
    return report


def tier_all(memory: Memory, now: datetime | None = None, dry_run: bool = False,
             on_user: Callable[[str], None] | None = None) -> TierReport:
    report = TierReport()
    for user in [u["user_id"] for u in memory.users(limit=10_000)]:
        tier_user(memory, user, now=now, dry_run=dry_run, report=report)
        if on_user:
            on_user(user)
    return report


def rehydrate(memory: Memory, user_id: str, limit: int | None = None) -> dict[str, Any]:
    """Re-embed and re-index up to ``limit`` of the user's cold memories, newest first
    (:meth:`agent_memory.Memory.rehydrate`)."""
    return memory.rehydrate(user_id, limit)
