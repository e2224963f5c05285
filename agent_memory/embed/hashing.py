"""A deterministic bag-of-words embedder for fast unit tests. Not for production use."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from agent_memory.embed.base import Embedder, Vectors, normalize
from agent_memory.model import EmbeddingInfo

_TOKEN = re.compile(r"\w", re.UNICODE)


class HashingEmbedder(Embedder):
    """Character-bigram feature hashing: same words -> high similarity, nothing else."""

    default_min_score = 0.1

    def __init__(self, dim: int = 256) -> None:
        self.info = EmbeddingInfo(provider="hash", model="char-bigram-hash", version="1", dim=dim)

    def embed_documents(self, texts: list[str]) -> Vectors:
        out = np.zeros((len(texts), self.info.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            chars = _TOKEN.findall(text.lower())
            for a, b in zip(chars, [*chars[1:], " "], strict=True):
                h = int.from_bytes(hashlib.blake2b((a + b).encode(), digest_size=4).digest(), "big")
                out[row, h % self.info.dim] += 1.0
        return normalize(out)
