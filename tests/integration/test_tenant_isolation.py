"""Tenant isolation as a property: hypothesis interleaves users and operations (remember, recall,
get, versions, timeline, forget, restore) on one store and index, and no read ever returns a
memory of another user, and no write ever touches one."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from agent_memory import Memory, NotFoundError, Settings
from agent_memory.embed.base import Embedder

TEXTS = ["I live in Lisbon", "我住在上海", "My dog is called Rex", "我喜欢喝绿茶", "I work at Acme",
         "My sister lives in Osaka", "I am allergic to peanuts", "我下周去北京出差"]
QUERIES = ["where do I live", "我住在哪里", "pets", "饮料", "work", "family", "allergies", "出差"]
TOPICS = [None, "city", "job"]


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
            self.owner: dict[str, str] = {}

        @rule(target=memories, who=st.integers(0, 2), text=st.sampled_from(TEXTS), topic=st.sampled_from(TOPICS))
        def remember(self, who: int, text: str, topic: str | None) -> str:
            [mid] = shared.remember(user_id=self.users[who], content=text, topic_id=topic)
            self.owner[mid] = self.users[who]
            return mid

        @rule(who=st.integers(0, 2), query=st.sampled_from(QUERIES))
        def recall(self, who: int, query: str) -> None:
            for hit in shared.recall(user_id=self.users[who], query=query, top_k=20, min_score=-1.0,
                                     include_inferred=True, log=False):
                assert self.owner[hit.memory_id] == self.users[who]

        @rule(who=st.integers(0, 2), mid=memories)
        def get(self, who: int, mid: str) -> None:
            if self.owner[mid] == self.users[who]:
                assert shared.get(mid, user_id=self.users[who])["record"]["user_id"] == self.users[who]
            else:
                with pytest.raises(NotFoundError):
                    shared.get(mid, user_id=self.users[who])

        @rule(who=st.integers(0, 2), mid=memories, restore=st.booleans())
        def forget_or_restore(self, who: int, mid: str, restore: bool) -> None:
            act = shared.restore if restore else shared.forget
            if self.owner[mid] == self.users[who]:
                act(mid, user_id=self.users[who])
            else:
                with pytest.raises(NotFoundError):
                    act(mid, user_id=self.users[who])

        @rule(who=st.integers(0, 2), topic=st.sampled_from(["city", "job"]))
        def versions(self, who: int, topic: str) -> None:
            for v in shared.versions(topic, user_id=self.users[who]):
                assert v.user_id == self.users[who] and self.owner[v.id] == self.users[who]

        @invariant()
        def timelines_hold_only_their_own(self) -> None:
            if not hasattr(self, "users"):
                return
            for user in self.users:
                for rec in shared.timeline(user, include_inactive=True, include_deleted=True, limit=1000):
                    assert rec.user_id == user and self.owner[rec.id] == user

    run_state_machine_as_test(Tenants, settings=settings(
        max_examples=12, stateful_step_count=12, deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
