"""Deterministic synthetic memories and questions for benchmarks (English and Chinese)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

NAMES = ["Ana", "Ben", "Chen", "Dana", "Eli", "Fatima", "Gus", "Hana", "Ivan", "Juno", "Kai", "Lea"]
CITIES = ["Lisbon", "Porto", "Berlin", "Osaka", "Shanghai", "Toronto", "Nairobi", "Lima", "Oslo", "Hanoi"]
ZH_CITIES = ["上海", "北京", "杭州", "深圳", "成都", "西安", "南京", "广州"]
FOODS = ["peanuts", "shellfish", "gluten", "dairy", "eggs", "soy", "sesame"]
ZH_FOODS = ["花生", "海鲜", "牛奶", "鸡蛋", "芒果", "香菜"]
DRINKS = ["black coffee", "green tea", "oat latte", "sparkling water", "espresso", "chai"]
HOBBIES = ["bouldering", "the cello", "sourdough baking", "trail running", "chess", "watercolour", "sailing"]
EN = [
    "I am allergic to {food}, please keep that in mind when suggesting restaurants.",
    "My sister {name} just moved to {city} for a new job.",
    "I prefer {drink} in the morning, never anything sweet.",
    "I started learning {hobby} last month and practise on weekends.",
    "Remember that my rent of {amount} euros is due on the {day}th of every month.",
    "I'm flying to {city} on {month} {day} for a conference.",
    "My manager {name} wants the quarterly report by Friday.",
    "We are planning a trip to {city} with the kids in {month}.",
    "I can't eat {food}; it makes me sick.",
    "My new address is {day} Harbour Street, {city}.",
]
ZH = [
    "我对{zfood}过敏，点餐的时候要注意。",
    "我下周要去{zcity}出差三天，每天晚上才有时间处理邮件。",
    "我每天早上喝一杯{drink}。",
    "我女儿今年{day}岁，在{zcity}上小学。",
    "我的房租每月{amount}元，每月{day}号交。",
    "我最近在学{hobby}，周末练习。",
]
QUESTIONS = [
    ("What should I avoid eating?", "zh"), ("点餐时要注意什么？", "zh"), ("Where does my sister live now?", "en"),
    ("What do I like to drink?", "en"), ("When is my rent due?", "en"), ("我下周去哪里出差？", "zh"),
    ("What hobby am I learning?", "en"), ("Who is my manager?", "en"), ("我的房租是多少？", "zh"),
    ("Where am I travelling for the conference?", "en"),
]
MONTHS = ["January", "March", "May", "June", "September", "November"]


@dataclass(frozen=True)
class SyntheticMemory:
    user_id: str
    content: str
    memory_type: str


def memories(n: int, users: int, seed: int = 7) -> Iterator[SyntheticMemory]:
    rng = random.Random(seed)
    types = ["fact", "preference", "event", "plan", "task"]
    for i in range(n):
        template = rng.choice(ZH if rng.random() < 0.4 else EN)
        text = template.format(
            food=rng.choice(FOODS), zfood=rng.choice(ZH_FOODS), name=rng.choice(NAMES), city=rng.choice(CITIES),
            zcity=rng.choice(ZH_CITIES), drink=rng.choice(DRINKS), hobby=rng.choice(HOBBIES),
            amount=rng.randrange(400, 3000, 50), day=rng.randrange(1, 28), month=rng.choice(MONTHS))
        yield SyntheticMemory(f"bench-u{i % users:05d}", f"{text} (#{i})", rng.choice(types))


def questions(n: int, users: int, seed: int = 11) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(f"bench-u{rng.randrange(users):05d}", rng.choice(QUESTIONS)[0]) for _ in range(n)]
