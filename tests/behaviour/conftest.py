"""The backend-agnostic behaviour suite runs once per backend combination:

- ``lite-file``: Milvus Lite file + originals as files (the zero-server default)
- ``lite-s3``: Milvus Lite + S3 on a moto server process over HTTP
- ``server-s3``: a real Milvus 2.3.5 server (PyPI ``milvus``) + S3 on moto
- ``helix-file``: the embedded HelixDB engine (PyPI ``helix-db-embedded``) + files
- ``helixhttp-s3``: HelixDB over HTTP (the SDK's server client against the test-only
  server in ``tests/helix_http_server.py``, with an API key) + S3 on moto
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from tests.conftest import HELIX_API_KEY, make_bucket

BACKENDS = ["lite-file", "lite-s3", pytest.param("server-s3", marks=pytest.mark.milvus_server),
            "helix-file", "helixhttp-s3"]


def backend_settings(name: str, tmp: Path, request: pytest.FixtureRequest) -> Settings:
    collection = f"t_{uuid.uuid4().hex[:8]}"
    fields: dict[str, object] = {"data_dir": tmp, "collection_name": collection,
                                 "consistency_level": "Strong"}
    if name.endswith("-s3"):
        moto = request.getfixturevalue("moto_server")
        bucket = f"mem-{uuid.uuid4().hex[:8]}"
        make_bucket(moto.url, bucket)
        fields |= {"store": "s3", "bucket_name": bucket, "s3_endpoint_url": moto.url}
    if name.startswith("server"):
        fields["index_uri"] = request.getfixturevalue("milvus_server")
    if name.startswith("helix-"):
        fields["index_uri"] = f"helix+embedded://{tmp / 'helix'}"
    if name.startswith("helixhttp"):
        fields |= {"index_uri": request.getfixturevalue("helix_server"), "index_token": HELIX_API_KEY}
    return Settings(**fields)  # type: ignore[arg-type]


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def memory_by_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Memory]]:
    cache: dict[str, Memory] = {}
    yield cache
    for m in cache.values():
        m.close()


@pytest.fixture
def memory(backend: str, request: pytest.FixtureRequest, memory_by_backend: dict[str, Memory],
           embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Memory:
    """One Memory per backend for the whole session; tests isolate themselves by user id."""
    if backend not in memory_by_backend:
        settings = backend_settings(backend, tmp_path_factory.mktemp(backend), request)
        memory_by_backend[backend] = Memory(settings, embedder=embedder)
    elif backend.startswith("server"):
        request.getfixturevalue("milvus_server")  # restarted in place if a stall left it unhealthy
    return memory_by_backend[backend]
