"""Questions typed without their question mark, marked before the trigger reads them.

The trigger learned from written turns, where a question mostly ends with "?" or "？", and leans on
that mark: "any hostels there?" scores 0.001 as worth keeping, "any hostels there" 1.000, "is
breville dual boiler overkill" 1.000. In chat the mark is often left out: in the sentences of two
sets of fresh chats (2026-12-07) this module finds 51 and 60 questions without it against 37 and 37
with one, where the judge corpus's training turns have 167 against 326. Such a question was kept as
a memory, or chosen as a kept turn's statement instead of the fact beside it. The mark is added to a
sentence that opens (in Chinese: reads) the way a question does, so the trigger reads the text the
way it was trained to. The stored words never change.

Narrow on purpose:
- a sentence of one clause only: after "I go through 4 shots a day, do I need X" or "我 C# 基本零基础,
  有啥快速上手的 resource" the whole sentence would read as a question and its fact be dropped with it;
- after a "?" inside a sentence, only what follows is tested ("can you plan a trip to Rome? I use a
  wheelchair" is not marked again at its end);
- a statement that lost its subject reads like a question in English ("was at the gym", "did a PICU
  placement as a student", "can't sleep lately"), so "was", "am" and the negated auxiliaries are no
  openers, "do/does/can/will" open one only before a subject and "did" only before a person; "when
  I was a kid..." and "what I want is..." are statements;
- in Chinese "呢" and "嘛" end statements too ("我还在上班呢"), and "啥都吃", "哪里都去过", "没什么" are no
  questions.
Measured under a rule written first (docs/judgement.md, "A third probe, and questions typed without
their mark"). It costs about 6 µs a turn; the trigger itself takes about 2 ms with its embedding.
"""

from __future__ import annotations

import re

from agent_memory.pipeline.extract import sentences

_FILLER = r"(?:(?:ok(?:ay)?|so|also|and|but|oh|hmm+|hey|btw|yeah|yea|well|anyway|lol|um+|uh+|unrelated but)[,\s]+){0,3}"
_SUBJECT = (r"(?:you|u|ya|i|we|he|she|they|it|this|that|these|those|there|my|your|ur|our|his|her|their|the|a|an|"
            r"any|anyone|someone|anybody|somebody)")
_EN_QUESTION = re.compile(
    rf"^{_FILLER}(?:"
    rf"(?:is|are|isn'?t|aren'?t|should|could|would)\b"
    rf"|(?:do|does|can|will)\s+{_SUBJECT}\b"
    r"|did\s+(?:you|u|ya|i|we|he|she|they|anyone|anybody|someone|somebody)\b"
    rf"|(?:how|what|whats|what's|where|wheres|where's|which|who|whos|who's|why)\b(?!\s+(?:i|i'm|im|we|my|our|he|she|they)\b)"
    rf"|(?:any|anyone|anybody|anything|anywhere)\b)", re.I)
_ZH_QUESTION = re.compile(
    r"吗[啊呀哈h~～!！\s]*$"
    r"|是不是|有没有|能不能|可不可以|要不要|会不会|好不好|行不行|对不对|该不该|用不用|需不需要|算不算"
    r"|(?<![没不])(?:啥|咋|怎么|为什么|为啥|哪里|哪儿|哪个|哪些|哪家|哪种|什么)(?!的)(?!.{0,3}[都也])")
_CLAUSE = re.compile(r"[,，;；:：]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ASKED = re.compile(r"[?？]")
_ENDED = re.compile(r"[.!?。！？…;；]\W*$")


def is_unmarked_question(sentence: str) -> bool:
    """A sentence without an end mark that reads as a question (see the module's docstring)."""
    s = _ASKED.split(sentence)[-1].strip()  # after a question inside the sentence, what follows is new
    if not s or _ENDED.search(s):
        return False
    if _CLAUSE.search(s):
        return False
    return bool(_ZH_QUESTION.search(s) if _CJK.search(s) else _EN_QUESTION.search(s))


def opens_as_question(sentence: str) -> bool:
    """An English (non-Chinese) sentence whose opening asks ("how do I...", "any tips for...",
    "anyway is it..."), whatever its end."""
    return not _CJK.search(sentence) and bool(_EN_QUESTION.search(sentence.strip()))


def marked_questions(text: str) -> str:
    """``text`` with "?" (a Chinese sentence "？") after each sentence that is an unmarked question;
    everything else as it was."""
    out, at = [], 0
    for sentence in sentences(text):
        found = text.find(sentence, at)
        if found < 0:  # sentences() strips; a sentence is always found, but never lose text if not
            continue
        end = found + len(sentence)
        out.append(text[at:end])
        if is_unmarked_question(sentence):
            out.append("？" if _CJK.search(sentence) else "?")
        at = end
    out.append(text[at:])
    return "".join(out)
