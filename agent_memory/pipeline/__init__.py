"""The write pipeline's offline brain: trigger (is this turn worth keeping?), extraction (short
third-person statements with type, topic and resolved dates) and importance (0..1, explained).

Deterministic rules for Chinese and English, tens of microseconds per turn, no model server,
measured on labelled sets in the repository (``agent-memory eval pipeline``). ``remember`` runs
them through :mod:`agent_memory.pipeline.drafts`; :mod:`agent_memory.llm` can put a model in
place of the extraction and rewriting rules.
"""

from agent_memory.pipeline.extract import Statement, extract
from agent_memory.pipeline.importance import importance
from agent_memory.pipeline.trigger import Decision, decide, decide_turn, user_voice

__all__ = ["Decision", "Statement", "decide", "decide_turn", "extract", "importance", "user_voice"]
