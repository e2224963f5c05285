"""Judgement: small learned models for the three decisions that make or break a memory service.

- **trigger** (:mod:`agent_memory.judge.models`): keep or drop a turn, and the memory type;
- **change detector**: is a new statement a new value of something the user already told us
  (``new_version``), the same fact again (``duplicate``) or something else (``unrelated``);
- **recall gate**: is the query about this user at all (``personal`` vs ``general``), and is
  any candidate relevant enough to answer with.

Each is a linear model over features the service already computes (the embedding of the text)
plus cheap lexical features (hashed word and character n-grams), trained by ``agent-memory train
judge`` on the labelled corpora in ``agent_memory/evaluation/data/judge/`` and committed as
``weights/*.npz`` (tens of kilobytes, numpy inference: nothing new in the Lambda bundle). Rules
stay where they add measured value: the training report says which.
"""

from agent_memory.judge.models import Judge, load_judge

__all__ = ["Judge", "load_judge"]
