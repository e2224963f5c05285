"""What every backend must do the same way. Each test makes its own users."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from agent_memory import ContentTooLargeError, InvalidInputError, Memory, ModelMismatchError, NotFoundError
from agent_memory.embed.hashing import HashingEmbedder
from agent_memory.index import open_index
from agent_memory.model import Original
from agent_memory.reindex import reindex
from tests.conftest import new_user


def test_remember_then_recall_with_score_parts(memory: Memory) -> None:
    u = new_user()
    [mid] = memory.remember(user_id=u, content="我对花生过敏", importance=0.9)
    memory.remember(user_id=u, content="I usually go running at 6am before work.")
    hits = memory.recall(user_id=u, query="点餐时要注意什么")
    assert hits and hits[0].memory_id == mid
    top = hits[0]
    assert top.content == "我对花生过敏"
    p = top.parts
    assert top.score == pytest.approx(p.relevance * p.decay * p.importance_weight * p.type_weight)
    assert 0 <= p.relevance <= 1 and p.similarity > 0.2
    assert "我对花生过敏" in hits.context


def test_users_are_isolated(memory: Memory) -> None:
    a, b = new_user("a"), new_user("b")
    [ma] = memory.remember(user_id=a, content="My favourite colour is green.")
    [mb] = memory.remember(user_id=b, content="My favourite colour is green.", topic_id="colour")
    for hits in (memory.recall(user_id=a, query="favourite colour", min_score=-1, top_k=50),
                 memory.recall(user_id=a, query="green", min_score=-1, include_inferred=True, top_k=50)):
        assert {h.memory_id for h in hits} == {ma}
    with pytest.raises(NotFoundError):
        memory.get(mb, user_id=a)
    with pytest.raises(NotFoundError):
        memory.forget(mb, user_id=a)
    assert memory.versions("colour", user_id=a) == []
    assert [r.id for r in memory.timeline(a, include_inactive=True, include_deleted=True)] == [ma]
    assert all(r["user_id"] == a for r in memory.recalls(a))


@pytest.mark.parametrize("hostile", ['u1" or user_id != "', "u1' || 1==1", "../x", "x" * 200, "用户", "a\nb"])
def test_hostile_user_ids_are_refused_everywhere(memory: Memory, hostile: str) -> None:
    for call in (lambda: memory.recall(user_id=hostile, query="q"),
                 lambda: memory.remember(user_id=hostile, content="x"),
                 lambda: memory.timeline(hostile),
                 lambda: memory.versions("t", user_id=hostile),
                 lambda: memory.erase_user(hostile),
                 lambda: memory.versions(hostile, user_id="u1")):
        with pytest.raises(InvalidInputError):
            call()


def test_hostile_types_never_widen_the_search(memory: Memory) -> None:
    u = new_user()
    memory.remember(user_id=u, content="I like tea", memory_type="preference")
    with pytest.raises(InvalidInputError):
        memory.recall(user_id=u, query="tea", memory_types=['preference" or user_id != "'])
    assert memory.recall(user_id=u, query="tea", memory_types=["event"], min_score=-1) == []


def test_newer_topic_version_supersedes_and_history_stays(memory: Memory) -> None:
    u = new_user()
    t0 = datetime.now(UTC) - timedelta(days=10)
    [old] = memory.remember(user_id=u, content="我最喜欢喝拿铁", memory_type="preference", topic_id="drink",
                            created_at=t0)
    [new] = memory.remember(user_id=u, content="I switched to americano, no more lattes",
                            memory_type="preference", topic_id="drink")
    versions = memory.versions("drink", user_id=u)
    assert [(v.id, v.is_active) for v in versions] == [(old, False), (new, True)]
    hits = memory.recall(user_id=u, query="what coffee does the user drink", min_score=-1)
    assert [h.memory_id for h in hits] == [new]
    original = memory.get(old, user_id=u)["original"]
    assert original["state"]["is_active"] is False and original["state"]["superseded_by"] == new


def test_backfilled_older_version_arrives_inactive(memory: Memory) -> None:
    u = new_user()
    [current] = memory.remember(user_id=u, content="I live in Lisbon", topic_id="city")
    [older] = memory.remember(user_id=u, content="I live in Berlin", topic_id="city",
                              created_at=datetime.now(UTC) - timedelta(days=400))
    assert {v.id: v.is_active for v in memory.versions("city", user_id=u)} == {older: False, current: True}


def test_forget_is_soft_and_restorable(memory: Memory) -> None:
    u = new_user()
    [mid] = memory.remember(user_id=u, content="My locker code is 4321")
    memory.forget(mid, user_id=u)
    assert memory.recall(user_id=u, query="locker code", min_score=-1) == []
    assert memory.timeline(u) == []
    [rec] = memory.timeline(u, include_deleted=True)
    assert rec.id == mid and rec.deleted_at is not None
    assert memory.get(mid, user_id=u)["original"]["state"]["deleted_at"] is not None
    memory.restore(mid, user_id=u)
    assert [h.memory_id for h in memory.recall(user_id=u, query="locker code", min_score=-1)] == [mid]


def test_erase_user_removes_everything_and_proves_it(memory: Memory) -> None:
    u, other = new_user(), new_user()
    ids = memory.remember(user_id=u, content="I have two cats", topic_id="pets")
    memory.remember(user_id=u, content="Now I have three cats", topic_id="pets")
    memory.forget(ids[0], user_id=u)
    [keep] = memory.remember(user_id=other, content="I have a dog")
    memory.recall(user_id=u, query="pets")
    counts = memory.erase_user(u)
    assert counts["index_entries"] == 2
    assert counts["object_versions"] >= 2
    assert counts["recall_logs"] >= 1
    assert memory.erase_user(u) == {"index_entries": 0, "object_versions": 0, "recall_logs": 0}
    assert list(memory.store.list_keys(f"memories/{u}/")) == []
    assert memory.timeline(u, include_inactive=True, include_deleted=True) == []
    assert memory.get(keep, user_id=other)["record"]["id"] == keep


def test_idempotency_key_yields_one_memory(memory: Memory) -> None:
    u = new_user()
    first = memory.remember(user_id=u, content="Call mum on Sunday", idempotency_key="msg-1")
    again = memory.remember(user_id=u, content="Call mum on Sunday", idempotency_key="msg-1")
    assert first == again
    assert len(memory.timeline(u)) == 1


def test_filters_for_type_importance_and_provenance(memory: Memory) -> None:
    u = new_user()
    [said] = memory.remember(user_id=u, content="I am vegetarian", memory_type="preference", importance=0.9)
    [guess] = memory.remember(user_id=u, content="The user probably cooks at home a lot", source="agent_inferred")
    [minor] = memory.remember(user_id=u, content="I ate a vegetable soup", memory_type="event", importance=0.1)

    def ids(**kw: object) -> set[str]:
        return {h.memory_id for h in memory.recall(user_id=u, query="diet and meat", min_score=-1, top_k=10,
                                                   **kw)}  # type: ignore[arg-type]

    assert ids() == {said, minor}
    assert ids(include_inferred=True) == {said, guess, minor}
    assert ids(memory_types=["event"]) == {minor}
    assert ids(min_importance=0.5) == {said}
    inferred = [h for h in memory.recall(user_id=u, query="meat", min_score=-1, include_inferred=True)
                if h.memory_id == guess]
    assert "inferred" in memory.recall(user_id=u, query="meat", min_score=-1, include_inferred=True).context
    assert inferred[0].source == "agent_inferred"


def test_recall_log_records_candidates_and_choice(memory: Memory) -> None:
    u = new_user()
    [mid] = memory.remember(user_id=u, content="My daughter is called Ana")
    result = memory.recall(user_id=u, query="daughter name", min_score=-1)
    [entry] = memory.recalls(u)
    assert entry["recall_id"] == result.recall_id
    assert entry["query"] == "daughter name" and entry["chosen"] == [mid]
    cand = entry["candidates"][0]
    assert {"similarity", "decay", "importance_weight", "type_weight", "score", "reason"} <= cand.keys()


def test_one_common_word_is_not_a_full_word_match_in_a_small_store(memory: Memory) -> None:
    """With four memories BM25's idf cannot tell "get" from a rare word: scaled to the best match,
    "I get up at 5am" was the full lexical match for a question about notes and came first. Under
    ``small_store`` memories it counts for the share of the question it matches."""
    u = new_user()
    ids = {text: mid for text in ("I get up at 5am for my shift", "I write everything in Notion",
                                  "I have a sister in Leeds", "My dog is a beagle called Pip")
           for [mid] in [memory.remember(user_id=u, content=text)]}
    query = "how do I get a share link for a page in my notes app?"
    first = memory.recall(user_id=u, query=query, min_score=-1, gate=False)[0]
    assert first.memory_id == ids["I write everything in Notion"]
    base = memory.settings
    try:
        memory.settings = base.model_copy(update={"small_store": 0})  # relative scales only, as before
        assert memory.recall(user_id=u, query=query, min_score=-1, gate=False)[0].memory_id == ids[
            "I get up at 5am for my shift"]
    finally:
        memory.settings = base


def test_a_date_in_the_question_favours_memories_from_then(memory: Memory) -> None:
    u = new_user()
    [march] = memory.remember(user_id=u, content="I went hiking in the mountains with my brother", session_id="s1",
                              created_at=datetime(2025, 3, 14, 10, tzinfo=UTC))
    [june] = memory.remember(user_id=u, content="I went hiking in the hills with my sister", session_id="s2",
                             created_at=datetime(2025, 6, 2, 10, tzinfo=UTC))
    for when, expected in (("in March 2025", march), ("on June 2, 2025", june)):
        result = memory.recall(user_id=u, query=f"Where did I go hiking {when}?", min_score=-1)
        assert [h.memory_id for h in result][:2] == [expected, march if expected == june else june]
        assert result[0].parts.time_weight == 2.0 and result[1].parts.time_weight == 1.0
    latest = memory.recalls(u)[0]
    assert [w["said"] for w in latest["time_windows"]] == ["June 2, 2025"]
    assert latest["time_windows"][0]["start"].startswith("2025-06-02")


def test_timeline_pages_newest_first(memory: Memory) -> None:
    u = new_user()
    base = datetime.now(UTC) - timedelta(days=30)
    notes = ["I bought a new kettle", "the dentist is on Harley Street", "my cousin plays the cello",
             "we had pizza for dinner", "the car needs new tyres"]  # unrelated facts: no versions, no duplicates
    ids = [memory.remember(user_id=u, content=note, created_at=base + timedelta(days=i))[0]
           for i, note in enumerate(notes)]
    page1 = memory.timeline(u, limit=2)
    page2 = memory.timeline(u, limit=2, before=page1[-1].created_at)
    page3 = memory.timeline(u, limit=2, before=page2[-1].created_at)
    assert [r.id for r in page1 + page2 + page3] == ids[::-1]


def test_limits_and_bad_input(memory: Memory) -> None:
    u = new_user()
    with pytest.raises(ContentTooLargeError):
        memory.remember(user_id=u, content="x" * (memory.settings.max_content_chars + 1))
    with pytest.raises(InvalidInputError, match="timezone"):
        memory.remember(user_id=u, content="x", created_at=datetime(2024, 1, 1))
    with pytest.raises(InvalidInputError):
        memory.remember(user_id=u, content="x", memory_type="secret")
    with pytest.raises(InvalidInputError):
        memory.get("not-a-memory-id")
    assert memory.timeline(u, include_inactive=True, include_deleted=True) == []


def test_messages_keep_only_what_is_worth_remembering(memory: Memory) -> None:
    u = new_user()
    ids = memory.remember(user_id=u, messages=[
        {"role": "user", "content": "hi!"},
        {"role": "assistant", "content": "Hello, how can I help?"},
        {"role": "user", "content": "I work at Acme. I love black coffee."},
        {"role": "user", "content": "what's the capital of Australia?"},
        {"role": "user", "content": "我下周要去上海出差三天"},
        {"role": "assistant", "content": "So you prefer window seats, noted."},
    ])
    rows = {memory.get(i, user_id=u)["record"]["summary"]: memory.get(i, user_id=u)["record"] for i in ids}
    assert set(rows) == {"The user works at Acme.", "The user loves black coffee.", "The user prefers window seats",
                         next(k for k in rows if k.startswith("用户下周要去上海出差三天 (week of"))}
    assert rows["The user works at Acme."]["topic_id"] is None  # no fixed slots: the change model finds versions
    assert rows["The user loves black coffee."]["memory_type"] == "preference"
    assert rows["The user prefers window seats"]["source"] == "agent_inferred"
    original = memory.get(ids[0], user_id=u)["original"]
    assert original["provenance"]["said"] == "I work at Acme. I love black coffee."
    assert original["provenance"]["trigger"]
    [log] = [memory.store.get_json(k) for k in memory.store.list_keys(f"decisions/{u}/")]
    assert [d["keep"] for d in log["decisions"]] == [False, False, True, False, True, True]
    assert memory.remember(user_id=u, messages=[{"role": "user", "content": "谢谢"}]) == []

    [new] = memory.remember(user_id=u, messages=[{"role": "user", "content": "I quit Acme and joined Globex."}])
    record = memory.get(new, user_id=u)
    assert record["original"]["provenance"]["change"]["decision"] == "new_version"
    chain = memory.versions(record["record"]["topic_id"], user_id=u)  # a change of mind makes a version chain
    assert [(v.summary, v.is_active) for v in chain] == [("The user works at Acme.", False),
                                                          ("The user quit Acme and joined Globex.", True)]
    assert chain[0].topic_id == chain[1].topic_id == f"auto-{chain[0].id[:16]}"  # written to the old one too


def test_extracted_statements_are_found_by_questions_in_the_users_words(memory: Memory) -> None:
    u = new_user()
    [mid] = memory.remember(user_id=u, messages=[{"role": "user", "content": "谢谢"},
                                                  {"role": "user", "content": "我对花生过敏"}])
    [hit] = memory.recall(user_id=u, query="点餐时要注意什么")
    assert hit.memory_id == mid and hit.content == "用户对花生过敏"  # shown third person, matched as said


def test_a_repeated_statement_is_a_confirmation_not_a_new_memory(memory: Memory) -> None:
    u = new_user()
    [first] = memory.remember(user_id=u, content="I take my coffee black")
    [again] = memory.remember(user_id=u, content="I take my coffee black!")
    assert memory.get(again, user_id=u)["original"]["state"]["duplicate_of"] == first
    assert memory.get(first, user_id=u)["original"]["state"]["confirmations"] == 1
    assert [h.memory_id for h in memory.recall(user_id=u, query="coffee")] == [first]
    [other] = memory.remember(user_id=u, content="I take my tea with milk")  # unrelated: a new memory
    assert memory.get(other, user_id=u)["record"]["is_active"] is True


def test_long_content_is_chunked_with_a_pointer_to_the_document(memory: Memory) -> None:
    u = new_user()
    parts = [f"Paragraph {i}: the quarterly plan item {i} is owned by team {i % 5}." for i in range(300)]
    parts[200] = "The secret launch codename for the new product is Bluebird."
    text = " ".join(parts)
    ids = memory.remember(user_id=u, content=text)
    assert len(ids) > 3
    provenance = [memory.get(i, user_id=u)["original"]["provenance"] for i in ids]
    assert {p["kind"] for p in provenance} == {"chunk"} and [p["chunk"] for p in provenance] == list(range(len(ids)))
    document = memory.store.get_json(provenance[0]["document"])
    assert document["content"] == text and document["chunks"] == ids
    hits = memory.recall(user_id=u, query="what is the launch codename of the new product?", min_score=-1)
    assert "Bluebird" in memory.get(hits[0].memory_id, user_id=u)["original"]["content"]
    assert memory.erase_user(u)["object_versions"] >= len(ids) + 1


def test_recall_rewrites_a_query_that_refers_to_the_conversation(memory: Memory) -> None:
    u = new_user()
    memory.remember(user_id=u, content="For the Apollo project the user wants weekly status emails")
    plain = memory.recall(user_id=u, query="do the same as last time")
    result = memory.recall(user_id=u, query="do the same as last time", conversation=[
        {"role": "user", "content": "How should we report on the Apollo project?"},
        {"role": "assistant", "content": "Weekly emails, as before?"}])
    assert plain.rewritten_query is None
    assert result.rewritten_query and "Apollo" in result.rewritten_query
    assert "Apollo" in result[0].content
    assert memory.recalls(u)[0]["rewritten_query"] == result.rewritten_query


def test_index_failure_leaves_original_and_reconciler_completes(memory: Memory) -> None:
    u = new_user()
    req = memory.validate_remember(user_id=u, content="My passport expires in March 2027")
    [staged] = memory.stage(req)  # S3 written, index write "lost" (crash before step 2)
    assert memory.timeline(u) == []
    assert Original.model_validate(memory.store.get_json(memory.storage_key(u, staged.memory_id)))
    report = reindex(memory.iter_originals(u), lambda o: memory.storage_key(o.user_id, o.memory_id),
                     memory.embedder, memory.index, missing_only=True)
    assert report.indexed == 1
    again = reindex(memory.iter_originals(u), lambda o: memory.storage_key(o.user_id, o.memory_id),
                    memory.embedder, memory.index, missing_only=True)
    assert again.indexed == 0 and again.skipped == 1
    assert [h.memory_id for h in memory.recall(user_id=u, query="passport expiry", min_score=-1)] == [
        staged.memory_id]


def test_index_never_points_to_a_missing_original(memory: Memory) -> None:
    class Boom(Exception):
        pass

    u = new_user()
    real_put = memory.store.put_json
    # earlier tests' recall-log entries are written in the background through the same put_json:
    # written now, or one lands in the broken window below and a later test's flush reports it
    memory.recall_log.flush()

    def failing_put(key: str, doc: dict[str, object]) -> None:
        raise Boom("store down")

    memory.store.put_json = failing_put  # type: ignore[method-assign]
    try:
        with pytest.raises(Boom):
            memory.remember(user_id=u, content="this must not be indexed")
    finally:
        memory.store.put_json = real_put  # type: ignore[method-assign]
    assert memory.timeline(u, include_inactive=True, include_deleted=True) == []


def test_model_pin_mismatch_is_a_clear_error(memory: Memory) -> None:
    other = open_index(memory.settings)
    with pytest.raises(ModelMismatchError, match="reindex") as err:
        other.ensure(HashingEmbedder().info)
    assert "use-multilingual-v3" in str(err.value) and "char-bigram-hash" in str(err.value)


def test_reindex_into_new_collection_keeps_results_and_state(memory: Memory) -> None:
    u = new_user()
    memory.remember(user_id=u, content="I play the cello on Tuesdays")
    memory.remember(user_id=u, content="My sister lives in Osaka")
    [gone] = memory.remember(user_id=u, content="My cello teacher is Mr. Kim")
    memory.forget(gone, user_id=u)
    before = [h.memory_id for h in memory.recall(user_id=u, query="music instrument", min_score=-1)]
    target = open_index(memory.settings, collection=memory.settings.collection_name + "_re")
    report = reindex(memory.iter_originals(u), lambda o: memory.storage_key(o.user_id, o.memory_id),
                     memory.embedder, target)
    assert report.indexed == 3
    vec = memory.embedder.embed_query("music instrument")
    from agent_memory.filters import MemoryFilter

    after = [h.record.id for h in target.search(vec, MemoryFilter(user_id=u), limit=10, strong=True)]
    assert after == before and gone not in after
    target.drop()


def test_vector_dimension_is_checked(memory: Memory) -> None:
    u = new_user()
    [o] = memory.prepare(memory.validate_remember(user_id=u, content="x"))
    from agent_memory.model import IndexRecord

    with pytest.raises(ValueError, match="dim"):
        memory.index.write([IndexRecord.from_original(o, "k")], np.zeros((1, 3), dtype=np.float32))


def test_selfcheck_passes_and_cleans_up(memory: Memory) -> None:
    result = memory.selfcheck()
    assert result["ok"], result
    assert memory.timeline(memory.settings.canary_user_id, include_inactive=True, include_deleted=True) == []
    assert memory.health()["status"] == "ok"


def test_two_versions_of_one_millisecond_keep_one_active(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index keeps ``created_at`` in milliseconds, the original in microseconds. Within one
    millisecond the order is ``(created_at in ms, id)`` everywhere; comparing a row's milliseconds
    with an original's microseconds once let a back-filled version take the current one's place,
    and concurrent writers of one millisecond supersede each other (no active version left)."""
    from agent_memory.ids import memory_id_for_key

    u = new_user()
    monkeypatch.setattr(memory, "settings", memory.settings.model_copy(  # two cities: no duplicate check
        update={"deduplicate": False, "detect_changes": False}))
    keys = [f"k{i}" for i in range(8)]
    low, high = sorted(keys[:2], key=lambda k: memory_id_for_key(u, k))  # the back-filled one gets the lower id
    t = datetime(2026, 5, 1, 12, 0, 0, 700, tzinfo=UTC)
    [current] = memory.remember(user_id=u, content="I live in Oslo", topic_id="city", created_at=t,
                                idempotency_key=high)
    [backfilled] = memory.remember(user_id=u, content="I live in Bergen", topic_id="city",
                                   created_at=t - timedelta(microseconds=300), idempotency_key=low)
    assert backfilled < current
    versions = memory.versions("city", user_id=u)
    assert {v.id for v in versions if v.is_active} == {current}


def test_concurrent_writers_leave_exactly_one_active_version(memory: Memory) -> None:
    from concurrent.futures import ThreadPoolExecutor

    u = new_user()
    with ThreadPoolExecutor(6) as pool:
        ids = list(pool.map(lambda i: memory.remember(user_id=u, content=f"I live in city number {i}",
                                                      topic_id="city")[0], range(6)))
    versions = memory.versions("city", user_id=u)
    assert sorted(v.id for v in versions) == sorted(ids)
    [active] = [v for v in versions if v.is_active]
    assert active.id == max(versions, key=lambda v: (v.created_at, v.id)).id
    for v in versions:  # the originals (what a re-index reads) agree with the index
        assert memory.get(v.id, user_id=u)["original"]["state"]["is_active"] is v.is_active


def test_tiering_moves_old_unimportant_unrecalled_memories_out_and_back(memory: Memory) -> None:
    from agent_memory.reindex import index_missing
    from agent_memory.tiering import load_cold, tier_user

    u = new_user()
    old = datetime.now(UTC) - timedelta(days=300)
    [car] = memory.remember(user_id=u, content="My first car was a red Volvo", created_at=old, importance=0.3)
    [arm] = memory.remember(user_id=u, content="I broke my arm skiing", created_at=old, importance=0.9)
    [porto] = memory.remember(user_id=u, content="I live in Porto", created_at=old, importance=0.3, topic_id="city")
    [lisbon] = memory.remember(user_id=u, content="I live in Lisbon", importance=0.3, topic_id="city")
    [violin] = memory.remember(user_id=u, content="I used to play the violin", created_at=old, importance=0.2)
    assert violin in [h.memory_id for h in memory.recall(user_id=u, query="violin")]  # recently recalled

    report = tier_user(memory, u)
    assert report.moved_cold == 2 and report.kept_recently_recalled == 1
    assert {r.id for r in load_cold(memory, u)} == {car, porto}  # old + unimportant + not recalled
    assert memory.index.get([car, porto]) == [] and len(memory.index.get([arm, lisbon, violin])) == 3
    assert memory.get(car, user_id=u)["original"]["state"]["tier"] == "cold"
    rows = {r.id: r for r in memory.timeline(u, include_inactive=True)}  # nothing lost from view
    assert set(rows) == {car, arm, porto, lisbon, violin} and rows[car].tier == "cold"
    assert [v.id for v in memory.versions("city", user_id=u)] == [porto, lisbon]
    assert index_missing(memory).cold >= 2 and memory.index.get([car]) == []  # reconciler leaves them cold
    memory.forget(porto, user_id=u)  # forgetting works on a cold memory too
    assert next(r for r in load_cold(memory, u) if r.id == porto).deleted_at is not None

    hot = memory.recall(user_id=u, query="what was my first car", min_score=-1)
    assert car not in [h.memory_id for h in hot] and hot.rehydrated == 0
    found = memory.recall(user_id=u, query="what was my first car", include_cold=True)
    assert found.rehydrated == 2 and found[0].memory_id == car
    assert load_cold(memory, u) == [] and len(memory.index.get([car, porto])) == 2
    assert memory.get(car, user_id=u)["original"]["state"]["tier"] == "hot"
    assert [v.is_active for v in memory.versions("city", user_id=u)] == [False, True]


def test_a_recall_that_finds_nothing_hot_rehydrates_by_itself(memory: Memory) -> None:
    from agent_memory.tiering import tier_user

    u = new_user()
    old = datetime.now(UTC) - timedelta(days=400)
    [mid] = memory.remember(user_id=u, content="我的护照号码以4711结尾", created_at=old, importance=0.2)
    assert tier_user(memory, u).moved_cold == 1
    result = memory.recall(user_id=u, query="护照号码")
    assert result.rehydrated == 1 and [h.memory_id for h in result] == [mid]
    assert memory.recalls(u)[0]["rehydrated"] == 1
    assert memory.erase_user(u)["object_versions"] >= 2
