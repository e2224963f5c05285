"""Read a user's memories out of the store (the source of truth), a page at a time.

The store, not the index, is read: it holds every memory, including cold-tier ones, deleted
ones and ones not indexed yet. Pages follow the store's key order (memory ids), so the cursor
is the last memory id of a page, a page never holds a whole large user in memory, and on S3 a
page's listing starts at its cursor (``StartAfter``) instead of at the user's first key. An
original in an archive storage class cannot be read now: it is left out of the page, named in
``archived``, and a restore is requested so a later export includes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_memory.errors import InvalidInputError
from agent_memory.ids import validate_memory_id
from agent_memory.model import Original
from agent_memory.portability.records import record_of
from agent_memory.store.keys import user_prefix

if TYPE_CHECKING:
    from agent_memory.service import Memory

MAX_PAGE = 1000


@dataclass
class ExportPage:
    records: list[dict[str, Any]]
    next_after: str | None
    """The cursor for the next page (the last memory id of this one); None on the last page."""
    archived: list[str] = field(default_factory=list)
    """Memory ids whose originals are archived: not exported now, a restore was requested."""


def export_page(memory: Memory, user_id: str, after: str | None = None, limit: int = 500) -> ExportPage:
    """Up to ``limit`` records of ``user_id`` whose memory id sorts after ``after``."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidInputError(f"limit must be between 1 and {MAX_PAGE}")
    if after is not None:
        validate_memory_id(after)
    prefix = user_prefix(memory.settings.key_prefix, user_id)
    keys: list[str] = []
    more = False
    for key in memory.store.list_keys_after(prefix, None if after is None else f"{prefix}{after}.json"):
        mid = key.removeprefix(prefix).removesuffix(".json")
        if not key.endswith(".json") or "/" in mid or (after is not None and mid <= after):
            continue
        if len(keys) == limit:
            more = True
            break
        keys.append(key)
    fetched = memory.store.fetch(keys)
    for key in sorted(fetched.archived):
        memory.store.restore(key)
    records = [record_of(Original.model_validate(doc)) for key in keys
               if (doc := fetched.docs.get(key)) is not None]
    last = keys[-1].removeprefix(prefix).removesuffix(".json") if keys else None
    return ExportPage(records, last if more else None,
                      [k.removeprefix(prefix).removesuffix(".json") for k in sorted(fetched.archived)])


def iter_pages(memory: Memory, user_id: str, page_size: int = 500) -> Iterator[ExportPage]:
    """Every page of a user's export, in order."""
    after: str | None = None
    while True:
        page = export_page(memory, user_id, after, page_size)
        yield page
        if page.next_after is None:
            return
        after = page.next_after
