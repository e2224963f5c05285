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
The cascade band of each is the probability range around its threshold that holds most of the
out-of-fold mistakes (there a language model, when configured, decides).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.embed import Embedder
from agent_memory.judge import corpus
from agent_memory.judge.features import Array, pair_features, text_features
from agent_memory.judge.linear import LinearModel, fit, out_of_fold
from agent_memory.judge.models import LEXICAL, WEIGHTS, weights_path
from agent_memory.judge.rules import rule_signals

KEEP_TARGET = 0.97
FALSE_CHANGE = 0.02
PERSONAL_TARGET = 0.97
BAND_ERRORS = 0.8
Progress = Callable[[str, int], None]


@dataclass
class Trained:
    model: LinearModel
    report: dict[str, Any]


def _vectors(embedder: Embedder | None, texts: Sequence[str]) -> list[Array | None]:
    if embedder is None:
        return [None] * len(texts)
    out: list[Array | None] = []
    for i in range(0, len(texts), 256):
        out.extend(embedder.embed_documents(list(texts[i:i + 256])))
    return out


def _text_matrix(texts: Sequence[str], vectors: Sequence[Array | None], rules: bool) -> Array:
    return np.vstack([np.concatenate([text_features(t, v), rule_signals(t)]) if rules else text_features(t, v)
                      for t, v in zip(texts, vectors, strict=True)])


def _band(p: Array, wrong: Array, threshold: float) -> list[float]:
    """The narrowest range around ``threshold`` holding ``BAND_ERRORS`` of the mistakes."""
    dist = np.sort(np.abs(p[wrong] - threshold))
    if not len(dist):
        return [threshold, threshold]
    r = float(dist[min(len(dist) - 1, int(np.ceil(BAND_ERRORS * len(dist))) - 1)])
    return [round(max(0.0, threshold - r), 4), round(min(1.0, threshold + r), 4)]


def _highest_threshold(p: Array, positive: Array, groups: Array, target: float) -> float:
    """The highest threshold keeping >= ``target`` of the positives in every group."""
    best = 0.0
    for t in np.linspace(0.01, 0.99, 99):
        if all((p[positive & (groups == g)] >= t).mean() >= target for g in np.unique(groups)):
            best = float(t)
    return round(best, 2)


def train_trigger(rows: list[dict[str, Any]], vectors: list[Array | None], langs: Array) -> tuple[Trained, Trained]:
    y = np.array([1 if r["keep"] else 0 for r in rows])
    texts = [r["text"] for r in rows]
    results = {}
    for rules in (False, True):
        x = _text_matrix(texts, vectors, rules)
        p = out_of_fold(x, y, ("drop", "keep"))[:, 1]
        t = _highest_threshold(p, y == 1, langs, KEEP_TARGET)
        kept = float((p[y == 1] >= t).mean())
        dropped = float((p[y == 0] < t).mean())
        results[rules] = (x, p, t, {"threshold": t, "kept_oof": round(kept, 3), "dropped_oof": round(dropped, 3)})
    # the rules stay only when they add value out of fold (more noise dropped at the same keep rate)
    rules = results[True][3]["dropped_oof"] > results[False][3]["dropped_oof"]
    x, p, t, _ = results[rules]
    wrong = (p >= t) != (y == 1)
    meta = {"threshold": t, "band": _band(p, wrong, t), "rules": rules, "keep_target": KEEP_TARGET,
            "oof": {"with_rules": results[True][3], "without_rules": results[False][3]}}
    trigger = fit(x, y, ("drop", "keep"), meta=meta)
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
            out.append({"existing": o["existing"], "new": r["new"], "label": "unrelated", "lang": r["lang"],
                        "synthetic": True})
    return out


def train_pair(rows: list[dict[str, Any]], embedder: Embedder | None) -> Trained:
    rows = rows + _cross_negatives(rows)
    va = _vectors(embedder, [r["existing"] for r in rows])
    vb = _vectors(embedder, [r["new"] for r in rows])
    sims = [float(a @ b) if a is not None and b is not None else 0.0 for a, b in zip(va, vb, strict=True)]
    x = np.vstack([pair_features(r["existing"], r["new"], a, b, s)
                   for r, a, b, s in zip(rows, va, vb, sims, strict=True)])
    y = np.array([corpus.PAIR_LABELS.index(r["label"]) for r in rows])
    p = out_of_fold(x, y, corpus.PAIR_LABELS)
    thresholds = {}
    unrelated = y == corpus.PAIR_LABELS.index("unrelated")
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
    recall = {c: round(float((pred[y == i] == i).mean()), 3) for i, c in enumerate(corpus.PAIR_LABELS)}
    best = np.maximum(p[:, 0], p[:, 1])
    wrong = pred != y
    lo, hi = _band(best, wrong, min(thresholds.values()))
    meta = {"thresholds": thresholds, "band": [lo, hi], "false_change_target": FALSE_CHANGE,
            "recall_oof": recall, "synthetic_negatives": sum(1 for r in rows if r.get("synthetic"))}
    return Trained(fit(x, y, corpus.PAIR_LABELS, meta=meta), meta)


def locomo_questions(path: Path, conversations: range = range(3)) -> list[str]:
    """LoCoMo's questions of the training conversations (0-2): personal questions about the
    people of a long conversation, the shape many agents ask. 3-5 are for evaluation only."""
    if not path.exists():
        return []
    data = json.loads(path.read_text())
    return [q["question"] for i in conversations for q in data[i]["qa"]]


def train_gate(rows: list[dict[str, Any]], embedder: Embedder | None, extra_personal: Sequence[str]) -> Trained:
    texts = [r["query"] for r in rows] + list(extra_personal)
    y = np.array([1 if r["label"] == "personal" else 0 for r in rows] + [1] * len(extra_personal))
    langs = np.array([r["lang"] for r in rows] + ["en"] * len(extra_personal))
    vectors = _vectors(embedder, texts)
    results = {}
    for rules in (False, True):
        x = _text_matrix(texts, vectors, rules)
        p = out_of_fold(x, y, ("general", "personal"))[:, 1]
        t = _highest_threshold(p, y == 1, langs, PERSONAL_TARGET)
        results[rules] = (x, p, t, {"threshold": t, "personal_kept_oof": round(float((p[y == 1] >= t).mean()), 3),
                                    "general_gated_oof": round(float((p[y == 0] < t).mean()), 3)})
    rules = results[True][3]["general_gated_oof"] > results[False][3]["general_gated_oof"]
    x, p, t, _ = results[rules]
    meta = {"threshold": t, "band": _band(p, (p >= t) != (y == 1), t), "rules": rules,
            "personal_target": PERSONAL_TARGET, "locomo_questions": len(extra_personal),
            "oof": {"with_rules": results[True][3], "without_rules": results[False][3]}}
    return Trained(fit(x, y, ("general", "personal"), meta=meta), meta)


def train_all(embedder: Embedder | None, provider: str, out: Path = WEIGHTS, locomo: Path | None = None,
              on_progress: Progress | None = None, data: Path = corpus.DATA) -> dict[str, Any]:
    """Train the four models for ``provider`` (``lexical`` = no embedding) and write them."""
    def step(name: str) -> None:
        if on_progress:
            on_progress(name, 1)

    turns = corpus.load("turns", data).train
    langs = np.array([r["lang"] for r in turns])
    trigger, types = train_trigger(turns, _vectors(embedder, [r["text"] for r in turns]), langs)
    step("trigger")
    pair = train_pair(corpus.load("pairs", data).train, embedder)
    step("pair")
    queries = corpus.load("queries", data).train
    gate = train_gate(queries, embedder, locomo_questions(locomo) if locomo else [])
    step("gate")
    name = provider if embedder is not None else LEXICAL
    for model_name, trained in (("trigger", trigger), ("types", types), ("pair", pair), ("gate", gate)):
        trained.model.meta["provider"] = name
        trained.model.meta["train_rows"] = {"trigger": len(turns), "types": int(sum(r["keep"] for r in turns)),
                                            "pair": len(corpus.load("pairs", data).train),
                                            "gate": len(queries)}[model_name]
        trained.model.save(weights_path(model_name, name, out))
    return {"provider": name, "trigger": trigger.report, "types": types.report, "pair": pair.report,
            "gate": gate.report}
