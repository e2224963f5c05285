"""Vector index backends; :func:`open_index` picks one from the URI."""

from __future__ import annotations

from agent_memory.config import Settings
from agent_memory.index.base import SearchHit, VectorIndex


def open_index(settings: Settings, uri: str | None = None, collection: str | None = None) -> VectorIndex:
    """``http(s)://`` -> Milvus server; ``helix+...`` -> HelixDB; anything else -> Milvus Lite file."""
    uri = uri or settings.resolved_index_uri
    collection = collection or settings.collection_name
    if uri.startswith("helix+"):
        from agent_memory.index.helix import HelixIndex

        return HelixIndex(uri, collection, settings.index_token, row_cache_rows=settings.index_row_cache_rows)
    from agent_memory.index.milvus import MilvusIndex

    if not uri.startswith(("http://", "https://")):
        from pathlib import Path

        Path(uri).parent.mkdir(parents=True, exist_ok=True)
    return MilvusIndex(uri, collection, settings.index_token, settings.consistency_level,
                       row_cache_rows=settings.index_row_cache_rows)


__all__ = ["SearchHit", "VectorIndex", "open_index"]
