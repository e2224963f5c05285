"""The write pipeline's three LLM implementations: offline rules (default), an OpenAI-compatible
endpoint (a local HTTP server answering with recorded responses), and Bedrock's Converse API
(botocore Stubber)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from agent_memory import Memory, Settings
from agent_memory.embed.base import Embedder
from agent_memory.errors import BackendUnavailableError
from agent_memory.llm import BedrockLLM, OfflineLLM, OpenAICompatibleLLM, make_llm
from agent_memory.model import Message

WHEN = datetime(2026, 3, 2, 10, tzinfo=UTC)
RECORDED = {"id": "chatcmpl-1", "object": "chat.completion", "model": "test-model", "choices": [{
    "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": (
        "```json\n[{\"text\": \"The user moved to Lisbon in February 2026\", \"type\": \"event\", "
        "\"topic\": \"city\", \"importance\": 0.6}]\n```")}}]}


@pytest.fixture
def chat_server() -> Iterator[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []
    answer = [RECORDED]  # the test may swap the recorded answer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            out = json.dumps(answer[0]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen, answer
    server.shutdown()
    server.server_close()


def test_offline_is_the_default() -> None:
    llm = make_llm(Settings())
    assert isinstance(llm, OfflineLLM)
    [s] = llm.extract("I moved to Lisbon last month", WHEN)
    assert s.text == "The user moved to Lisbon last month (2026-02)"
    assert llm.rewrite("same as last time", [Message(role="user", content="book the Hotel Avenida")]).endswith(
        "(book the Hotel Avenida)")


def test_openai_compatible_endpoint_extracts_and_feeds_remember(
        chat_server: tuple[str, list[dict[str, Any]], list[dict[str, Any]]], tmp_path: Path,
        embedder: Embedder) -> None:
    url, seen, _ = chat_server
    llm = OpenAICompatibleLLM(url, "sk-test", "test-model")
    [s] = llm.extract("I moved to Lisbon last month", WHEN)
    assert (s.text, s.memory_type, s.topic_id) == ("The user moved to Lisbon in February 2026", "event", "city")
    assert s.importance >= 0.6 and s.reasons[0] == "openai model"
    request = seen[0]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "test-model" and request["body"]["messages"][0]["role"] == "system"
    assert "2026-03-02" in request["body"]["messages"][1]["content"]

    m = Memory(Settings(data_dir=tmp_path, llm_provider="openai", llm_base_url=url, llm_model="test-model",
                        llm_extracts="kept"),
               embedder=embedder)
    [mid] = m.remember("u1", messages=[{"role": "user", "content": "hi"},  # small talk: no model call
                                       {"role": "user", "content": "I moved to Lisbon last month"}])
    assert m.get(mid, user_id="u1")["record"]["summary"] == "The user moved to Lisbon in February 2026"
    assert len(seen) == 2
    m.close()


def test_a_model_answer_that_is_not_json_is_an_error(
        chat_server: tuple[str, list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    url, _, answer = chat_server
    answer[0] = {"choices": [{"message": {"role": "assistant", "content": "Sure! The user moved to Lisbon."}}]}
    with pytest.raises(BackendUnavailableError, match="not the expected JSON"):
        OpenAICompatibleLLM(url, None, "m").extract("I moved to Lisbon", WHEN)


def test_bedrock_converse_with_stubber() -> None:
    client = boto3.client("bedrock-runtime", region_name="us-east-1")
    stub = Stubber(client)
    stub.add_response("converse", {
        "output": {"message": {"role": "assistant", "content": [
            {"text": '[{"text": "用户下周去上海出差三天", "type": "plan", "topic": null, "importance": 0.7}]'}]}},
        "stopReason": "end_turn", "usage": {"inputTokens": 10, "outputTokens": 20, "totalTokens": 30},
        "metrics": {"latencyMs": 100}},
        expected_params={"modelId": "anthropic.claude-3-haiku", "system": ANY, "messages": ANY,
                         "inferenceConfig": {"maxTokens": 1024, "temperature": 0}})
    stub.add_response("converse", {
        "output": {"message": {"role": "assistant", "content": [{"text": "订上次那家酒店：Hotel Avenida"}]}},
        "stopReason": "end_turn", "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 50}})
    with stub:
        llm = BedrockLLM("anthropic.claude-3-haiku", "us-east-1", client=client)
        [s] = llm.extract("我下周要去上海出差三天", WHEN)
        assert (s.text, s.memory_type, s.importance) == ("用户下周去上海出差三天", "plan", 0.7)
        assert llm.rewrite("还订上次那家", [Message(role="user", content="上次住的是Hotel Avenida")]) == \
            "订上次那家酒店：Hotel Avenida"
    stub.assert_no_pending_responses()
