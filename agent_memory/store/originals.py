"""Reading one original back from the raw store: the facade and the version machinery
(:mod:`agent_memory.versions`) both rewrite originals, and read them the same way."""

from __future__ import annotations

from contextlib import suppress

from agent_memory.errors import AgentMemoryError, NotFoundError
from agent_memory.model import Original
from agent_memory.store.base import RawStore


def read_original(store: RawStore, key: str) -> Original | None:
    """The original at ``key``, or None when it is gone. An archived one raises ``ArchivedError``
    (the caller decides whether to ask for a restore)."""
    try:
        return Original.model_validate(store.get_json(key))
    except NotFoundError:
        return None


def request_restore(store: RawStore, key: str) -> None:
    """Ask for an archived original back; a failed request is not the caller's failure (a recall
    or a write must not fail because of it)."""
    with suppress(AgentMemoryError):
        store.restore(key)
