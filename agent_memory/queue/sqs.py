"""Amazon SQS (or an emulator) as the write queue."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import BackendUnavailableError
from agent_memory.queue import IndexJob


def make_sqs_client(endpoint_url: str | None, region: str) -> Any:
    cfg = Config(region_name=region, connect_timeout=3, read_timeout=25,
                 retries={"max_attempts": 3, "mode": "standard"})
    # a session of its own: the default session is not safe to build clients from concurrently
    return boto3.session.Session().client("sqs", endpoint_url=endpoint_url, config=cfg)


class SqsWriteQueue:
    def __init__(self, client: Any, queue_url: str) -> None:
        self.client = client
        self.queue_url = queue_url

    def send(self, job: IndexJob) -> str:
        try:
            resp = self.client.send_message(QueueUrl=self.queue_url, MessageBody=job.to_body())
        except (BotoCoreError, ClientError) as exc:
            raise BackendUnavailableError(f"write queue unavailable: {exc}") from exc
        return str(resp["MessageId"])


def redrive(client: Any, dlq_url: str, queue_url: str, limit: int | None = None,
            on_progress: Callable[[int], None] | None = None) -> int:
    """Move messages from the dead-letter queue back to the write queue (after the index is back).

    Each message is sent to the write queue before it is deleted from the DLQ, so a crash in
    between leaves a duplicate, never a loss; a duplicate is harmless (an index job replaces rows
    by id). Works on any SQS endpoint; on AWS the console's "Start DLQ redrive" does the same."""
    moved = 0
    try:
        while limit is None or moved < limit:
            want = 10 if limit is None else max(1, min(10, limit - moved))
            msgs = client.receive_message(QueueUrl=dlq_url, MaxNumberOfMessages=want, WaitTimeSeconds=1,
                                          VisibilityTimeout=30, MessageAttributeNames=["All"]).get("Messages", [])
            if not msgs:
                return moved
            entries = [{"Id": str(i), "MessageBody": m["Body"],
                        **({"MessageAttributes": m["MessageAttributes"]} if m.get("MessageAttributes") else {})}
                       for i, m in enumerate(msgs)]
            sent = {e["Id"] for e in client.send_message_batch(QueueUrl=queue_url, Entries=entries).get(
                "Successful", [])}
            done = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs) if str(i) in sent]
            if done:
                client.delete_message_batch(QueueUrl=dlq_url, Entries=done)
            moved += len(done)
            if on_progress:
                on_progress(len(done))
            if len(done) < len(msgs):
                raise BackendUnavailableError(f"{len(msgs) - len(done)} messages could not be sent back; "
                                              "they stay in the dead-letter queue")
    except (BotoCoreError, ClientError) as exc:
        raise BackendUnavailableError(f"redrive stopped after {moved} messages: {exc}") from exc
    return moved
