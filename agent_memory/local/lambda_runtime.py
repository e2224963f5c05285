"""The in-process stand-in for Lambda + its triggers: an HTTP gateway, an SQS poller and a timer.

Each translates a local input into the AWS event shape and calls the real handler,
then applies the result the way AWS would (HTTP response; deleting the messages that
did not fail, leaving failed ones to reappear after the visibility timeout and reach
the DLQ through the queue's redrive policy).
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from agent_memory.local.events import LocalContext, api_gateway_event, scheduled_event, sqs_event

Handler = Callable[[dict[str, Any], Any], Any]
log = logging.getLogger("agent_memory.local")

MAX_BODY_BYTES = 1_000_000
OPEN_PATHS = ("/health",)
"""Answered without a key, as the stack configures API Gateway: liveness, and the console's
static files (``GET /console...``; they hold no data, every data call needs the key)."""


def _open(path: str, method: str) -> bool:
    return path in OPEN_PATHS or (method in ("GET", "HEAD") and (path == "/console" or path.startswith("/console/")))
"""Paths served without an API key (liveness probes, and the console's static files)."""


class HttpGateway:
    """API Gateway (REST, proxy integration, API-key auth) on 127.0.0.1."""

    def __init__(self, handler: Handler, port: int, api_keys: list[str]) -> None:
        self.handler = handler
        self.api_keys = [k for k in api_keys if k]
        # Lambda never runs two invocations in one process, and the handler relies on it: Powertools'
        # resolver keeps per-request state on the module-level app (concurrent calls failed with
        # KeyError '_route' under load). Connections are still accepted concurrently.
        self._invocation = threading.Lock()
        gateway = self

        class _Req(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, fmt: str, *args: Any) -> None:
                log.debug("http %s", fmt % args)

            def _handle(self) -> None:
                gateway.serve(self)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", port), _Req)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, name="gateway", daemon=True)

    def start(self) -> HttpGateway:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _authorized(self, key: str | None) -> bool:
        return key is not None and any(hmac.compare_digest(key, k) for k in self.api_keys)

    def serve(self, req: BaseHTTPRequestHandler) -> None:
        url = urlsplit(req.path)
        path = url.path
        length = int(req.headers.get("Content-Length") or 0)
        if length > MAX_BODY_BYTES:
            self._send(req, HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"message": "Request Entity Too Large"})
            req.close_connection = True
            return
        raw = req.rfile.read(length) if length else b""
        key = req.headers.get("x-api-key")
        if not _open(path, req.command) and not self._authorized(key):
            self._send(req, HTTPStatus.FORBIDDEN, {"message": "Forbidden"})  # what API Gateway answers
            return
        try:
            body = raw.decode("utf-8") if raw else None
        except UnicodeDecodeError:
            self._send(req, HTTPStatus.BAD_REQUEST, {"error": "BadRequest", "message": "body is not UTF-8"})
            return
        headers = {k.lower(): v for k, v in req.headers.items()}
        event = api_gateway_event(req.command, path, parse_qs(url.query, keep_blank_values=True),
                                  headers, body, api_key=key)
        try:
            with self._invocation:  # one request at a time, like one Lambda instance
                resp = self.handler(event, LocalContext("agent-memory-api"))
        except Exception:  # the handler maps errors itself; this is the Lambda crashing
            log.exception("api handler crashed")
            self._send(req, HTTPStatus.BAD_GATEWAY, {"message": "Internal server error"})
            return
        out = resp.get("body") or ""
        hdrs = dict(resp.get("headers") or {})
        for k, vs in (resp.get("multiValueHeaders") or {}).items():
            hdrs.setdefault(k, vs[-1])
        self._raw(req, int(resp.get("statusCode", 200)), out.encode("utf-8"), hdrs)

    def _send(self, req: BaseHTTPRequestHandler, status: int, doc: dict[str, Any]) -> None:
        self._raw(req, status, json.dumps(doc).encode(), {"Content-Type": "application/json"})

    @staticmethod
    def _raw(req: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict[str, str]) -> None:
        req.send_response(status)
        for k, v in headers.items():
            if k.lower() not in ("content-length", "connection"):
                req.send_header(k, v)
        req.send_header("Content-Length", str(len(body)))
        req.end_headers()
        if req.command != "HEAD":
            req.wfile.write(body)


class SqsPoller:
    """The SQS event source mapping with ``ReportBatchItemFailures``."""

    def __init__(self, sqs: Any, queue_url: str, queue_arn: str, handler: Handler, batch_size: int,
                 wait_s: int = 1) -> None:
        self.sqs, self.queue_url, self.queue_arn = sqs, queue_url, queue_arn
        self.handler, self.batch_size, self.wait_s = handler, batch_size, wait_s
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name="sqs-poller", daemon=True)
        self.batches = 0

    def start(self) -> SqsPoller:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=self.wait_s + 30)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except Exception:
                log.exception("sqs poll failed; retrying")
                self._stop.wait(1.0)

    def _receive(self, most: int, wait_s: int) -> list[dict[str, Any]]:
        resp = self.sqs.receive_message(QueueUrl=self.queue_url, MaxNumberOfMessages=min(most, 10),
                                        WaitTimeSeconds=wait_s, AttributeNames=["All"],
                                        MessageAttributeNames=["All"])
        found: list[dict[str, Any]] = resp.get("Messages", [])
        return found

    def poll_once(self) -> int:
        """One invocation. Like the event source mapping, a batch is more than one receive (SQS
        hands out at most 10 at a time): after the first, what is already waiting is added,
        without waiting further, up to ``batch_size``."""
        messages = self._receive(self.batch_size, self.wait_s)
        if not messages:
            return 0
        while len(messages) < self.batch_size:
            more = self._receive(self.batch_size - len(messages), 0)
            if not more:
                break
            messages += more
        failed: set[str] = set()
        try:
            result = self.handler(sqs_event(messages, self.queue_arn), LocalContext("agent-memory-ingest"))
            failed = {f["itemIdentifier"] for f in (result or {}).get("batchItemFailures", [])}
        except Exception:
            log.exception("ingest handler failed: the whole batch will be retried")
            failed = {m["MessageId"] for m in messages}
        done = [m for m in messages if m["MessageId"] not in failed]
        for i in range(0, len(done), 10):
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=[
                {"Id": str(n), "ReceiptHandle": m["ReceiptHandle"]} for n, m in enumerate(done[i:i + 10])])
        self.batches += 1
        return len(messages)


class Timer:
    """An EventBridge schedule: call ``handler`` with a scheduled event every ``every_s`` seconds."""

    def __init__(self, handler: Handler, every_s: float, rule_name: str) -> None:
        self.handler, self.every_s, self.rule_name = handler, every_s, rule_name
        self.runs = 0
        self.last_result: Any = None
        """What the last invocation returned (a maintenance report, a canary's result)."""
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"timer-{rule_name}", daemon=True)

    def start(self) -> Timer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            try:
                self.last_result = self.handler(scheduled_event(self.rule_name), LocalContext(self.rule_name))
                self.runs += 1
            except Exception as exc:  # a failed canary raises on purpose; the alarm is the log line
                log.warning("%s failed: %s", self.rule_name, exc)


class ScheduleQueuePoller:
    """EventBridge schedule -> queue -> handler: each message body is the scheduled event itself."""

    def __init__(self, sqs: Any, queue_url: str, handler: Handler, rule_name: str) -> None:
        self.sqs, self.queue_url, self.handler, self.rule_name = sqs, queue_url, handler, rule_name
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"schedule-{rule_name}", daemon=True)

    def start(self) -> ScheduleQueuePoller:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                msgs = self.sqs.receive_message(QueueUrl=self.queue_url, WaitTimeSeconds=1).get("Messages", [])
            except Exception:
                log.exception("schedule poll failed")
                self._stop.wait(1.0)
                continue
            for m in msgs:
                try:
                    self.handler(json.loads(m["Body"]), LocalContext(self.rule_name))
                except Exception as exc:
                    log.warning("%s failed: %s", self.rule_name, exc)
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=m["ReceiptHandle"])
