"""The recall log: every recall, with its candidates and score parts, kept next to the
originals (``recalls/{user_id}/...``) so "why did the agent say that" has an answer and
erasing a user erases their log too.

Writing an entry is off the recall's critical path: :meth:`RecallLog.submit` queues the write
on a small pool of background threads and returns at once. Nothing queued is lost on a normal
return: :meth:`flush` waits for every queued write (reading, erasing and scrubbing the log do it
first, so they see every entry and an erasure can never be followed by a late write), ``close``
does it, and the pool's threads are joined at interpreter exit. A Lambda is frozen once its
handler returns, so the API handler flushes before returning (``lambdas/api.py``)."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from agent_memory.errors import AgentMemoryError
from agent_memory.model import utcnow
from agent_memory.store.base import RawStore
from agent_memory.store.keys import user_prefix

log = logging.getLogger(__name__)

WRITE_ATTEMPTS = 3
WRITERS = 4  # S3 puts are I/O; a few in flight keep up with concurrent recalls


class RecallLog:
    def __init__(self, store: RawStore, prefix: str) -> None:
        self.store = store
        self.prefix = prefix
        self._pool: ThreadPoolExecutor | None = None
        self._pending: set[Future[None]] = set()
        self._failed: list[BaseException] = []
        self._lock = threading.Lock()

    def _user_prefix(self, user_id: str) -> str:
        return user_prefix(self.prefix, user_id)

    def _key(self, user_id: str, recall_id: str) -> str:
        return f"{self._user_prefix(user_id)}{utcnow():%Y%m%dT%H%M%S%fZ}-{recall_id}.json"

    def append(self, user_id: str, recall_id: str, entry: dict[str, Any]) -> str:
        """Write one entry now (the caller waits for the store)."""
        key = self._key(user_id, recall_id)
        self.store.put_json(key, entry)
        return key

    def submit(self, user_id: str, recall_id: str, entry: dict[str, Any]) -> str:
        """Queue one entry's write and return its key at once (the key's timestamp is taken now,
        so the log's order is the recalls' order). A failed write is retried; one that still fails
        is logged and raised by the next :meth:`flush`."""
        key = self._key(user_id, recall_id)
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=WRITERS, thread_name_prefix="recall-log")
            future = self._pool.submit(self._write, key, entry)
            self._pending.add(future)
        future.add_done_callback(self._done)
        return key

    def _write(self, key: str, entry: dict[str, Any]) -> None:
        for attempt in range(WRITE_ATTEMPTS):
            try:
                self.store.put_json(key, entry)
                return
            except AgentMemoryError:
                if attempt == WRITE_ATTEMPTS - 1:
                    raise
                time.sleep(0.05 * 2 ** attempt)

    def _done(self, future: Future[None]) -> None:
        with self._lock:
            self._pending.discard(future)
            exc = future.exception()
            if exc is not None:
                log.error("a recall log entry could not be written: %s", exc)
                self._failed.append(exc)

    def flush(self) -> None:
        """Wait until every queued entry is written; raise the first write that failed since the
        last flush (the entries that failed are not in the log)."""
        while True:
            with self._lock:
                pending = list(self._pending)
            if not pending:
                break
            for future in pending:
                future.exception()  # waits; the outcome is collected by ``_done``
            with self._lock:
                self._pending.difference_update(pending)
        with self._lock:
            failed, self._failed = self._failed, []
        if failed:
            raise failed[0]

    def close(self) -> None:
        """Flush, then stop the writer threads."""
        try:
            self.flush()
        finally:
            with self._lock:
                pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown(wait=True)

    def list(self, user_id: str, limit: int = 50) -> list[dict[str, Any]]:
        """Newest first (keys start with a sortable timestamp)."""
        self.flush()
        keys = sorted(self.store.list_keys(self._user_prefix(user_id)), reverse=True)[:limit]
        docs = self.store.get_many(keys)
        return [d for k in keys if (d := docs[k]) is not None]

    def erase(self, user_id: str) -> int:
        self.flush()  # a queued entry written after the erasure would outlive it
        return self.store.delete_all_versions(self._user_prefix(user_id))

    def scrub(self, user_id: str, memory_ids: set[str]) -> int:
        """Remove the text of erased memories from the user's recall log: each entry that lists one
        of ``memory_ids`` as a candidate is rewritten without its summary, and every older version of
        that entry (which still holds it) is deleted first. Returns how many entries changed."""
        self.flush()
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
