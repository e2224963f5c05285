"""Process-wide objects for the Lambda handlers, built once per container (cold start).

Handlers call :func:`memory` and :func:`write_queue` instead of building clients per
request; the local runtime calls :func:`reset` when it changes settings in tests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import wraps
from typing import Generic, TypeVar

from agent_memory.config import Settings
from agent_memory.queue import WriteQueue
from agent_memory.service import Memory

T = TypeVar("T")
_lock = threading.RLock()


class _Once(Generic[T]):
    """Build once, under a lock: a threaded server's first requests arrive together, and building
    two boto3 clients or two models at once is both wasteful and unsafe."""

    def __init__(self, build: Callable[[], T]) -> None:
        self._build = build
        self._value: T | None = None
        wraps(build)(self)

    def __call__(self) -> T:
        value = self._value
        if value is None:
            with _lock:
                if self._value is None:
                    self._value = self._build()
                value = self._value
        return value

    @property
    def built(self) -> bool:
        return self._value is not None

    def cache_clear(self) -> None:
        self._value = None


@_Once
def settings() -> Settings:
    from agent_memory.secrets import resolve_index_token

    return _override[-1] if _override else resolve_index_token(Settings())


@_Once
def memory() -> Memory:
    return _memory_override[-1] if _memory_override else Memory(settings())


@_Once
def write_queue() -> WriteQueue:
    from agent_memory.queue.sqs import SqsWriteQueue, make_sqs_client

    s = settings()
    client = make_sqs_client(s.sqs_endpoint_url, s.aws_region)
    url = s.write_queue_url or client.get_queue_url(QueueName=s.write_queue_name)["QueueUrl"]
    return SqsWriteQueue(client, url)


def configure(new: Settings, memory: Memory | None = None) -> None:
    """Use ``new`` instead of the environment (the local runtime builds its settings itself),
    and optionally an already-built ``memory`` (tests share one loaded model)."""
    reset()
    _override.append(new)
    if memory is not None:
        _memory_override.append(memory)


_override: list[Settings] = []
_memory_override: list[Memory] = []


def reset() -> None:
    """Forget everything built; close the Memory only if the runtime built it (one handed to
    :func:`configure` belongs to the caller, who may hand it over again)."""
    if memory.built and not _memory_override:
        memory().close()
    settings.cache_clear()
    memory.cache_clear()
    write_queue.cache_clear()
    _override.clear()
    _memory_override.clear()
