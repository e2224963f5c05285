"""The write pipeline's language model: extraction of memories from a turn, and query rewriting.

Four implementations behind one interface, chosen by ``llm_provider``:

- ``offline`` (default): the deterministic Chinese/English rules of :mod:`agent_memory.pipeline`;
  no model server, microseconds per turn;
- ``openai``: any OpenAI-compatible ``/chat/completions`` endpoint (``llm_base_url``,
  ``llm_api_key``, ``llm_model``), over httpx;
- ``bedrock``: Amazon Bedrock's Converse API (``llm_model`` is the model id), over boto3;
- ``llamacpp``: a local GGUF file run in-process by llama.cpp (``llm_model_path``).

With a model configured, the learned models of :mod:`agent_memory.judge` still decide every
confident case; only their uncertain band reaches the model (trigger + extraction, change
decisions): a cascade, so the cost stays near the small models'.

The model is asked for JSON; an answer that is not valid JSON of the expected shape is an
error (:class:`BackendUnavailableError`), so a bad model never writes half-parsed memories —
the message is retried from the queue like any other failure.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_memory.config import MEMORY_TYPES, Settings
from agent_memory.errors import BackendUnavailableError
from agent_memory.judge.models import ChangeVerdict
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


CHANGE_SYSTEM = (
    "You compare two things a user told an assistant, an earlier one and a later one. Answer "
    "new_version when the later one gives a new value of the same attribute of the same person or "
    "thing (a new employer, city, diet, phone, date...), duplicate when it says the same fact "
    "again, and unrelated otherwise (both stay true: different attributes, different people, or "
    "one more fact of the same kind). Answer only with JSON: {\"decision\": \"new_version\" | "
    "\"duplicate\" | \"unrelated\"}.")
CHANGE_LABELS = ("new_version", "duplicate", "unrelated")
CHANGE_SCHEMA: dict[str, Any] = {"type": "object", "properties": {"decision": {"type": "string", "enum": list(
    CHANGE_LABELS)}}, "required": ["decision"]}
# bounded so that any answer the grammar allows fits in max_tokens: a small model that loops
# ("The user: The user: ...") is cut by the schema, never mid-JSON
EXTRACT_SCHEMA: dict[str, Any] = {"type": "array", "maxItems": 3, "items": {
    "type": "object", "required": ["text", "type", "importance"],
    "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 160},
                   "type": {"type": "string", "enum": list(MEMORY_TYPES)},
                   "topic": {"type": ["string", "null"], "maxLength": 40},
                   # a number's digits are unbounded in a grammar: a small model looping on
                   # "0.5000..." would run past max_tokens, so importance is one of eleven steps
                   "importance": {"enum": [round(i / 10, 1) for i in range(11)]}}}}


class LLM(ABC):
    name: str

    @abstractmethod
    def extract(self, text: str, when: datetime) -> list[Statement]:
        """Statements worth keeping in one turn said at ``when`` ([] for small talk)."""

    @abstractmethod
    def rewrite(self, query: str, conversation: Sequence[Message] | None) -> str:
        """A self-contained version of ``query``."""

    def judge_change(self, existing: str, new: str, verdict: ChangeVerdict) -> ChangeVerdict:
        """The change model's uncertain ``verdict`` on (existing, new), decided by the model.
        Offline there is no model: the small model's verdict stands."""
        return verdict


class OfflineLLM(LLM):
    name = "offline"

    def extract(self, text: str, when: datetime) -> list[Statement]:
        return extract(text, when)

    def rewrite(self, query: str, conversation: Sequence[Message] | None) -> str:
        return rewrite_query(query, conversation)


class _ChatLLM(LLM):
    """Prompting and parsing shared by the remote models; subclasses only send one chat call."""

    @abstractmethod
    def chat(self, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
        """One chat call; ``schema``: the JSON schema the answer must follow, where the runtime
        can constrain decoding (llama.cpp); remote endpoints get it described in the prompt."""

    def extract(self, text: str, when: datetime) -> list[Statement]:
        answer = self.chat(EXTRACT_SYSTEM, f"Time of the message: {when.isoformat()}\nTurn: {text}", EXTRACT_SCHEMA)
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
                out.append(Statement(str(item["text"]).strip(), kind, _topic(item.get("topic")),
                                     round(min(1.0, max(value, rules_value)), 2), [f"{self.name} model", *reasons]))
            return [s for s in out if s.text]
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendUnavailableError(f"{self.name} answered something that is not the expected JSON: "
                                          f"{answer[:200]!r}") from exc

    def judge_change(self, existing: str, new: str, verdict: ChangeVerdict) -> ChangeVerdict:
        answer = self.chat(CHANGE_SYSTEM, f"Earlier: {existing}\nLater: {new}", CHANGE_SCHEMA)
        try:
            label = json.loads(_strip_fences(answer))["decision"]
            if label not in CHANGE_LABELS:
                raise ValueError(f"unknown decision {label!r}")
        except (ValueError, KeyError, TypeError) as exc:
            raise BackendUnavailableError(f"{self.name} answered something that is not the expected JSON: "
                                          f"{answer[:200]!r}") from exc
        return ChangeVerdict(label, 1.0, verdict.probs, False, decided_by=f"language model ({self.name})")

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

    def chat(self, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
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

    def chat(self, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            resp = self.client.converse(
                modelId=self.model_id, system=[{"text": system}],
                messages=[{"role": "user", "content": [{"text": user}]}],
                inferenceConfig={"maxTokens": 1024, "temperature": 0})
            return "".join(part.get("text", "") for part in resp["output"]["message"]["content"])
        except (BotoCoreError, ClientError, KeyError) as exc:
            raise BackendUnavailableError(f"Bedrock {self.model_id}: {exc}") from exc


class LlamaCppLLM(_ChatLLM):
    """A local GGUF model run in-process by llama.cpp (PyPI ``xllamacpp``, prebuilt CPU wheels;
    ``pip install 'agent-memory[llamacpp]'``), answers constrained to the JSON schema of each
    call by llama.cpp's grammar, so a small model cannot answer malformed JSON. Weights are never
    part of the install: ``llm_model_path`` points to a file the user chose; with
    ``llm_model_sha256`` the file is checked before it is loaded."""

    name = "llamacpp"

    def __init__(self, model_path: Path, threads: int = 2, sha256: str | None = None, n_ctx: int = 2048) -> None:
        if not model_path.is_file():
            raise BackendUnavailableError(f"llm_model_path {model_path} is not a file")
        if sha256 is not None and file_sha256(model_path) != sha256.lower():
            raise BackendUnavailableError(f"{model_path} does not have the expected sha256 {sha256}")
        try:
            import xllamacpp
        except ImportError as exc:
            raise BackendUnavailableError("llm_provider=llamacpp needs xllamacpp: "
                                          "pip install 'agent-memory[llamacpp]'") from exc
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.verbosity = -1
        params.warmup = False
        self.model_path = model_path
        self._server = xllamacpp.Server(params)
        self._lock = threading.Lock()

    def chat(self, system: str, user: str, schema: dict[str, Any] | None = None) -> str:
        request: dict[str, Any] = {
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": 0, "max_tokens": 768}
        if schema is not None:
            request["response_format"] = {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema}}
        with self._lock:  # one slot: calls queue, like requests to a one-slot server
            answer = self._server.handle_chat_completions(request)
        try:
            return str(answer["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError) as exc:
            raise BackendUnavailableError(f"llama.cpp answered {str(answer)[:200]!r}") from exc


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def make_llm(settings: Settings) -> LLM:
    if settings.llm_provider == "llamacpp":
        if settings.llm_model_path is None:
            raise BackendUnavailableError("llm_provider=llamacpp needs llm_model_path (a GGUF file)")
        return LlamaCppLLM(settings.llm_model_path, settings.llm_threads, settings.llm_model_sha256)
    if settings.llm_provider == "openai":
        return OpenAICompatibleLLM(settings.llm_base_url, settings.llm_api_key, settings.llm_model)
    if settings.llm_provider == "bedrock":
        return BedrockLLM(settings.llm_model, settings.aws_region)
    return OfflineLLM()


def _topic(value: Any) -> str | None:
    """A model's topic only when it is a valid id ("employer"); a small model may copy the
    prompt's list ("employer|city|...") or invent prose: versions are the change model's job."""
    return value if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_\-.:]{1,64}", value) else None


def _strip_fences(text: str) -> str:
    m = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    return (m.group(1) if m else text).strip()


__all__ = ["LLM", "BedrockLLM", "LlamaCppLLM", "OfflineLLM", "OpenAICompatibleLLM", "make_llm"]
