"""Newer first: when recall returns an old value and, right behind it, a later statement the change
model thinks may replace it, the later one goes first.

Why: the change detector supersedes a memory only when the change model is sure (its trained
threshold, 0.64), because a wrong supersede hides a true memory. Below that, "I live in Lisbon" and
"just moved to Berlin" both stay active, and recall ranks the old value first whenever it shares
more words with the question ("where do I live?"). On the judgement corpus's training pairs, of
the 390 new versions the model left unrelated, 168 came back with the stale value ahead of the new
one (148 of them right behind it). Ordering is a cheaper decision than superseding: nothing is
hidden, both memories stay in the answer, so a much lower bar is enough. With the pair model's
P(new version) >= 0.2 for (the hit above, the hit below), the lower one created at least a day
later and scoring at least 0.7 of the upper one, 119 more of the 1,237 training new versions
come back first, and the training profiles' expected memories came first as often as before
(values chosen on training rows only). Held out, read once: the new value first for 0.709 of the
new versions instead of 0.577, but the expected memory first for 0.738 of the profiles' personal
queries instead of 0.800 (the training profiles had hidden that: the pair model was trained on
them), so ``Settings.newer_first`` is off by default (docs/judgement.md, "Newer first"). A cosine between the two
memories instead of the pair model could not tell one attribute's new value from the same
person's other facts: every setting that gained as much cost first hits on the profiles.

The pair model reads the two statements as said (their own vectors, not the in-context ones the
index holds), as it does on the write path. With a provider that has no trained judge (the lexical-
only pair model) it reads them with similarity 0, so it moves fewer hits there. Only adjacent hits
are compared, after the ranking and before the dietary slots; a swap repeats until nothing moves, so
a value changed twice ends up first too. A moved hit keeps its score (the recall log shows both),
its reason becomes ``newer_first``, and the log's ``newer_first`` lists each move with the model's
probability.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import timedelta
from itertools import pairwise
from typing import Any

from agent_memory.ranking import Ranked

REASON = "newer_first"
MIN_PROBABILITY = 0.2
"""P(new version) of (upper, lower) at which the lower hit may go first."""
MIN_SCORE_RATIO = 0.7
"""The lower hit's score must be at least this share of the upper one's: a weak match is not
promoted over a strong one because it is newer."""
MIN_GAP = timedelta(days=1)
"""Statements of one conversation are not changes of mind (and LoCoMo's turns of one session are
minutes apart)."""

PairProbability = Callable[[Sequence[tuple[str, str]]], list[float]]
"""P(the second statement is a new version of the first), for each (older, newer) pair."""


def order(ranked: Sequence[Ranked], p_new_version: PairProbability, *, min_probability: float = MIN_PROBABILITY,
          min_ratio: float = MIN_SCORE_RATIO,
          min_gap: timedelta = MIN_GAP) -> tuple[list[Ranked], list[dict[str, Any]]]:
    """``ranked`` with each chosen hit moved ahead of the chosen hit above it when it may replace it
    (the hits not chosen after them), and each move with its probability, for the recall log. The
    model is asked only about adjacent pairs that pass the cheap tests (time, score), all in one
    call per pass."""
    chosen = [r for r in ranked if r.chosen]
    rest = [r for r in ranked if not r.chosen]
    asked: dict[tuple[str, str], float] = {}
    moves: list[dict[str, Any]] = []
    for _ in range(len(chosen)):
        ask = [(a, b) for a, b in pairwise(chosen)
               if _key(a, b) not in asked and _may_replace(a, b, min_ratio, min_gap)]
        if ask:
            probs = p_new_version([(a.hit.record.summary, b.hit.record.summary) for a, b in ask])
            asked.update({_key(a, b): p for (a, b), p in zip(ask, probs, strict=True)})
        swapped = False
        for i in range(len(chosen) - 1):
            a, b = chosen[i], chosen[i + 1]
            # a pair is asked about only once it passed _may_replace, which reads the two hits alone
            if asked.get(_key(a, b), 0.0) >= min_probability:
                chosen[i], chosen[i + 1] = b, a
                moves.append({"memory_id": b.hit.record.id, "ahead_of": a.hit.record.id,
                              "p_new_version": round(asked[_key(a, b)], 4)})
                swapped = True
        if not swapped:
            break
    moved = {m["memory_id"] for m in moves}
    return [Ranked(r.hit, r.parts, True, REASON) if r.hit.record.id in moved else r for r in chosen] + rest, moves


def _key(upper: Ranked, lower: Ranked) -> tuple[str, str]:
    return upper.hit.record.id, lower.hit.record.id


def _may_replace(upper: Ranked, lower: Ranked, min_ratio: float, min_gap: timedelta) -> bool:
    return (lower.hit.record.created_at - upper.hit.record.created_at >= min_gap
            and lower.parts.score >= min_ratio * upper.parts.score)
