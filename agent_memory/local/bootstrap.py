"""Create the bucket and the queues of the stack on an emulator (idempotent).

Same names, lifecycle rules, versioning, encryption, public-access block, TLS-only
policy and redrive policy as the CDK stack, all from :mod:`agent_memory.aws_resources`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import ClientError

from agent_memory.aws_resources import (
    DLQ_RETENTION_S,
    WORKING_PARTITION_KEY,
    WORKING_SORT_KEY,
    WORKING_TTL_ATTRIBUTE,
    lifecycle_rules,
    redrive_policy,
    tls_only_policy,
)
from agent_memory.config import Settings


@dataclass(frozen=True)
class Queues:
    queue_url: str
    queue_arn: str
    dlq_url: str
    dlq_arn: str


def ensure_bucket(s3: Any, s: Settings, tls_only: bool = True) -> list[str]:
    """Create and configure the bucket; return the settings the server would not take.

    ``tls_only=False`` skips the deny-unless-TLS policy: an emulator on plain-HTTP loopback
    enforces it and would refuse every request. Versioning is required (erasure and history
    depend on it); encryption, public-access block and lifecycle are applied where the
    server implements them (MinIO and SeaweedFS lack some) and reported otherwise."""
    try:
        s3.create_bucket(Bucket=s.bucket_name)
    except ClientError as exc:
        if exc.response["Error"]["Code"] not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
            raise
    s3.put_bucket_versioning(Bucket=s.bucket_name, VersioningConfiguration={"Status": "Enabled"})
    optional: list[tuple[str, Any, dict[str, Any]]] = [
        ("encryption", s3.put_bucket_encryption, {"ServerSideEncryptionConfiguration": {
            "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}}),
        ("public-access-block", s3.put_public_access_block, {"PublicAccessBlockConfiguration": {
            "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
            "RestrictPublicBuckets": True}}),
        ("lifecycle", s3.put_bucket_lifecycle_configuration,
         {"LifecycleConfiguration": {"Rules": lifecycle_rules(s)}}),
    ]
    if tls_only:
        optional.append(("tls-only-policy", s3.put_bucket_policy, {"Policy": tls_only_policy(s.bucket_name)}))
    skipped = []
    for name, call, kwargs in optional:
        try:
            call(Bucket=s.bucket_name, **kwargs)
        except ClientError as exc:
            skipped.append(f"{name}: {exc.response['Error'].get('Code')}")
    return skipped


def ensure_queues(sqs: Any, s: Settings) -> Queues:
    dlq_url = sqs.create_queue(QueueName=s.dead_letter_queue_name,
                               Attributes={"MessageRetentionPeriod": str(DLQ_RETENTION_S)})["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    attrs = {"VisibilityTimeout": str(s.visibility_timeout_s), "RedrivePolicy": redrive_policy(dlq_arn, s)}
    queue_url = sqs.create_queue(QueueName=s.write_queue_name)["QueueUrl"]
    sqs.set_queue_attributes(QueueUrl=queue_url, Attributes=attrs)
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return Queues(queue_url, queue_arn, dlq_url, dlq_arn)


def ensure_working_table(dynamodb: Any, s: Settings) -> None:
    """The working-memory table with its TTL, as the stack creates it."""
    try:
        dynamodb.create_table(
            TableName=s.working_table_name, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": WORKING_PARTITION_KEY, "KeyType": "HASH"},
                       {"AttributeName": WORKING_SORT_KEY, "KeyType": "RANGE"}],
            AttributeDefinitions=[{"AttributeName": WORKING_PARTITION_KEY, "AttributeType": "S"},
                                  {"AttributeName": WORKING_SORT_KEY, "AttributeType": "S"}])
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "ResourceInUseException":
            raise
    dynamodb.get_waiter("table_exists").wait(TableName=s.working_table_name)
    dynamodb.update_time_to_live(TableName=s.working_table_name, TimeToLiveSpecification={
        "Enabled": True, "AttributeName": WORKING_TTL_ATTRIBUTE})


def make_client(service: str, endpoint_url: str | None, region: str) -> Any:
    """A boto3 client of any service on an emulator (a fresh session: thread-safe to create)."""
    import boto3

    session: Any = boto3.session.Session()
    return session.client(service, endpoint_url=endpoint_url, region_name=region)


def make_events_client(endpoint_url: str | None, region: str) -> Any:
    return make_client("events", endpoint_url, region)


def schedule_expression(every_s: float) -> str:
    minutes = max(1, round(every_s / 60))
    return "rate(1 day)" if minutes == 1440 else f"rate({minutes} minute{'s' if minutes > 1 else ''})"


def ensure_schedule_queue(sqs: Any, events: Any, rule: str, every_s: float) -> str:
    """An EventBridge schedule rule whose target is a queue (no emulator runs Lambdas without
    Docker); the local runtime polls the queue and hands each event to the handler."""
    url = sqs.create_queue(QueueName=f"{rule}-events")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name=rule, ScheduleExpression=schedule_expression(every_s), State="ENABLED")
    events.put_targets(Rule=rule, Targets=[{"Id": "local-runtime", "Arn": arn}])
    return str(url)
