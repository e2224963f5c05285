"""From a remember request to drafts of memories: what the write pipeline decides to store.

- ``content``: one statement, as given (validated; duplicates are caught at indexing). Longer
  than ``chunk_tokens`` (640) it is split into overlapping chunks (``chunk_overlap`` 96 tokens;
  tokens estimated as one per CJK character and one per four other characters, the same
  estimate the prompt budget uses), each pointing to the whole document stored once at
  ``documents/{user_id}/{id}.json``.
- ``messages``: every user turn goes through the trigger; kept turns become extracted
  third-person statements with their own type, topic slot and importance (the request's
  values win when given); an assistant turn that concludes something about the user becomes
  an ``agent_inferred`` statement. Every turn's decision and reason is returned so the caller
  can record it (``decisions/{user_id}/...`` in the store) whether or not anything was kept.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agent_memory.model import RememberRequest
from agent_memory.pipeline.extract import Statement, extract
from agent_memory.pipeline.trigger import decide_turn, user_voice
from agent_memory.prompt import estimate_tokens


@dataclass
class Draft:
    text: str
    context: str | None
    provenance: dict[str, Any]
    created_at: datetime | None = None
    memory_type: str | None = None
    topic_id: str | None = None
    importance: float | None = None
    source: str | None = None
    reasons: list[str] = field(default_factory=list)


_UNIT = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]|[^\s\u3040-\u30ff\u3400-\u4dbf"
                   r"\u4e00-\u9fff\uac00-\ud7af]+\s*|\s+")


def chunks(text: str, size: int = 640, overlap: int = 96) -> list[str]:
    """Windows of about ``size`` tokens that overlap by about ``overlap`` tokens."""
    units = _UNIT.findall(text)
    costs = [estimate_tokens(u.strip()) if u.strip() else 0 for u in units]
    if sum(costs) <= size:
        return [text]
    out, start = [], 0
    while start < len(units):
        end, used = start, 0
        while end < len(units) and used + costs[end] <= size:
            used += costs[end]
            end += 1
        end = max(end, start + 1)
        out.append("".join(units[start:end]).strip())
        if end >= len(units):
            break
        back, kept = end, 0  # step back about ``overlap`` tokens for the next window
        while back > start + 1 and kept + costs[back - 1] <= overlap:
            back -= 1
            kept += costs[back]
        start = back
    return out


Extractor = Callable[[str, datetime], list[Statement]]


def drafts(req: RememberRequest, now: datetime, chunk_tokens: int = 640, chunk_overlap: int = 96,
           extractor: Extractor = extract) -> tuple[list[Draft], list[dict[str, Any]]]:
    if req.content is not None:
        parts = chunks(req.content, chunk_tokens, chunk_overlap)
        if len(parts) == 1:
            return [Draft(req.content, req.context, {"kind": "statement"})], []
        return [Draft(p, req.context, {"kind": "chunk", "chunk": i, "of": len(parts)})
                for i, p in enumerate(parts)], []
    assert req.messages is not None
    out: list[Draft] = []
    decisions: list[dict[str, Any]] = []
    msgs = req.messages
    for i, m in enumerate(msgs):
        if m.role not in ("user", "assistant") or not m.content.strip():
            continue
        d = decide_turn(m.role, m.content)
        when = m.created_at or req.created_at or now
        text = user_voice(m.content) if m.role == "assistant" else m.content
        # the offline trigger decides first (cheap, no model call for small talk); the extractor
        # (rules or a model) then writes the statements
        statements = extractor(text, when) if d.keep else []
        decisions.append({"turn": i, "role": m.role, "keep": bool(statements), "kind": d.kind, "reason": d.reason,
                          "statements": len(statements)})
        previous = msgs[i - 1].content if i else req.context
        for j, st in enumerate(statements):
            inferred = m.role == "assistant"
            out.append(Draft(
                st.text, previous,
                {"kind": "message", "turn": i, "role": m.role, "statement": j, "said": m.content,
                 "said_part": st.said or text,
                 "trigger": d.reason, "importance_reasons": st.reasons},
                created_at=when, memory_type=st.memory_type, topic_id=st.topic_id, importance=st.importance,
                source="agent_inferred" if inferred else None, reasons=st.reasons))
    return out, decisions
