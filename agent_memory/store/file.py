"""Originals as files under a folder, laid out exactly like the S3 keys.

For the zero-server default (``Memory()`` with no configuration) and for tests.
It keeps no object versions: an overwrite replaces the file, and erasure is a
plain delete. Use S3 (or an S3 server) when version history matters.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_memory.errors import BackendUnavailableError, InvalidInputError, NotFoundError
from agent_memory.store.base import RawStore


class FileStore(RawStore):
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root) or path == self.root:
            raise InvalidInputError(f"key {key!r} escapes the store")
        return path

    def put_json(self, key: str, doc: dict[str, Any]) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False)
        os.replace(tmp, path)  # atomic: a reader never sees half a document

    def get_json(self, key: str) -> dict[str, Any]:
        try:
            with self._path(key).open(encoding="utf-8") as fh:
                doc: dict[str, Any] = json.load(fh)
                return doc
        except FileNotFoundError:
            raise NotFoundError(f"no object at {key}") from None

    def list_keys(self, prefix: str) -> Iterator[str]:
        base = self._path(prefix.rstrip("/")) if prefix.strip("/") else self.root
        if not base.exists():
            return
        for path in sorted(base.rglob("*")) if base.is_dir() else [base]:  # a prefix may be one whole key
            if path.is_file() and not path.name.startswith(".tmp-"):
                key = path.relative_to(self.root).as_posix()
                if key.startswith(prefix):
                    yield key

    def delete_all_versions(self, prefix: str) -> int:
        count = 0
        for key in list(self.list_keys(prefix)):
            self._path(key).unlink(missing_ok=True)
            count += 1
        return count

    def ping(self) -> None:
        if not os.access(self.root, os.W_OK):
            raise BackendUnavailableError(f"store folder {self.root} is not writable")
