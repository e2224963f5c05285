"""The hand-written trigger rules' verdicts, as features of the learned models.

The rules of :mod:`agent_memory.pipeline.trigger` no longer decide; what they notice (small
talk, "remember this", a question, a first-person statement with a preference/plan/task/event/
fact signal) is given to the models, which learn how much each is worth. ``agent-memory train
judge`` measures the training split's out-of-fold figures with and without these features and
keeps them only when they add value (``rules`` in each model's meta says which was chosen).
"""

from __future__ import annotations

import numpy as np

from agent_memory.judge.features import Array
from agent_memory.pipeline.trigger import _CHITCHAT, _FIRST_PERSON, _QUESTION, _REMEMBER, _kind, decide

RULE_DIM = 6


def rule_signals(text: str) -> Array:
    t = text.strip()
    return np.array([
        float(decide(t).keep), float(bool(_CHITCHAT.match(t))), float(bool(_REMEMBER.search(t))),
        float(_kind(t) is not None), float(bool(_QUESTION.search(t))), float(bool(_FIRST_PERSON.search(t))),
    ], dtype=np.float32)
