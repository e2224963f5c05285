"""The recall gate's second look: after the search, does anything this user said answer the query?

The query model alone reads only the question, and a question about something users also talk
about ("how long should I boil an egg?", "什么时候去日本最便宜") looks personal: out of fold it
answered 0.27 of the general questions while passing 0.97 of the personal ones. What the search
finds is the other half of the evidence: a personal question usually has a memory that matches it
(the user's own words), a general one only loosely related memories. Two numbers, the query
model's log-odds and the best candidate's similarity, combined by a logistic regression fitted on
stored training profiles (:func:`fit_answer`, called by ``agent-memory train judge``), decide;
out of fold on the training profiles that gated 0.84 of the general questions at the same share of
personal ones passed, where the default rule ("answer anyway when a memory matches more strongly
than 98 % of general questions match anything") gated 0.73. Opt-in (``recall_gate_second_look``):
what it silences are personal requests that match their memory only by implication ("pack me a
snack for the flight" for "I'm allergic to peanuts"), a costlier miss than a loose memory in a
general answer's prompt.

The model is four numbers kept in the gate's weights file (``meta["answer"]``): the weights of the
two inputs, the intercept and the threshold on P(answer). It exists only for a provider with an
embedding: similarities are on that model's scale, and only for statements (:data:`MAX_CHARS`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from agent_memory.judge.linear import fit, out_of_fold
from agent_memory.judge.thresholds import highest_threshold

CLASSES = ("nothing", "answer")
MAX_CHARS = 300
"""The longest memory whose similarity the model reads. It was fitted on statements (the profiles'
memories: up to 112 characters); a long note or a document chunk (640 tokens) embeds as an average
of many sentences and matches any one question weakly ("what is the launch codename?" against the
passage that names it), so when the most relevant candidate is longer, the first look decides."""


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def answer_features(personal: float, best_similarity: float) -> list[float]:
    """The query model's log-odds of "personal" and the best candidate's cosine similarity."""
    return [_logit(personal), best_similarity]


@dataclass(frozen=True)
class AnswerModel:
    weights: tuple[float, float]
    intercept: float
    threshold: float
    """On P(answer): below it, recall answers with nothing."""

    def score(self, personal: float, best_similarity: float) -> float:
        """P(something this user said answers the query)."""
        z = sum(w * f for w, f in zip(self.weights, answer_features(personal, best_similarity), strict=True))
        return 1.0 / (1.0 + math.exp(-(z + self.intercept)))

    def to_meta(self) -> dict[str, Any]:
        return {"weights": [round(w, 6) for w in self.weights], "intercept": round(self.intercept, 6),
                "threshold": self.threshold}

    @classmethod
    def from_meta(cls, meta: dict[str, Any] | None) -> AnswerModel | None:
        if not meta:
            return None
        w = meta["weights"]
        return cls((float(w[0]), float(w[1])), float(meta["intercept"]), float(meta["threshold"]))


def fit_answer(personal: Sequence[float], best_similarity: Sequence[float], answerable: Sequence[bool],
               langs: Sequence[str], groups: Sequence[str], target: float) -> tuple[AnswerModel, dict[str, Any]]:
    """Fit on (query, stored user) rows: ``answerable`` for a personal question asked of the user
    it is about, not for a general question. The threshold is the highest that still passes
    ``target`` of the answerable rows in every language, out of fold with a question's rows in one
    fold (a general question is asked of every profile of its language)."""
    x = np.array([answer_features(p, s) for p, s in zip(personal, best_similarity, strict=True)], dtype=np.float32)
    y = np.asarray(answerable, dtype=np.int64)
    lang = np.asarray(langs)
    dense = np.ones(x.shape[1], dtype=bool)
    p = out_of_fold(x, y, CLASSES, groups=list(groups), standardize=dense)[:, 1]
    t = highest_threshold(p, y == 1, lang, target)
    model = fit(x, y, CLASSES, standardize=dense)
    # fold the standardization into one linear function of the raw inputs
    diff: npt.NDArray[np.float64] = (model.weights[:, 1] - model.weights[:, 0]).astype(np.float64) / model.scale
    intercept = float(model.bias[1] - model.bias[0]) - float(model.mean.astype(np.float64) @ diff)
    fitted = AnswerModel((float(diff[0]), float(diff[1])), intercept, t)
    report = {**fitted.to_meta(), "rows": len(y), "answerable_rows": int(y.sum()), "target": target,
              "answerable_passed_oof": round(float((p[y == 1] >= t).mean()), 3),
              "unanswerable_gated_oof": round(float((p[y == 0] < t).mean()), 3)}
    return fitted, report
