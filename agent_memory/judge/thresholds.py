"""How a trained model's probabilities become decisions: thresholds and the cascade's band, each
chosen on out-of-fold probabilities of the training split (never on rows a model memorised)."""

from __future__ import annotations

import numpy as np

from agent_memory.judge.features import Array

BAND_ERRORS = 0.5
BAND_SHARE = 0.15


def band(p: Array, wrong: Array, threshold: float) -> list[float]:
    """The narrowest range around ``threshold`` holding ``BAND_ERRORS`` of the mistakes, but no
    wider than holding ``BAND_SHARE`` of all rows: a sharp model's mistakes are confident too, and
    the hidden-layer trigger's half-the-mistakes band held half of all turns (each a language-model
    call when a cascade is configured)."""
    dist = np.sort(np.abs(p[wrong] - threshold))
    if not len(dist):
        return [threshold, threshold]
    r = min(float(dist[min(len(dist) - 1, int(np.ceil(BAND_ERRORS * len(dist))) - 1)]),
            float(np.quantile(np.abs(p - threshold), BAND_SHARE)))
    return [round(max(0.0, threshold - r), 4), round(min(1.0, threshold + r), 4)]


def highest_threshold(p: Array, positive: Array, groups: Array, target: float) -> float:
    """The highest threshold keeping >= ``target`` of the positives in every group (tried: a
    grid of hundredths and every positive's own score, as a sharp model's scores bunch up)."""
    best = 0.0
    # a group without positives binds nothing
    present = [g for g in np.unique(groups) if (positive & (groups == g)).any()]
    for t in np.unique(np.concatenate([np.linspace(0.01, 0.99, 99), np.round(p[positive], 4)])):
        if all((p[positive & (groups == g)] >= t).mean() >= target for g in present):
            best = float(t)
    return round(best, 4)
