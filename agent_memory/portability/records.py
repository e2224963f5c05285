"""The export record: one memory's original, whole, as one JSON object per line.

A record is the :class:`~agent_memory.model.Original` as the store keeps it (content, context,
type, importance, topic, state with its version links and ``deleted_at``, provenance, metadata,
ids, scope (``agent_id``, ``run_id``), ``expires_at``, timestamps) plus
``"format": "agent-memory/v1"``. Dumping the original itself means a field added to the original
is exported without touching this module; the format name changes only when a field changes
meaning. Each line carries the format, so files can be concatenated and
read line by line without a header.

Imports are validated as strictly as a remember request: ids that become S3 keys and index
filters go through :func:`~agent_memory.ids.validate_id`, metadata through the same bounds
(:mod:`agent_memory.metadata`: it is filterable), unknown fields are refused (a newer
exporter's field would otherwise be dropped without a word).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory.ids import validate_id, validate_memory_id
from agent_memory.metadata import check_metadata
from agent_memory.model import Original, check_timestamp

FORMAT = "agent-memory/v1"


class ExportRecord(Original):
    """One line of an export file (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["agent-memory/v1"]
    importance: float = Field(ge=0.0, le=1.0)
    content: str = Field(min_length=1)

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, Any]) -> dict[str, Any]:
        return check_metadata(v)

    @field_validator("created_at", "stored_at")
    @classmethod
    def _times(cls, v: datetime, info: Any) -> datetime:
        return check_timestamp(v, info.field_name)

    @model_validator(mode="after")
    def _ids(self) -> ExportRecord:
        """Every id that becomes a key or a filter value, checked as a remember request's are."""
        if not self.content.strip():
            raise ValueError("content must not be blank")
        if self.expires_at is not None and self.expires_at.utcoffset() is None:
            raise ValueError("expires_at must be timezone-aware")
        for name in ("user_id", "session_id", "topic_id", "idempotency_key", "agent_id", "run_id"):
            if (value := getattr(self, name)) is not None:
                validate_id(value, name)
        for linked in (self.memory_id, self.state.superseded_by, self.state.duplicate_of, *self.state.supersedes):
            if linked is not None:
                validate_memory_id(linked)
        return self

    def to_original(self) -> Original:
        return Original.model_validate(self.model_dump(exclude={"format"}))


def record_of(original: Original) -> dict[str, Any]:
    """The JSON object written for ``original``."""
    return {"format": FORMAT, **original.model_dump(mode="json")}


MAX_IMPORT_BATCH = 1000


class ImportRequest(BaseModel):
    """Body of ``POST /v1/users/{user_id}/import``: a batch of records, validated whole."""

    model_config = ConfigDict(extra="forbid")

    records: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_IMPORT_BATCH)
    """Export records (``agent-memory/v1``), or mem0 ``get_all()`` items with ``from_format="mem0"``."""
    from_format: Literal["agent-memory", "mem0"] = "agent-memory"
