from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.errors import InvalidInputError
from agent_memory.ids import memory_id_for_key, new_memory_id, validate_id, validate_memory_id
from agent_memory.model import RecallRequest, RememberRequest

HOSTILE = [
    'u1" or user_id != "', "u1' || 1==1", "../x", "/etc/passwd", "a/b", "%2e%2e", "a b", "",
    "x" * 129, "ü", "用户", "u1\n", "u1\\", 'u"', "..", ".", None, 42,
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_ids_are_refused(value: object) -> None:
    with pytest.raises(InvalidInputError):
        validate_id(value)


@pytest.mark.parametrize("value", ["u1", "user.name", "tenant:42", "A-b_c", "x" * 128, "..a"])
def test_valid_ids_pass(value: str) -> None:
    assert validate_id(value) == value


def test_invalid_input_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="user_id"):
        validate_id("a/b", "user_id")


def test_memory_ids_are_time_sortable_and_strict() -> None:
    a, b = new_memory_id(), new_memory_id()
    assert validate_memory_id(a) == a
    assert a[:12] <= b[:12]
    # strictly increasing in a process, within a millisecond too: a batch sorts in the order it was made
    batch = [new_memory_id() for _ in range(2000)]
    assert batch == sorted(batch) and len(set(batch)) == len(batch) and batch[0] > b
    assert all(validate_memory_id(i) == i for i in batch[:10])
    with pytest.raises(InvalidInputError):
        validate_memory_id("../" + a[3:])
    assert memory_id_for_key("u1", "k") == memory_id_for_key("u1", "k")
    assert memory_id_for_key("u1", "k") != memory_id_for_key("u2", "k")


def test_a_clock_that_steps_back_or_a_full_random_part_never_breaks_the_order(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    from agent_memory import ids

    ahead = int(time.time() * 1000) + 10_000  # the last id came from a clock 10 s ahead
    monkeypatch.setattr(ids, "_last", [ahead, (1 << 80) - 1])
    last = f"{ahead:012x}{(1 << 80) - 1:020x}"
    nxt = new_memory_id()
    assert nxt > last and int(nxt[:12], 16) == ahead + 1 and validate_memory_id(nxt) == nxt


def test_remember_request_needs_exactly_one_of_content_or_messages() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        RememberRequest(user_id="u1")
    with pytest.raises(ValueError, match="exactly one"):
        RememberRequest(user_id="u1", content="x", messages=[{"role": "user", "content": "y"}])
    with pytest.raises(ValueError, match="blank"):
        RememberRequest(user_id="u1", content="   ")


def test_timestamps_must_be_aware_and_in_range() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        RememberRequest(user_id="u1", content="x", created_at=datetime(2024, 1, 1))
    with pytest.raises(ValueError, match="out of range"):
        RememberRequest(user_id="u1", content="x", created_at=datetime.now(UTC) + timedelta(days=30))
    with pytest.raises(ValueError, match="out of range"):
        RememberRequest(user_id="u1", content="x", created_at=datetime(1960, 1, 1, tzinfo=UTC))
    ok = RememberRequest(user_id="u1", content="x", created_at=datetime(2024, 1, 1, 9, tzinfo=UTC))
    assert ok.created_at is not None and ok.created_at.tzinfo is not None


def test_unknown_types_sources_and_extra_fields_are_refused() -> None:
    with pytest.raises(ValueError):
        RememberRequest(user_id="u1", content="x", memory_type="secret")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RememberRequest(user_id="u1", content="x", source="admin")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        RememberRequest(user_id="u1", content="x", importance=1.5)
    with pytest.raises(ValueError):
        RecallRequest(user_id="u1", query="q", memory_types=['fact" or 1==1'])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        RecallRequest(user_id="u1", query="q", surprise=1)  # type: ignore[call-arg]


@pytest.mark.parametrize("value", [0.0, 1.0, 1.5, -0.2])
def test_a_change_threshold_outside_zero_to_one_is_refused(value: float, monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    from agent_memory.config import Settings

    with pytest.raises(ValidationError, match="change_threshold"):
        Settings(change_threshold=value)
    monkeypatch.setenv("AGENT_MEMORY_CHANGE_THRESHOLD", "0.9")
    assert Settings().change_threshold == 0.9
