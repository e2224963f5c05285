"""The AWS resource shapes both the CDK stack and the local mirror derive from settings.

Kept as plain data (S3/SQS API shapes) so a test can compare what the mirror created
with what the stack declares, rule by rule.
"""

from __future__ import annotations

import json
from typing import Any

from agent_memory.config import Settings


def lifecycle_rules(s: Settings) -> list[dict[str, Any]]:
    """Originals: STANDARD_IA after 30 days, the archive class after 180, old versions expire.
    Recall logs expire after their retention."""
    return [
        {
            "ID": "tier-originals",
            "Status": "Enabled",
            "Filter": {"Prefix": s.key_prefix},
            "Transitions": [
                {"Days": s.infrequent_access_after_days, "StorageClass": "STANDARD_IA"},
                {"Days": s.archive_after_days, "StorageClass": s.archive_storage_class},
            ],
            "NoncurrentVersionExpiration": {"NoncurrentDays": s.noncurrent_version_expiry_days},
        },
        {
            "ID": "expire-recall-log",
            "Status": "Enabled",
            "Filter": {"Prefix": s.recall_log_prefix},
            "Expiration": {"Days": s.recall_log_retention_days},
            "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
        },
    ]


def tls_only_policy(bucket: str) -> str:
    arn = f"arn:aws:s3:::{bucket}"
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
            "Resource": [arn, f"{arn}/*"],
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        }],
    })


def redrive_policy(dlq_arn: str, s: Settings) -> str:
    return json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(s.max_receive_count)})


DLQ_RETENTION_S = 14 * 24 * 3600

WORKING_PARTITION_KEY = "ns"
WORKING_SORT_KEY = "key"
WORKING_TTL_ATTRIBUTE = "expires_at"
"""The working-memory table (see :mod:`agent_memory.working`): ``ns`` = user/session, ``key``,
TTL on ``expires_at``. The CDK stack and the mirror create it from these names."""
