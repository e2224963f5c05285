"""Standing dietary constraints: what a user cannot or will not eat applies to every food request.

"Quick dinner recipe for tonight, 20 min max" shares no word and little meaning with "I'm
pescatarian", yet an agent that plans the dinner without it gets it wrong; the same holds for
"what snack can I bring to my daughter's game that I can eat too" and "I'm lactose intolerant", or
"去广州出差，附近有啥吃饭的地方" and "我是回族，不吃猪肉". No similarity floor finds these: the request
names a meal, the memory a restriction. Of the misses on the judgement corpus's training profiles,
this was the largest single kind (8 of 39), and it is the example every memory service is sold
on ("remember I'm allergic to peanuts").

So when recall answers a request that names food, up to two of the user's memories that state a
dietary restriction take the last slots of ``top_k``: a slot the relevance floor left free, or else
that of the lowest-scored memory chosen on its own (for a meal, "I'm vegetarian" is worth more
than the fifth most similar memory). They carry the reason ``dietary_constraint`` in the recall
log, and a recall that found nothing stays empty. Filling only free slots was measured first and
gained almost nothing: with the gate's personal floor the five slots are usually full.
Both tests are word lists (English and Chinese), not models: they are narrow on purpose, and a
restriction is rare in a store, so it costs little when the request did not need it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_memory.ranking import Ranked

REASON = "dietary_constraint"
MAX_RESTRICTIONS = 2

_FOOD = re.compile(
    r"\b(eat|eats|eating|food|foods|meal|meals|dinner|dinners|lunch|lunches|breakfast|brunch|supper|snack|snacks|"
    r"recipe|recipes|restaurant|restaurants|cook|cooking|menu|menus|dish|dishes|bake|baking|potluck|cuisine|"
    r"grocery|groceries|takeout|takeaway|dessert|desserts|picnic|barbecue|bbq|catering)\b"
    r"|吃|饭|餐|菜|零食|食谱|做饭|下厨|外卖|点心|聚餐|宴|甜品|夜宵|美食|馆子|食堂|便当|烘焙|烧烤", re.I)
_RESTRICTION = re.compile(
    r"allerg|intoleran|\b(vegetarian|vegan|pescatarian|celiac|coeliac|kosher|halal|keto|diabetes|diabetic)\b"
    r"|gluten[- ]free|dairy[- ]free|nut[- ]free|\b(don't|do not|doesn't|does not|never|can't|cannot|can not|won't) "
    r"eat\b|\bno (pork|beef|meat|dairy|gluten|nuts|shellfish|alcohol)\b"
    r"|过敏|不吃|吃素|素食|清真|忌口|糖尿病|乳糖不耐|不能吃|回族|戒糖|痛风")
_STEMS = ("allerg", "intoleran", "vegetarian", "vegan", "pescatarian", "celiac", "coeliac", "kosher", "halal", "keto",
          "diabet", "free", " eat", "no ", "过敏", "不吃", "吃素", "素食", "清真", "忌口", "糖尿病", "乳糖不耐",
          "不能吃", "回族", "戒糖", "痛风")
"""Every match of ``_RESTRICTION`` contains one of these: checking them first is ~10x cheaper than
the pattern, which matters because a food request reads every candidate (up to 100)."""


def names_food(query: str) -> bool:
    """Whether the request is about eating: a meal, a recipe, a restaurant, a snack."""
    return bool(_FOOD.search(query))


def states_restriction(text: str) -> bool:
    """Whether a memory states what its user cannot or will not eat (allergy, intolerance, a diet,
    a condition that bounds the diet)."""
    low = text.lower()
    return any(stem in low for stem in _STEMS) and bool(_RESTRICTION.search(low))


def make_room(ranked: Sequence[Ranked], query: str, top_k: int, *, at_most: int = MAX_RESTRICTIONS) -> list[Ranked]:
    """``ranked`` with the user's dietary restrictions chosen into the last slots of ``top_k``
    when the request names food and recall answered (at least one memory chosen), so that at most
    ``at_most`` restrictions are in the answer; a restriction takes a slot the floor left free, or
    else the slot of the lowest-scored chosen memory that is not one; the best match always keeps
    its slot (so ``top_k=1`` is never changed). Unchanged otherwise.
    ``ranked`` holds active memories of this user only (the recall filter and
    :func:`agent_memory.ranking.carry_versions` saw to that), the ``candidate_limit`` (100) best
    by relevance: in a store larger than that, a restriction that does not make the candidates is
    not seen. Word lists, so they also fire on an idiom ("吃力", "菜鸟"): the cost is a slot."""
    chosen = [r for r in ranked if r.chosen]
    if not chosen or not names_food(query):
        return list(ranked)
    restrictions = {id(r) for r in ranked if states_restriction(r.hit.record.summary)}  # each summary read once
    already = sum(id(r) in restrictions for r in chosen)
    adds = [r for r in ranked if not r.chosen and id(r) in restrictions][:max(0, min(at_most, top_k - 1) - already)]
    if not adds:
        return list(ranked)
    # the lowest-scored chosen memories that are not restrictions give up their slots; the cap on
    # ``adds`` leaves enough of them, the best match among them
    overflow = max(0, len(chosen) + len(adds) - top_k)
    # by score, not place: ``newer_first`` may have put a later, lower-scored value ahead
    others = sorted((r for r in chosen if id(r) not in restrictions), key=lambda r: r.parts.score, reverse=True)
    out_ids = {id(r) for r in others[len(others) - overflow:]}
    keep = [r for r in chosen if id(r) not in out_ids]
    dropped = [Ranked(r.hit, r.parts, False, "beyond_top_k") for r in chosen if id(r) in out_ids]
    taken = {id(r) for r in adds}
    rest = [r for r in ranked if not r.chosen and id(r) not in taken]
    return keep + [Ranked(r.hit, r.parts, True, REASON) for r in adds] + dropped + rest
