"""The originals bucket: versioned, encrypted, private, TLS-only, tiered, retained."""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from agent_memory.aws_resources import lifecycle_rules
from agent_memory.config import Settings

_STORAGE_CLASS = {
    "STANDARD_IA": s3.StorageClass.INFREQUENT_ACCESS,
    "GLACIER_IR": s3.StorageClass.GLACIER_INSTANT_RETRIEVAL,
    "GLACIER": s3.StorageClass.GLACIER,
    "DEEP_ARCHIVE": s3.StorageClass.DEEP_ARCHIVE,
}


def cdk_lifecycle_rules(settings: Settings) -> list[s3.LifecycleRule]:
    """The same rules the local mirror applies (``aws_resources.lifecycle_rules``), as CDK objects."""
    out = []
    for rule in lifecycle_rules(settings):
        kwargs: dict[str, Any] = {"id": rule["ID"], "prefix": rule["Filter"]["Prefix"], "enabled": True}
        if "Transitions" in rule:
            kwargs["transitions"] = [
                s3.Transition(
                    storage_class=_STORAGE_CLASS[t["StorageClass"]], transition_after=Duration.days(t["Days"])
                )
                for t in rule["Transitions"]
            ]
        if "Expiration" in rule:
            kwargs["expiration"] = Duration.days(rule["Expiration"]["Days"])
        if "NoncurrentVersionExpiration" in rule:
            kwargs["noncurrent_version_expiration"] = Duration.days(
                rule["NoncurrentVersionExpiration"]["NoncurrentDays"]
            )
        out.append(s3.LifecycleRule(**kwargs))
    return out


class OriginalsStorage(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings) -> None:
        super().__init__(scope, construct_id)
        self.access_logs = s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(365))],
            removal_policy=RemovalPolicy.RETAIN,
        )
        self.bucket = s3.Bucket(
            self,
            "Originals",
            versioned=True,
            encryption=s3.BucketEncryption.S3_MANAGED,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            enforce_ssl=True,
            lifecycle_rules=cdk_lifecycle_rules(settings),
            removal_policy=RemovalPolicy.RETAIN,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="originals/",
        )

    def grant_memory_access(self, grantee: iam.IGrantable, settings: Settings) -> None:
        """Exactly what the service does: read/write/delete object versions under its prefixes
        (originals, the recall log, the cold-tier manifests, stored documents, turn decisions: the
        erasure, expiry and tiering jobs write or delete under each), list them, and request
        restores of archived originals."""
        objects = [self.bucket.arn_for_objects(pattern) for pattern in self.object_patterns(settings)]
        iam.Grant.add_to_principal(
            grantee=grantee,
            resource_arns=objects,
            actions=[
                "s3:GetObject",
                "s3:GetObjectVersion",
                "s3:PutObject",
                "s3:DeleteObject",
                "s3:DeleteObjectVersion",
                "s3:RestoreObject",
            ],
        )
        iam.Grant.add_to_principal(
            grantee=grantee, resource_arns=[self.bucket.bucket_arn], actions=["s3:ListBucket", "s3:ListBucketVersions"]
        )

    def object_patterns(self, settings: Settings) -> list[str]:
        """The resource patterns cdk-nag reports for :meth:`grant_memory_access`."""
        return [f"{prefix}*" for prefix in (settings.key_prefix, settings.recall_log_prefix, settings.cold_prefix,
                                            settings.documents_prefix, settings.decisions_prefix)]
