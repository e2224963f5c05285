"""The event shapes AWS hands to Lambda, built from local inputs.

The local runtime only translates; the handlers receive exactly what API Gateway
(REST proxy integration), the SQS event source mapping and EventBridge would send.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

ACCOUNT = "000000000000"


@dataclass
class LocalContext:
    """Enough of ``LambdaContext`` for Powertools."""

    function_name: str
    timeout_s: int = 30
    memory_limit_in_mb: int = 1024
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    _start: float = field(default_factory=time.monotonic)

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:us-east-1:{ACCOUNT}:function:{self.function_name}"

    @property
    def function_version(self) -> str:
        return "$LATEST"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    @property
    def log_stream_name(self) -> str:
        return "local"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.timeout_s - (time.monotonic() - self._start)) * 1000))


def api_gateway_event(method: str, path: str, query: dict[str, list[str]], headers: dict[str, str],
                      body: str | None, api_key: str | None = None, stage: str = "v1") -> dict[str, Any]:
    """A REST API (v1 payload) proxy event for ``/{proxy+}``."""
    now = datetime.now(UTC)
    return {
        "resource": "/{proxy+}",
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": {"proxy": path.lstrip("/")},
        "stageVariables": None,
        "requestContext": {
            "resourceId": "local", "resourcePath": "/{proxy+}", "httpMethod": method,
            "extendedRequestId": str(uuid.uuid4()), "requestTime": now.strftime("%d/%b/%Y:%H:%M:%S +0000"),
            "path": f"/{stage}{path}", "accountId": ACCOUNT, "protocol": "HTTP/1.1", "stage": stage,
            "domainPrefix": "localhost", "requestTimeEpoch": int(now.timestamp() * 1000),
            "requestId": str(uuid.uuid4()), "domainName": "localhost", "apiId": "local",
            "identity": {"sourceIp": "127.0.0.1", "userAgent": headers.get("user-agent", ""),
                         "apiKey": api_key, "apiKeyId": api_key and "local-key"},
        },
        "body": body,
        "isBase64Encoded": False,
    }


def sqs_event(messages: list[dict[str, Any]], queue_arn: str, region: str = "us-east-1") -> dict[str, Any]:
    """What the SQS event source mapping passes to Lambda for a received batch."""
    return {"Records": [{
        "messageId": m["MessageId"],
        "receiptHandle": m["ReceiptHandle"],
        "body": m["Body"],
        "attributes": m.get("Attributes", {}),
        "messageAttributes": m.get("MessageAttributes", {}),
        "md5OfBody": m.get("MD5OfBody", ""),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    } for m in messages]}


def scheduled_event(rule_name: str, region: str = "us-east-1") -> dict[str, Any]:
    return {
        "version": "0", "id": str(uuid.uuid4()), "detail-type": "Scheduled Event",
        "source": "aws.events", "account": ACCOUNT,
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "region": region,
        "resources": [f"arn:aws:events:{region}:{ACCOUNT}:rule/{rule_name}"], "detail": {},
    }
