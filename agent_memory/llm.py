"""The write pipeline's language model: extraction of memories from a turn, and query rewriting.

Three implementations behind one interface, chosen by ``llm_provider``:

- ``offline`` (default): the deterministic Chinese/English rules of :mod:`agent_memory.pipeline`;
  no model server, microseconds per turn;
- ``openai``: any OpenAI-compatible ``/chat/completions`` endpoint (``llm_base_url``,
  ``llm_api_key``, ``llm_model``), over httpx;
- ``bedrock``: Amazon Bedrock's Converse API (``llm_model`` is the model id), over boto3.

The model is asked for JSON; an answer that is not valid JSON of the expected shape is an
error (:class:`BackendUnavailableError`), so a bad model never writes half-parsed memories —
the message is retried from the queue like any other failure.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from agent_memory.config import MEMORY_TYPES, Settings
from agent_memory.errors import BackendUnavailableError
from agent_memory.model import Message
from agent_memory.pipeline.extract import Statement, extract
from agent_memory.pipeline.importance import importance
from agent_memory.pipeline.rewrite import rewrite_query

EXTRACT_SYSTEM = (
    "You extract long-term memories about a user from one chat turn. Keep only preferences, goals and "
    "tasks, personal facts, commitments and plans, and events with a date; skip greetings, small talk and "
    "questions to the assistant. Write each fact as one short third-person statement in the turn's "
    "language (\"The user ...\" / \"用户...\"), resolving relative dates against the given time. Answer "
    "only with a JSON array (empty when nothing is worth keeping) of objects with keys text, type "
    "(preference|fact|task|event|plan), topic (employer|city|drink|diet|car|pet|name or null) and "
    "importance (0..1).")
REWRITE_SYSTEM = (
    "Rewrite the user's last question so it can be understood without the conversation: replace "
    "references such as 'that', 'the same as last time', '那个', '之前说的' with what they refer to. "
    "Answer with the rewritten question only.")


class LLM(ABC):
    name: str

    @abstractmethod
    def extract(self, text: str, when: datetime) -> list[Statement]:
        """Statements worth keeping in one turn said at ``when`` ([] for small talk)."""

    @abstractmethod
    def rewrite(self, query: str, conversation: Sequence[Message] | None) -> str:
        """A self-contained version of ``query``."""


class OfflineLLM(LLM):
    name = "offline"

    def extract(self, text: str, when: datetime) -> list[Statement]:
        return extract(text, when)

    def rewrite(self, query: str, conversation: Sequence[Message] | None) -> str:
        return rewrite_query(query, conversation)


class _ChatLLM(LLM):
    """Prompting and parsing shared by the remote models; subclasses only send one chat call."""

    @abstractmethod
    def chat(self, system: str, user: str) -> str: ...

    def extract(self, text: str, when: datetime) -> list[Statement]:
        answer = self.chat(EXTRACT_SYSTEM, f"Time of the message: {when.isoformat()}\nTurn: {text}")
        try:
            items = json.loads(_strip_fences(answer))
            if not isinstance(items, list):
                raise ValueError("not a JSON array")
            out = []
            for item in items:
                kind = item["type"] if item.get("type") in MEMORY_TYPES else "fact"
                rules_value, reasons = importance(str(item["text"]), kind)
                value = float(item.get("importance", rules_value))
                # the model's importance, never below what the rule boosts say
                out.append(Statement(str(item["text"]).strip(), kind, item.get("topic") or None,
                                     round(min(1.0, max(value, rules_value)), 2), [f"{self.name} model", *reasons]))
            return [s for s in out if s.text]
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendUnavailableError(f"{self.name} answered something that is not the expected JSON: "
                                          f"{answer[:200]!r}") from exc

    def rewrite(self, query: str, conversation: Sequence[Message] | None) -> str:
        if not conversation:
            return query
        lines = "\n".join(f"{m.role}: {m.content}" for m in conversation[-8:])
        answer = self.chat(REWRITE_SYSTEM, f"Conversation:\n{lines}\n\nLast question: {query}").strip()
        return answer or query


class OpenAICompatibleLLM(_ChatLLM):
    name = "openai"

    def __init__(self, base_url: str, api_key: str | None, model: str, timeout_s: float = 30.0) -> None:
        import httpx

        self.model = model
        self._http = httpx.Client(base_url=base_url.rstrip("/"), timeout=timeout_s,
                                  headers={"Authorization": f"Bearer {api_key}"} if api_key else {})

    def chat(self, system: str, user: str) -> str:
        import httpx

        try:
            r = self._http.post("/chat/completions", json={
                "model": self.model, "temperature": 0,
                "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]})
            r.raise_for_status()
            return str(r.json()["choices"][0]["message"]["content"])
        except (httpx.HTTPError, KeyError, ValueError) as exc:
            raise BackendUnavailableError(f"LLM endpoint {self._http.base_url}: {exc}") from exc


class BedrockLLM(_ChatLLM):
    name = "bedrock"

    def __init__(self, model_id: str, region: str, client: Any = None) -> None:
        import boto3

        self.model_id = model_id
        self.client = client or boto3.client("bedrock-runtime", region_name=region)

    def chat(self, system: str, user: str) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            resp = self.client.converse(
                modelId=self.model_id, system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"maxTokens": 1024, "temperature": 0})
            return "".join(part.get("text", "") for part in resp["output"]["message"]["content"])
        except (BotoCoreError, ClientError, KeyError) as exc:
            raise BackendUnavailableError(f"Bedrock {self.model_id}: {exc}") from exc


def make_llm(settings: Settings) -> LLM:
    if settings.llm_provider == "openai":
        return OpenAICompatibleLLM(settings.llm_base_url, settings.llm_api_key, settings.llm_model)
    if settings.llm_provider == "bedrock":
        return BedrockLLM(settings.llm_model, settings.aws_region)
    return OfflineLLM()


def _strip_fences(text: str) -> str:
    m = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    return (m.group(1) if m else text).strip()


__all__ = ["LLM", "BedrockLLM", "OfflineLLM", "OpenAICompatibleLLM", "make_llm"]
