"""The two plain-change shapes of :mod:`agent_memory.judge.frames`: each must fire on the plain
change it is for and stay silent on the look-alikes that keep both statements true."""

from __future__ import annotations

import pytest

from agent_memory.judge.frames import attribute_frame, plain_change, same_frame


@pytest.mark.parametrize(("old", "new"), [
    ("My favourite colour is blue", "My favourite colour is green now"),
    ("I live in Lisbon", "I live in Berlin now"),
    ("I run 5k every morning", "I run 10k every morning"),
    ("I work at Google", "I work at Stripe now"),
    ("我坐10号线上班", "我坐14号线上班"),
    ("我最喜欢的歌手是周杰伦", "我最喜欢的歌手是陈奕迅了"),
    # a verb of several values, but the new one says it replaces
    ("I like tea in the morning", "I like coffee in the morning now"),
])
def test_same_frame_fires_on_one_replaced_span(old: str, new: str) -> None:
    assert same_frame(old, new)


@pytest.mark.parametrize(("old", "new"), [
    ("My mum takes amlodipine", "My dad takes amlodipine"),  # another person, not a new value
    ("I'm allergic to peanuts", "I'm allergic to cats"),  # an attribute with several values
    ("I don't eat pork", "I don't eat beef either"),  # an addition
    ("I speak French", "I speak Italian too"),
    ("I live in Lisbon", "I live in Lisbon"),  # nothing replaced: the duplicate check's case
    ("I live in Lisbon", "I just moved to Berlin"),  # more than one span differs
    ("I have a cat", "I have a dog"),  # too few shared words to call it one frame
    ("我对花生过敏", "我对芒果过敏"),
])
def test_same_frame_stays_silent_on_look_alikes(old: str, new: str) -> None:
    assert not same_frame(old, new)


@pytest.mark.parametrize(("old", "new", "frame"), [
    ("I live in Lisbon", "I just moved to Berlin", "residence"),
    ("we live in Denver", "Moved to Austin last month, still unpacking", "residence"),
    ("我住在上海", "我搬到杭州了", "residence"),
    ("我家在南京鼓楼区", "今年刚搬到了合肥", "residence"),
    ("I work at Google as a data analyst", "I started a new job at Stripe last week", "employer"),
    ("I work for Siemens", "I joined Bosch in March", "employer"),
    ("我在腾讯工作", "我跳槽去字节了", "employer"),
])
def test_attribute_frame_fires_on_a_move_or_a_new_job(old: str, new: str, frame: str) -> None:
    assert attribute_frame(old, new) == frame
    assert plain_change(old, new) == f"{frame} frame"


@pytest.mark.parametrize(("old", "new"), [
    ("I live in Denver", "my sister just moved to Boise"),  # someone else moved
    ("I live in Paris", "our office moved to the 5th floor"),  # a thing moved
    ("我住在苏州园区", "我们公司搬到金鸡湖边上了"),
    ("我在腾讯工作", "我老公跳槽去字节了"),
    ("I work at Google", "My wife works at Apple"),
    ("I work at Google", "I also started a side gig at a bakery"),  # an addition
    ("I live in Lisbon", "I started a new job at Stripe"),  # two different attributes
    ("I'm allergic to peanuts", "I moved to Berlin"),
])
def test_attribute_frame_stays_silent_on_look_alikes(old: str, new: str) -> None:
    assert attribute_frame(old, new) is None
