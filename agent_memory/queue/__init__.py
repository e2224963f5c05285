"""The write queue between the API (which stores originals) and the ingest worker (which indexes them)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class IndexJob:
    """One message: 'these originals are in the store, index them'. Ids are fixed before the
    message is sent, so delivering it twice converges to the same index rows."""

    user_id: str
    memory_ids: list[str]

    def to_body(self) -> str:
        return json.dumps({"v": 1, "user_id": self.user_id, "memory_ids": self.memory_ids})

    @classmethod
    def from_body(cls, body: str) -> IndexJob:
        doc: dict[str, Any] = json.loads(body)
        if not isinstance(doc.get("memory_ids"), list) or not isinstance(doc.get("user_id"), str):
            raise ValueError("message body needs user_id and memory_ids")
        return cls(doc["user_id"], [str(m) for m in doc["memory_ids"]])


class WriteQueue(Protocol):
    def send(self, job: IndexJob) -> str:
        """Enqueue; return the message id. Raises BackendUnavailableError when the queue is down."""
        ...
