"""The recall log's background writer on a real file store: nothing queued is lost on close, an
erasure waits for queued entries (none is written after it), and a write that keeps failing is
raised by the next flush instead of vanishing."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from agent_memory.audit import RecallLog
from agent_memory.errors import BackendUnavailableError
from agent_memory.store.file import FileStore


class SlowStore(FileStore):
    """Each write takes a while, as an S3 PUT does, so entries are still queued when read."""

    def __init__(self, root: Path, fail: bool = False) -> None:
        super().__init__(root)
        self.fail = fail
        self.attempts = 0

    def put_json(self, key: str, doc: dict[str, Any]) -> None:
        time.sleep(0.01)
        self.attempts += 1
        if self.fail:
            raise BackendUnavailableError("store down")
        super().put_json(key, doc)


def _submit(log: RecallLog, user: str, n: int) -> list[str]:
    ids = [f"r{i:03d}" for i in range(n)]
    for rid in ids:
        log.submit(user, rid, {"recall_id": rid, "user_id": user})
    return ids


def test_submit_returns_before_the_write_and_close_writes_everything(tmp_path: Path) -> None:
    store = SlowStore(tmp_path)
    log = RecallLog(store, "recalls/")
    t0 = time.perf_counter()
    ids = _submit(log, "u1", 60)
    assert time.perf_counter() - t0 < 0.3  # 60 writes of 10 ms each are not waited for
    log.close()
    reread = RecallLog(FileStore(tmp_path), "recalls/")
    assert sorted(e["recall_id"] for e in reread.list("u1", limit=500)) == ids


def test_listing_sees_every_queued_entry_newest_first(tmp_path: Path) -> None:
    log = RecallLog(SlowStore(tmp_path), "recalls/")
    ids = _submit(log, "u1", 30)
    assert [e["recall_id"] for e in log.list("u1", limit=500)] == ids[::-1]


def test_an_erasure_waits_for_queued_entries(tmp_path: Path) -> None:
    store = SlowStore(tmp_path)
    log = RecallLog(store, "recalls/")
    _submit(log, "u1", 30)
    log.erase("u1")
    log.close()
    assert list(store.list_keys("recalls/u1/")) == []


def test_a_write_that_keeps_failing_is_raised_by_flush(tmp_path: Path) -> None:
    store = SlowStore(tmp_path, fail=True)
    log = RecallLog(store, "recalls/")
    _submit(log, "u1", 2)
    with pytest.raises(BackendUnavailableError):
        log.flush()
    assert store.attempts == 6  # each entry tried three times
    log.flush()  # reported once
    store.fail = False
    _submit(log, "u1", 1)
    log.close()
    assert len(list(store.list_keys("recalls/u1/"))) == 1
