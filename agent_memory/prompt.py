"""The system-prompt block built from recalled memories.

Memories go into the system prompt (seed 2 measured that this works better than
appending them to the conversation), oldest first so the model reads the story in
order, each with its date and, when inferred rather than said, a label.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_memory.model import RecallHit

HEADER = "Long-term memories about this user (oldest first; use them when relevant):"
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate that errs high: one token per CJK character, one per four other
    characters (what BPE tokenizers of current chat models do on average for English)."""
    cjk = len(_CJK.findall(text))
    return cjk + -(-(len(text) - cjk) // 4)


def build_context(hits: Sequence[RecallHit], max_chars: int = 4000, max_tokens: int | None = None) -> str:
    """The memories as a prompt block, oldest first, each with its date, type and, when the agent
    inferred it rather than the user saying it, a label. Whole lines are kept while they fit in
    ``max_chars`` and ``max_tokens``; the best-scored memories are kept first when not all fit."""
    if not hits:
        return ""
    budget_tokens = max_tokens if max_tokens is not None else 10**9
    kept: list[RecallHit] = []
    used_chars, used_tokens = len(HEADER), estimate_tokens(HEADER)
    for h in sorted(hits, key=lambda x: x.score, reverse=True):
        line = _line(h)
        if used_chars + len(line) + 1 > max_chars or used_tokens + estimate_tokens(line) + 1 > budget_tokens:
            continue
        kept.append(h)
        used_chars += len(line) + 1
        used_tokens += estimate_tokens(line) + 1
    if not kept:
        return ""
    return "\n".join([HEADER, *(_line(h) for h in sorted(kept, key=lambda x: x.created_at))])


def _line(h: RecallHit) -> str:
    label = f"{h.memory_type}" + (", inferred by the agent" if h.source == "agent_inferred" else "")
    return f"- [{h.created_at.date().isoformat()}] ({label}) {h.content.strip()}"


def system_prompt(instructions: str, memories: Sequence[RecallHit], max_tokens: int = 600) -> str:
    """The system prompt for the next model call: your instructions, then the memory block within
    ``max_tokens``. Seed 2 measured that memories in the system prompt are used better than the
    same text appended to the conversation."""
    block = build_context(memories, max_chars=10**9, max_tokens=max_tokens)
    return instructions.strip() + ("\n\n" + block if block else "")
