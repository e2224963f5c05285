"""The raw object store interface: JSON documents under keys, S3 semantics."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from agent_memory.errors import ArchivedError, NotFoundError


@dataclass
class Fetched:
    """Documents by key (None = missing) and the keys whose objects are archived (unreadable now)."""

    docs: dict[str, dict[str, Any] | None]
    archived: set[str] = field(default_factory=set)


class RawStore(ABC):
    """Where originals and the recall log live. S3 in production; files for the zero-server default."""

    @abstractmethod
    def put_json(self, key: str, doc: dict[str, Any]) -> None: ...

    @abstractmethod
    def get_json(self, key: str) -> dict[str, Any]:
        """The document, or :class:`NotFoundError`."""

    @abstractmethod
    def list_keys(self, prefix: str) -> Iterator[str]: ...

    def list_keys_after(self, prefix: str, start_after: str | None) -> Iterator[str]:
        """``list_keys`` from the first key after ``start_after`` (keys come in order): a paged
        reader (the export) starts where its last page ended. S3 starts there itself."""
        return (k for k in self.list_keys(prefix) if start_after is None or k > start_after)

    @abstractmethod
    def delete_all_versions(self, prefix: str) -> int:
        """Remove every object (and every version of it) under ``prefix``; return how many went."""

    def delete_where(self, prefix: str, matches: Callable[[dict[str, Any]], bool]) -> int:
        """Remove every version of each document under ``prefix`` that ``matches``; return how many
        object versions went (a scoped erasure: one agent's recall log, decisions...)."""
        keys = list(self.list_keys(prefix))
        docs = self.get_many(keys)
        return sum(self.delete_all_versions(k) for k in keys if (d := docs.get(k)) is not None and matches(d))

    @abstractmethod
    def ping(self) -> None:
        """Raise :class:`BackendUnavailableError` when the store cannot be reached."""

    def restore(self, key: str) -> None:  # noqa: B027 - only archive-capable stores act
        """Ask for a readable copy of an archived object (S3 RestoreObject); no-op elsewhere."""

    def get_many(self, keys: list[str], workers: int = 16) -> dict[str, dict[str, Any] | None]:
        """Fetch in parallel (recall needs a handful of originals at once). Missing or archived -> None."""
        return self.fetch(keys, workers).docs

    def fetch(self, keys: list[str], workers: int = 16) -> Fetched:
        """Like :meth:`get_many`, and says which keys are archived rather than missing. Any other
        read error (the store down) is raised."""
        archived: set[str] = set()
        docs: dict[str, dict[str, Any] | None] = {}
        for key, got in zip(keys, self.get_each(keys, workers), strict=True):
            if isinstance(got, ArchivedError):
                archived.add(key)
            elif isinstance(got, Exception) and not isinstance(got, NotFoundError):
                raise got
            docs[key] = None if isinstance(got, Exception) else got
        return Fetched(docs, archived)

    def get_each(self, keys: Sequence[str], workers: int = 16) -> list[dict[str, Any] | Exception]:
        """Each key's document, in the order of ``keys``, or the exception its read raised.

        Reads run on a bounded thread pool: each S3 GET is a round trip whose wait the other
        reads fill (one boto3 client serves every thread). A failure is returned in its key's
        place rather than raised, so a batch reader (the ingest worker) fails only the records
        whose originals it could not read and indexes the rest."""

        return self._each(self.get_json, keys, workers)

    @staticmethod
    def _each(read: Callable[[str], dict[str, Any]], keys: Sequence[str],
              workers: int) -> list[dict[str, Any] | Exception]:
        def one(key: str) -> dict[str, Any] | Exception:
            try:
                return read(key)
            except Exception as exc:  # handed back in the key's place; the caller decides
                return exc

        if len(keys) <= 1:
            return [one(k) for k in keys]
        with ThreadPoolExecutor(max_workers=min(workers, len(keys))) as pool:
            return list(pool.map(one, keys))
