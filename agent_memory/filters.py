"""Build Milvus boolean filter expressions without pasting user strings.

Neither Milvus Lite 3.2.2 nor Milvus 2.3.5 supports filter templating, so the
safety rests on two layers kept in this one module: every id is first checked
by :func:`agent_memory.ids.validate_id` (no quote or backslash can pass), and
every string literal is still emitted through :func:`quote`, which escapes like
JSON. Enumerations (types, sources) are checked against their closed sets.

Metadata conditions (:class:`agent_memory.conditions.Filters`) address the index's JSON field
``metadata``: keys are re-checked against the key pattern and quoted, string values (checked to
hold no control character, for which the expression parser has no escape) are quoted, numbers are
re-checked finite. Milvus has no ``in`` on a JSON path, so ``in`` is an OR of equalities. Date
ranges compare the epoch milliseconds kept beside the metadata under :data:`DATES_KEY`. The same
conditions evaluated in Python (:func:`matches`) serve HelixDB's post-filter and the cold tier,
with Milvus' semantics (a boolean compares as 1/0; a value of another type never matches).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.conditions import Condition, Filters, checked_path, checked_scalar
from agent_memory.config import MEMORY_TYPES, SOURCES
from agent_memory.errors import InvalidInputError
from agent_memory.ids import validate_id, validate_memory_id
from agent_memory.metadata import date_ms, dates_by_path, lookup

DATES_KEY = "~dates"
"""Beside the metadata in the index: ``{dotted path: epoch ms}`` of its date-valued strings. ``~``
cannot start a metadata key, so it never collides."""
_COMPARE = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def quote(value: str) -> str:
    """A string literal Milvus reads back as exactly ``value``."""
    return json.dumps(value, ensure_ascii=False)


def _in_list(field_name: str, values: Iterable[str]) -> str:
    return f"{field_name} in [{', '.join(quote(v) for v in values)}]"


_ENUMS: dict[str, Sequence[str]] = {"memory_type": MEMORY_TYPES, "source": SOURCES}


def checked_enum(values: Sequence[str], kind: str) -> list[str]:
    """``values`` if each is a known ``kind`` (memory_type or source); refused otherwise."""
    allowed = _ENUMS[kind]
    out = []
    for v in values:
        if v not in allowed:
            raise InvalidInputError(f"unknown {kind} {repr(v)[:60]}; allowed: {', '.join(allowed)}")
        out.append(v)
    if not out:
        raise InvalidInputError(f"{kind} list must not be empty")
    return out


def index_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """The metadata as the index keeps it for filtering: the original's, plus its dates as epoch ms."""
    dates = dates_by_path(metadata)
    return {**metadata, DATES_KEY: dates} if dates else dict(metadata)


def stored_metadata(indexed: dict[str, Any]) -> dict[str, Any]:
    """The original's metadata back from an index row (undoes :func:`index_metadata`)."""
    return {k: v for k, v in indexed.items() if k != DATES_KEY}


def _literal(value: Any, where: str) -> str:
    value = checked_scalar(value, where)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return repr(float(value))
    return quote(value)


def _json_path(path: str, dates: bool = False) -> str:
    keys = [DATES_KEY, path] if dates else checked_path(path).split(".")
    return "metadata" + "".join(f"[{quote(k)}]" for k in keys)


def _condition_terms(path: str, cond: Condition) -> list[str]:
    ref = _json_path(path)
    terms = []
    if cond.eq is not None:
        terms.append(f"{ref} == {_literal(cond.eq, path)}")
    if cond.in_ is not None:
        terms.append("(" + " or ".join(f"{ref} == {_literal(v, path)}" for v in cond.in_) + ")")
    for op, bound in cond.ranges().items():
        if bound is None:
            continue
        if isinstance(bound, str):
            ms = date_ms(bound)
            if ms is None:
                raise InvalidInputError(f"{path}: {op} needs an ISO-8601 date")
            terms.append(f"{_json_path(path, dates=True)} {_COMPARE[op]} {int(ms)}")
        else:
            terms.append(f"{ref} {_COMPARE[op]} {_literal(bound, path)}")
    return terms


def where_terms(where: Filters) -> list[str]:
    """The expression terms (ANDed) of a request's ``filters``."""
    terms = []
    for field in ("session_id", "topic_id"):
        ids = where.ids(field)
        if ids is not None:
            terms.append(_in_list(field, [validate_id(i, field) for i in ids]))
    if where.memory_types is not None:
        terms.append(_in_list("memory_type", checked_enum(where.memory_types, "memory_type")))
    if where.created_at is not None:
        terms += [f"created_at {_COMPARE[op]} {int(ms)}" for op, ms in where.created_at.bounds_ms().items()]
    for path, cond in where.conditions().items():
        terms += _condition_terms(path, cond)
    return terms


def _compare(value: Any, op: str, bound: Any) -> bool:
    if not isinstance(value, int | float):  # bool is an int: Milvus compares it as 1/0 too
        return False
    return bool({"gt": value > bound, "gte": value >= bound, "lt": value < bound, "lte": value <= bound}[op])


def _scalar_eq(value: Any, wanted: Any) -> bool:
    if isinstance(value, dict | list) or value is None:
        return False
    if isinstance(wanted, str) or isinstance(value, str):
        return isinstance(value, str) and isinstance(wanted, str) and value == wanted
    return bool(value == wanted)


def condition_holds(metadata: dict[str, Any], path: str, cond: Condition) -> bool:
    """One condition on a memory's metadata, in Python, as the Milvus expression decides it."""
    found, value = lookup(metadata, path)
    if not found:
        return False
    if cond.eq is not None and not _scalar_eq(value, cond.eq):
        return False
    if cond.in_ is not None and not any(_scalar_eq(value, v) for v in cond.in_):
        return False
    for op, bound in cond.ranges().items():
        if bound is None:
            continue
        if isinstance(bound, str):
            ms = date_ms(value)  # ``lookup`` walks objects only, as :func:`dates_by_path` does
            if ms is None or not _compare(ms, op, date_ms(bound)):
                return False
        elif not _compare(value, op, bound):
            return False
    return True


def matches(record: Any, where: Filters | None) -> bool:
    """``where`` on an index record in Python (HelixDB's post-filter, the cold tier)."""
    if where is None:
        return True
    created = int(record.created_at.timestamp() * 1000)
    for field in ("session_id", "topic_id"):
        ids = where.ids(field)
        if ids is not None and getattr(record, field) not in ids:
            return False
    if where.memory_types is not None and record.memory_type not in where.memory_types:
        return False
    if where.created_at is not None and not all(
            _compare(created, op, ms) for op, ms in where.created_at.bounds_ms().items()):
        return False
    return all(condition_holds(record.metadata, p, c) for p, c in where.conditions().items())


def checked_scope(values: Sequence[str], kind: str) -> list[str]:
    """Scope values to match: each a valid id, or ``""`` for memories without that scope."""
    out = [v if v == "" else validate_id(v, kind) for v in values]
    if not out:
        raise InvalidInputError(f"{kind} list must not be empty")
    return out


def visible(scope_id: str | None, kind: str) -> list[str] | None:
    """What a request scoped to ``scope_id`` (an ``agent_id`` or a ``run_id``) may see: that scope's
    memories and those without one (shared); ``None`` (no scope given): no restriction."""
    return None if scope_id is None else ["", validate_id(scope_id, kind)]


def exactly(scope_id: str | None, kind: str) -> list[str] | None:
    """Only the memories of exactly this scope (never the shared ones); ``None``: no restriction."""
    return None if scope_id is None else [validate_id(scope_id, kind)]


@dataclass(frozen=True)
class MemoryFilter:
    """What a search or listing may return. ``user_id`` is mandatory: no query spans users."""

    user_id: str
    active_only: bool = True
    include_deleted: bool = False
    memory_types: Sequence[str] | None = None
    sources: Sequence[str] | None = ("user_said",)
    min_importance: float | None = None
    topic_id: str | None = None
    session_id: str | None = None
    memory_ids: Sequence[str] | None = None
    created_before_ms: int | None = None
    agent_ids: Sequence[str] | None = None
    """Rows whose ``agent_id`` is one of these (``""``: no agent, the user's shared memories)."""
    run_ids: Sequence[str] | None = None
    where: Filters | None = None
    """A request's ``filters`` (metadata, session, topic, types, creation time), ANDed."""
    live_at_ms: int | None = None
    """Only memories not expired at this instant (no ``expires_at``, or a later one)."""
    expired_at_ms: int | None = None
    """Only memories expired at this instant (the expiry job's selection)."""

    def to_expr(self) -> str:
        parts = [f"user_id == {quote(validate_id(self.user_id, 'user_id'))}"]
        if self.active_only:
            parts.append("is_active == true")
        if not self.include_deleted:
            parts.append("deleted_at == 0")
        if self.memory_types is not None:
            parts.append(_in_list("memory_type", checked_enum(self.memory_types, "memory_type")))
        if self.sources is not None:
            parts.append(_in_list("source", checked_enum(self.sources, "source")))
        if self.min_importance is not None:
            parts.append(f"importance >= {self.checked_min_importance()!r}")
        if self.topic_id is not None:
            parts.append(f"topic_id == {quote(validate_id(self.topic_id, 'topic_id'))}")
        if self.session_id is not None:
            parts.append(f"session_id == {quote(validate_id(self.session_id, 'session_id'))}")
        if self.memory_ids is not None:
            parts.append(_in_list("id", [validate_memory_id(m) for m in self.memory_ids]))
        if self.created_before_ms is not None:
            parts.append(f"created_at < {int(self.created_before_ms)}")
        if self.agent_ids is not None:
            parts.append(_in_list("agent_id", checked_scope(self.agent_ids, "agent_id")))
        if self.run_ids is not None:
            parts.append(_in_list("run_id", checked_scope(self.run_ids, "run_id")))
        if self.where is not None:
            parts += where_terms(self.where)
        if self.live_at_ms is not None:
            parts.append(f"(expires_at == 0 or expires_at > {int(self.live_at_ms)})")
        if self.expired_at_ms is not None:
            parts.append(f"expires_at > 0 and expires_at <= {int(self.expired_at_ms)}")
        return " and ".join(parts)

    def admits(self, record: Any) -> bool:
        """:meth:`to_expr` evaluated in Python on one index record, term for term (the row cache
        of :mod:`agent_memory.index.row_cache` filters with it; a test holds the two equal). Call
        :meth:`to_expr` once first: it validates the ids and enumerations this trusts."""
        def ms(dt: Any) -> int:
            return int(dt.timestamp() * 1000)

        checks = (
            record.user_id == self.user_id,
            not self.active_only or record.is_active,
            self.include_deleted or record.deleted_at is None,
            self.memory_types is None or record.memory_type in self.memory_types,
            self.sources is None or record.source in self.sources,
            self.min_importance is None or record.importance >= self.checked_min_importance(),
            self.topic_id is None or (record.topic_id or "") == self.topic_id,
            self.session_id is None or record.session_id == self.session_id,
            self.memory_ids is None or record.id in self.memory_ids,
            self.created_before_ms is None or ms(record.created_at) < int(self.created_before_ms),
            self.agent_ids is None or (record.agent_id or "") in self.agent_ids,
            self.run_ids is None or (record.run_id or "") in self.run_ids,
            self.live_at_ms is None or record.expires_at is None or ms(record.expires_at) > int(self.live_at_ms),
            self.expired_at_ms is None or (record.expires_at is not None
                                           and ms(record.expires_at) <= int(self.expired_at_ms)),
        )
        return all(checks) and matches(record, self.where)

    def checked_min_importance(self) -> float:
        value = float(self.min_importance if self.min_importance is not None else 0.0)
        if not 0.0 <= value <= 1.0:
            raise InvalidInputError("min_importance must be between 0 and 1")
        return value
