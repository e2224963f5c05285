"""Which parts of a kept turn become its statements: its sentences without the questions said
in front of or after the facts.

The trigger decides whether a turn is kept, reading it whole and sentence by sentence
(:func:`agent_memory.pipeline.drafts.screen_turns`); a kept turn's statements are then chosen among
these parts, each judged again, so a request or a question asked beside a fact is not stored with it.
Apart from :mod:`agent_memory.pipeline.extract` because it reads questions typed without their mark
(:mod:`agent_memory.pipeline.questions`), which itself splits sentences with ``extract``.
"""

from __future__ import annotations

import re

from agent_memory.pipeline.extract import sentences
from agent_memory.pipeline.questions import is_unmarked_question, opens_as_question

_CJK_CHARS = r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
_QUESTION_END = re.compile(r"(?<=[?])\s+|(?<=[？])(?![？])\s*")

_LAST_CLAUSE = re.compile(r"(?:[,;，；]|\s[-–—]\s)\s*([^,;，；]*?)\s*$")
_ASKS = re.compile(r"(?:[?？]+|[吗呢吧][~～。!！]*)$")
_CLOSING_STOP = re.compile(r"[.。]+\s*$")
_ENDED_OTHERWISE = re.compile(r"[!;…]\W*$")
_ASKING_OPENING = re.compile(
    r"^(?:how|what|which|why|where|when|who|should|can|could|would|is|are|do|does|did|any)\b|"
    r"^(?:怎么|什么|哪|为什么|能不能|可不可以|要不要|是不是|有没有)", re.I)


def _without_closing_question(sentence: str) -> str:
    """A sentence without a question said after its fact, in the same sentence: "I'm moving to
    Berlin, any tips?" -> "I'm moving to Berlin"; "PSW 签证有两年，你觉得好找吗" -> "PSW 签证有两年".
    Found on fresh chats (2026-12-07): memories stored with the question that followed the fact. The
    part left must say something (3 words, or 6 CJK characters) and not open a question itself. A
    closing clause typed without its mark is a question too when it reads as one
    (:func:`~agent_memory.pipeline.questions.is_unmarked_question`: "biscuit is 8 and limping on his
    back leg, should i worry" was stored whole until the same day)."""
    found = _LAST_CLAUSE.search(sentence)
    if not found or not (_ASKS.search(found.group(1)) or is_unmarked_question(found.group(1))):
        return sentence
    head = sentence[:found.start()].strip()
    words = len(re.findall(r"[^\W\d_]+", re.sub(_CJK_CHARS, " ", head))) + len(re.findall(_CJK_CHARS, head)) / 2
    if words < 3 or _ASKING_OPENING.search(head):
        return sentence
    return head


def told_parts(text: str) -> list[str]:
    """The sentences of ``text`` without the questions in front of what follows them, or after it
    (:func:`_without_closing_question`): the parts a kept turn's statements are chosen from. The
    trigger's screening never cuts at "?" (see ``_SPLIT``), but "can you help me plan meals for the
    week? I'm vegetarian" is kept for its second half, and the request should not be stored with
    it; nor is a question ever a statement on its own ("any tips for sleeping on a plane?" judged
    alone scores as a fact). A sentence that is a question stays whole. A piece in front of a "?"
    that says something before its own closing question yields that part ("also hes got CMPA so im
    off all dairy, any easy dinners? like 15 min max" was stored as "like 15 min max" alone until
    2026-12-07)."""
    out: list[str] = []
    for sentence in sentences(text):
        pieces = [q.strip() for q in _QUESTION_END.split(sentence) if q.strip()]
        # a piece before a "?" is a question; a statement in front of its closing question stays
        # ("also hes got CMPA so im off all dairy, any easy dinners? like 15 min max")
        out.extend(told for q in pieces[:-1] if (told := _without_closing_question(q)) != q)
        out.append(_without_closing_question(pieces[-1]) if pieces else sentence)
    return out


def facts_before_questions(text: str) -> list[str]:
    """For a turn typed in lower case, the fact in front of each closing question
    (:func:`_without_closing_question`), for the trigger to read on its own as well: "kids are 3 and
    7, whats a rainy day activity that works for both" sinks whole under its question (0.22). Only
    chat typing: on the training turns of rounds 1-3, where writers capitalize, the same reading kept
    7 more noise turns ("I'm lost at step 4, what does 'blind bake' even mean"); typed in lower case,
    none, and 4 more facts on round 14's training turns and a fresh probe (README, "Round 15")."""
    if text != text.lower() or re.search(_CJK_CHARS, text):
        return []
    return [told for sentence in sentences(text) if (told := _without_closing_question(sentence)) != sentence]


def is_question(part: str) -> bool:
    """A part that asks rather than tells, from its first word to its end: it opens the way an
    English question does (:func:`~agent_memory.pipeline.questions.opens_as_question`) and ends with
    "?", or with nothing or a "." ("also whats a good cheap meal i can make in the dorm microwave.").
    Never a Chinese part: a question there is marked at its end and a fact often comes first in the
    same part ("换了iPhone15 微信记录咋迁过来")."""
    stripped = _CLOSING_STOP.sub("", part.strip())
    return opens_as_question(stripped) and (stripped.endswith("?") or not _ENDED_OTHERWISE.search(stripped))
