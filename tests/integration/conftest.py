"""Fixtures of the integration tests."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.local.events import LocalContext, api_gateway_event


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Memory]:
    """An in-process Memory in a fresh folder, one per test module, on the session's loaded model
    (Strong reads: what a test wrote is searchable at once)."""
    m = Memory(Settings(data_dir=tmp_path_factory.mktemp("memory"), consistency_level="Strong"), embedder=embedder)
    yield m
    m.close()


class LambdaTransport(httpx.BaseTransport):
    """httpx requests into the real API handler as API Gateway proxy events (no server needed)."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        from lambdas import api

        query: dict[str, list[str]] = {}
        for k, v in request.url.params.multi_items():
            query.setdefault(k, []).append(v)
        body = request.content.decode() or None
        event = api_gateway_event(request.method, request.url.path, query,
                                  {"content-type": "application/json"} if body else {}, body)
        resp = api.handler(event, LocalContext("api"))
        headers = [*(resp.get("headers") or {}).items(),
                   *((k, v) for k, vs in (resp.get("multiValueHeaders") or {}).items() for v in vs)]
        return httpx.Response(resp["statusCode"], headers=headers, content=(resp.get("body") or "").encode())
