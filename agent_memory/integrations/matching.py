"""Conditions on a JSON object, in the two spellings adapters receive: mem0's (``{"k": {"gte": 3}}``,
``AND``/``OR``/``NOT``) and LangGraph's (``{"k": {"$gte": 3}}``). Adapters apply them to the
metadata or value they return, after the service has already narrowed the search to one user.

A condition on a missing key is false (except ``ne``/``nin``); comparing values of different
types (a number with a string) is false rather than an error, as a filter on stored data must
not fail because one old item has another shape.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

_MISSING = object()
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq, "ne": operator.ne, "gt": operator.gt, "gte": operator.ge, "lt": operator.lt,
    "lte": operator.le,
    "in": lambda v, c: v in c, "nin": lambda v, c: v not in c,
    "contains": lambda v, c: isinstance(v, str | list) and c in v,
    "icontains": lambda v, c: isinstance(v, str) and str(c).casefold() in v.casefold(),
}
_LOGIC: dict[str, Callable[[list[bool]], bool]] = {
    "AND": all, "$and": all, "OR": any, "$or": any,
    "NOT": lambda found: not any(found), "$not": lambda found: not any(found)}


def check(conditions: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` for an operator this module does not know (before any search runs)."""
    for key, cond in conditions.items():
        if key in _LOGIC:
            if not isinstance(cond, list) or not cond:
                raise ValueError(f"{key} needs a non-empty list of conditions")
            for sub in cond:
                check(sub)
        elif isinstance(cond, Mapping):
            unknown = [op for op in cond if op.lstrip("$") not in _COMPARE]
            if unknown:
                raise ValueError(f"unsupported filter operator {unknown[0]!r} on {key!r}")


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    """True when ``value`` meets every condition (AND), with ``AND``/``OR``/``NOT`` lists nested."""
    return all(_one(value, key, cond) for key, cond in conditions.items())


def _one(value: Mapping[str, Any], key: str, cond: Any) -> bool:
    if key in _LOGIC and isinstance(cond, list):
        return bool(_LOGIC[key]([matches(value, sub) for sub in cond]))
    got = value.get(key, _MISSING)
    if not isinstance(cond, Mapping):
        return got is not _MISSING if cond == "*" else got == cond
    return all(_compare(got, op.lstrip("$"), want) for op, want in cond.items())


def _compare(got: Any, op: str, want: Any) -> bool:
    if got is _MISSING:
        return op in ("ne", "nin")
    try:
        return bool(_COMPARE[op](got, want))
    except TypeError:
        return False
