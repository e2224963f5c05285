"""The vector of a stored memory, from the text(s) :meth:`agent_memory.model.Original.embedding_texts`
names. With ``blend`` (the ``context_blend`` setting) a statement's two texts (in the conversation it
was said in, and its words alone) are summed and normalised, so the statement keeps its own direction
when the messages before it were about other things; without it, the first text alone (one embedding
per memory)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agent_memory.embed.base import Embedder, Vectors, normalize
from agent_memory.model import Original


@dataclass(frozen=True)
class MemoryVectors:
    stored: Vectors
    """What the index keeps and recall searches."""
    in_context: Vectors
    """The first text's alone (the statement with its context): what the change detector searches
    its candidates with, the vectors its candidate floor and conversation negatives were fitted on
    (with the blend it found more LoCoMo statements duplicates of each other: 231 against 179)."""


def memory_vectors(embedder: Embedder, originals: Sequence[Original], blend: bool = False) -> MemoryVectors:
    """One row per original in each, every distinct text embedded once, in a single batch: the
    statements of one turn often share a text (their turn, as the blend's second text, or the whole
    turn the trigger kept as their part), and each embedding costs milliseconds on a CPU."""
    texts = [o.embedding_texts() if blend else o.embedding_texts()[:1] for o in originals]
    every = [t for ts in texts for t in ts]
    row = {t: i for i, t in enumerate(dict.fromkeys(every))}
    embedded = embedder.embed_documents(list(row))
    flat = embedded if len(row) == len(every) else embedded[[row[t] for t in every]]
    if len(flat) == len(texts):
        return MemoryVectors(flat, flat)
    starts = np.cumsum([0] + [len(ts) for ts in texts[:-1]])
    stored = normalize(np.stack([flat[at:at + len(ts)].sum(axis=0) for at, ts in zip(starts, texts, strict=True)]))
    return MemoryVectors(stored, flat[starts])
