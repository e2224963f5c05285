"""Trigger: keep a turn only when it says something about the user that will matter later.

Worth keeping: preferences, goals and tasks, personal facts, commitments and plans, events with
a date, explicit "remember this". Not: greetings, thanks, small talk, and questions to the agent
("今天天气怎么样", "what's the capital of Australia"). Seed 2's first version stored everything and
70 % of it was noise; these rules lean towards keeping (a missed memory costs more than a stored
one, which ranking can still push down).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CHITCHAT = re.compile(
    r"^\s*(hi|hello|hey|yo|thanks?( you)?|thank you( so much)?|thx|ok(ay)?|cool|nice|great|lol|haha+|"
    r"good (morning|night|evening|afternoon)|bye|see you|sure|yes|no|yep|nope|got it|sounds good|"
    r"how are you|what's up|let me (think|see|check)|"
    r"你好|您好|嗨|哈喽|谢谢|多谢|感谢|好的|好吧|行|嗯+|哦+|哈哈+|早上好|晚安|"
    r"再见|拜拜|在吗|没事|明白了?|知道了|不客气|辛苦了)[\s!.,?？！。~～]*$", re.I)
_REMEMBER = re.compile(r"\b(remember|don't forget|note that|keep in mind)\b|记住|别忘了|记一下|请记得", re.I)
_FIRST_PERSON = re.compile(r"\b(i|i'm|im|i've|i'd|i'll|my|me|mine|we|our)\b|我|咱", re.I)
_SIGNALS: list[tuple[str, re.Pattern[str]]] = [
    ("preference", re.compile(
        r"\b(like|love|enjoy|prefer|hate|dislike|can't stand|favou?rite|allergic|vegetarian|vegan)\b|"
        r"喜欢|爱(吃|喝|看|玩)|讨厌|不喜欢|偏好|最爱|过敏|吃素|不吃|不喝", re.I)),
    ("plan", re.compile(
        r"\b(will|going to|gonna|plan(ning)? to|intend|next (week|month|year|monday|tuesday|wednesday|thursday|"
        r"friday|saturday|sunday)|tomorrow|tonight|this weekend|deadline|due)\b|打算|计划|准备|要去|将要|下周|下个月|"
        r"明天|后天|周末|截止", re.I)),
    ("task", re.compile(r"\b(need to|have to|must|remind me|todo|to-do|should)\b|需要|得去|必须|提醒我|待办", re.I)),
    ("event", re.compile(
        r"\b(yesterday|last (week|month|year|night)|ago|just (got|had|moved|started|finished)|moved|married|"
        r"graduated|born|started|quit|got (a|an|my))\b|"
        r"昨天|上周|上个月|去年|刚刚|刚才|搬到|搬家|结婚|毕业|出生|入职|辞职", re.I)),
    ("fact", re.compile(
        r"\b(i am|i'm|my name|i live|i work|i have|i've got|my (wife|husband|son|daughter|kid|dog|cat|mom|dad|"
        r"brother|sister|boss|job|birthday|address|phone|email)|years old|i was born)\b|我是|我叫|我住|我在|我有|我的|"
        r"岁|生日|老家|公司", re.I)),
]
_QUESTION = re.compile(r"[?？]\s*$|^(what|who|where|when|why|how|which|can you|could you|would you|do you|is it|"
                       r"are there|tell me|explain|give me|write|translate)\b|(吗|呢|么)[?？]?\s*$|"
                       r"^(请问|帮我|能不能|可以帮|怎么|如何|什么|为什么|哪里|谁)", re.I)


@dataclass(frozen=True)
class Decision:
    keep: bool
    kind: str | None
    reason: str


def decide(text: str) -> Decision:
    t = text.strip()
    if not t:
        return Decision(False, None, "empty")
    if _CHITCHAT.match(t):
        return Decision(False, None, "greeting or small talk")
    if _REMEMBER.search(t):
        return Decision(True, _kind(t) or "fact", "asked to remember")
    kind = _kind(t)
    about_user = bool(_FIRST_PERSON.search(t))
    if _QUESTION.search(t) and not (about_user and kind):
        return Decision(False, None, "a question to the agent, nothing about the user")
    if kind and about_user:
        return Decision(True, kind, f"{kind} stated by the user")
    if about_user and len(t) >= (5 if re.search(r"[\u4e00-\u9fff]", t) else 12):
        return Decision(True, "fact", "a statement about the user")
    return Decision(False, None, "nothing about the user to keep")


_YOU = [(re.compile(r"\byou're\b", re.I), "I'm"), (re.compile(r"\byou are\b", re.I), "I am"),
        (re.compile(r"\byour\b", re.I), "my"),
        # "you" as an object ("looking out for you", "told you") is "me", not "I"
        (re.compile(r"\b(for|to|with|at|about|from|of|on|by|than|like|tell|told|help|helps|thank|let|give|gave|"
                    r"see|saw|remind|reminds)\s+you\b", re.I), r"\1 me"),
        (re.compile(r"\byou\b", re.I), "I"), (re.compile("你的"), "我的"),
        (re.compile("你"), "我")]
_AGENT_PREFIX = re.compile(r"^((so|ok(ay)?|got it|noted|it sounds like|sounds like|seems like|i see|"
                           r"you mentioned( that)?)\b|看来|听起来|你之前说过|好的|明白)[,，\s]*", re.I)
_DELIVERABLE = re.compile(r"^(here (is|are)|sure|certainly|of course|当然|这是|以下是|好的，这是)", re.I)


def user_voice(text: str) -> str:
    """An agent's statement about the user ("so you prefer window seats") in the user's voice."""
    t = re.sub(r"[,，]?\s*(noted|got it|记下了|好的)[.!。！]*$", "", _AGENT_PREFIX.sub("", text.strip()), flags=re.I)
    for pattern, repl in _YOU:
        t = pattern.sub(repl, t)
    return t


_HEDGED = re.compile(r"^\W*((if|in case|should you|unless|whether)\b|如果|要是|假如|万一|若|倘若|"
                     r"(you|你)\s*(can|could|should|might|may|'ll|will|need to|have to|must|'d better|"
                     r"可以|能|应该|最好|需要|得|不妨))", re.I)


def agent_turn_gate(text: str) -> str | None:
    """Why an assistant turn concludes nothing about the user, before any model reads it: it does
    not address the user, it asks, it delivers work ("Here is..."), or it opens with a hypothetical
    or a piece of advice ("If you're on a budget...", "You can freeze the sauce...", "如果你膝盖不好",
    "你可以先..."). None when a model (or the rules) should judge it. The last two were added on
    2026-12-07 from the training half of ``assistant-turns.jsonl``: 25 of the 33 noise turns (of
    167) that passed the first three and that the trigger model kept opened that way."""
    if not re.search(r"\byou\b|\byour\b|你", text, re.I):
        return "an agent message that does not address the user"
    if _QUESTION.search(text) or _DELIVERABLE.match(text.strip()):
        return "an agent message that asks or delivers, concluding nothing about the user"
    if _HEDGED.match(text):
        return "an agent message of advice or a hypothetical, concluding nothing about the user"
    return None


def decide_turn(role: str, text: str) -> Decision:
    """User turns as :func:`decide`; an assistant turn is kept only when it concludes something
    about the user (stored with ``source=agent_inferred``)."""
    if role == "user":
        return decide(text)
    if role != "assistant" or agent_turn_gate(text) is not None:
        return Decision(False, None, "an agent message that concludes nothing about the user")
    d = decide(user_voice(text))
    return Decision(d.keep, d.kind, f"inferred by the agent: {d.reason}" if d.keep else d.reason)


def _kind(text: str) -> str | None:
    for kind, pattern in _SIGNALS:
        if pattern.search(text):
            return kind
    return None
