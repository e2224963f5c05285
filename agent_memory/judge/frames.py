"""Two shapes of a change of mind that the change model misses, as rules.

The change model learned from pairs whose writers were asked for changes said in everyday, often
implied words, with many look-alikes about someone or something else ("my sister just moved to
Boise", "the office moved to the 5th floor"). It learned that "moved" or "跳槽" mean little on their
own and that a change usually names the old value again ("Moved back to Paris in January, Lyon was
lovely" is a new version at 0.86). The plain way a new user says it is missed: "I live in Lisbon"
-> "I just moved to Berlin" (new version 0.23), "I work at Google" -> "I work at Stripe now"
(unrelated 0.90), "我住在上海" -> "我搬到杭州了" (0.40).

- :func:`attribute_frame`: both statements in one first-person frame of an attribute a person has
  one value of at a time: where I live ("I live in" / "I moved to", "我住在" / "搬到") or where I work
  ("I work at" / "new job", "我在...上班" / "跳槽").
- :func:`same_frame`: the two statements are the same words but for one span of 1-3 words (Chinese:
  1-6 characters), change words ("now", "现在") left out: "My favourite colour is blue" -> "...green
  now".

Neither fires when a statement names someone else (the span, for :func:`same_frame`) or the new one
adds rather than replaces ("also", "也"). They run only with ``Settings.change_rules`` (off by
default): on the held-out pairs they found 9 more of 479 new versions and superseded 2 more of 339
unrelated memories, over the bound their rule was written with (README, "Two shapes of a plain
change, as rules").
"""

from __future__ import annotations

import difflib
import re

from agent_memory.judge.features import _ADDITIVE, _OTHER

_ADV_EN = r"(?:just|finally|recently|actually|now|officially|also|have|'ve|had|eventually)"
_RES_OLD = re.compile(
    r"\b(?:i|we)\s+(?:currently\s+|still\s+)?(?:live|'m living|am living|are living|'re living|'m based|am based|"
    r"reside|'m staying|am staying)\s+(?:in|at|near|outside|on)\b|\bi'm\s+in\s+(?-i:[A-Z])|"
    r"\bmy (?:home|house|apartment|flat|place) is in\b|\bi'm from\b.*\bliv", re.I)
_RES_NEW = re.compile(
    rf"(?:^|[.!?,;]\s*|\b(?:i|we)\s+(?:{_ADV_EN}\s+)*)(?:moved|relocated|moving|relocating|have moved|'ve moved)\s+"
    r"(?:back\s+)?(?:to|into|from|out)\b|\b(?:i|we)\s+(?:now\s+)?(?:live|'m living|am living|'re living|'m based|"
    r"am based)\s+(?:in|at|near)\b|\bnew (?:place|apartment|flat|house) in\b", re.I)
_RES_OLD_ZH = re.compile(r"我(?:们)?(?:现在|目前|一直)?(?:住在|住|家在|定居在?|常住)")
_RES_NEW_ZH = re.compile(r"(?:^|[，。,!！]|我|我们|俺)[^，。,！!我]{0,6}?(?:搬到|搬去|搬回|搬家到|搬家去|迁到)|"
                         r"我(?:们)?(?:现在|目前)?(?:住在|定居在?)")
_THING_ZH = re.compile(r"(公司|办公室|单位|诊所|医院|店|工厂|学校|部门|团队|猫|狗|东西|家具|服务器|数据|笔记|文件|项目)"
                       r"[^，。,]{0,4}(搬|迁)")
_THING_EN = re.compile(r"\b(?:office|company|team|clinic|store|shop|school|class|meeting|quiz|standup|stand-up|server|"
                       r"data|files?|notes?|everything|it|they|we've moved (?:it|everything))\b[^.,;!?]{0,25}"
                       r"\b(?:moved|relocated)\b", re.I)
_EMP_OLD = re.compile(r"\bi\s+(?:currently\s+|still\s+)?(?:work|'m working|am working)\s+(?:at|for|in)\b|"
                      r"\bi'm employed\b|\bmy (?:employer|company) is\b|"
                      r"\bi'm (?:a|an)\b[^.,;]{1,40}\b(?:at|for)\s+(?-i:[A-Z])", re.I)
_EMP_NEW = re.compile(r"\bnew job\b|\b(?:i|I've|i have)\s+(?:just\s+|finally\s+)?(?:started (?:a (?:new )?job|work)|"
                      r"joined (?:a|the) (?:startup|company|firm|team)|got hired|accepted an offer|took a job|"
                      r"switched jobs|changed jobs)\b|"
                      r"\b(?:i|I've|i have)\s+(?:just\s+|finally\s+)?joined\s+(?-i:[A-Z])|"
                      r"\bi\s+(?:now\s+)?(?:work|'m working|am working)\s+(?:at|for)\b|\bstarted (?:working )?at\b|"
                      r"\bi'm (?:now )?at\s+(?-i:[A-Z])", re.I)
_EMP_OLD_ZH = re.compile(r"我(?:现在|目前|一直)?在[^，。,]{1,14}(?:工作|上班|任职|实习)|"
                         r"我是[^，。,]{1,14}的(?:员工|工程师|程序员)")
_EMP_NEW_ZH = re.compile(r"跳槽|入职|换了?(?:个)?工作|新工作|新公司|去了?[^，。,]{1,12}(?:上班|工作)|"
                         r"在[^，。,]{1,14}(?:工作|上班)了|offer")


def attribute_frame(old: str, new: str) -> str | None:
    """``residence`` or ``employer`` when ``old`` says where I live (work) and ``new`` that I moved
    (changed jobs) or where I live (work), with no one else and no thing as the subject."""
    if _OTHER.search(old) or _OTHER.search(new) or _ADDITIVE.search(new):
        return None
    o, n = old.strip(), new.strip()
    if _THING_ZH.search(n) or _THING_EN.search(n):
        return None
    if (_RES_OLD.search(o) or _RES_OLD_ZH.search(o)) and (_RES_NEW.search(n) or _RES_NEW_ZH.search(n)):
        return "residence"
    if (_EMP_OLD.search(o) or _EMP_OLD_ZH.search(o)) and (_EMP_NEW.search(n) or _EMP_NEW_ZH.search(n)):
        return "employer"
    return None


_CJK = re.compile(r"[\u3400-\u9fff]")
_CHANGE_EN = frozenset({"now", "currently", "nowadays", "anymore", "actually", "instead"})
_CHANGE_ZH = ("现在", "目前", "已经", "改成", "了")
_PUNCT_ZH = re.compile(r"[，。！？、,.!?~…\s]")
# a person in the differing span: "My mum takes amlodipine" -> "My dad takes amlodipine" is another
# person's fact, not a new value (features._OTHER, checked beside it, needs "my " before these words
# and already holds the bare pronouns but "they")
_PERSON = re.compile(r"\b(?:mum|mom|mother|dad|father|wife|husband|partner|son|daughter|kids?|brother|sister|"
                     r"friend|boss|manager|coworker|colleague|roommate|boyfriend|girlfriend|grandma|grandpa|aunt|"
                     r"uncle|cousin|neighbou?r|they)\b")
# attributes a person holds several values of ("allergic to peanuts", "...to cats"): a second value
# is an addition unless the new statement says it replaces ("now", "现在", "换")
_MULTI = re.compile(r"\b(?:allergic|allergy|allergies|like|likes|love|loves|enjoy|enjoys|speak|speaks|play|plays|"
                    r"collect|collects|have a|has a)\b|过敏|(?<!最)喜欢|爱吃|爱看|会说|会弹|养了", re.I)
_EITHER = re.compile(r"\beither\b", re.I)
_REPLACES = re.compile(r"\b(?:now|these days|nowadays|anymore|any more|instead|switched|no longer)\b|现在|改|换|不再",
                       re.I)


def _tokens(text: str) -> tuple[list[str], int]:
    t = text.lower().replace("these days", " ")
    if _CJK.search(t):
        for w in _CHANGE_ZH:
            t = t.replace(w, "")
        return [c for c in t if c.strip() and not _PUNCT_ZH.match(c)], 6
    return [w for w in re.findall(r"[a-z0-9]+(?:'[a-z]+)?", t) if w not in _CHANGE_EN], 3


def same_frame(old: str, new: str) -> bool:
    """The same words but for one replaced span (1-3 words, Chinese 1-6 characters), the shared
    words at least 3 and 0.6 of the longer statement."""
    ta, limit = _tokens(old)
    tb, _ = _tokens(new)
    ops = [op for op in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return False
    _, i1, i2, j1, j2 = ops[0]
    if not (1 <= i2 - i1 <= limit and 1 <= j2 - j1 <= limit):
        return False
    shared = len(ta) - (i2 - i1)
    if shared < 3 or shared < 0.6 * max(len(ta), len(tb)):
        return False
    joiner = " " if limit == 3 else ""
    span = joiner.join(ta[i1:i2] + tb[j1:j2])
    if _OTHER.search(span) or _PERSON.search(span) or _ADDITIVE.search(new) or _EITHER.search(new):
        return False
    return not (_MULTI.search(old) and not _REPLACES.search(new))


def plain_change(old: str, new: str) -> str | None:
    """The rule that ties ``new`` to ``old`` as a plain change (``same frame``, ``residence
    frame``, ``employer frame``), or None."""
    if same_frame(old, new):
        return "same frame"
    frame = attribute_frame(old, new)
    return None if frame is None else f"{frame} frame"
