"""Questions typed without their mark get one before the trigger reads them; statements that
merely look like questions (a dropped subject, a "when" clause, "啥都吃") do not."""

from __future__ import annotations

import pytest

from agent_memory.pipeline.questions import is_unmarked_question, marked_questions


@pytest.mark.parametrize("text", [
    "any hostels there", "is breville dual boiler overkill", "also is there a way to find unused models",
    "whats the best way to keep our phones working", "do i need a special pan", "can the 529 pay for his dorm",
    "ok so how far ahead can i make it", "短租有啥靠谱渠道吗", "手机上哪里可以找到广场舞的歌", "重庆还能活吗",
    "这个要不要提前订", "为啥我的代码跑不起来", "thanks! is it safe? is breville dual boiler overkill"])
def test_an_unmarked_question_is_recognised(text: str) -> None:
    assert is_unmarked_question(text)


@pytest.mark.parametrize("text", [
    "any hostels there?", "has to survive a 30 min drive", "was at the gym earlier", "am flying tomorrow",
    "did a PICU placement as a student", "can't sleep lately", "when i was a kid i had a dog",
    "what I really want is a quiet flat", "When you explain math, go step by step",
    "do i need a special pan, i have a 9 inch springform",  # a fact after it: left as it was
    "我啥都吃", "缆车玻璃栈道啥的一律不敢", "没什么", "我哪里都去过", "我还在上班呢", "重庆还能活吗？",
    "不过我穿XL码，有没有大码款", "",
    "can you plan a 3-day trip to Rome? I use a wheelchair"])  # the question has its mark
def test_a_statement_or_a_marked_question_is_left_alone(text: str) -> None:
    assert not is_unmarked_question(text)


def test_the_mark_goes_after_each_question_and_nothing_else_changes() -> None:
    assert marked_questions("any hostels there") == "any hostels there?"
    said = ("looking at espresso machines around $700. I go through 4 double shots a day. "
            "is breville dual boiler overkill")
    assert marked_questions(said) == said + "?"
    assert marked_questions("I like tea.\nwhat about coffee\n") == "I like tea.\nwhat about coffee?\n"
    chat = "实习在北京 要租三个月房子 短租有啥靠谱渠道吗"
    assert marked_questions(chat) == chat + "？"
    assert marked_questions("I live in Lisbon. I work from home") == "I live in Lisbon. I work from home"
