"""Raw stores (S3 or files) and the helpers that pick one from settings."""

from __future__ import annotations

from agent_memory.config import Settings
from agent_memory.store.base import RawStore


def make_store(settings: Settings) -> RawStore:
    if settings.store == "s3":
        from agent_memory.store.s3 import make_s3_store

        return make_s3_store(settings.bucket_name, settings.s3_endpoint_url, settings.aws_region,
                             restore_days=settings.restore_days, restore_tier=settings.restore_tier)
    from agent_memory.store.file import FileStore

    return FileStore(settings.originals_dir)


__all__ = ["RawStore", "make_store"]
