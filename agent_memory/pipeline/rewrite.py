"""Query rewriting: a recall question that points back into the conversation ("do the same as
last time", "那个项目就按之前说的来") is made self-contained before it is embedded, by adding the
latest user turns it refers to. Offline rules; a question without such a reference is left as is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent_memory.model import Message

_REFERENCE = re.compile(
    r"\b(same as (last time|before)|as before|like last time|as (we|i) (said|discussed)|that one|that|it|this|"
    r"those|them|the same|again)\b|那个|这个|那件事|之前(说的|聊的)?|上次|刚才|同样|照旧|老样子|按.{0,6}来", re.I)
MAX_CONTEXT_CHARS = 300


def rewrite_query(query: str, conversation: Sequence[Message] | None) -> str:
    if not conversation or not _REFERENCE.search(query):
        return query
    earlier = [m.content.strip() for m in conversation if m.role == "user" and m.content.strip()
               and m.content.strip() != query.strip()][-2:]
    if not earlier:
        return query
    return f"{query} ({' '.join(earlier)[-MAX_CONTEXT_CHARS:]})"
