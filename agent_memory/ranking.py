"""Recall ranking: the math that turns retrieval signals into the final order.

relevance (hybrid) = dense_weight x similarity (min-max scaled over the candidates)
                   + (1 - dense_weight) x lexical (BM25 / best BM25), plus neighbour_weight x the
                   better of the two adjacent memories' values in the same session and
                   second_neighbour_weight x the better of the two memories two away, rescaled
                   to 0..1; in a store under ``small_store`` memories both scales are blended
                   with absolute ones (see :func:`agent_memory.lexical.relative_weight`);
relevance (dense only) = similarity;
both multiplied by ``1 + time_boost`` for memories created inside a time window the query names
("on 16 November 2023", "last month", "去年": see :mod:`agent_memory.timewindows`) or up to
``time_slack_days`` after it; the fused value is boosted before neighbours take their share
(so with a window relevance reaches up to ``1 + time_boost``, and only the order matters).
score = relevance x decay x importance_weight x type_weight, where
- decay = floor + (1 - floor) * 0.5 ** (age_days / half_life): recent memories win ties,
  but old ones keep ``floor`` of their weight (old facts such as allergies stay true);
- importance_weight = floor + (1 - floor) * importance: important memories rank higher,
  unimportant ones are damped but never zeroed;
- type_weight: a per-type priority (preferences and facts over events).
``min_score`` applies to the similarity, so it means the same on every memory; a strong lexical
match (``lexical_min`` of the best, or of the query's word weight in a small store) passes too,
since exact words are evidence of their own.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from agent_memory.config import Settings
from agent_memory.index.base import SearchHit
from agent_memory.lexical import relative_weight
from agent_memory.model import IndexRecord, ScoreParts
from agent_memory.timewindows import TimeWindow


@dataclass(frozen=True)
class RankingParams:
    min_score: float
    half_life_days: float = 180.0
    decay_floor: float = 0.6
    importance_floor: float = 0.6
    type_priority: dict[str, float] = field(default_factory=dict)
    dense_weight: float = 0.6
    neighbour_weight: float = 0.5
    second_neighbour_weight: float = 0.0
    """0 here so a hand-built RankingParams keeps to adjacent turns; Settings' default is 0.5."""
    lexical_min: float = 0.5
    time_boost: float = 1.0
    time_slack_days: float = 7.0
    windows: tuple[TimeWindow, ...] = ()
    """The time windows the query names (none for most queries)."""
    small_store: int = 0
    """Below this many memories the similarity over the best is blended into its min-max scale (see
    :func:`agent_memory.lexical.relative_weight`); 0 here keeps a hand-built RankingParams relative."""

    @classmethod
    def from_settings(cls, s: Settings, min_score: float, dense_weight: float,
                      windows: Sequence[TimeWindow] = ()) -> RankingParams:
        return cls(min_score, s.decay_half_life_days, s.decay_floor, s.importance_weight_floor,
                   dict(s.type_priority), dense_weight, s.neighbour_weight, s.second_neighbour_weight,
                   s.lexical_min, s.time_boost, s.time_slack_days, tuple(windows), s.small_store)

    def time_weight(self, created_at: datetime) -> float:
        if not self.windows:  # most queries: called for every candidate, up to lexical_max_docs
            return 1.0
        slack = timedelta(days=self.time_slack_days)
        inside = any(w.contains(created_at, slack) for w in self.windows)
        return 1.0 + self.time_boost if inside else 1.0


@dataclass(frozen=True)
class Candidate:
    record: IndexRecord
    similarity: float
    lexical: float = 0.0
    relevance: float | None = None
    """Fused relevance; None means dense only (relevance = similarity x time weight)."""
    time_weight: float = 1.0
    via: str | None = None
    """The superseded version whose match this memory carries (see :func:`carry_versions`)."""


def _relevance(c: Candidate) -> float:
    return c.similarity * c.time_weight if c.relevance is None else c.relevance


def carry_versions(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Superseded versions never come back, but their match counts for the version that replaced
    them: "where am I working these days?" matches "I work at Acme" (the words, the topic) far
    better than its successor "I left Acme, I'm at Globex now", which is the answer. Each active
    memory takes the best relevance, similarity and lexical match among the superseded versions of
    its topic in ``candidates`` (``via`` names the one it carried); inactive rows are dropped."""
    heads = {c.record.topic_id for c in candidates if c.record.is_active and c.record.topic_id}
    best: dict[str, Candidate] = {}
    for c in candidates:
        topic = c.record.topic_id
        if not c.record.is_active and topic in heads and (topic not in best or _relevance(c) > _relevance(best[topic])):
            best[topic] = c
    out = []
    for c in candidates:
        if not c.record.is_active:
            continue
        old = best.get(c.record.topic_id or "")
        if old is not None and _relevance(old) > _relevance(c):
            c = Candidate(c.record, max(c.similarity, old.similarity), max(c.lexical, old.lexical),
                          None if c.relevance is None else _relevance(old), c.time_weight, old.record.id)
        out.append(c)
    return sorted(out, key=_relevance, reverse=True)


def dense_candidates(hits: Sequence[SearchHit], p: RankingParams) -> list[Candidate]:
    return [Candidate(h.record, h.similarity, time_weight=p.time_weight(h.record.created_at)) for h in hits]


def fuse(dense: Sequence[SearchHit], corpus: Sequence[IndexRecord], lexical: Sequence[float],
         p: RankingParams, limit: int) -> list[Candidate]:
    """Hybrid candidates over the user's ``corpus`` (the memories passing the recall filter).

    Memories the dense search did not return get the lowest similarity it did return (they are at
    most that similar); ``lexical`` is BM25 scaled to the best match (0..1)."""
    sims = {h.record.id: h.similarity for h in dense}
    records = {r.id: r for r in corpus} | {h.record.id: h.record for h in dense}
    ids = list(records)
    if not ids:
        return []
    lex_by_id = dict(zip([r.id for r in corpus], lexical, strict=True))
    floor = min(sims.values()) if sims else 0.0
    sim = np.array([sims.get(i, floor) for i in ids])
    lex = np.array([lex_by_id.get(i, 0.0) for i in ids])
    spread = float(sim.max() - sim.min())
    dense_scaled = (sim - sim.min()) / spread if spread > 0 else np.ones_like(sim)
    w = relative_weight(len(corpus), p.small_store)
    if w < 1:
        top = float(sim.max())
        dense_scaled = w * dense_scaled + (1 - w) * (np.clip(sim / top, 0.0, 1.0) if top > 0 else np.zeros_like(sim))
    boost = np.array([p.time_weight(records[i].created_at) for i in ids])
    raw = (p.dense_weight * dense_scaled + (1 - p.dense_weight) * lex) * boost
    sessions: dict[str, list[int]] = defaultdict(list)
    for pos, i in enumerate(ids):
        sessions[records[i].session_id].append(pos)
    weights = (p.neighbour_weight, p.second_neighbour_weight)
    shared = np.zeros_like(raw)
    for members in sessions.values():
        members.sort(key=lambda pos: (records[ids[pos]].created_at, ids[pos]))
        at = np.array(members)
        values = raw[at]
        for distance, weight in enumerate(weights, start=1):
            if not weight or distance >= len(at):
                continue
            after = np.zeros(len(at))
            after[:-distance] = values[distance:]
            before = np.zeros(len(at))
            before[distance:] = values[:-distance]
            shared[at] += weight * np.maximum(after, before)
    relevance = (raw + shared) / (1 + sum(weights))
    order = np.argsort(-relevance, kind="stable")[:limit]
    return [Candidate(records[ids[k]], float(sim[k]), float(lex[k]), float(relevance[k]), float(boost[k]))
            for k in order]


def time_decay(age_days: float, half_life_days: float, floor: float) -> float:
    return float(floor + (1.0 - floor) * 0.5 ** (max(age_days, 0.0) / half_life_days))


def importance_weight(importance: float, floor: float) -> float:
    return floor + (1.0 - floor) * min(max(importance, 0.0), 1.0)


def score_parts(c: Candidate, now: datetime, p: RankingParams) -> ScoreParts:
    r = c.record
    age_days = (now - r.created_at).total_seconds() / 86_400
    d = time_decay(age_days, p.half_life_days, p.decay_floor)
    iw = importance_weight(r.importance, p.importance_floor)
    tw = p.type_priority.get(r.memory_type, 1.0)
    rel = c.similarity * c.time_weight if c.relevance is None else c.relevance
    return ScoreParts(similarity=c.similarity, lexical=c.lexical, relevance=rel, time_weight=c.time_weight, decay=d,
                      importance_weight=iw, type_weight=tw, score=rel * d * iw * tw, via_version=c.via)


@dataclass(frozen=True)
class Ranked:
    hit: Candidate
    parts: ScoreParts
    chosen: bool
    reason: str


def rank(candidates: Sequence[Candidate | SearchHit], now: datetime, p: RankingParams, top_k: int) -> list[Ranked]:
    """Every candidate with its score parts and why it was or was not chosen, best first."""
    cands = [c if isinstance(c, Candidate) else dense_candidates([c], p)[0] for c in candidates]
    scored = sorted(((c, score_parts(c, now, p)) for c in cands), key=lambda cp: cp[1].score, reverse=True)
    out: list[Ranked] = []
    taken = 0
    for hit, parts in scored:
        if parts.similarity < p.min_score and parts.lexical < p.lexical_min:
            out.append(Ranked(hit, parts, False, "below_min_score"))
        elif taken >= top_k:
            out.append(Ranked(hit, parts, False, "beyond_top_k"))
        else:
            taken += 1
            out.append(Ranked(hit, parts, True, "chosen"))
    return out
