"""Amazon SQS (or an emulator) as the write queue."""

from __future__ import annotations

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
