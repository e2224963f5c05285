"""Restart a co-located server that stopped answering.

A Milvus server whose process stops for longer than its etcd leases (a laptop that slept, a paused
VM: CI once stalled 47 s) keeps running but answers every call "service not ready ... Abnormal"
from then on; it never recovers by itself. On AWS the index is a managed service; locally the
mirror owns the process, so it watches it and restarts it in place (same port and data folder,
so clients keep their address and the collections come back). While it restarts, the API answers
503 and the queue redelivers what the ingest worker could not index: nothing acknowledged is lost.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

log = logging.getLogger(__name__)


class Restartable(Protocol):
    def healthy(self, timeout_s: float = ...) -> bool: ...

    def restart(self) -> object: ...


class Watchdog:
    """Every ``every_s`` seconds ask ``server`` whether it answers; after ``misses`` unanswered
    checks in a row (one slow answer under load is not an outage), restart it."""

    def __init__(self, server: Restartable, name: str, every_s: float = 15.0, misses: int = 2,
                 timeout_s: float = 10.0) -> None:
        self.server, self.name = server, name
        self.every_s, self.misses, self.timeout_s = every_s, misses, timeout_s
        self.restarts = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"watchdog-{name}", daemon=True)

    def start(self) -> Watchdog:
        self.thread.start()
        return self

    def stop(self) -> None:
        """Stop watching; a restart under way is finished first (the server is then stopped by
        its owner, never half-started)."""
        self._stop.set()
        if self.thread.is_alive() and self.thread is not threading.current_thread():
            self.thread.join()

    def _loop(self) -> None:
        missed = 0
        while not self._stop.wait(self.every_s):
            if self.server.healthy(timeout_s=self.timeout_s):
                missed = 0
                continue
            missed += 1
            if missed < self.misses or self._stop.is_set():
                continue
            log.warning("%s has not answered %d checks in a row; restarting it in place", self.name, missed)
            try:
                self.server.restart()
                self.restarts += 1
                log.warning("%s restarted", self.name)
            except Exception as exc:  # keep watching: the next check tries again
                log.error("%s could not be restarted: %s", self.name, exc)
            missed = 0
