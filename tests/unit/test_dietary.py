"""Dietary constraints in recall: which requests and memories the word lists read, and which slots
a restriction takes (a free one, else the lowest chosen memory's; never the best match's)."""

from datetime import UTC, datetime

import pytest

from agent_memory import dietary
from agent_memory.index.base import SearchHit
from agent_memory.model import IndexRecord
from agent_memory.ranking import Ranked, RankingParams, rank

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def hit(mid: str, summary: str, sim: float) -> SearchHit:
    rec = IndexRecord(id=mid, user_id="u", session_id="s", memory_type="fact", summary=summary, importance=0.5,
                      created_at=NOW, topic_id=None, is_active=True, deleted_at=None, source="user_said",
                      storage_key=f"k/{mid}")
    return SearchHit(rec, sim)


@pytest.mark.parametrize("query", ["quick dinner recipe for tonight, 20 min max", "pack me a snack for the flight",
                                   "find a restaurant for the team in Austin", "去广州出差几天，附近有啥吃饭的地方推荐",
                                   "周末想下厨，推荐个菜谱"])
def test_food_requests_are_recognised(query: str) -> None:
    assert dietary.names_food(query)


@pytest.mark.parametrize("query", ["what's the capital of Australia?", "help me plan my marathon training",
                                   "帮我写个对象池", "where do I live?"])
def test_other_requests_are_not(query: str) -> None:
    assert not dietary.names_food(query)


@pytest.mark.parametrize("text", ["I'm pescatarian", "Jonah has a peanut allergy", "I'm lactose intolerant",
                                  "I don't eat pork, never have", "I have type 2 diabetes", "The user is gluten-free",
                                  "I CAN'T EAT shellfish", "Dairy-free since March", "no pork for me",
                                  "我对花生过敏", "我是回族，不吃猪肉", "我吃素"])
def test_restrictions_are_recognised(text: str) -> None:
    assert dietary.states_restriction(text)


@pytest.mark.parametrize("text", ["I love sushi", "I live in Austin", "我住在杭州滨江", "I cook dinner every night"])
def test_other_memories_are_not_restrictions(text: str) -> None:
    assert not dietary.states_restriction(text)


DEFAULT = [hit("job", "I work night shifts", 0.5), hit("film", "I can't stand horror movies", 0.3),
           hit("diet", "I'm pescatarian", 0.05), hit("city", "I live in Austin", 0.04)]


def ranked(top_k: int = 3, *memories: SearchHit) -> list[Ranked]:
    return rank(list(memories) or DEFAULT, NOW, RankingParams(min_score=0.2), top_k=top_k)


def chosen(out: list[Ranked]) -> list[tuple[str, str]]:
    return [(r.hit.record.id, r.reason) for r in out if r.chosen]


def test_a_restriction_takes_a_free_slot_after_the_chosen() -> None:
    out = dietary.make_room(ranked(3), "quick dinner recipe for tonight", 3)
    assert chosen(out) == [("job", "chosen"), ("film", "chosen"), ("diet", dietary.REASON)]
    assert [r.hit.record.id for r in out if not r.chosen] == ["city"]
    assert len(out) == 4


def test_a_restriction_displaces_the_lowest_chosen_memory_when_no_slot_is_free() -> None:
    out = dietary.make_room(ranked(2), "dinner ideas", 2)
    assert chosen(out) == [("job", "chosen"), ("diet", dietary.REASON)]
    assert [(r.hit.record.id, r.reason) for r in out if not r.chosen] == [("film", "beyond_top_k"),
                                                                         ("city", "below_min_score")]


def test_at_most_two_restrictions_counting_those_chosen_on_their_own() -> None:
    memories = [hit("job", "I work night shifts", 0.5), hit("nuts", "I'm allergic to peanuts", 0.4),
                hit("film", "I like horror movies", 0.3), hit("vegan", "I'm vegan", 0.05),
                hit("pork", "I don't eat pork", 0.04)]
    out = dietary.make_room(ranked(3, *memories), "what snack should I pack?", 3)
    assert chosen(out) == [("job", "chosen"), ("nuts", "chosen"), ("vegan", dietary.REASON)]
    only = dietary.make_room(ranked(1, *memories), "what snack should I pack?", 1)
    assert chosen(only) == [("job", "chosen")]  # the best match always keeps its slot


def test_unchanged_without_food_or_without_an_answer() -> None:
    assert chosen(dietary.make_room(ranked(3), "where do I work?", 3)) == [("job", "chosen"), ("film", "chosen")]
    nothing = ranked(3, hit("diet", "I'm pescatarian", 0.05))
    assert not any(r.chosen for r in dietary.make_room(nothing, "dinner ideas", 3))
