"""The write pipeline's offline brain: trigger (is this turn worth keeping?), extraction (short
third-person statements with type, topic and resolved dates) and importance (0..1, explained).

Deterministic rules for Chinese and English, a few microseconds per turn, no model server. They
are measured on a labelled set in the repository (``agent-memory eval pipeline``). Not yet wired
into ``remember(messages=...)``: that step (with conflicts, chunking, query rewriting and the
LLM-backed variants) is the rest of the write-pipeline issue.
"""

from agent_memory.pipeline.extract import Statement, extract
from agent_memory.pipeline.importance import importance
from agent_memory.pipeline.trigger import Decision, decide, decide_turn, user_voice

__all__ = ["Decision", "Statement", "decide", "decide_turn", "extract", "importance", "user_voice"]
