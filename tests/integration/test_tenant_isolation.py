"""Tenant isolation as a property: hypothesis interleaves users, their agents and operations
(remember, recall, get, versions, timeline, forget, restore) on one store and index, and no read
ever returns a memory of another user, or of another agent of the same user when an agent asks;
no write ever touches one. Agents are held to the same standard as users."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from agent_memory import Memory, NotFoundError, Settings
from agent_memory.embed.base import Embedder

TEXTS = ["I live in Lisbon", "我住在上海", "My dog is called Rex", "我喜欢喝绿茶", "I work at Acme",
         "My sister lives in Osaka", "I am allergic to peanuts", "我下周去北京出差"]
QUERIES = ["where do I live", "我住在哪里", "pets", "饮料", "work", "family", "allergies", "出差"]
TOPICS = [None, "city", "job"]
AGENTS = [None, "planner", "coder"]
"""None: the user's shared memory (seen by every agent) or, when reading, the user's own view."""


def sees(owner: tuple[str, str | None], user: str, agent: str | None) -> bool:
    """The rule under test: one's own user, and the memory is shared or the reader's own agent's
    (a reader without an agent is the user, who sees all their agents' memories)."""
    return owner[0] == user and (agent is None or owner[1] in (None, agent))


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    m = Memory(Settings(data_dir=Path(tmp_path_factory.mktemp("tenants")), consistency_level="Strong"),
               embedder=embedder)
    yield m
    m.close()


def test_no_operation_ever_crosses_users(shared: Memory) -> None:
    class Tenants(RuleBasedStateMachine):
        memories = Bundle("memories")

        @initialize()
        def users(self) -> None:
            run = uuid.uuid4().hex[:6]
            self.users = [f"t{run}-{name}" for name in ("ana", "bo", "cy")]
            self.owner: dict[str, tuple[str, str | None]] = {}

        @rule(target=memories, who=st.integers(0, 2), agent=st.sampled_from(AGENTS), text=st.sampled_from(TEXTS),
              topic=st.sampled_from(TOPICS))
        def remember(self, who: int, agent: str | None, text: str, topic: str | None) -> str:
            [mid] = shared.remember(user_id=self.users[who], content=text, topic_id=topic, agent_id=agent)
            self.owner[mid] = (self.users[who], agent)
            return mid

        @rule(who=st.integers(0, 2), agent=st.sampled_from(AGENTS), query=st.sampled_from(QUERIES))
        def recall(self, who: int, agent: str | None, query: str) -> None:
            for hit in shared.recall(user_id=self.users[who], query=query, top_k=20, min_score=-1.0,
                                     include_inferred=True, log=False, gate=False, agent_id=agent):
                assert sees(self.owner[hit.memory_id], self.users[who], agent)

        @rule(who=st.integers(0, 2), agent=st.sampled_from(AGENTS), mid=memories)
        def get(self, who: int, agent: str | None, mid: str) -> None:
            if sees(self.owner[mid], self.users[who], agent):
                assert shared.get(mid, user_id=self.users[who], agent_id=agent)["record"]["user_id"] == self.users[who]
            else:
                with pytest.raises(NotFoundError):
                    shared.get(mid, user_id=self.users[who], agent_id=agent)

        @rule(who=st.integers(0, 2), agent=st.sampled_from(AGENTS), mid=memories, restore=st.booleans())
        def forget_or_restore(self, who: int, agent: str | None, mid: str, restore: bool) -> None:
            act = shared.restore if restore else shared.forget
            if sees(self.owner[mid], self.users[who], agent):
                act(mid, user_id=self.users[who], agent_id=agent)
            else:
                with pytest.raises(NotFoundError):
                    act(mid, user_id=self.users[who], agent_id=agent)

        @rule(who=st.integers(0, 2), agent=st.sampled_from(AGENTS), topic=st.sampled_from(["city", "job"]))
        def versions(self, who: int, agent: str | None, topic: str) -> None:
            for v in shared.versions(topic, user_id=self.users[who], agent_id=agent):
                assert v.user_id == self.users[who] and sees(self.owner[v.id], self.users[who], agent)

        @invariant()
        def timelines_hold_only_their_own(self) -> None:
            if not hasattr(self, "users"):
                return
            for user in self.users:
                for agent in AGENTS:
                    for rec in shared.timeline(user, include_inactive=True, include_deleted=True, limit=1000,
                                               agent_id=agent):
                        assert rec.user_id == user and sees(self.owner[rec.id], user, agent)
                        assert rec.agent_id == self.owner[rec.id][1]

    run_state_machine_as_test(Tenants, settings=settings(
        max_examples=12, stateful_step_count=12, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))


VALUES = st.text(st.characters(blacklist_categories=["Cs", "Cc"]), min_size=0, max_size=12) | st.sampled_from(
    ['x" or user_id != "', "x' || 1==1", 'x\\" or true or \\"', '"', "\\", "]", 'a"]["b', "或者", "\u2028"])


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    """No duplicate or change detection: every note stays active, so only the filter decides."""
    m = Memory(Settings(data_dir=Path(tmp_path_factory.mktemp("filters")), consistency_level="Strong",
                        deduplicate=False, detect_changes=False), embedder=embedder)
    yield m
    m.close()


def test_metadata_filters_never_widen(plain: Memory) -> None:
    """Hypothesis draws metadata values (quotes, backslashes, brackets, any printable Unicode) and a
    filter value; the index returns exactly the memories holding that value, for this user only."""
    shared = plain

    @given(stored=st.lists(VALUES, min_size=1, max_size=3), asked=VALUES, numeric=st.integers(-5, 5))
    @settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    def check(stored: list[str], asked: str, numeric: int) -> None:
        u, other = f"f{uuid.uuid4().hex[:8]}", f"g{uuid.uuid4().hex[:8]}"
        owner = {}
        for i, value in enumerate([*stored, asked]):
            [mid] = shared.remember(user_id=u, content=f"note number {i} about {value!r}", metadata={"v": value,
                                                                                                  "n": i - 2})
            owner[mid] = (value, i - 2)
        shared.remember(user_id=other, content="note about the same thing", metadata={"v": asked, "n": 0})
        for filters, want in (({"metadata": {"v": asked}}, {m for m, (v, _) in owner.items() if v == asked}),
                              ({"metadata": {"v": {"in": stored}}}, {m for m, (v, _) in owner.items() if v in stored}),
                              ({"metadata": {"n": {"gte": numeric}}},
                               {m for m, (_, n) in owner.items() if n >= numeric})):
            got = {h.memory_id for h in shared.recall(user_id=u, query="note", filters=filters, min_score=-1.0,
                                                      top_k=20, gate=False, log=False)}
            assert got == want, filters
            assert {r.id for r in shared.timeline(u, filters=filters)} == want

    check()
