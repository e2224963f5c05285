"""The whole-profile question patterns (agent_memory.judge.profile): what they match and the
look-alikes they must not (a topic named after "me", the assistant itself, knowledge)."""

from __future__ import annotations

import pytest

from agent_memory.judge.profile import asks_about_whole_user


@pytest.mark.parametrize("query", [
    "what do you know about me?", "tell me everything you've saved about me, I want to check it's correct",
    "hey, what have you got on me so far?", "what's in my profile", "do you know who I am?",
    "你了解我吗", "你都记了我哪些事", "把你那边存的关于我的信息都列出来吧", "关于我，你知道些什么？", "你知道我是谁吗",
])
def test_questions_about_the_user_as_a_whole(query: str) -> None:
    assert asks_about_whole_user(query)


@pytest.mark.parametrize("query", [
    "what do you remember about my trip to Portugal", "tell me about yourself", "what do you know about black holes?",
    "what do you know about memes", "关于我儿子，你都记了些啥", "你知道我爱吃啥，今晚给我推荐个外卖",
    "你知道我国有多少个省",
    "介绍一下你自己", "I'd like to know more about React hooks", "关于我的工作，你都知道些什么",
])
def test_look_alikes_and_questions_with_a_topic(query: str) -> None:
    assert not asks_about_whole_user(query)


def test_the_patterns_never_fire_on_a_general_query_of_any_round() -> None:
    """The committed corpus through `eval recall-gate`'s count: a pattern that starts matching
    general questions ("what do you know about black holes?") fails here; so does one that stops
    finding round 13's held-out questions about the whole user (0.618 when committed)."""
    from agent_memory.evaluation.judge_eval import whole_user_questions

    counts = whole_user_questions()
    for split in ("heldout", "train"):
        assert counts[split]["general/all_rounds"]["fired"] == 0, split
        assert counts[split]["round_13/part"]["fired"] == 0, split
    assert counts["heldout"]["round_13/whole"]["share"] >= 0.55
    assert counts["heldout"]["general/all_rounds"]["of"] >= 498
