import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.errors import InvalidInputError
from agent_memory.filters import MemoryFilter, quote
from agent_memory.ids import ID_PATTERN

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
