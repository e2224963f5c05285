"""The embedding interface. Every provider returns L2-normalized float32 rows, so inner
product equals cosine similarity and the index can use the IP metric."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np
import numpy.typing as npt

from agent_memory.model import EmbeddingInfo

Vectors = npt.NDArray[np.float32]


def normalize(vectors: npt.ArrayLike) -> Vectors:
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = (arr / norms).astype(np.float32)
    return out


class Embedder(ABC):
    """One model, used for both writing and reading (the index pins its identity)."""

    info: EmbeddingInfo
    default_min_score: float
    """Similarity below which a hit is noise for this model (calibrated per model)."""
    default_dense_weight: float = 0.5
    """Share of this model's similarity in hybrid relevance (the rest is BM25), tuned per model."""
    default_duplicate_similarity: float = 0.95
    """Two statements at or above this similarity are the same memory (model-specific scale)."""

    @abstractmethod
    def embed_documents(self, texts: list[str]) -> Vectors:
        """Vectors for memories being stored."""

    def embed_query(self, text: str) -> Vectors:
        """Vector for a recall query; models with query/passage prefixes override this."""
        row: Vectors = self.embed_documents([text])[0]
        return row
