"""Import export records: validate everything, then write originals and index rows.

Decisions:
- Nothing is half-imported because of bad input: every record is parsed and validated (format,
  ids, sizes, the target user, duplicates in the file, ids owned by another user in the index)
  before the first write, and the error names the line of each bad record (up to ten).
- Idempotent by memory id: an original already stored exactly as imported is left alone (no new
  S3 version) and only indexed if its row is missing, so a second import changes nothing and a
  re-run after a failure half-way (store or index down) finishes the job.
- Faithful: created_at, versions (topic, ``is_active``, ``superseded_by``) and deletions are kept
  as exported; the judgement models (duplicates, new versions) are not run again. The only
  change is the embedding: each memory is re-embedded with the configured model and its pin
  recorded, so a file exported under another model imports into this index.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agent_memory.embed import memory_vectors
from agent_memory.errors import InvalidInputError
from agent_memory.model import IndexRecord, Original
from agent_memory.portability.records import ExportRecord

if TYPE_CHECKING:
    from agent_memory.config import Settings
    from agent_memory.service import Memory

MAX_ERRORS = 10
Convert = Callable[[dict[str, Any]], dict[str, Any]]
"""Turns a foreign record (e.g. a mem0 memory) into an export record before validation."""


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    indexed: int = 0


def parse_records(items: Iterable[tuple[str, Any]], *, user_id: str | None = None,
                  settings: Settings | None = None, convert: Convert | None = None) -> list[ExportRecord]:
    """Validate ``(where, raw)`` pairs (``where`` like ``"line 3"``; ``raw`` a JSON text or an
    object) into records. Blank lines are skipped. With ``user_id`` every record must belong to
    that user. Raises one :class:`InvalidInputError` listing the first bad records."""
    errors: list[str] = []
    seen: dict[str, str] = {}
    out: list[ExportRecord] = []
    for where, raw in items:
        if len(errors) >= MAX_ERRORS:
            break
        try:
            rec = _parse_one(raw, convert)
        except (ValueError, ValidationError) as exc:
            errors.append(f"{where}: {_message(exc)}")
            continue
        except RecursionError:
            errors.append(f"{where}: nested too deeply")
            continue
        if rec is None:
            continue
        try:
            problem = _problem(rec, user_id, settings)
        except RecursionError:
            problem = "metadata is nested too deeply"
        if problem is None and rec.memory_id in seen:
            problem = f"memory_id {rec.memory_id} repeats {seen[rec.memory_id]}"
        if problem is not None:
            errors.append(f"{where}: {problem}")
            continue
        seen[rec.memory_id] = where
        out.append(rec)
    if errors:
        raise InvalidInputError(f"nothing imported; bad records: {'; '.join(errors)}")
    return out


def _parse_one(raw: Any, convert: Convert | None) -> ExportRecord | None:
    if isinstance(raw, str):
        if not raw.strip():
            return None
        raw = json.loads(raw)
    if not isinstance(raw, dict):
        raise ValueError(f"expected a JSON object, got {type(raw).__name__}")
    return ExportRecord.model_validate(convert(raw) if convert else raw)


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(str(x) for x in e['loc'])}: ".removeprefix(": ")
                         + e["msg"].removeprefix("Value error, ") for e in exc.errors()[:3])
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON ({exc.msg} at column {exc.colno})"
    return str(exc)


def _problem(rec: ExportRecord, user_id: str | None, settings: Settings | None) -> str | None:
    if user_id is not None and rec.user_id != user_id:
        return f"user_id {rec.user_id!r} is not {user_id!r}, the user this import is for"
    if settings is not None:
        if len(rec.content) > settings.max_content_chars:
            return f"content has {len(rec.content)} characters; the limit is {settings.max_content_chars}"
        if len(json.dumps(rec.metadata, default=str)) > settings.max_metadata_bytes:
            return f"metadata is larger than {settings.max_metadata_bytes} bytes"
    return None


def _batches(items: Sequence[ExportRecord], size: int) -> Iterable[list[ExportRecord]]:
    it = iter(items)
    while batch := list(islice(it, size)):
        yield batch


def check_owners(memory: Memory, records: Sequence[ExportRecord], batch_size: int = 500) -> None:
    """Refuse records whose memory id is indexed for another user: writing them would replace
    that user's index row (ids are global in the index, keys are per user in the store)."""
    errors = []
    for batch in _batches(records, batch_size):
        owner = {r.id: r.user_id for r in memory.index.get([rec.memory_id for rec in batch])}
        errors += [f"memory_id {rec.memory_id} belongs to another user" for rec in batch
                   if owner.get(rec.memory_id, rec.user_id) != rec.user_id]
    if errors:
        raise InvalidInputError(f"nothing imported: {'; '.join(errors[:MAX_ERRORS])}")


def import_records(memory: Memory, records: Sequence[ExportRecord], *, batch_size: int = 128,
                   on_progress: Callable[[int], None] | None = None) -> ImportReport:
    """Write validated records (see :func:`parse_records`): originals first, then index rows."""
    check_owners(memory, records)
    report = ImportReport()
    for batch in _batches(records, batch_size):
        originals = [_normalized(memory, rec.to_original()) for rec in batch]
        keys = [memory.storage_key(o.user_id, o.memory_id) for o in originals]
        stored = memory.store.fetch(keys).docs
        puts: dict[str, dict[str, Any]] = {}
        for o, key in zip(originals, keys, strict=True):
            doc = o.model_dump(mode="json")
            old = stored.get(key)
            if old is not None and Original.model_validate(old).model_dump(mode="json") == doc:
                report.unchanged += 1
                continue
            puts[key] = doc
            report.created += old is None
            report.updated += old is not None
        if puts:  # the store first, as every write; S3 puts are I/O: overlap them
            with ThreadPoolExecutor(max_workers=min(16, len(puts))) as pool:
                list(pool.map(lambda item: memory.store.put_json(*item), puts.items()))
        written = {doc["memory_id"] for doc in puts.values()}
        present = {r.id for r in memory.index.get([o.memory_id for o in originals])}
        todo = [(o, k) for o, k in zip(originals, keys, strict=True) if o.memory_id in written or
                o.memory_id not in present]
        if todo:
            vectors = memory_vectors(memory.embedder, [o for o, _ in todo], memory.settings.context_blend).stored
            memory.index.write([IndexRecord.from_original(o, k, memory.settings.index_content_bytes) for o, k in todo],
                               vectors)
            report.indexed += len(todo)
        if on_progress:
            on_progress(len(batch))
    memory.index.flush()
    return report


def _normalized(memory: Memory, o: Original) -> Original:
    """The original as this service keeps it: pinned to the configured model, in the hot tier
    (it is indexed now; the tiering job may move it out again)."""
    state = o.state.model_copy(update={"tier": "hot", "cold_at": None})
    return o.model_copy(update={"embedding": memory.embedder.info, "state": state})
