"""The filter language of ``recall(filters=...)`` and the timeline, as typed Pydantic models.

A filter is a set of conditions combined with AND::

    {"metadata": {"project": "apollo",                       # equality
                  "priority": {"gte": 2},                    # numeric range
                  "tag": {"in": ["red", "blue"]},            # one of
                  "due": {"gte": "2026-01-01", "lt": "2026-02-01"}},  # date range (ISO 8601)
     "session_id": "s1" or ["s1", "s2"], "topic_id": ..., "memory_types": ["fact"],
     "created_at": {"gte": "2026-01-01T00:00:00Z"}}

Everything is checked here, before any expression exists: metadata paths are dotted keys of the
metadata key pattern, values are typed scalars (strings without control characters, finite
numbers), a range is all numbers or all dates, ids are ids. A hostile key or value is a 422; the
expressions themselves are written only in :mod:`agent_memory.filters`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from agent_memory.config import MemoryType
from agent_memory.errors import InvalidInputError
from agent_memory.ids import validate_id
from agent_memory.metadata import MAX_DEPTH, check_key, check_number, check_string, date_ms

Scalar = StrictBool | StrictInt | StrictFloat | StrictStr
MAX_CONDITIONS = 16
MAX_IN = 100
_CONTROL = {chr(c) for c in [*range(0x20), 0x7F]}


def checked_scalar(value: Any, where: str) -> Any:
    """A filter value: a finite number, a boolean, or a string without control characters (the
    index's expression parser knows no escape for them) and valid Unicode."""
    if isinstance(value, str):
        check_string(value, where)
        if _CONTROL.intersection(value):
            raise ValueError(f"filter value at {where} contains a control character")
        return value
    return check_number(value, where)


def checked_path(path: str) -> str:
    """A dotted metadata path: 1..MAX_DEPTH keys of the metadata key pattern."""
    keys = path.split(".")
    if len(keys) > MAX_DEPTH:
        raise ValueError(f"metadata filter path {path[:80]!r} is deeper than {MAX_DEPTH} levels")
    for i, key in enumerate(keys):
        check_key(key, ".".join(keys[:i]))
    return path


class Condition(BaseModel):
    """Conditions on one metadata value, ANDed: ``eq``, ``in`` (one of), ``gt``/``gte``/``lt``/``lte``
    (numbers, or ISO-8601 dates compared as instants)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)

    eq: Scalar | None = None
    in_: list[Scalar] | None = Field(None, alias="in", min_length=1, max_length=MAX_IN)
    gt: StrictInt | StrictFloat | StrictStr | None = None
    gte: StrictInt | StrictFloat | StrictStr | None = None
    lt: StrictInt | StrictFloat | StrictStr | None = None
    lte: StrictInt | StrictFloat | StrictStr | None = None

    @model_validator(mode="after")
    def _check(self) -> Condition:
        given = {k: v for k, v in self.ranges().items() if v is not None}
        if self.eq is None and self.in_ is None and not given:
            raise ValueError("a condition needs one of eq, in, gt, gte, lt, lte")
        if self.eq is not None:
            checked_scalar(self.eq, "eq")
        for i, v in enumerate(self.in_ or []):
            checked_scalar(v, f"in[{i}]")
        kinds = set()
        for op, v in given.items():
            if isinstance(v, str):
                if date_ms(v) is None:
                    raise ValueError(f"{op}: a range on a string needs an ISO-8601 date (2026-01-31 or "
                                     f"2026-01-31T09:00:00+00:00), got {v[:40]!r}")
                kinds.add("date")
            else:
                checked_scalar(v, op)
                kinds.add("number")
        if len(kinds) > 1:
            raise ValueError("a range is all numbers or all dates, not both")
        return self

    def ranges(self) -> dict[str, int | float | str | None]:
        return {"gt": self.gt, "gte": self.gte, "lt": self.lt, "lte": self.lte}

    @property
    def on_dates(self) -> bool:
        return any(isinstance(v, str) for v in self.ranges().values())


class TimeRange(BaseModel):
    """A range of instants (timezone-aware)."""

    model_config = ConfigDict(extra="forbid")

    gt: datetime | None = None
    gte: datetime | None = None
    lt: datetime | None = None
    lte: datetime | None = None

    @model_validator(mode="after")
    def _check(self) -> TimeRange:
        given = {k: v for k, v in self.bounds().items() if v is not None}
        if not given:
            raise ValueError("a time range needs one of gt, gte, lt, lte")
        for op, v in given.items():
            if v.tzinfo is None or v.utcoffset() is None:
                raise ValueError(f"{op} must be timezone-aware (e.g. 2026-01-31T09:00:00+00:00)")
        return self

    def bounds(self) -> dict[str, datetime | None]:
        return {"gt": self.gt, "gte": self.gte, "lt": self.lt, "lte": self.lte}

    def bounds_ms(self) -> dict[str, int]:
        return {op: int(v.timestamp() * 1000) for op, v in self.bounds().items() if v is not None}


IdOrIds = Annotated[str | list[str], Field(description="One id or a list of ids (any of them).")]


class Filters(BaseModel):
    """Conditions a memory must all meet (AND). See the module docstring for the shape."""

    model_config = ConfigDict(extra="forbid")

    metadata: dict[str, Scalar | Condition] = Field(
        default_factory=dict, max_length=MAX_CONDITIONS,
        description="Dotted metadata path -> a value (equality) or a condition object.")
    session_id: IdOrIds | None = None
    topic_id: IdOrIds | None = None
    memory_types: list[MemoryType] | None = Field(None, min_length=1)
    created_at: TimeRange | None = None

    @field_validator("metadata")
    @classmethod
    def _metadata(cls, v: dict[str, Any]) -> dict[str, Condition]:
        out = {}
        for path, cond in v.items():
            checked_path(path)
            out[path] = cond if isinstance(cond, Condition) else Condition(eq=checked_scalar(cond, path))
        return out

    @field_validator("session_id", "topic_id")
    @classmethod
    def _ids(cls, v: str | list[str] | None, info: Any) -> list[str] | None:
        if v is None:
            return None
        values = [v] if isinstance(v, str) else v
        if not 1 <= len(values) <= MAX_IN:
            raise ValueError(f"{info.field_name}: give 1 to {MAX_IN} ids")
        return [validate_id(x, info.field_name) for x in values]

    def ids(self, name: str) -> list[str] | None:
        value = getattr(self, name)
        return None if value is None else [value] if isinstance(value, str) else list(value)

    def conditions(self) -> dict[str, Condition]:
        """The metadata conditions by path (a bare value was turned into ``eq`` on validation)."""
        return {p: c if isinstance(c, Condition) else Condition(eq=c) for p, c in self.metadata.items()}

    @property
    def empty(self) -> bool:
        return not (self.metadata or self.session_id or self.topic_id or self.memory_types or self.created_at)


def as_filters(value: Filters | dict[str, Any] | str | None) -> Filters | None:
    """A :class:`Filters` from a model, a dict or JSON text; a bad one is an :class:`InvalidInputError`."""
    from agent_memory.model import validated

    if value is None or isinstance(value, Filters):
        return value
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise InvalidInputError("filters must be a JSON object") from None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise InvalidInputError("filters must be a JSON object")
    result: Filters = validated(Filters, **value)
    return result


_OPERATORS = (">=", "<=", "!=", "=", ">", "<")
_OP_NAMES = {">=": "gte", "<=": "lte", ">": "gt", "<": "lt"}
_FIELDS = {"session_id", "topic_id", "memory_type", "memory_types"}


def from_expressions(items: list[str]) -> dict[str, Any]:
    """``--filter`` arguments of the CLI (``key=value``, ``key>=3``, ``key<2026-02-01``,
    ``key=a|b`` for one of several) as a filter dict; ``session_id``, ``topic_id`` and
    ``memory_type`` name those fields, ``created_at>=...`` the creation time, anything else a
    metadata path. Values read as JSON when they are (``3``, ``true``), else as text."""
    out: dict[str, Any] = {"metadata": {}}
    for item in items:
        op = next((o for o in _OPERATORS if o in item), None)
        if op is None or op == "!=":
            raise InvalidInputError(f"--filter {item[:60]!r}: use key=value, key>=v, key>v, key<=v or key<v")
        key, _, raw = item.partition(op)
        key = key.strip()
        values = [_value(v) for v in raw.split("|")] if op == "=" else [_value(raw)]
        if key == "created_at":
            if op == "=":
                raise InvalidInputError("created_at takes a range: created_at>=..., created_at<...")
            out.setdefault("created_at", {})[_OP_NAMES[op]] = raw.strip()
        elif key in _FIELDS:
            out["memory_types" if key.startswith("memory_type") else key] = [str(v) for v in values]
        elif op == "=":
            out["metadata"][key] = values[0] if len(values) == 1 else {"in": values}
        else:
            out["metadata"].setdefault(key, {})[_OP_NAMES[op]] = values[0]
    return out


def _value(raw: str) -> Any:
    raw = raw.strip()
    try:
        value = json.loads(raw)
    except ValueError:
        return raw
    return value if isinstance(value, bool | int | float) else raw
