"""Conflict checks of the write pipeline: when is a new memory the same statement as an old one?

Used before writing (:meth:`agent_memory.Memory.index_originals`): a repeat is recorded as a
confirmation instead of a second memory. New values for a topic slot are handled by the topic
versions; anything else is a new memory.
"""

from __future__ import annotations

import re


def _norm_text(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def same_statement(a: str, b: str, similarity: float, threshold: float) -> bool:
    """The same statement: equal up to case and punctuation, or at least ``threshold`` similar with
    the same numbers and nearly the same words (so "my PIN is 1234" never swallows "... 5678")."""
    if _norm_text(a) == _norm_text(b):
        return True
    if similarity < threshold or re.findall(r"\d+", a) != re.findall(r"\d+", b):
        return False
    ta, tb = _words(a), _words(b)
    return len(ta & tb) / max(1, len(ta | tb)) >= 0.8


def _words(text: str) -> set[str]:
    return set(re.findall(r"[\u4e00-\u9fff]|[^\W\d_]+", text.casefold()))
