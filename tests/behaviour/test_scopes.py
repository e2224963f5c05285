"""Agent and run scopes on every backend: an agent sees its own memories and the user's shared ones,
never another agent's; a run narrows the same way; erasing a scope removes exactly that scope."""

from __future__ import annotations

import pytest

from agent_memory import InvalidInputError, Memory, NotFoundError
from tests.conftest import new_user


def _ids(hits: list) -> set[str]:  # type: ignore[type-arg]
    return {h.memory_id for h in hits}


def _remember_scoped(memory: Memory, u: str) -> dict[str, str]:
    """One memory per scope, all about the same thing, so only the scope can tell them apart."""
    ids = {}
    for name, agent, run in (("shared", None, None), ("a", "planner", None), ("b", "coder", None),
                             ("a_r1", "planner", "r1"), ("a_r2", "planner", "r2"), ("r1", None, "r1")):
        [ids[name]] = memory.remember(user_id=u, content=f"The project codename is Falcon ({name})",
                                      agent_id=agent, run_id=run)
    return ids


def test_an_agent_sees_its_own_and_shared_memories_never_another_agents(memory: Memory) -> None:
    u = new_user()
    ids = _remember_scoped(memory, u)

    def recall(**scope: str) -> set[str]:
        return _ids(memory.recall(user_id=u, query="project codename", min_score=-1, top_k=50, gate=False,
                                  **scope))

    assert recall() == set(ids.values())  # the user's own view: everything
    assert recall(agent_id="planner") == {ids["shared"], ids["a"], ids["a_r1"], ids["a_r2"], ids["r1"]}
    assert recall(agent_id="coder") == {ids["shared"], ids["b"], ids["r1"]}
    assert recall(agent_id="nobody") == {ids["shared"], ids["r1"]}
    assert recall(agent_id="planner", run_id="r1") == {ids["shared"], ids["a"], ids["a_r1"], ids["r1"]}
    assert recall(run_id="r2") == {ids["shared"], ids["a"], ids["b"], ids["a_r2"]}
    hit = next(h for h in memory.recall(user_id=u, query="project codename", min_score=-1, top_k=50, gate=False)
               if h.memory_id == ids["a_r1"])
    assert (hit.agent_id, hit.run_id) == ("planner", "r1")

    listed = {r.id: r for r in memory.timeline(u, agent_id="coder")}
    assert set(listed) == {ids["shared"], ids["b"], ids["r1"]}
    assert listed[ids["b"]].scope == "agent:coder" and listed[ids["shared"]].scope == "shared"
    assert {r.id for r in memory.timeline(u)} == set(ids.values())


def test_get_and_forget_respect_the_agent(memory: Memory) -> None:
    u = new_user()
    [mine] = memory.remember(user_id=u, content="My bank PIN hint is the cat", agent_id="secretary")
    for call in (memory.get, memory.forget, memory.restore):
        with pytest.raises(NotFoundError):
            call(mine, user_id=u, agent_id="intruder")
        with pytest.raises(NotFoundError):
            call(mine, user_id=new_user(), agent_id="secretary")
    assert memory.get(mine, user_id=u, agent_id="secretary")["record"]["agent_id"] == "secretary"
    memory.forget(mine, user_id=u, agent_id="secretary")
    assert memory.timeline(u, include_deleted=True)[0].deleted_at is not None


def test_topics_and_duplicates_stay_within_one_scope(memory: Memory) -> None:
    u = new_user()
    [shared] = memory.remember(user_id=u, content="I live in Lisbon", topic_id="city")
    [a] = memory.remember(user_id=u, content="I live in Porto", topic_id="city", agent_id="travel")
    [b] = memory.remember(user_id=u, content="I live in Lisbon", agent_id="tax")  # same words, other scope
    rows = {r.id: r for r in memory.timeline(u, include_inactive=True)}
    assert all(rows[i].is_active for i in (shared, a, b))
    assert [v.id for v in memory.versions("city", user_id=u, agent_id="tax")] == [shared]
    [a2] = memory.remember(user_id=u, content="I moved to Faro", topic_id="city", agent_id="travel")
    rows = {r.id: r for r in memory.timeline(u, include_inactive=True)}
    assert rows[shared].is_active and not rows[a].is_active and rows[a2].is_active


def test_erasing_a_scope_removes_exactly_it(memory: Memory) -> None:
    u = new_user()
    ids = _remember_scoped(memory, u)
    memory.recall(user_id=u, query="codename", agent_id="planner", gate=False)
    memory.recall(user_id=u, query="codename", agent_id="coder", gate=False)
    memory.recall(user_id=u, query="codename", gate=False, min_score=-1, top_k=20)  # the user's view: all scopes
    counts = memory.erase_user(u, agent_id="planner", run_id="r1")
    assert counts["index_entries"] == 1 and counts["object_versions"] >= 1
    gone = {r.id for r in memory.timeline(u)} ^ set(ids.values())
    assert gone == {ids["a_r1"]}
    counts = memory.erase_user(u, agent_id="planner")
    assert counts["index_entries"] == 2 and counts["recall_logs"] == 1
    assert {r.id for r in memory.timeline(u, include_inactive=True, include_deleted=True)} == {
        ids["shared"], ids["b"], ids["r1"]}
    assert not [k for k in memory.store.list_keys(f"memories/{u}/") if ids["a"] in k or ids["a_r2"] in k]
    logs = memory.recalls(u)
    assert [r["agent_id"] for r in logs] == [None, "coder"]  # the planner's recalls went
    text = str(logs[0]["candidates"])
    assert "(erased)" in text and "(a)" not in text and "(shared)" in text  # and its memories' text
    counts = memory.erase_user(u)  # the whole user, every scope
    assert counts["index_entries"] == 3
    assert list(memory.store.list_keys(f"memories/{u}/")) == []


@pytest.mark.parametrize("hostile", ['a" or agent_id != "', "../x", "x" * 200, "用户", "a\nb", ""])
def test_hostile_scopes_are_refused_never_widened(memory: Memory, hostile: str) -> None:
    u = new_user()
    memory.remember(user_id=u, content="I like tea", agent_id="a1")
    for call in (lambda: memory.remember(user_id=u, content="x", agent_id=hostile),
                 lambda: memory.remember(user_id=u, content="x", run_id=hostile),
                 lambda: memory.recall(user_id=u, query="tea", agent_id=hostile),
                 lambda: memory.recall(user_id=u, query="tea", run_id=hostile),
                 lambda: memory.timeline(u, agent_id=hostile),
                 lambda: memory.erase_user(u, agent_id=hostile),
                 lambda: memory.erase_user(u, run_id=hostile)):
        with pytest.raises(InvalidInputError):
            call()
    assert len(memory.timeline(u)) == 1
