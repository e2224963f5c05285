"""Extraction: a kept turn becomes short third-person statements, one per fact, with relative
dates resolved against the message time, a memory type and, when the statement names a
changing attribute (employer, city, drink...), a ``topic_id`` slot so a later value supersedes it.

    "我下周要去上海出差三天，每天晚上才有时间处理邮件"
    -> "用户下周要去上海出差三天，每天晚上才有时间处理邮件 (week of 2026-03-09)"
    "I moved to Lisbon last month" -> "The user moved to Lisbon last month (2026-02)"
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise

from agent_memory.pipeline.importance import importance
from agent_memory.pipeline.trigger import decide

TOPICS: list[tuple[str, re.Pattern[str]]] = [
    ("employer", re.compile(r"\b(work(s|ing)? (at|for)|my (job|employer|company)|joined|new job|quit)\b|"
                            r"在.{1,8}(工作|上班)|公司|入职|辞职|跳槽|换工作", re.I)),
    ("city", re.compile(r"\b(live[sd]? in|moved to|relocat\w+ to|based in)\b|住在|搬到|搬去|定居", re.I)),
    ("drink", re.compile(r"\b(coffee|tea|latte|espresso|beer|wine)\b|咖啡|茶|拿铁|啤酒|红酒", re.I)),
    ("diet", re.compile(r"\b(vegetarian|vegan|keto|gluten|diet)\b|吃素|素食|减肥|节食", re.I)),
    ("car", re.compile(r"\b(car|drive a|tesla|bmw|toyota)\b|车|开的是|丰田|比亚迪|特斯拉|宝马|奔驰", re.I)),
    ("pet", re.compile(r"\b(my (dog|cat|pet|puppy|kitten))\b|我的(狗|猫|宠物)|养了", re.I)),
    ("name", re.compile(r"\b(my name is|call me)\b|我叫|我的名字", re.I)),
]
_ABBREVIATIONS = ("Mr", "Mrs", "Ms", "Dr", "St", "Mt", "Prof", "Sr", "Jr", "Ave", "Rd", "Inc", "Ltd",
                  "vs", "e.g", "i.e", "approx", "Jan", "Feb", "Mar", "Apr", "Aug", "Sep", "Sept", "Oct", "Nov",
                  "Dec")
_SPLIT = re.compile(r"(?<=[.!;])" + "".join(rf"(?<!\b{re.escape(a)}\.)" for a in _ABBREVIATIONS)
                    + r"(?<!\b[A-Z]\.)\s+|(?<=[。！；])(?![。！；])\s*")
"""Where a sentence ends: a mark followed by a space (so a run like "..." or "!!" ends once, at
its last mark), or the last of a run of Chinese marks, which need no space. A mark inside a
word is not an end ("3.5", "www.example.com"): splitting there cut "I paid 3.5 dollars" into
"I paid 3." and "5 dollars.". Nor is the period of a title, a street, a month or an initial
("a nurse at St. Mary's" was stored as "...a nurse at St." and "Mary's" until 2026-12-06; "Dr.
Chen", "J. K. Rowling", "the U.S. army"). A question mark is not an end: a question and what follows it
stay one sentence. Tried (2026-12-04): ending sentences at "?" and
"？" too. LoCoMo's extracted mode rose (conversations 0-2 R@10 75.5 -> 76.2, 3-5 68.4 -> 68.5),
but on the held-out turns the trigger dropped less noise (0.903 -> 0.896, English 0.897 -> 0.888,
questions to the agent 0.978 -> 0.935): "what do you mean by 'purl the next row'? I don't get it"
cut in two leaves "I don't get it", which the trigger judged alone and kept."""
_EN_SUBJECT = [
    (re.compile(r"\bI am\b|\bI'm\b|\bIm\b", re.I), "the user is"),
    (re.compile(r"\bI'?ve\b", re.I), "the user has"),
    (re.compile(r"\bI'll\b", re.I), "the user will"),
    (re.compile(r"\bI'd\b", re.I), "the user would"),
    (re.compile(r"\bI was\b", re.I), "the user was"),
    (re.compile(r"\bI\b"), "the user"),
    # chat typing: a lower-case "i" standing alone before a word ("i teach 4th grade", "bullet points
    # i read on my phone"), never "i.e.", "(i)", "i)" or code ("i = 0", "for i in range")
    (re.compile(r"(?<![\w.(\[])i(?=\s+(?!in\b)[a-z])"), "the user"),
    (re.compile(r"\bmy\b", re.I), "the user's"),
    (re.compile(r"\bmine\b", re.I), "the user's"),
]
_EN_OBJECT = [
    (re.compile(r"\bme\b", re.I), "the user"),
    (re.compile(r"\bmyself\b", re.I), "themselves"),
]
"""Rewritten after the verb is conjugated: "help me plan" is not "help the user plans"."""
_EN_VERBS = ("like|love|hate|prefer|live|work|have|want|need|enjoy|drink|eat|take|play|plan|own|drive|use|go|"
             "think|feel|know|study|teach|run|visit|get|do|ride|host|coach|cook|bake|write|read|speak|walk|"
             "wear|keep|buy|pay|save|spend|try|watch|miss|fix|wish|make|bring|call|come|commute|train|"
             "volunteer|attend|share|rent|"
             # added 2026-12-06 ("The user fly to Tokyo"): everyday verbs whose past is not their base
             # form (a "put", "cut" or "quit" after "I" may be past, and is left as said)
             "fly|move|sleep|swim|hike|cycle|bike|climb|dance|sing|paint|draw|knit|sew|garden|travel|shop|"
             "stay|wake|leave|meet|learn|practice|practise|remember|forget|collect|grow|raise|support|follow|"
             "listen|stream|code|program|design|build|manage|lead|sell|smoke|avoid|skip|brew|order|celebrate|"
             "care|hope|expect|believe|understand|suffer|struggle|carry|lift|jog|surf|ski|skate|fish|camp|"
             "mentor|tutor|babysit|nap|meditate|pray|vote|invest|owe|earn|send|choose|belong|find|sleepwalk|"
             "worry|fancy|adore|dislike|crave|sit|stand|join")
_EN_ADVERBS = {"usually", "always", "often", "never", "really", "still", "also", "sometimes", "mostly", "only",
               "just"}
_EN_NOT_BASE = frozenset(re.findall(r"[a-z]+", """
am are is was were be been being do does did done have has had can could will would shall should may might must
ought wanna gonna gotta hafta tryna kinda sorta lemme dunno dont doesnt didnt cant couldnt wont wouldnt
shouldnt havent hasnt isnt wasnt aint
went took got made said saw came gave found thought told became left felt brought began kept held wrote stood heard
meant met ran paid sat spoke lay led grew lost fell sent built understood drew broke spent rose drove bought wore
chose sought threw caught dealt won forgot sold fought taught ate drank sang swam flew slept woke rode hid bit shook
dug hung stuck struck swung sank spun stole froze forgave bent lent lit fed fled slid shot knew blew beat withdrew
overslept mistook undertook learnt dreamt burnt spelt spilt leapt knelt smelt
dwelt spoilt gotten forgotten taken given seen gone known shown written eaten driven ridden fallen
put cut quit hurt set let hit read shut cost spread split burst cast bet
the a an this that these those my your his her its our their some any no every each all both either neither
and or but nor so yet because if when while as than then though although unless until since whether
to at in on for with from by about of into onto over under after before around through without within
me you him them us it myself too again once twice now here there soon ever even already almost rather quite
pretty very much more less maybe perhaps not also
"""))
"""Words after "I" that are not a verb in its base form: auxiliaries and modals, past forms that
are not regular (a regular one ends in "-ed"), words that are both ("put", "cut", "quit": a past
after "I" is as likely, so they are left as said), and the small words that can follow a
subject."""
_EN_VERB_FIX = re.compile(rf"\bthe user ((?:(?:{'|'.join(sorted(_EN_ADVERBS))}) )?)([a-z]+)(?![\w'’]|-\w)")
_EN_IRREGULAR = {"have": "has", "do": "does", "go": "goes"}
_EN_AUX_BEFORE = re.compile(r"\b(?:do|does|did|can|could|will|would|shall|should|may|might|must|am|is|are|was|were|"
                            r"have|has|had|let|lets|make|makes|made|help|helps|helped|watch|watches|see|sees|saw|"
                            r"hear|hears|heard)\s+$", re.I)
"""Before "the user", a word after which its verb keeps the base form: an auxiliary (a question:
"does the user need") or a verb whose object does the next verb ("lets the user mirror frames",
from an assistant's "lets you mirror", which :func:`agent_memory.pipeline.trigger.user_voice` reads
as "lets I mirror")."""
_EN_COMPOUND = re.compile(r"(?:^|[,.;:!?(—–]\s*|\s-\s+)((?:[\w'’]+\s+){1,3})(?:and|or|nor)\s+$", re.I)
"""A subject of two ("Femi and I", "my wife and I"): at most three words since the clause began,
then "and"; a longer run before "and" is a clause of its own ("I moved last week and I own one
chair")."""
_EN_INVERTED = [(re.compile(r"\b([Dd])o the user\b(?!['’])"), r"\1oes the user"),
                (re.compile(r"\bam the user\b(?!['’])"), "is the user"),
                (re.compile(r"\bAm the user\b(?!['’])"), "Is the user"),
                (re.compile(r"\b([Hh])ave the user\b(?!['’])"), r"\1as the user")]
"""A question's subject after its auxiliary: "Do I need" is "Does the user need"."""


def _base_verb(word: str) -> bool:
    """Whether a word after "the user" reads as a verb in its base form (to be conjugated):
    listed ones, and any other lower-case word that is not a closed-class word, a past form
    ("-ed"), an adverb ("-ly"), a participle ("-ing") or already inflected ("-s", but "miss" and
    "focus" are base forms). Found on fresh chats: "The user usually crash at 9am" (2026-12-07)
    when only the listed verbs were conjugated."""
    if re.fullmatch(_EN_VERBS, word):
        return True
    if word in _EN_NOT_BASE or len(word) < 2 or word.endswith(("ed", "ly", "ing")):
        return False
    prefixed = re.match(r"(?:re|over|under|mis|out|fore|with|un)(\w+)$", word)
    if prefixed and prefixed.group(1) in _EN_NOT_BASE:
        return False  # "retook", "overslept", "undid"
    return not (word.endswith("s") and not word.endswith(("ss", "us")))


def _compound_subject(before: str) -> bool:
    found = _EN_COMPOUND.search(before)
    return found is not None and not re.search(r"\bthe user\b(?!['’])", found.group(1), re.I)


def _third_person_verb(verb: str) -> str:
    """"the user like" -> "likes", "study" -> "studies", "watch" -> "watches", "have" -> "has"
    ("The user haves an old beagle" was the rewrite until 2026-12-06)."""
    v = verb.lower()
    if v in _EN_IRREGULAR:
        return _EN_IRREGULAR[v]
    if v.endswith(("s", "sh", "ch", "x", "z", "o")):
        return v + "es"
    if v.endswith("y") and v[-2:-1] not in "aeiou":
        return v[:-1] + "ies"
    return v + "s"


def _fix_verb(m: re.Match[str]) -> str:
    """An adverb before the verb is kept ("the user really likes"). Left as said: a word that is
    no base verb (:func:`_base_verb`), and "the user" after an auxiliary (a question: "Do the
    user needs to update..." was stored until 2026-12-07) or after "and" / "or" (a compound
    subject: "Ali and the user live")."""
    before = m.string[:m.start()]
    if not _base_verb(m.group(2)) or _EN_AUX_BEFORE.search(before) or _compound_subject(before):
        return m.group(0)
    return f"the user {m.group(1).lower()}{_third_person_verb(m.group(2))}"


_FILLER = re.compile(r"^((oh|well|so|btw|by the way|actually|also|and|but|hmm|um|fyi|just so you know|heads up|"
                     r"quick one|quick question|real quick|for context|ok|okay|anyway|honestly|unrelated|"
                     r"one more thing|totally diff(?:erent)? question|big news|quick update|"
                     r"(?:hi|hey|hello|hiya)(?: there| again)?(?=[,!，！]|\s+(?-i:[a-z]))|"
                     r"i should (?:mention|say|add)(?: that)?|"
                     r"i forgot to (?:mention|say)(?: that)?|"
                     r"对了|其实|另外|还有|话说|嗯|顺便问一下|顺便说一句|顺便说一下|顺便)"
                     r"(?:\s[-–—]\s|[,，:：!！\s])+|"
                     r"(please )?(remember|don't forget|note|keep in mind)( that)?[,:\s]+|"
                     r"(请)?(记住|别忘了|记一下)[,，:：\s]*)", re.I)
"""Words in front of a fact that are not the fact. Stripped until none is left ("oh and I have two
cats" was stored as "And the user has two cats", "fyi I'm vegan" as "Fyi the user is vegan" until
2026-12-06; "I should mention that I have type 2 diabetes" as "The user should mention that the user
has type 2 diabetes", "One more thing - I'm going to Lisbon" and "hey so i handed in my notice" with
their openers until 2026-12-07)."""


def _without_filler(sentence: str) -> str:
    while (rest := _FILLER.sub("", sentence, count=1)) != sentence and rest:
        sentence = rest
    return sentence


@dataclass
class Statement:
    text: str
    memory_type: str
    topic_id: str | None
    importance: float
    reasons: list[str] = field(default_factory=list)
    said: str = ""
    """The words the statement was made from (what gets embedded)."""
    turn: str = ""
    """The whole short turn the sentence came from, embedded instead of ``said`` when set."""


def _third_person_en(s: str) -> str:
    """The verb is conjugated where "the user" stands for the subject "I", before the object "me"
    becomes "the user" too: "can you help me plan meals" was stored as "...help the user plans
    meals" (2026-12-06, a day after the conjugation was added)."""
    for pattern, repl in _EN_SUBJECT:
        s = pattern.sub(repl, s)
    for pattern, repl in _EN_INVERTED:
        s = pattern.sub(repl, s)
    s = _EN_VERB_FIX.sub(_fix_verb, s)
    for pattern, repl in _EN_OBJECT:
        s = pattern.sub(repl, s)
    s = re.sub(r"\bthe user is not\b|\bthe user isn't\b", "the user is not", s, flags=re.I)
    s = re.sub(r"\bthe user don'?t\b", "the user doesn't", s, flags=re.I)
    s = re.sub(r"\bthe user haven'?t\b", "the user hasn't", s, flags=re.I)
    return s[0].upper() + s[1:] if s else s


def _third_person_zh(s: str) -> str:
    """"我们" / "咱们" (the user and others: a family, a team, a company) become "用户他们", which
    reads right before a verb and before a noun alike ("用户他们公司", "用户他们周末去爬山"); until
    2026-12-06 a leading "我们" became "用户和家人" ("用户和家人组用的是飞书", of a work team) and any
    other "用户们" (users). "自我" (self-) is a word, not "I": "自我介绍" and "自我的成长" stay ("我的"
    needs no rule of its own: its "我" becomes "用户")."""
    return re.sub(r"(?<!自)我", "用户", re.sub(r"我们|咱们", "用户他们", s))


def _resolve_dates(s: str, when: datetime) -> str:
    """Append the absolute date a relative expression means (the relative words stay for context)."""
    def week_of(days: int) -> str:
        start = (when + timedelta(days=days)) - timedelta(days=(when + timedelta(days=days)).weekday())
        return start.date().isoformat()

    month_prev = (when.replace(day=1) - timedelta(days=1)).strftime("%Y-%m")
    month_next = (when.replace(day=28) + timedelta(days=4)).strftime("%Y-%m")
    rules = [
        (r"\btomorrow\b|明天", (when + timedelta(days=1)).date().isoformat()),
        (r"\byesterday\b|昨天", (when - timedelta(days=1)).date().isoformat()),
        (r"后天", (when + timedelta(days=2)).date().isoformat()),
        (r"\bnext week\b|下周|下个星期", f"week of {week_of(7)}"),
        (r"\blast week\b|上周|上个星期", f"week of {week_of(-7)}"),
        (r"\bnext month\b|下个月", month_next),
        (r"\blast month\b|上个月", month_prev),
        (r"\bnext year\b|明年", str(when.year + 1)),
        (r"\blast year\b|去年", str(when.year - 1)),
    ]
    notes = [value for pattern, value in rules if re.search(pattern, s, re.I)]
    return f"{s.rstrip('.。!！')} ({', '.join(notes)})" if notes else s


def _topic(s: str) -> str | None:
    for topic, pattern in TOPICS:
        if pattern.search(s):
            return topic
    return None


def statement(sentence: str, kind: str, when: datetime, topic: bool = True) -> Statement:
    """One kept sentence as a third-person statement with resolved dates and its importance.
    ``topic``: assign a rule topic slot (the rules-only path); the learned change detector
    finds versions of any attribute without one."""
    part = _without_filler(sentence)
    zh = bool(re.search(r"[\u4e00-\u9fff]", part))
    body = _resolve_dates(_third_person_zh(part) if zh else _third_person_en(part), when)
    value, reasons = importance(part, kind)
    return Statement(body, kind, _topic(part) if topic else None, value, reasons, said=part)


_CJK_PAUSE = re.compile(r"(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")
"""A space between two Chinese characters: typed in chat apps where punctuation would be ("你好 我想问一下
我有高血压 每天早上吃一片氨氯地平 那我可以喝柚子汁吗"), it ends a clause. Found on fresh chats (2026-12-07): in 64 %
of their Chinese user turns against 2.5 % of the judge corpus's, so the trigger had judged such a turn whole and
dropped the facts inside the question (26 of 127 expected facts left no memory there; 18 with this)."""


def _clauses(text: str) -> list[list[str]]:
    """Each sentence of ``text`` (:data:`_SPLIT`) as its clauses cut at a Chinese pause (:data:`_CJK_PAUSE`)."""
    return [[q.strip() for q in _CJK_PAUSE.split(p) if q.strip()] for p in _SPLIT.split(text.strip())]


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (:data:`_SPLIT`), a Chinese one also cut at a pause (:data:`_CJK_PAUSE`)."""
    return [clause for sentence in _clauses(text) for clause in sentence]


def screened_pieces(text: str) -> list[str]:
    """What the trigger reads of a turn besides the turn itself: its sentences, except that a clause
    cut at a Chinese pause is read with the clause before it ("打错了 是2019年" is read whole, not
    as "是2019年"). A pause is a weaker end than a mark: alone, the last clause of a correction, a
    thanks or a formatting request reads as a fact ("三百字以内", "攻略我存下来了" kept at 0.74 and
    0.99 where the turn scores 0.05 and 0.00). Chosen 2026-12-07 under a rule written first
    (README, "Round 14"): on fresh chat-style Chinese turns (not in the repository) noise
    dropped 52 -> 57 of 70 and facts kept 65 -> 66 of 70. A turn of one sentence has nothing to read
    besides itself: none."""
    split = _clauses(text)
    if sum(map(len, split)) < 2:
        return []
    out: list[str] = []
    for clauses in split:
        out.extend(clauses[:1])
        out.extend(f"{a} {b}" for a, b in pairwise(clauses))
    return out


def extract(text: str, when: datetime) -> list[Statement]:
    """Statements worth keeping in ``text`` (said at ``when``); empty when the trigger says no.
    Each sentence the trigger keeps becomes one statement (a greeting or question inside a longer
    turn is dropped); when no sentence stands on its own, the whole turn is one statement."""
    whole = decide(text)
    if not whole.keep:
        return []
    kept = [(p, d) for p in sentences(text) if (d := decide(p)).keep] or [(text.strip(), whole)]
    return [statement(sentence, d.kind or whole.kind or "fact", when) for sentence, d in kept]
