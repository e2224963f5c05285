"""The recall log: every recall, with its candidates and score parts, kept next to the
originals (``recalls/{user_id}/...``) so "why did the agent say that" has an answer and
erasing a user erases their log too."""

from __future__ import annotations

from typing import Any

from agent_memory.model import utcnow
from agent_memory.store.base import RawStore
from agent_memory.store.keys import user_prefix


class RecallLog:
    def __init__(self, store: RawStore, prefix: str) -> None:
        self.store = store
        self.prefix = prefix

    def _user_prefix(self, user_id: str) -> str:
        return user_prefix(self.prefix, user_id)

    def append(self, user_id: str, recall_id: str, entry: dict[str, Any]) -> str:
        stamp = utcnow().strftime("%Y%m%dT%H%M%S%fZ")
        key = f"{self._user_prefix(user_id)}{stamp}-{recall_id}.json"
        self.store.put_json(key, entry)
        return key

    def list(self, user_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first (keys start with a sortable timestamp)."""
        keys = sorted(self.store.list_keys(self._user_prefix(user_id)), reverse=True)[:limit]
        docs = self.store.get_many(keys)
        return [d for k in keys if (d := docs[k]) is not None]

    def erase(self, user_id: str) -> int:
        return self.store.delete_all_versions(self._user_prefix(user_id))

    def scrub(self, user_id: str, memory_ids: set[str]) -> int:
        """Remove the text of erased memories from the user's recall log: each entry that lists one
        of ``memory_ids`` as a candidate is rewritten without its summary, and every older version of
        that entry (which still holds it) is deleted first. Returns how many entries changed."""
        keys = list(self.store.list_keys(self._user_prefix(user_id)))
        changed = 0
        for key, doc in self.store.get_many(keys).items():
            if doc is None or not any(c.get("memory_id") in memory_ids for c in doc.get("candidates", [])):
                continue
            doc["candidates"] = [{**c, "summary": "(erased)"} if c.get("memory_id") in memory_ids else c
                                 for c in doc["candidates"]]
            self.store.delete_all_versions(key)
            self.store.put_json(key, doc)
            changed += 1
        return changed
