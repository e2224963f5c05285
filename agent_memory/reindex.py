"""Rebuild an index from the originals in the raw store (the source of truth).

Used when the embedding model changes, when moving to another backend, or after
losing the index. Originals keep their state (active, superseded, deleted), so the
rebuilt index answers exactly as the old one did.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, TypeVar

from agent_memory.embed import Embedder, memory_vectors
from agent_memory.errors import ArchivedError
from agent_memory.index import VectorIndex
from agent_memory.model import IndexRecord, Original
from agent_memory.store.base import RawStore
from agent_memory.store.keys import original_key

if TYPE_CHECKING:
    from agent_memory.service import Memory

T = TypeVar("T")


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


class StoredOriginals:
    """Every original under the store's key prefix, read one at a time (the keys are listed
    first, for a progress total). An archived one (GLACIER / DEEP_ARCHIVE) gets a restore request
    and is listed in ``archived``: re-run once restored."""

    def __init__(self, store: RawStore, key_prefix: str) -> None:
        self.store, self.key_prefix = store, key_prefix
        self.keys = [k for k in store.list_keys(key_prefix) if k.endswith(".json")]
        self.archived: list[str] = []

    def __iter__(self) -> Iterator[Original]:
        for key in self.keys:
            try:
                yield Original.model_validate(self.store.get_json(key))
            except ArchivedError:
                self.store.restore(key)
                self.archived.append(key)

    def key_of(self, original: Original) -> str:
        return original_key(self.key_prefix, original.user_id, original.memory_id)


@dataclass
class ReindexReport:
    indexed: int = 0
    skipped: int = 0
    cold: int = 0
    """Originals of the cold tier, left out of the index (re-hydration brings them back)."""


def reindex(originals: Iterable[Original], storage_key: Callable[[Original], str],
            embedder: Embedder, target: VectorIndex, *, fresh: bool = True,
            missing_only: bool = False, batch_size: int = 128, blend: bool = False,
            on_progress: Callable[[int], None] | None = None) -> ReindexReport:
    """Embed and write every original into ``target``.

    ``fresh`` drops the target collection first (a clean rebuild, new model pin);
    ``missing_only`` keeps it and indexes only originals that have no row yet (the
    reconciler for writes that stopped between the store and the index); ``blend`` is the
    ``context_blend`` setting (see :func:`agent_memory.embed.memory_vectors`)."""
    if fresh and not missing_only:
        target.drop()
    target.ensure(embedder.info)
    report = ReindexReport()
    for batch in _batches(originals, batch_size):
        hot = [o for o in batch if o.state.tier != "cold"]
        report.cold += len(batch) - len(hot)
        if on_progress and len(hot) < len(batch):
            on_progress(len(batch) - len(hot))
        batch = hot
        if missing_only:
            present = {r.id for r in target.get([o.memory_id for o in batch])}
            todo = [o for o in batch if o.memory_id not in present]
            report.skipped += len(batch) - len(todo)
        else:
            todo = batch
        if todo:
            vectors = memory_vectors(embedder, todo, blend).stored
            target.write([IndexRecord.from_original(o, storage_key(o)) for o in todo], vectors)
            report.indexed += len(todo)
        if on_progress:
            on_progress(len(batch))
    target.flush()
    return report


def index_missing(memory: Memory, batch_size: int = 256,
                  on_progress: Callable[[int], None] | None = None) -> ReindexReport:
    """The reconciler: index every original in the store that has no index row yet.

    Ids come from the keys, so only the missing originals are downloaded."""
    from agent_memory.ids import validate_memory_id

    report = ReindexReport()
    keys = (k for k in memory.store.list_keys(memory.settings.key_prefix) if k.endswith(".json"))
    for batch in _batches(keys, batch_size):
        by_id = {}
        for key in batch:
            mid = key.rsplit("/", 1)[-1].removesuffix(".json")
            try:
                by_id[validate_memory_id(mid)] = key
            except ValueError:
                continue
        present = {r.id for r in memory.index.get(list(by_id))}
        fetched = memory.store.fetch([k for m, k in by_id.items() if m not in present])
        found = [Original.model_validate(d) for d in fetched.docs.values() if d is not None]
        missing = [o for o in found if o.state.tier != "cold"]  # cold ones are meant to be out
        report.cold += len(found) - len(missing)
        report.skipped += len(present) + len(fetched.archived)
        if missing:
            memory.index_originals(missing)
            report.indexed += len(missing)
        if on_progress:
            on_progress(len(batch))
    memory.index.flush()
    return report
