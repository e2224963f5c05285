"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    """An in-process Memory in a fresh folder, one per test module, on the session's loaded model
    (Strong reads: what a test wrote is searchable at once)."""
    m = Memory(Settings(data_dir=tmp_path_factory.mktemp("memory"), consistency_level="Strong"), embedder=embedder)
    yield m
    m.close()
