"""Originals in an S3 bucket (AWS, moto server, LocalStack, MinIO, SeaweedFS).

The bucket is versioned in every deployment we create, so an overwrite (a state
change such as forget) keeps the previous document as a noncurrent version;
erasure therefore deletes every version, not just the current object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import ArchivedError, BackendUnavailableError, NotFoundError
from agent_memory.store.base import RawStore
from agent_memory.store.s3_gets import SignedGets, Unhandled

_MISSING = {"NoSuchKey", "404", "NotFound"}


def make_s3_client(endpoint_url: str | None, region: str, session: Any = None) -> Any:
    """One client for all threads (boto3 clients are thread-safe), short timeouts, few retries."""
    cfg = Config(
        region_name=region, max_pool_connections=32, connect_timeout=3, read_timeout=10,
        retries={"max_attempts": 3, "mode": "standard"}, s3={"addressing_style": "path"},
    )
    # a session of its own: the default session is not safe to build clients from concurrently
    return (session or boto3.session.Session()).client("s3", endpoint_url=endpoint_url, config=cfg)


def make_s3_store(bucket: str, endpoint_url: str | None, region: str, **kwargs: Any) -> S3Store:
    """The store with its batch reads on :class:`SignedGets` (signed with the client's credentials)."""
    session = boto3.session.Session()
    client = make_s3_client(endpoint_url, region, session)
    return S3Store(bucket, client, gets=SignedGets.for_client(client, bucket, session.get_credentials()), **kwargs)


class S3Store(RawStore):
    def __init__(self, bucket: str, client: Any, restore_days: int = 7, restore_tier: str = "Standard",
                 gets: SignedGets | None = None) -> None:
        self.bucket = bucket
        self.client = client
        self.gets = gets
        """Batch reads (:meth:`get_each`) go through it when set; single reads and every other
        call stay on boto3."""
        self.restore_days = restore_days
        self.restore_tier = restore_tier

    def put_json(self, key: str, doc: dict[str, Any]) -> None:
        body = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        try:
            self.client.put_object(Bucket=self.bucket, Key=key, Body=body,
                                   ContentType="application/json")
        except (BotoCoreError, ClientError) as exc:
            raise BackendUnavailableError(f"S3 write of {key} failed: {exc}") from exc

    def get_json(self, key: str) -> dict[str, Any]:
        try:
            resp = self.client.get_object(Bucket=self.bucket, Key=key)
        except ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in _MISSING:
                raise NotFoundError(f"no object at {key}") from None
            if code == "InvalidObjectState":
                raise ArchivedError(f"{key} is in an archive storage class; restore it first") from None
            raise BackendUnavailableError(f"S3 read of {key} failed: {exc}") from exc
        except BotoCoreError as exc:
            raise BackendUnavailableError(f"S3 read of {key} failed: {exc}") from exc
        doc: dict[str, Any] = json.loads(resp["Body"].read())
        return doc

    def get_each(self, keys: Sequence[str], workers: int = 16) -> list[dict[str, Any] | Exception]:
        gets = self.gets
        if gets is None:
            return super().get_each(keys, workers)

        def one(key: str) -> dict[str, Any]:
            try:
                return gets.get_json(key)
            except Unhandled:
                return self.get_json(key)

        return self._each(one, keys, workers)

    def restore(self, key: str) -> None:
        try:
            self.client.restore_object(Bucket=self.bucket, Key=key, RestoreRequest={
                "Days": self.restore_days, "GlacierJobParameters": {"Tier": self.restore_tier}})
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "RestoreAlreadyInProgress":
                raise BackendUnavailableError(f"S3 restore of {key} failed: {exc}") from exc
        except BotoCoreError as exc:
            raise BackendUnavailableError(f"S3 restore of {key} failed: {exc}") from exc

    def list_keys(self, prefix: str) -> Iterator[str]:
        return self.list_keys_after(prefix, None)

    def list_keys_after(self, prefix: str, start_after: str | None) -> Iterator[str]:
        paginator = self.client.get_paginator("list_objects_v2")
        extra = {"StartAfter": start_after} if start_after else {}
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix, **extra):
                for obj in page.get("Contents", []):
                    yield obj["Key"]
        except (BotoCoreError, ClientError) as exc:
            raise BackendUnavailableError(f"S3 list of {prefix} failed: {exc}") from exc

    def delete_all_versions(self, prefix: str) -> int:
        paginator = self.client.get_paginator("list_object_versions")
        count = 0
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=prefix):
                targets = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                           for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
                for i in range(0, len(targets), 1000):
                    batch = targets[i:i + 1000]
                    resp = self.client.delete_objects(Bucket=self.bucket,
                                                      Delete={"Objects": batch, "Quiet": True})
                    if resp.get("Errors"):
                        raise BackendUnavailableError(f"S3 refused deletes: {resp['Errors'][:3]}")
                    count += len(batch)
        except (BotoCoreError, ClientError) as exc:
            raise BackendUnavailableError(f"S3 erase of {prefix} failed: {exc}") from exc
        return count

    def ping(self) -> None:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except (BotoCoreError, ClientError) as exc:
            raise BackendUnavailableError(f"S3 bucket {self.bucket} unreachable: {exc}") from exc
