"""``agent-memory train judge``: fit the trigger, memory-type, change and query-gate models on the
training split, choose their thresholds on out-of-fold predictions of that split, and write
``weights/*.npz`` plus a report. The held-out split is never read here.

Threshold choices (each from out-of-fold probabilities, so not fitted to memorised rows):
- trigger: the highest threshold that still keeps >= ``KEEP_TARGET`` of the worth-keeping turns
  in every language (a missed memory costs more than a stored one, which ranking can push down);
- change detector: for ``new_version`` and ``duplicate``, the lowest threshold at which at most
  ``FALSE_CHANGE`` of the unrelated pairs would be taken for that class (a wrong supersede hides a
  true memory: the costlier mistake);
- query gate: the highest threshold on P(personal) that still passes >= ``PERSONAL_TARGET`` of
  the personal queries.
The cascade band of each is the probability range around its threshold that holds half of the
out-of-fold mistakes, capped at 15 % of the rows (there a language model, when configured, decides).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.embed import Embedder, memory_vectors
from agent_memory.judge import corpus
from agent_memory.judge.answer import fit_answer
from agent_memory.judge.features import Array, pair_features
from agent_memory.judge.linear import fit, out_of_fold
from agent_memory.judge.mlp import fit_hidden, fit_hidden_ensemble
from agent_memory.judge.models import LEXICAL, WEIGHTS, Classifier, Judge, feature_row, load_judge, weights_path
from agent_memory.judge.thresholds import band, highest_threshold

_SAID_AT = datetime(2026, 3, 2, 10, tzinfo=UTC)
KEEP_TARGET = 0.96
FALSE_CHANGE = 0.03
TRIGGER_MEMBERS = 5
"""The trigger's hidden layer is the mean of this many networks (seeds 1..5). One network is one
draw of a chaotic fit: embeddings moved by 1e-6 moved its out-of-fold noise-dropped figure by
several points, and another machine's float rounding does the same (README, "train judge")."""
PERSONAL_TARGET = 0.96
"""The gate's threshold passes this share of personal queries in each language, out of fold.
0.96, not 0.97 (2026-12-02), chosen on the training split's out-of-fold curve: at 0.97 the hidden
layer sat on a cliff (general gated 0.814, a handful of confidently wrong personal questions pin the
threshold), at 0.96 it gates 0.891 and still passes 0.978 of the personal ones."""
PAIR_ROUNDS = (1, 2, 3)
"""The writing rounds whose pairs train the change model (and add statements to the trigger's
keep side). Rounds 4 and 5 were written to be hard: trained on, they brought the false-supersede
rate back under 0.05 on the held-out pairs but found a third fewer changes (README, "Rounds 4 and
5"), so the shipped models are those of rounds 1-3 and ``--pair-rounds 1,2,3,4,5`` trains the
others. Rounds 7 and 8 (plain same-frame changes) moved the threshold the same way and found
fewer changes at its own cut, on the same curve at equal wrong supersedes (README, "Trained on
rounds 7-8, and not kept"). Their held-out rows are always evaluated."""
TRIGGER_ROUNDS = (1, 2, 3)
"""The writing rounds whose turns train the trigger and memory-type models. Round 6 (turns of facts
said in passing, 2026-12-04) was trained on once, by a rule written first: held-out targets held,
but LoCoMo's extracted R@10 fell 71.5 -> 70.6, so the shipped trigger is that of rounds 1-3
(README, "Trained on round 6, and not kept") and ``--trigger-rounds 1,2,3,6`` trains the other.
Without this, a new round of turns would silently join the next ``train judge``."""
GATE_ROUNDS = (1, 2, 3)
"""The writing rounds whose queries train the query gate and its answer model. Without this, a new
round of queries would silently join the next ``train judge``."""
Progress = Callable[[str, int], None]


@dataclass
class Trained:
    model: Classifier
    report: dict[str, Any]


def _vectors(embedder: Embedder | None, texts: Sequence[str]) -> list[Array | None]:
    if embedder is None:
        return [None] * len(texts)
    out: list[Array | None] = []
    for i in range(0, len(texts), 256):
        out.extend(embedder.embed_documents(list(texts[i:i + 256])))
    return out


def _text_matrix(texts: Sequence[str], vectors: Sequence[Array | None], rules: bool) -> Array:
    return np.vstack([feature_row(t, v, rules) for t, v in zip(texts, vectors, strict=True)])


def statements(data: Path = corpus.DATA, pair_rounds: Sequence[int] = PAIR_ROUNDS) -> list[str]:
    """Plain statements a user made about themselves: the training split's pair statements and
    profile memories, all worth keeping. The turns are messy chat; without these the trigger
    learned that a short clean "I work at Acme." looks like "ok thanks" (the rules' own labelled
    set, another writer's: 84 % of its worth-keeping turns kept without them, 99 % with)."""
    pairs = corpus.load("pairs", data, rounds=pair_rounds).train
    profiles = corpus.load("profiles", data).train
    return list(dict.fromkeys([*(r["existing"] for r in pairs), *(r["new"] for r in pairs),
                               *(m["text"] for p in profiles for m in p["memories"])]))


def _oof_with_extra(x: Array, y: Array, extra: Array, classes: tuple[str, ...],
                    fitter: Callable[..., Classifier] = fit, parts: Array | None = None,
                    owner: npt.NDArray[np.int64] | None = None) -> tuple[Array, Array]:
    """Out-of-fold probabilities for the rows of ``x``; the ``extra`` rows (label 1) are in every
    training fold and never scored. ``parts`` (rows of sentences, ``owner`` = the row of ``x``
    each came from) are scored by the model whose fold held their turn out."""
    order = np.random.default_rng(7).permutation(len(y))
    out = np.zeros((len(y), len(classes)), dtype=np.float32)
    n_parts = 0 if parts is None else len(parts)
    out_parts = np.zeros((n_parts, len(classes)), dtype=np.float32)
    for k in range(5):
        test = order[k::5]
        train = np.setdiff1d(order, test)
        xt = np.vstack([x[train], extra])
        yt = np.concatenate([y[train], np.ones(len(extra), dtype=np.int64)])
        model = fitter(xt, yt, classes)
        out[test] = model.proba(x[test])
        if parts is not None and owner is not None and n_parts:
            mine = np.isin(owner, test)
            if mine.any():
                out_parts[mine] = model.proba(parts[mine])
    return out, out_parts


def _as_screened(p: Array, p_parts: Array, owner: npt.NDArray[np.int64]) -> Array:
    """A turn's score as the service decides it (:func:`agent_memory.pipeline.drafts.screen_turns`):
    the whole turn's, or its best sentence's when that is higher."""
    out = p.copy()
    if len(owner):
        np.maximum.at(out, owner, p_parts)
    return out


def train_trigger(rows: list[dict[str, Any]], vectors: list[Array | None], langs: Array,
                  extra: list[str], extra_vectors: list[Array | None],
                  embedder: Embedder | None = None) -> tuple[Trained, Trained]:
    """The keep/drop model and its threshold, chosen out of fold on the decision the service
    makes: a short turn is also read sentence by sentence and kept when one sentence is
    (``screen_turns``). Chosen on whole turns alone, the threshold kept 0.96 out of fold but 0.99
    of the held-out turns as screened, and let the difference through as noise."""
    from agent_memory.pipeline.drafts import screened_parts

    y = np.array([1 if r["keep"] else 0 for r in rows])
    texts = [r["text"] for r in rows]
    fitters: dict[str, Callable[..., Classifier]] = {
        "linear": fit, "hidden": partial(fit_hidden_ensemble, members=TRIGGER_MEMBERS)}
    split = [screened_parts(t) for t in texts]
    part_texts = [p for parts in split for p in parts]
    owner = np.array([i for i, parts in enumerate(split) for _ in parts], dtype=np.int64)
    part_vectors = _vectors(embedder, part_texts)

    def measure(x: Array, xe: Array, xp: Array, model: str) -> tuple[Array, float, dict[str, Any]]:
        whole, parts = _oof_with_extra(x, y, xe, ("drop", "keep"), fitters[model], xp, owner)
        p = _as_screened(whole[:, 1], parts[:, 1], owner)
        t = highest_threshold(p, y == 1, langs, KEEP_TARGET)
        return p, t, {"threshold": t, "kept_oof": round(float((p[y == 1] >= t).mean()), 3),
                      "dropped_oof": round(float((p[y == 0] < t).mean()), 3)}

    def parts_matrix(rules: bool) -> Array:
        if not part_texts:
            return np.zeros((0, 0), dtype=np.float32)
        return _text_matrix(part_texts, part_vectors, rules)

    matrices = {rules: (_text_matrix(texts, vectors, rules), _text_matrix(extra, extra_vectors, rules),
                        parts_matrix(rules)) for rules in (False, True)}
    results = {("linear", rules): measure(*matrices[rules], "linear") for rules in (False, True)}
    # the rules stay only when they add value out of fold (more noise dropped at the same keep rate)
    rules = results[("linear", True)][2]["dropped_oof"] > results[("linear", False)][2]["dropped_oof"]
    results[("hidden", rules)] = measure(*matrices[rules], "hidden")
    # so does the hidden layer
    model = max(("linear", "hidden"), key=lambda m: (results[(m, rules)][2]["dropped_oof"], m == "linear"))
    x, xe, _ = matrices[rules]
    p, t, _ = results[(model, rules)]
    wrong = (p >= t) != (y == 1)
    meta = {"threshold": t, "band": band(p, wrong, t), "rules": rules, "model": model, "keep_target": KEEP_TARGET,
            "threshold_on": "turns as screened (the turn or its best sentence)", "screened_sentences": len(part_texts),
            "extra_statements": len(extra),
            "oof": {f"{m}{'_with_rules' if r else ''}": v[2] for (m, r), v in results.items()}}
    trigger = fitters[model](np.vstack([x, xe]), np.concatenate([y, np.ones(len(xe), dtype=np.int64)]),
                             ("drop", "keep"), meta=meta)
    # memory type, on the kept turns
    kept_idx = np.flatnonzero(y == 1)
    ty = np.array([corpus.TURN_TYPES.index(rows[i]["memory_type"]) for i in kept_idx])
    oof_t = out_of_fold(x[kept_idx], ty, corpus.TURN_TYPES)
    type_acc = float((oof_t.argmax(axis=1) == ty).mean())
    from agent_memory.pipeline.trigger import decide

    rule_acc = float(np.mean([decide(rows[i]["text"]).kind == rows[i]["memory_type"] for i in kept_idx]))
    types = fit(x[kept_idx], ty, corpus.TURN_TYPES, meta={"rules": rules, "accuracy_oof": round(type_acc, 3),
                                                          "rules_accuracy": round(rule_acc, 3)})
    return Trained(trigger, meta), Trained(types, types.meta)


def _cross_negatives(rows: list[dict[str, Any]], seed: int = 11) -> list[dict[str, Any]]:
    """Easy negatives: a pair's new statement against another pair's existing memory of the same
    language and a different attribute. At run time the detector meets the user's other
    memories too, not only the one the new statement is about."""
    rng = random.Random(seed)
    out = []
    for r in rows:
        others = [o for o in rows if o["lang"] == r["lang"] and o["attribute"] != r["attribute"]]
        if others:
            o = rng.choice(others)
            out.append({"id": f"{r['id']}~{o['id']}", "existing": o["existing"], "new": r["new"],
                        "label": "unrelated", "lang": r["lang"], "synthetic": "cross"})
    return out


def _as_stored(said: str) -> str:
    """A memory as the pipeline stores an extracted statement ("The user works at Acme",
    "用户在阿里上班"): at run time the change model's candidates are index summaries."""
    from agent_memory.pipeline.extract import statement

    return statement(said, "fact", _SAID_AT, topic=False).text


def _third_person(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each pair again with the existing memory as stored (:func:`_as_stored`)."""
    return [{**r, "existing": _as_stored(r["existing"]), "synthetic": "third_person"} for r in rows]


def train_pair(rows: list[dict[str, Any]], embedder: Embedder | None,
               conversation: Sequence[dict[str, Any]] = (), people: Sequence[dict[str, Any]] = ()) -> Trained:
    """The change model on the written pairs, their third-person copies, easy cross-pair negatives,
    ``conversation``'s unrelated rows (:func:`locomo_negatives`) and ``people``'s
    (:func:`profile_negatives`). The threshold of each class is set on the written pairs alone (and
    their copies): the extra negatives teach the model what it meets, they do not make a threshold
    look safe."""
    rows = (rows + _cross_negatives(rows) + _third_person(rows)
            + [{**r, "synthetic": "conversation"} for r in conversation]
            + [{**r, "synthetic": "profile"} for r in people])
    va = _vectors(embedder, [r["existing"] for r in rows])
    vb = _vectors(embedder, [r["new"] for r in rows])
    sims = [float(a @ b) if a is not None and b is not None else 0.0 for a, b in zip(va, vb, strict=True)]
    x = np.vstack([pair_features(r["existing"], r["new"], a, b, s)
                   for r, a, b, s in zip(rows, va, vb, sims, strict=True)])
    sims_pos = np.array([s for r, s in zip(rows, sims, strict=True) if r["label"] != "unrelated"])
    y = np.array([corpus.PAIR_LABELS.index(r["label"]) for r in rows])
    p = out_of_fold(x, y, corpus.PAIR_LABELS, groups=[r["id"] for r in rows])
    thresholds = {}
    # false changes are counted on the written pairs (and their third-person copies), not on the
    # easy cross-pair negatives, which would make any threshold look safe
    unrelated = (y == corpus.PAIR_LABELS.index("unrelated")) & np.array(
        [r.get("synthetic") not in ("cross", "conversation", "profile") for r in rows])
    for cls in ("new_version", "duplicate"):
        k = corpus.PAIR_LABELS.index(cls)
        t = 0.99
        for cand in np.linspace(0.99, 0.2, 80):
            if (p[unrelated, k] >= cand).mean() <= FALSE_CHANGE:
                t = float(cand)
        thresholds[cls] = round(t, 3)
    pred = np.full(len(y), corpus.PAIR_LABELS.index("unrelated"))
    for cls in ("duplicate", "new_version"):
        k = corpus.PAIR_LABELS.index(cls)
        pred[(p[:, k] >= thresholds[cls]) & (p[:, k] >= p.max(axis=1) - 1e-9)] = k
    real = np.array([not r.get("synthetic") for r in rows])
    recall = {c: round(float((pred[(y == i) & real] == i).mean()), 3) for i, c in enumerate(corpus.PAIR_LABELS)}
    best = np.maximum(p[:, 0], p[:, 1])
    wrong = pred != y
    lo, hi = band(best, wrong, min(thresholds.values()))
    meta = {"thresholds": thresholds, "band": [lo, hi], "false_change_target": FALSE_CHANGE,
            "recall_oof": recall, "cross_negatives": sum(1 for r in rows if r.get("synthetic") == "cross"),
            "third_person_copies": sum(1 for r in rows if r.get("synthetic") == "third_person"),
            "conversation_negatives": len(conversation), "profile_negatives": len(people),
            "candidate_min_similarity": round(float(np.quantile(sims_pos, 0.02)), 3)
            if embedder is not None and len(sims_pos) else -1.0}
    return Trained(fit(x, y, corpus.PAIR_LABELS, meta=meta), meta)


LOCOMO_PAIR_CONVERSATIONS = range(2)
"""LoCoMo conversations whose statements give the change model unrelated rows: 0-1. Conversation 2
was kept out to choose this (statements superseded there: 169 of 793 with the change model of the
written pairs alone, 6 with these rows); 3-5 are for evaluation only."""


def locomo_negatives(path: Path, embedder: Embedder, screen: Judge,
                     conversations: range = LOCOMO_PAIR_CONVERSATIONS, candidates: int = 3,
                     repeat: float = 0.8) -> list[dict[str, Any]]:
    """Unrelated rows as the write path meets them: each statement the pipeline makes from
    LoCoMo's turns (``screen``'s trigger, sentence by sentence) against the ``candidates`` earlier
    statements of the conversation nearest to it, the memories the change model is shown.

    Why: two friends talking over months rarely change an attribute, but the statements around a
    new one are about the same things (a painting, the kids, a support group). The written pairs
    teach "same attribute, new value" against look-alikes of one attribute; they never show the
    model a stream of neighbouring facts, and trained on them alone it called a fifth of
    conversation 2's statements new versions, each hiding a true memory from recall. Near repeats
    (cosine >= ``repeat`` between the statements' own words) are left out: some of those are the
    same fact said again. The candidates are found as the service finds them, by the vectors
    recall uses (words and context); the repeat check reads the words alone, since two contexts
    of the same fact can differ more than the fact (a statement's context holds two messages since
    2026-12-04)."""
    import tempfile

    from agent_memory.config import Settings
    from agent_memory.evaluation.locomo import load
    from agent_memory.service import Memory

    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="agent-memory-locomo-pairs-") as tmp:
        m = Memory(Settings(data_dir=Path(tmp), store="file", recall_log=False, detect_changes=False,
                            deduplicate=False), embedder=embedder)
        m._judge = screen
        for conv in [c for i, c in enumerate(load(path)) if i in conversations]:
            made = []
            for start in range(0, len(conv.turns), 200):  # a request carries at most 200 messages
                part = conv.turns[start:start + 200]
                made += m.stage(m.validate_remember(
                    user_id=f"locomo-{conv.sample_id}", created_at=part[0].created_at,
                    messages=[{"role": "user", "content": t.content, "created_at": t.created_at} for t in part]))
            vectors = np.asarray(memory_vectors(embedder, made).in_context)
            words = np.asarray(embedder.embed_documents([o.said() for o in made]))
            for i in range(1, len(made)):
                sims = vectors[:i] @ vectors[i]
                for j in np.argsort(-sims, kind="stable")[:candidates]:
                    if float(words[j] @ words[i]) < repeat:
                        out.append({"id": f"locomo-{conv.sample_id}-{i}~{j}", "existing": made[j].summary,
                                    "new": made[i].said(), "label": "unrelated", "lang": "en"})
        m.close()
    return out


def profile_negatives(embedder: Embedder, data: Path = corpus.DATA, profiles: Sequence[str] | None = None,
                      candidates: int = 3, repeat: float = 0.8) -> list[dict[str, Any]]:
    """Unrelated rows from one person's other facts: each memory of a training profile (the
    gate's, one person's facts about different things) against the ``candidates`` earlier
    memories of that profile nearest to it, the earlier one as the service stores it ("The user
    ..."). ``profiles`` limits them to those ids (default: every training profile).

    Why: told in a chat, a person's facts meet each other in the change detector, and the model,
    trained on look-alikes of one attribute, random other pairs' memories and LoCoMo's friends,
    called a person's other fact a new version when it carried a change cue: "我是瑞金医院心内科的
    护士" -> "馒头上个月体检肾指标偏高，医生让换处方粮" at 0.94 (2026-12-06; 34 of the 405 training
    profile memories told in chats were hidden that way). Near repeats (cosine >= ``repeat``) are
    left out, as in :func:`locomo_negatives`."""
    out: list[dict[str, Any]] = []
    for p in corpus.load("profiles", data).train:
        if profiles is not None and p["profile"] not in profiles:
            continue
        said = [mem["text"] for mem in p["memories"]]
        words = np.asarray(embedder.embed_documents(said))
        for i in range(1, len(said)):
            sims = words[:i] @ words[i]
            for j in np.argsort(-sims, kind="stable")[:candidates]:
                if float(sims[j]) < repeat:
                    out.append({"id": f"{p['profile']}-{i}~{j}", "label": "unrelated", "lang": p["lang"],
                                "existing": _as_stored(said[j]),
                                "new": said[i]})
    return out


def locomo_questions(path: Path, conversations: range = range(3)) -> list[str]:
    """LoCoMo's questions of the training conversations (0-2): personal questions about the
    people of a long conversation, the shape many agents ask. 3-5 are for evaluation only."""
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [q["question"] for i in conversations for q in data[i]["qa"]]


def train_gate(rows: list[dict[str, Any]], embedder: Embedder | None, extra_personal: Sequence[str]
               ) -> tuple[Trained, dict[str, float]]:
    """The query model, and its out-of-fold P(personal) per training query id (what the answer
    model is fitted on: the query model's view of a question it did not see).

    Like the trigger, the linear model and the hidden layer are both measured out of fold, at the
    threshold that passes ``PERSONAL_TARGET`` of the personal queries in each language, and the
    hidden layer is kept only where it gates more general ones. "I'm curious how vaccines work" is
    general and "when is the dentist appointment?" personal: the first person and the topic decide
    together, which a sum of features cannot say."""
    texts = [r["query"] for r in rows] + list(extra_personal)
    y = np.array([1 if r["label"] == "personal" else 0 for r in rows] + [1] * len(extra_personal))
    langs = np.array([r["lang"] for r in rows] + ["en"] * len(extra_personal))
    vectors = _vectors(embedder, texts)
    fitters: dict[str, Callable[..., Classifier]] = {"linear": fit, "hidden": fit_hidden}

    def measure(x: Array, model: str) -> tuple[Array, Array, float, dict[str, Any]]:
        p = out_of_fold(x, y, ("general", "personal"), fitter=fitters[model])[:, 1]
        t = highest_threshold(p, y == 1, langs, PERSONAL_TARGET)
        return x, p, t, {"threshold": t, "personal_kept_oof": round(float((p[y == 1] >= t).mean()), 3),
                         "general_gated_oof": round(float((p[y == 0] < t).mean()), 3)}

    results = {("linear", rules): measure(_text_matrix(texts, vectors, rules), "linear") for rules in (False, True)}
    rules = results[("linear", True)][3]["general_gated_oof"] > results[("linear", False)][3]["general_gated_oof"]
    results[("hidden", rules)] = measure(results[("linear", rules)][0], "hidden")
    model = max(("linear", "hidden"), key=lambda m: (results[(m, rules)][3]["general_gated_oof"], m == "linear"))
    x, p, t, _ = results[(model, rules)]
    meta = {"threshold": t, "band": band(p, (p >= t) != (y == 1), t), "rules": rules, "model": model,
            "personal_target": PERSONAL_TARGET, "locomo_questions": len(extra_personal),
            "oof": {f"{m}{'_with_rules' if r else ''}": v[3] for (m, r), v in results.items()}}
    oof = {str(r["id"]): float(v) for r, v in zip(rows, p[:len(rows)], strict=True)}
    return Trained(fitters[model](x, y, ("general", "personal"), meta=meta), meta), oof


FLOORS = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25)


def _best_similarity(m: Any, user: str, query: str) -> float:
    """The best cosine similarity among the user's candidates, as the recall gate sees it."""
    found = m.recall(user, query, top_k=50, min_score=-1, gate=False, log=False)
    return max((h.similarity for h in found), default=-1.0)


def calibrate_floor(embedder: Embedder, models: dict[str, Classifier], personal_oof: dict[str, float],
                    data: Path = corpus.DATA, rounds: Sequence[int] | None = None) -> dict[str, Any]:
    """The relevance floor for a personal query and the gate's answer model, on stored training
    profiles (in-process Memory, Milvus Lite, the real recall path).

    Floor: each personal query recalled at each floor of ``FLOORS``; the highest floor within a
    point of the best share of expected memories brought back wins (fewer loosely related
    memories in prompts; the shares differ by less than the noise there).
    Answer model (:mod:`agent_memory.judge.answer`): each tied personal query asked of its own
    profile and each general query of every profile of its language, with the query model's
    out-of-fold P(personal) and the best candidate's similarity."""
    import tempfile

    from agent_memory.config import Settings
    from agent_memory.evaluation.judge_eval import store_profile
    from agent_memory.service import Memory

    profiles = {p["profile"]: p for p in corpus.load("profiles", data).train}
    queries = corpus.load("queries", data, rounds=rounds).train
    tied = [r for r in queries if r.get("profile") in profiles and r.get("expected")]
    general = [r for r in queries if r["label"] == "general"]
    back: dict[float, list[bool]] = {f: [] for f in FLOORS}
    rows: list[tuple[float, float, bool, str, str]] = []  # (P(personal), best similarity, answerable, lang, id)
    with tempfile.TemporaryDirectory(prefix="agent-memory-floor-") as tmp:
        m = Memory(Settings(data_dir=Path(tmp), store="file", recall_log=False, consistency_level="Strong"),
                   embedder=embedder)
        m._judge = Judge(embedder.info.provider, models["trigger"], models["types"], models["pair"], models["gate"])
        keys = {}
        for pid, prof in profiles.items():
            ids = store_profile(m, f"floor-{pid}", prof)
            keys[pid] = {mem["key"]: mids[0] for mem, mids in zip(prof["memories"], ids, strict=True)}
        for r in tied:
            user = f"floor-{r['profile']}"
            for f in FLOORS:
                hits = {h.memory_id for h in m.recall(user, r["query"], min_score=f, gate=False, log=False)}
                back[f] += [keys[r["profile"]][k] in hits for k in r["expected"]]
            rows.append((personal_oof[r["id"]], _best_similarity(m, user, r["query"]), True, r["lang"], r["id"]))
        for r in general:
            for pid, prof in profiles.items():
                if prof["lang"] == r["lang"]:
                    rows.append((personal_oof[r["id"]], _best_similarity(m, f"floor-{pid}", r["query"]), False,
                                 r["lang"], r["id"]))
        m.close()
    share = {f: round(sum(v) / max(1, len(v)), 3) for f, v in back.items()}
    top = max(share.values())
    best = max(f for f in FLOORS if share[f] >= top - 0.01)
    personal, sims, answerable, langs, groups = (list(c) for c in zip(*rows, strict=True))
    answer, answer_report = fit_answer(personal, sims, answerable, langs, groups, PERSONAL_TARGET)
    # without the second look: a question the query model calls general is answered anyway when a
    # memory matches it more strongly than 98 % of general questions match anything
    general_best = [s for s, a in zip(sims, answerable, strict=True) if not a]
    override = round(float(np.quantile(general_best, 0.98)), 3) if general_best else 1.0
    return {"min_similarity": best, "expected_back_by_floor": share, "queries": len(tied),
            "override_similarity": override, "answer": answer.to_meta(), "answer_report": answer_report}


def train_change_model(embedder: Embedder, provider: str, out: Path = WEIGHTS, locomo: Path | None = None,
                       data: Path = corpus.DATA, pair_rounds: Sequence[int] = PAIR_ROUNDS,
                       extra_pairs: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Only the change model, next to the committed trigger, memory-type and gate models (which
    also make LoCoMo's statements for :func:`locomo_negatives`; the training profiles give
    :func:`profile_negatives`): what ``train judge --only pair``
    runs, so a change to the change model does not move the others. ``extra_pairs`` (the callers'
    corrections, :mod:`agent_memory.judge.corrections`) train beside the written pairs."""
    shipped = load_judge(provider, out)
    pairs = corpus.load("pairs", data, rounds=pair_rounds).train + list(extra_pairs)
    conversation = locomo_negatives(locomo, embedder, shipped) if locomo is not None else []
    pair = train_pair(pairs, embedder, conversation, profile_negatives(embedder, data))
    _save(pair, "pair", provider, out, rounds=list(pair_rounds), train_rows=len(pairs), extra_rows=len(extra_pairs))
    return pair.report


def _fit_trigger(embedder: Embedder | None, data: Path, pair_rounds: Sequence[int],
                 trigger_rounds: Sequence[int]) -> tuple[list[dict[str, Any]], Trained, Trained]:
    turns = corpus.load("turns", data, rounds=trigger_rounds).train
    langs = np.array([r["lang"] for r in turns])
    extra = statements(data, pair_rounds)
    trigger, types = train_trigger(turns, _vectors(embedder, [r["text"] for r in turns]), langs, extra,
                                   _vectors(embedder, extra), embedder)
    return turns, trigger, types


def _save(trained: Trained, model: str, provider: str, out: Path, **meta: Any) -> None:
    """A weights file that says what it was trained for and on (provider, rows; the change model
    its writing rounds): what `train judge` and its ``--only`` variants each write."""
    trained.model.meta.update({"provider": provider, **meta})
    trained.model.save(weights_path(model, provider, out))


def _save_trigger(turns: list[dict[str, Any]], trigger: Trained, types: Trained, provider: str, out: Path,
                  rounds: Sequence[int]) -> None:
    _save(trigger, "trigger", provider, out, rounds=list(rounds), train_rows=len(turns))
    _save(types, "types", provider, out, rounds=list(rounds), train_rows=int(sum(r["keep"] for r in turns)))


def train_trigger_model(embedder: Embedder | None, provider: str, out: Path = WEIGHTS, data: Path = corpus.DATA,
                        pair_rounds: Sequence[int] = PAIR_ROUNDS,
                        trigger_rounds: Sequence[int] = TRIGGER_ROUNDS) -> dict[str, Any]:
    """Only the trigger and memory-type models, next to the committed change and gate models:
    what ``train judge --only trigger`` runs. The change model is not retrained with them, though
    its conversation negatives are the statements the trigger makes (:func:`locomo_negatives`)."""
    turns, trigger, types = _fit_trigger(embedder, data, pair_rounds, trigger_rounds)
    _save_trigger(turns, trigger, types, provider, out, trigger_rounds)
    return {"trigger": trigger.report, "types": types.report}


def train_all(embedder: Embedder | None, provider: str, out: Path = WEIGHTS, locomo: Path | None = None,
              on_progress: Progress | None = None, data: Path = corpus.DATA,
              pair_rounds: Sequence[int] = PAIR_ROUNDS, trigger_rounds: Sequence[int] = TRIGGER_ROUNDS,
              gate_rounds: Sequence[int] = GATE_ROUNDS, extra_pairs: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """Train the four models for ``provider`` (``lexical`` = no embedding) and write them;
    ``extra_pairs`` train the change model beside the written pairs (:func:`train_change_model`)."""
    def step(name: str) -> None:
        if on_progress:
            on_progress(name, 1)

    turns, trigger, types = _fit_trigger(embedder, data, pair_rounds, trigger_rounds)
    step("trigger")
    pairs = corpus.load("pairs", data, rounds=pair_rounds).train + list(extra_pairs)
    conversation: list[dict[str, Any]] = []
    people = profile_negatives(embedder, data) if embedder is not None else []
    if embedder is not None and locomo is not None:
        # the new trigger makes LoCoMo's statements; the committed pair and gate models ride along
        # unused (changes are not detected and nothing is recalled there)
        shipped = load_judge(provider)
        conversation = locomo_negatives(locomo, embedder, Judge(provider, trigger.model, types.model,
                                                                shipped.pair, shipped.gate))
    pair = train_pair(pairs, embedder, conversation, people)
    step("pair")
    queries = corpus.load("queries", data, rounds=gate_rounds).train
    gate, personal_oof = train_gate(queries, embedder, locomo_questions(locomo) if locomo else [])
    step("gate")
    name = provider if embedder is not None else LEXICAL
    if embedder is not None:
        _with_floor(gate, calibrate_floor(embedder, {"trigger": trigger.model, "types": types.model,
                                                     "pair": pair.model, "gate": gate.model},
                                          personal_oof, data, gate_rounds))
        step("floor")
    _save_trigger(turns, trigger, types, name, out, trigger_rounds)
    _save(pair, "pair", name, out, rounds=list(pair_rounds), train_rows=len(pairs), extra_rows=len(extra_pairs))
    _save(gate, "gate", name, out, rounds=list(gate_rounds), train_rows=len(queries))
    return {"provider": name, "trigger": trigger.report, "types": types.report, "pair": pair.report,
            "gate": gate.report}


def _with_floor(gate: Trained, floor: dict[str, Any]) -> None:
    """The relevance floor and the answer model ride in the gate's weights file."""
    gate.model.meta["min_similarity"] = floor["min_similarity"]
    gate.model.meta["override_similarity"] = floor["override_similarity"]
    gate.model.meta["answer"] = floor["answer"]
    gate.report["floor"] = floor


def train_gate_model(embedder: Embedder, provider: str, out: Path = WEIGHTS, locomo: Path | None = None,
                     data: Path = corpus.DATA, gate_rounds: Sequence[int] = GATE_ROUNDS) -> dict[str, Any]:
    """Only the query gate and its floor and answer model, next to the committed trigger,
    memory-type and change models (which store the training profiles the floor is fitted on):
    what ``train judge --only gate`` runs."""
    shipped = load_judge(provider, out)
    queries = corpus.load("queries", data, rounds=gate_rounds).train
    gate, personal_oof = train_gate(queries, embedder, locomo_questions(locomo) if locomo else [])
    models = {"trigger": shipped.trigger, "types": shipped.types, "pair": shipped.pair, "gate": gate.model}
    _with_floor(gate, calibrate_floor(embedder, models, personal_oof, data, gate_rounds))
    _save(gate, "gate", provider, out, rounds=list(gate_rounds), train_rows=len(queries))
    return gate.report
