import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.conditions import as_filters, from_expressions
from agent_memory.errors import InvalidInputError
from agent_memory.filters import DATES_KEY, MemoryFilter, index_metadata, quote, stored_metadata, where_terms
from agent_memory.ids import ID_PATTERN
from agent_memory.metadata import KEY_PATTERN, check_metadata, date_ms

HOSTILE = ['u1" or user_id != "', "u1' || 1==1", 'u1\\" or true or \\"', "u1\n", "../x", "x" * 200, "用户"]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_user_ids_never_reach_an_expression(value: str) -> None:
    with pytest.raises(InvalidInputError):
        MemoryFilter(user_id=value).to_expr()


@pytest.mark.parametrize("field", ["topic_id", "session_id"])
@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_optional_ids_are_refused(field: str, value: str) -> None:
    with pytest.raises(InvalidInputError):
        MemoryFilter(user_id="u1", **{field: value}).to_expr()


@pytest.mark.parametrize("types", [['fact" or 1==1'], ["fact", "x"], []])
def test_memory_types_are_a_closed_set(types: list[str]) -> None:
    with pytest.raises(InvalidInputError):
        MemoryFilter(user_id="u1", memory_types=types).to_expr()


def test_memory_ids_must_be_ours() -> None:
    with pytest.raises(InvalidInputError):
        MemoryFilter(user_id="u1", memory_ids=['x" or id != "']).to_expr()


def test_default_filter_is_scoped_to_user_active_undeleted_user_said() -> None:
    expr = MemoryFilter(user_id="u1").to_expr()
    assert expr == ('user_id == "u1" and is_active == true and deleted_at == 0 '
                    'and source in ["user_said"]')


def test_full_filter() -> None:
    expr = MemoryFilter(user_id="t:1", memory_types=["fact", "plan"], sources=None, min_importance=0.3,
                        topic_id="drink", active_only=False, include_deleted=True).to_expr()
    assert expr == ('user_id == "t:1" and memory_type in ["fact", "plan"] and importance >= 0.3 '
                    'and topic_id == "drink"')


def test_importance_floor_must_be_a_probability() -> None:
    with pytest.raises(InvalidInputError):
        MemoryFilter(user_id="u1", min_importance=2).to_expr()


@given(st.text(max_size=50))
def test_quote_round_trips_and_cannot_break_out(value: str) -> None:
    q = quote(value)
    assert json.loads(q) == value
    inner = q[1:-1]
    # every double quote inside the literal is escaped
    assert not re.search(r'(?<!\\)(\\\\)*"', inner)


@given(st.from_regex(ID_PATTERN, fullmatch=True))
def test_every_valid_id_makes_one_equality_term(value: str) -> None:
    if value in {".", ".."}:
        return
    expr = MemoryFilter(user_id=value, active_only=False, include_deleted=True, sources=None).to_expr()
    assert expr == f'user_id == "{value}"'


# --------------------------------------------------------------- metadata filters (issue 21)


def _where(filters: dict[str, Any]) -> str:
    where = as_filters(filters)
    assert where is not None
    return " and ".join(where_terms(where))


def test_each_condition_becomes_its_term() -> None:
    assert _where({"metadata": {"project": "apollo", "n": {"gte": 2, "lt": 3.5}, "tag": {"in": ["a", 1, True]},
                                "team.lead": "ana", "due": {"gte": "2026-01-01"}},
                   "session_id": ["s1", "s2"], "topic_id": "t", "memory_types": ["fact"],
                   "created_at": {"lt": "2026-01-01T00:00:00Z"}}) == (
        'session_id in ["s1", "s2"] and topic_id in ["t"] and memory_type in ["fact"] and created_at < 1767225600000'
        ' and metadata["project"] == "apollo" and metadata["n"] >= 2 and metadata["n"] < 3.5'
        ' and (metadata["tag"] == "a" or metadata["tag"] == 1 or metadata["tag"] == true)'
        ' and metadata["team"]["lead"] == "ana" and metadata["~dates"]["due"] >= 1767225600000')


@pytest.mark.parametrize("filters", [
    {"metadata": {'a"]': 1}}, {"metadata": {"a]": 1}}, {"metadata": {"a b": 1}}, {"metadata": {"": 1}},
    {"metadata": {"a..b": 1}}, {"metadata": {"~dates": 1}}, {"metadata": {"a.b.c.d.e.f": 1}},
    {"metadata": {"x": "a\nb"}}, {"metadata": {"x": "\x00"}}, {"metadata": {"x": "\ud800"}},
    {"metadata": {"x": {"gte": "tomorrow"}}}, {"metadata": {"x": {"gte": "2026-13-45"}}},
    {"metadata": {"x": {"gte": 1, "lte": "2026-01-01"}}}, {"metadata": {"x": {"eq": [1]}}},
    {"metadata": {"x": {"in": list(range(101))}}}, {"metadata": {"x": 2**60}}, {"metadata": {"x": float("inf")}},
    {"metadata": {f"k{i}": 1 for i in range(17)}}, {"metadata": {"x": {"regex": ".*"}}},
    {"session_id": "s 1"}, {"topic_id": ["ok", "no/pe"]}, {"memory_types": []}, {"created_at": {}},
    {"created_at": {"gte": "2026-01-01T00:00:00"}}, {"anything": 1},
])
def test_hostile_or_malformed_filters_are_refused(filters: dict[str, Any]) -> None:
    with pytest.raises(InvalidInputError):
        _where(filters)


@given(st.text(max_size=40))
def test_a_metadata_key_is_refused_or_a_plain_key(key: str) -> None:
    try:
        expr = _where({"metadata": {key: 1}})
    except InvalidInputError:
        assert not all(KEY_PATTERN.fullmatch(k) for k in key.split(".")) or key.count(".") >= 5
        return
    assert expr == "metadata" + "".join(f'["{k}"]' for k in key.split(".")) + " == 1"


@given(st.text(max_size=60))
def test_a_string_value_is_refused_or_one_quoted_literal(value: str) -> None:
    try:
        expr = _where({"metadata": {"k": value}})
    except InvalidInputError:
        assert any(ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF for c in value)
        return
    literal = expr.removeprefix('metadata["k"] == ')
    assert json.loads(literal) == value
    assert not re.search(r'(?<!\\)(\\\\)*"', literal[1:-1])  # no quote closes the literal early


@given(st.recursive(st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.from_regex(KEY_PATTERN, fullmatch=True), inner, max_size=3), max_leaves=12))
def test_metadata_is_accepted_exactly_when_within_bounds(value: Any) -> None:
    meta = {"v": value}
    try:
        check_metadata(meta)
    except ValueError as exc:
        assert any(word in str(exc) for word in ("max depth", "max keys", "Unicode")), exc
        return
    assert stored_metadata(index_metadata(meta)) == meta


def test_dates_are_indexed_beside_the_metadata_as_instants() -> None:
    meta = {"due": "2026-05-20T10:00:00+02:00", "day": "2026-05-20", "n": "2026", "x": {"at": "2026-05-20 08:00"}}
    indexed = index_metadata(meta)
    assert indexed[DATES_KEY] == {"due": date_ms("2026-05-20T08:00:00Z"), "day": date_ms("2026-05-20T00:00:00Z"),
                                  "x.at": date_ms("2026-05-20T08:00:00+00:00")}
    assert stored_metadata(indexed) == meta


def test_cli_expressions() -> None:
    assert from_expressions(["project=apollo", "n>=2", "tag=a|b", "due<2026-02-01", "session_id=s1",
                             "memory_type=fact", "created_at>=2026-01-01T00:00:00Z", "flag=true"]) == {
        "metadata": {"project": "apollo", "n": {"gte": 2}, "tag": {"in": ["a", "b"]}, "due": {"lt": "2026-02-01"},
                     "flag": True},
        "session_id": ["s1"], "memory_types": ["fact"], "created_at": {"gte": "2026-01-01T00:00:00Z"}}
    with pytest.raises(InvalidInputError):
        from_expressions(["project!=apollo"])
