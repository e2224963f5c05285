"""The system-prompt block built from recalled memories.

Memories go into the system prompt (seed 2 measured that this works better than
appending them to the conversation), oldest first so the model reads the story in
order, each with its date and, when inferred rather than said, a label.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.model import RecallHit

HEADER = "Long-term memories about this user (oldest first; use them when relevant):"


def build_context(hits: Sequence[RecallHit], max_chars: int = 4000) -> str:
    if not hits:
        return ""
    lines = [HEADER]
    used = len(HEADER)
    for h in sorted(hits, key=lambda x: x.created_at):
        label = f"{h.memory_type}" + (", inferred by the agent" if h.source == "agent_inferred" else "")
        line = f"- [{h.created_at.date().isoformat()}] ({label}) {h.content.strip()}"
        if used + len(line) + 1 > max_chars:
            room = max_chars - used - 2
            if room > 40:
                lines.append(line[:room] + "…")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)
