"""Working memory semantics on the in-process store, with a fake clock."""

from __future__ import annotations

import pytest

from agent_memory.errors import ContentTooLargeError, InvalidInputError
from agent_memory.working import InProcessWorkingStore, WorkingMemory


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_set_get_expire_delete_and_namespaces() -> None:
    clock = Clock()
    store = InProcessWorkingStore(clock)
    a = WorkingMemory(store, "u1", "s1", default_ttl_s=60)
    a.set("step", {"n": 3, "of": 5})
    a.set("draft", "第一稿", ttl_s=5)
    assert a.get("step") == {"n": 3, "of": 5} and a.items() == {"draft": "第一稿", "step": {"n": 3, "of": 5}}
    assert WorkingMemory(store, "u1", "s2", 60).items() == {}  # other session
    assert WorkingMemory(store, "u2", "s1", 60).get("step") is None  # other user, same session id
    clock.now += 6
    assert a.get("draft", "gone") == "gone" and list(a.items()) == ["step"]
    clock.now += 60
    assert a.items() == {}
    a.set("x", 1)
    assert a.delete("x") is True and a.delete("x") is False
    a.set("y", [1, 2])
    a.set("z", None)
    assert a.clear() == 2 and a.items() == {}


def test_bad_keys_values_and_ttls_are_refused() -> None:
    w = WorkingMemory(InProcessWorkingStore(), "u1", "s1", 60)
    for key in ["../x", "a|b", "k*", ""]:
        with pytest.raises(InvalidInputError):
            w.set(key, 1)
    with pytest.raises(InvalidInputError, match="JSON"):
        w.set("k", object())
    with pytest.raises(ContentTooLargeError):
        w.set("k", "x" * 70_000)
    for ttl in (0, -1, 31 * 86_400):
        with pytest.raises(InvalidInputError, match="ttl"):
            w.set("k", 1, ttl_s=ttl)
    with pytest.raises(InvalidInputError):
        WorkingMemory(InProcessWorkingStore(), "u1", "s/1", 60)
