"""Recall ranking: the math that turns raw vector similarity into the final order.

score = similarity x decay x importance_weight x type_weight, where
- decay = floor + (1 - floor) * 0.5 ** (age_days / half_life): recent memories win ties,
  but old ones keep ``floor`` of their weight (old facts such as allergies stay true);
- importance_weight = floor + (1 - floor) * importance: important memories rank higher,
  unimportant ones are damped but never zeroed;
- type_weight: a per-type priority (preferences and facts over events).
``min_score`` applies to the similarity alone, so it means the same on every memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.config import Settings
from agent_memory.index.base import SearchHit
from agent_memory.model import ScoreParts


@dataclass(frozen=True)
class RankingParams:
    min_score: float
    half_life_days: float = 180.0
    decay_floor: float = 0.6
    importance_floor: float = 0.6
    type_priority: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_settings(cls, s: Settings, min_score: float) -> RankingParams:
        return cls(min_score, s.decay_half_life_days, s.decay_floor, s.importance_weight_floor,
                   dict(s.type_priority))


def time_decay(age_days: float, half_life_days: float, floor: float) -> float:
    return float(floor + (1.0 - floor) * 0.5 ** (max(age_days, 0.0) / half_life_days))


def importance_weight(importance: float, floor: float) -> float:
    return floor + (1.0 - floor) * min(max(importance, 0.0), 1.0)


def score_parts(hit: SearchHit, now: datetime, p: RankingParams) -> ScoreParts:
    r = hit.record
    age_days = (now - r.created_at).total_seconds() / 86_400
    d = time_decay(age_days, p.half_life_days, p.decay_floor)
    iw = importance_weight(r.importance, p.importance_floor)
    tw = p.type_priority.get(r.memory_type, 1.0)
    return ScoreParts(similarity=hit.similarity, decay=d, importance_weight=iw, type_weight=tw,
                      score=hit.similarity * d * iw * tw)


@dataclass(frozen=True)
class Ranked:
    hit: SearchHit
    parts: ScoreParts
    chosen: bool
    reason: str


def rank(candidates: list[SearchHit], now: datetime, p: RankingParams, top_k: int) -> list[Ranked]:
    """Every candidate with its score parts and why it was or was not chosen, best first."""
    scored = sorted(((h, score_parts(h, now, p)) for h in candidates),
                    key=lambda hp: hp[1].score, reverse=True)
    out: list[Ranked] = []
    taken = 0
    for hit, parts in scored:
        if parts.similarity < p.min_score:
            out.append(Ranked(hit, parts, False, "below_min_score"))
        elif taken >= top_k:
            out.append(Ranked(hit, parts, False, "beyond_top_k"))
        else:
            taken += 1
            out.append(Ranked(hit, parts, True, "chosen"))
    return out
