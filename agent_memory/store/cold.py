"""The cold-tier manifest: the index records of a user's memories that left the vector index
(:mod:`agent_memory.tiering` moves them), kept at ``cold/{user_id}/manifest.json`` so listings,
versions, ``get`` and ``forget`` still see them. Only the store: the facade and the tiering job
both build on it, neither on the other."""

from __future__ import annotations

from agent_memory.errors import NotFoundError
from agent_memory.model import IndexRecord, utcnow
from agent_memory.store.base import RawStore
from agent_memory.store.keys import user_prefix


def manifest_key(cold_prefix: str, user_id: str) -> str:
    return f"{user_prefix(cold_prefix, user_id)}manifest.json"


def load_cold(store: RawStore, cold_prefix: str, user_id: str) -> list[IndexRecord]:
    try:
        doc = store.get_json(manifest_key(cold_prefix, user_id))
    except NotFoundError:
        return []
    return [IndexRecord.model_validate(r | {"tier": "cold"}) for r in doc.get("memories", [])]


def save_cold(store: RawStore, cold_prefix: str, user_id: str, records: list[IndexRecord]) -> None:
    unique = {r.id: r for r in records}
    store.put_json(manifest_key(cold_prefix, user_id), {
        "user_id": user_id, "updated_at": utcnow().isoformat(),
        "memories": [r.model_dump(mode="json") for r in sorted(unique.values(), key=lambda r: (r.created_at, r.id))]})
