"""Process-wide objects for the Lambda handlers, built once per container (cold start).

Handlers call :func:`memory` and :func:`write_queue` instead of building clients per
request; the local runtime calls :func:`reset` when it changes settings in tests.
"""

from __future__ import annotations

from functools import lru_cache

from agent_memory.config import Settings
from agent_memory.queue import WriteQueue
from agent_memory.service import Memory


@lru_cache(maxsize=1)
def settings() -> Settings:
    return _override[-1] if _override else Settings()


@lru_cache(maxsize=1)
def memory() -> Memory:
    return _memory_override[-1] if _memory_override else Memory(settings())


@lru_cache(maxsize=1)
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
    if memory.cache_info().currsize:
        memory().close()
    for fn in (settings, memory, write_queue):
        fn.cache_clear()
    _override.clear()
    _memory_override.clear()
