"""The real Lambda handlers with real event shapes, against S3 and SQS on a moto server process
and the embedded index: API -> queue -> ingest -> recall, poison messages, duplicates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory import Settings, runtime
from agent_memory.embed.base import Embedder
from agent_memory.filters import MemoryFilter
from agent_memory.local.bootstrap import Queues, ensure_bucket, ensure_queues
from agent_memory.local.events import LocalContext, api_gateway_event, scheduled_event, sqs_event
from agent_memory.local.processes import ServerProcess
from agent_memory.queue.sqs import make_sqs_client
from agent_memory.service import Memory
from agent_memory.store.s3 import make_s3_client
from tests.conftest import new_user


@pytest.fixture(scope="module")
def stack(moto_server: ServerProcess, tmp_path_factory: pytest.TempPathFactory,
          embedder: Embedder) -> Iterator[tuple[Settings, Queues, Any]]:
    tag = uuid.uuid4().hex[:8]
    s = Settings(data_dir=Path(tmp_path_factory.mktemp("handlers")), store="s3", bucket_name=f"orig-{tag}",
                 s3_endpoint_url=moto_server.url, sqs_endpoint_url=moto_server.url,
                 write_queue_name=f"write-{tag}", dead_letter_queue_name=f"dlq-{tag}", max_receive_count=2,
                 visibility_timeout_s=1, consistency_level="Strong")
    ensure_bucket(make_s3_client(moto_server.url, s.aws_region), s, tls_only=False)
    sqs = make_sqs_client(moto_server.url, s.aws_region)
    queues = ensure_queues(sqs, s)
    s = s.model_copy(update={"write_queue_url": queues.queue_url})
    runtime.configure(s, memory=Memory(s, embedder=embedder))  # share the session's loaded model
    yield s, queues, sqs
    runtime.reset()


def call_api(method: str, path: str, body: Any = None, query: dict[str, str] | None = None,
             content_type: str = "application/json", api_key: str | None = None) -> tuple[int, Any]:
    from lambdas import api

    raw = body if isinstance(body, str) or body is None else json.dumps(body)
    headers = {"content-type": content_type} if raw is not None else {}
    event = api_gateway_event(method, path, {k: [v] for k, v in (query or {}).items()}, headers, raw,
                              api_key=api_key)
    resp = api.handler(event, LocalContext("api"))
    return resp["statusCode"], json.loads(resp["body"]) if resp.get("body") else None


def drain(sqs: Any, queues: Queues, max_batches: int = 20) -> list[dict[str, Any]]:
    """Run the ingest handler like the event source mapping until the queue is empty."""
    from lambdas import ingest

    results = []
    for _ in range(max_batches):
        msgs = sqs.receive_message(QueueUrl=queues.queue_url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                   AttributeNames=["All"]).get("Messages", [])
        if not msgs:
            break
        try:
            result = ingest.handler(sqs_event(msgs, queues.queue_arn), LocalContext("ingest"))
            failed = {f["itemIdentifier"] for f in result["batchItemFailures"]}
        except Exception:  # every record failed: Powertools fails the invocation, SQS retries all
            result = {"batchItemFailures": [{"itemIdentifier": m["MessageId"]} for m in msgs]}
            failed = {m["MessageId"] for m in msgs}
        for m in msgs:
            if m["MessageId"] not in failed:
                sqs.delete_message(QueueUrl=queues.queue_url, ReceiptHandle=m["ReceiptHandle"])
        results.append(result)
    return results


def test_remember_queue_ingest_recall(stack: tuple[Settings, Queues, Any]) -> None:
    s, queues, sqs = stack
    u = new_user()
    status, body = call_api("POST", "/v1/memories", {"user_id": u, "content": "我对花生过敏", "importance": 0.9})
    assert status == 202 and body["status"] == "queued"
    [mid] = body["memory_ids"]
    # the original is in S3 before the index knows about it
    s3 = make_s3_client(s.s3_endpoint_url, s.aws_region)
    assert s3.head_object(Bucket=s.bucket_name, Key=f"memories/{u}/{mid}.json")
    status, body = call_api("POST", "/v1/recall", {"user_id": u, "query": "点餐时要注意什么"})
    assert status == 200 and body["memories"] == []
    drain(sqs, queues)
    status, body = call_api("POST", "/v1/recall", {"user_id": u, "query": "点餐时要注意什么"})
    assert [h["memory_id"] for h in body["memories"]] == [mid]
    assert body["memories"][0]["parts"]["similarity"] > 0 and "我对花生过敏" in body["context"]
    assert body["memories"][0]["reason"] == "chosen"  # it matched on its own, not as a dietary constraint
    status, body = call_api("GET", f"/v1/memories/{mid}")
    assert status == 200 and body["original"]["content"] == "我对花生过敏"
    status, body = call_api("DELETE", f"/v1/memories/{mid}", query={"user_id": u})
    assert status == 200 and body["deleted_at"]
    status, body = call_api("POST", "/v1/recall", {"user_id": u, "query": "点餐时要注意什么"})
    assert body["memories"] == []
    status, body = call_api("GET", f"/v1/users/{u}/memories", query={"include_deleted": "true"})
    assert [r["id"] for r in body["memories"]] == [mid]
    status, body = call_api("GET", f"/v1/users/{u}/recalls")
    assert len(body["recalls"]) == 3
    status, body = call_api("DELETE", f"/v1/users/{u}")
    assert body["erased"]["index_entries"] == 1 and body["erased"]["object_versions"] >= 2


def test_poison_message_goes_to_dlq_while_the_batch_succeeds(stack: tuple[Settings, Queues, Any]) -> None:
    _, queues, sqs = stack
    u = new_user()
    _, good = call_api("POST", "/v1/memories", {"user_id": u, "content": "I keep bees in my garden"})
    sqs.send_message(QueueUrl=queues.queue_url,
                     MessageBody=json.dumps({"v": 1, "user_id": u, "memory_ids": ["f" * 32]}))
    sqs.send_message(QueueUrl=queues.queue_url, MessageBody="not json at all")
    import time

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        drain(sqs, queues)
        attrs = sqs.get_queue_attributes(QueueUrl=queues.dlq_url, AttributeNames=["ApproximateNumberOfMessages"])
        if int(attrs["Attributes"]["ApproximateNumberOfMessages"]) >= 2:
            break
        time.sleep(1.1)  # visibility timeout is 1 s in this stack
    dead = sqs.receive_message(QueueUrl=queues.dlq_url, MaxNumberOfMessages=10).get("Messages", [])
    bodies = sorted(m["Body"] for m in dead)
    assert len(bodies) == 2 and "not json at all" in bodies
    _, tl = call_api("GET", f"/v1/users/{u}/memories")
    assert [r["id"] for r in tl["memories"]] == good["memory_ids"]


def test_a_batch_is_indexed_in_one_write(stack: tuple[Settings, Queues, Any],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_memory import runtime

    _, queues, sqs = stack
    u = new_user()
    ids = [call_api("POST", "/v1/memories", {"user_id": u, "content": f"I collect stamp number {i}"})[1]
           ["memory_ids"][0] for i in range(6)]
    m = runtime.memory()
    calls: list[int] = []
    original = m.index_originals
    monkeypatch.setattr(m, "index_originals", lambda batch: (calls.append(len(batch)), original(batch))[1])
    drain(sqs, queues)
    assert calls == [6], "six messages of one SQS batch should make one embed + index write"
    _, tl = call_api("GET", f"/v1/users/{u}/memories")
    assert sorted(r["id"] for r in tl["memories"]) == sorted(ids)


def test_unreadable_messages_fail_alone_and_the_rest_is_one_write(stack: tuple[Settings, Queues, Any],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A message naming a missing original and one that is not JSON are reported by themselves;
    the batch's other messages are read in parallel and indexed in one write, not one by one."""
    from agent_memory import runtime
    from lambdas import ingest

    _, queues, sqs = stack
    u = new_user()
    ids = [call_api("POST", "/v1/memories", {"user_id": u, "content": f"My locker number is {i}"})[1]
           ["memory_ids"][0] for i in range(5)]
    drain(sqs, queues)  # the API's own messages; the batch below is built by hand

    def msg(message_id: str, body: str) -> dict[str, Any]:
        return {"MessageId": message_id, "ReceiptHandle": "r", "Body": body, "Attributes": {},
                "MessageAttributes": {}}

    good = [msg(f"ok{i}", json.dumps({"v": 1, "user_id": u, "memory_ids": [mid]})) for i, mid in enumerate(ids)]
    batch = [*good[:2], msg("missing", json.dumps({"v": 1, "user_id": u, "memory_ids": ["f" * 32]})),
             *good[2:4], msg("garbled", "not json at all"), good[4]]
    m = runtime.memory()
    calls: list[int] = []
    original = m.index_originals
    monkeypatch.setattr(m, "index_originals", lambda b: (calls.append(len(b)), original(b))[1])
    result = ingest.handler(sqs_event(batch, queues.queue_arn), LocalContext("ingest"))
    assert result["batchItemFailures"] == [{"itemIdentifier": "garbled"}, {"itemIdentifier": "missing"}]
    assert calls == [5], "the five readable messages should make one embed + index write"
    _, tl = call_api("GET", f"/v1/users/{u}/memories")
    assert sorted(r["id"] for r in tl["memories"]) == sorted(ids)


def test_a_message_twice_in_one_batch_makes_one_index_row(stack: tuple[Settings, Queues, Any]) -> None:
    from agent_memory import runtime
    from lambdas import ingest

    _, queues, sqs = stack
    u = new_user()
    _, body = call_api("POST", "/v1/memories", {"user_id": u, "content": "My cello is called Bruno"})
    drain(sqs, queues)
    msg = {"MessageId": "m1", "ReceiptHandle": "r", "Body": json.dumps(
        {"v": 1, "user_id": u, "memory_ids": body["memory_ids"]}), "Attributes": {}, "MessageAttributes": {}}
    result = ingest.handler(sqs_event([msg, {**msg, "MessageId": "m2"}], queues.queue_arn), LocalContext("ingest"))
    assert result["batchItemFailures"] == []
    rows = runtime.memory().index.query(MemoryFilter(user_id=u, sources=None))
    assert [r.id for r in rows] == body["memory_ids"]


def test_duplicate_delivery_yields_one_memory(stack: tuple[Settings, Queues, Any]) -> None:
    _, queues, sqs = stack
    u = new_user()
    _, body = call_api("POST", "/v1/memories", {"user_id": u, "content": "My bike is a blue Brompton",
                                                 "topic_id": "bike", "idempotency_key": "m-1"})
    msg = json.dumps({"v": 1, "user_id": u, "memory_ids": body["memory_ids"]})
    sqs.send_message(QueueUrl=queues.queue_url, MessageBody=msg)  # at-least-once: a second copy
    _, again = call_api("POST", "/v1/memories", {"user_id": u, "content": "My bike is a blue Brompton",
                                                  "topic_id": "bike", "idempotency_key": "m-1"})
    assert again["memory_ids"] == body["memory_ids"]
    drain(sqs, queues)
    _, tl = call_api("GET", f"/v1/users/{u}/memories", query={"include_inactive": "true"})
    assert [r["id"] for r in tl["memories"]] == body["memory_ids"]
    _, versions = call_api("GET", "/v1/topics/bike/versions", query={"user_id": u})
    assert [v["is_active"] for v in versions["versions"]] == [True]


@pytest.mark.parametrize(("method", "path", "body", "status"), [
    ("POST", "/v1/memories", {"user_id": "../x", "content": "x"}, 422),
    ("POST", "/v1/memories", {"user_id": "u1"}, 422),
    ("POST", "/v1/memories", {"user_id": "u1", "content": "x" * 40_000}, 413),
    ("POST", "/v1/memories", {"user_id": "u1", "content": "x", "created_at": "2024-01-01T00:00:00"}, 422),
    ("POST", "/v1/recall", {"user_id": 'u1" or user_id != "', "query": "x"}, 422),
    ("POST", "/v1/recall", {"user_id": "u1", "query": "x", "memory_types": ["fact\" or 1==1"]}, 422),
    ("POST", "/v1/recall", "{not json", 422),
    ("GET", "/v1/memories/..%2F..%2Fetc", None, 422),
    ("GET", "/v1/memories/" + "0" * 32, None, 404),
    ("GET", "/v1/users/u1/memories", None, 200),
    ("GET", "/v1/topics/t/versions", None, 422),
    ("GET", "/v1/nowhere", None, 404),
])
def test_bad_requests_get_json_errors(stack: tuple[Settings, Queues, Any], method: str, path: str, body: Any,
                                      status: int) -> None:
    got, doc = call_api(method, path, body)
    assert got == status, doc
    if status >= 400:
        assert doc["error"] and doc["message"] and "Traceback" not in json.dumps(doc)


@pytest.mark.parametrize("hostile", ['a" or agent_id != "', "../x", "", "x" * 200])
def test_hostile_scopes_are_422_on_every_route(stack: tuple[Settings, Queues, Any], hostile: str) -> None:
    u = new_user()
    for field in ("agent_id", "run_id"):
        for method, path, body, query in (
                ("POST", "/v1/memories", {"user_id": u, "content": "x", field: hostile}, None),
                ("POST", "/v1/recall", {"user_id": u, "query": "x", field: hostile}, None),
                ("GET", f"/v1/users/{u}/memories", None, {field: hostile}),
                ("DELETE", f"/v1/users/{u}", None, {field: hostile}),
                ("GET", "/v1/topics/t/versions", None, {"user_id": u, field: hostile}),
                ("GET", "/v1/memories/" + "0" * 32, None, {"user_id": u, field: hostile})):
            got, doc = call_api(method, path, body, query=query)
            assert got == 422, (method, path, doc)
            assert doc["message"] and "Traceback" not in json.dumps(doc)


@pytest.mark.parametrize("levels", [6, 300, 5_000])
def test_deeply_nested_metadata_is_422_naming_the_limit(stack: tuple[Settings, Queues, Any], levels: int) -> None:
    u = new_user()
    body = f'{{"user_id": "{u}", "content": "x", "metadata": ' + '{"k": ' * levels + "1" + "}" * levels + "}"
    got, doc = call_api("POST", "/v1/memories", body)
    assert got == 422, doc
    assert "depth" in doc["message"] and "Traceback" not in json.dumps(doc)
    assert call_api("GET", f"/v1/users/{u}/memories")[1]["memories"] == []


@pytest.mark.parametrize(("method", "path", "body", "query"), [
    ("POST", "/v1/recall", {"user_id": "u1", "query": "x", "filters": {"metadata": {'a"]': 1}}}, None),
    ("POST", "/v1/recall", {"user_id": "u1", "query": "x", "filters": {"metadata": {"a": "x\n"}}}, None),
    ("POST", "/v1/recall", {"user_id": "u1", "query": "x", "filters": {"metadata": {"a": {"gte": "soon"}}}}, None),
    ("POST", "/v1/recall", {"user_id": "u1", "query": "x", "filters": {"user_id": "u2"}}, None),
    ("GET", "/v1/users/u1/memories", None, {"filters": "{not json"}),
    ("GET", "/v1/users/u1/memories", None, {"filters": '{"metadata": {"a b": 1}}'}),
    ("GET", "/v1/users/u1/memories", None, {"filters": '["x"]'}),
])
def test_hostile_filters_are_422(stack: tuple[Settings, Queues, Any], method: str, path: str, body: Any,
                                 query: dict[str, str] | None) -> None:
    got, doc = call_api(method, path, body, query=query)
    assert got == 422, doc
    assert doc["message"] and "Traceback" not in json.dumps(doc)


def test_filters_through_the_api(stack: tuple[Settings, Queues, Any]) -> None:
    _, queues, sqs = stack
    u = new_user()
    for content, meta in (("Apollo review on Friday", {"project": "apollo", "p": 3}),
                          ("Gemini budget is tight", {"project": "gemini", "p": 1})):
        assert call_api("POST", "/v1/memories", {"user_id": u, "content": content, "metadata": meta})[0] == 202
    drain(sqs, queues)
    _, body = call_api("POST", "/v1/recall", {"user_id": u, "query": "what is going on", "gate": False,
                                              "min_score": -1, "filters": {"metadata": {"p": {"gte": 2}}}})
    assert [h["metadata"]["project"] for h in body["memories"]] == ["apollo"]
    _, body = call_api("GET", f"/v1/users/{u}/memories", query={"filters": '{"metadata": {"project": "gemini"}}'})
    assert [r["metadata"]["project"] for r in body["memories"]] == ["gemini"]


def test_form_body_is_refused_as_unsupported(stack: tuple[Settings, Queues, Any]) -> None:
    got, doc = call_api("POST", "/v1/recall", "user_id=u1&query=x", content_type="application/x-www-form-urlencoded")
    assert got == 415 and doc["error"] == "UnsupportedMediaType"


def test_tier_handler_moves_old_memories_cold(stack: tuple[Settings, Queues, Any]) -> None:
    from datetime import UTC, datetime, timedelta

    from lambdas import tier

    u = new_user("tier")
    [mid] = runtime.memory().remember(user_id=u, content="an old, unimportant fact", importance=0.1,
                                      created_at=datetime.now(UTC) - timedelta(days=365))
    report = tier.handler(scheduled_event("agent-memory-tiering"), LocalContext("tier"))
    assert report["moved_cold"] >= 1 and "per_user" not in report
    assert runtime.memory().index.get([mid]) == []
    status, body = call_api("POST", "/v1/recall", {"user_id": u, "query": "old fact", "include_cold": True})
    assert status == 200 and body["rehydrated"] == 1 and body["memories"][0]["memory_id"] == mid


def test_selfcheck_handler_and_route(stack: tuple[Settings, Queues, Any]) -> None:
    from lambdas import selfcheck

    assert selfcheck.handler(scheduled_event("daily"), LocalContext("selfcheck"))["ok"] is True
    status, body = call_api("POST", "/v1/selfcheck")
    assert status == 200 and body["ok"] is True
    status, body = call_api("GET", "/health")
    assert status == 200 and body["store"] == "ok"


def test_s3_unreachable_is_503_and_nothing_is_enqueued(stack: tuple[Settings, Queues, Any],
                                                        embedder: Embedder) -> None:
    from agent_memory.local.processes import free_port

    s, queues, sqs = stack
    dead = s.model_copy(update={"s3_endpoint_url": f"http://127.0.0.1:{free_port()}"})
    healthy = runtime.memory()
    runtime.configure(dead, memory=Memory(dead, embedder=embedder, index=healthy.index))
    try:
        before = sqs.get_queue_attributes(QueueUrl=queues.queue_url, AttributeNames=["ApproximateNumberOfMessages"])
        status, body = call_api("POST", "/v1/memories", {"user_id": new_user(), "content": "I live in Lisbon"})
        assert status == 503 and body["error"] == "BackendUnavailableError" and "S3" in body["message"]
        after = sqs.get_queue_attributes(QueueUrl=queues.queue_url, AttributeNames=["ApproximateNumberOfMessages"])
        assert after["Attributes"] == before["Attributes"]
        status, body = call_api("GET", "/health")
        assert status == 503 and body["store"].startswith("unavailable")
    finally:
        runtime.configure(s, memory=healthy)


def test_api_key_acts_only_for_its_users(stack: tuple[Settings, Queues, Any]) -> None:
    s, queues, sqs = stack
    alice, bob = new_user("alice"), new_user("bob")
    runtime.configure(s.model_copy(update={"api_key_users": {"k-app": [alice], "k-any": ["*"]}}),
                      memory=runtime.memory())
    try:
        ok, doc = call_api("POST", "/v1/memories", {"user_id": alice, "content": "I like tea"}, api_key="k-app")
        assert ok == 202, doc
        [mid] = doc["memory_ids"]
        drain(sqs, queues)
        refused = [
            call_api("POST", "/v1/memories", {"user_id": bob, "content": "x"}, api_key="k-app"),
            call_api("POST", "/v1/recall", {"user_id": bob, "query": "tea"}, api_key="k-app"),
            call_api("GET", f"/v1/users/{bob}/memories", api_key="k-app"),
            call_api("DELETE", f"/v1/users/{bob}", api_key="k-app"),
            call_api("GET", f"/v1/memories/{mid}", api_key="k-app"),  # by id: must name the user
            call_api("GET", f"/v1/memories/{mid}", query={"user_id": bob}, api_key="k-app"),
            call_api("POST", "/v1/recall", {"user_id": alice, "query": "tea"}, query={"user_id": bob},
                     api_key="k-app"),
            call_api("GET", "/v1/users", api_key="k-app"),  # spans all users
            call_api("POST", "/v1/selfcheck", api_key="k-app"),
        ]
        for status, body in refused:
            assert status == 403 and body["error"] == "ForbiddenError", body
        assert call_api("GET", f"/v1/memories/{mid}", query={"user_id": alice}, api_key="k-app")[0] == 200
        assert call_api("POST", "/v1/recall", {"user_id": alice, "query": "tea"}, api_key="k-app")[0] == 200
        assert call_api("GET", f"/v1/users/{alice}/memories", api_key="k-app")[0] == 200
        assert call_api("GET", "/health", api_key="k-app")[0] == 200
        for key in ("k-any", "k-unlisted"):  # "*" and keys without a binding act for anyone
            assert call_api("GET", f"/v1/users/{bob}/memories", api_key=key)[0] == 200
            assert call_api("GET", "/v1/users", api_key=key)[0] == 200
    finally:
        runtime.configure(s, memory=runtime.memory())


def test_openapi_documents_scopes_filters_and_expiry(stack: tuple[Settings, Queues, Any]) -> None:
    status, doc = call_api("GET", "/openapi.json")
    assert status == 200
    schemas = doc["components"]["schemas"]
    assert {"agent_id", "run_id", "metadata", "expires_at", "ttl_days"} <= set(schemas["RememberRequest"]["properties"])
    assert {"agent_id", "run_id", "filters"} <= set(schemas["RecallRequest"]["properties"])
    assert {"metadata", "session_id", "topic_id", "memory_types", "created_at"} <= set(schemas["Filters"]["properties"])
    assert {"eq", "in", "gt", "gte", "lt", "lte"} <= set(schemas["Condition"]["properties"])
    params = {p["name"] for p in doc["paths"]["/v1/users/{user_id}/memories"]["get"]["parameters"]}
    assert {"agent_id", "run_id", "filters", "include_expired"} <= params
    assert {"agent_id", "run_id"} <= {p["name"] for p in doc["paths"]["/v1/users/{user_id}"]["delete"]["parameters"]}


def test_the_recall_handler_returns_only_once_its_log_entry_is_stored(stack: tuple[Settings, Queues, Any]) -> None:
    """A Lambda is frozen once it returns: the entry must be in S3 by then, not still queued."""
    s, _, _ = stack
    u = new_user()
    runtime.memory().remember(user_id=u, content="I am allergic to peanuts.")
    s3 = make_s3_client(s.s3_endpoint_url, s.aws_region)
    recall_ids = []
    for i in range(5):
        status, body = call_api("POST", "/v1/recall", {"user_id": u, "query": f"allergies {i}"})
        assert status == 200
        recall_ids.append(body["recall_id"])
        # read S3 directly (listing through the service would wait for queued writes itself)
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket=s.bucket_name, Prefix=f"recalls/{u}/")["Contents"]]
        assert [k for k in keys if k.endswith(f"-{body['recall_id']}.json")]
    assert len(keys) == len(recall_ids)


def test_tracer_patches_only_the_aws_calls_in_a_lambda() -> None:
    """Inside Lambda (``LAMBDA_TASK_ROOT`` set) the Tracer is on: botocore's calls are wrapped for
    X-Ray, and no other library is imported just to be patched (each is paid at every cold start)."""
    probe = ("import sys, lambdas.api, lambdas.ingest, lambdas.tier, lambdas.selfcheck; "
             "from botocore.client import BaseClient; "
             "print(lambdas.api.tracer.disabled, type(BaseClient._make_api_call).__name__, "
             "'httpx' in sys.modules, 'sqlalchemy' in sys.modules, 'requests' in sys.modules)")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=root,
                         env={**os.environ, "LAMBDA_TASK_ROOT": str(root), "POWERTOOLS_TRACE_DISABLED": "false"})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "BoundFunctionWrapper", "False", "False", "False"]
