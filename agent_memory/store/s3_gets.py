"""Signed S3 GETs without boto3's per-call machinery, for the reads that come in batches.

Why: the ingest worker reads every original of a queue batch back from S3 (100 per batch) and
those reads, not embedding or the index write, set its throughput. A boto3 ``get_object`` costs
about 2.5 ms of client CPU (event hooks, endpoint rules, response parsing; profiled against
SeaweedFS), and that CPU holds the GIL, so no number of threads takes one process past ~400
reads/s. The same read signed by botocore's own SigV4 signer and sent over a urllib3 pool costs
0.9 ms (16 threads: 808 reads/s against boto3's 314/s, same server, same run).

Only the common case is handled here: a 200 (the document), a 404 (missing) and a 403
``InvalidObjectState`` (archived). Anything else — a redirect to another region, a throttle
that outlived the retries, an expired token, a key whose dot segments a URL parser would fold —
is handed back to the boto3 client, which keeps every one of its semantics. The signer, the
credentials (refreshed by botocore), the endpoint and the CA bundle are the boto3 client's.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any
from urllib.parse import quote

import urllib3
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.httpsession import get_cert_path

from agent_memory.errors import ArchivedError, BackendUnavailableError, NotFoundError

_PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
log = logging.getLogger(__name__)


class Unhandled(Exception):
    """The fast path does not decide this read: ask the boto3 client."""


class SignedGets:
    """GETs of one bucket's objects, signed as the boto3 client ``client`` would sign them."""

    def __init__(self, client: Any, bucket: str, credentials: Any, pool_size: int = 32) -> None:
        self.bucket = bucket
        self.region = client.meta.region_name
        self.base = client.meta.endpoint_url.rstrip("/")
        self.credentials = credentials
        self.warned = False
        self.pool = urllib3.PoolManager(
            maxsize=pool_size, block=False, cert_reqs="CERT_REQUIRED",
            ca_certs=os.environ.get("AWS_CA_BUNDLE") or get_cert_path(True),
            timeout=urllib3.Timeout(connect=3, read=10),
            retries=urllib3.Retry(total=2, connect=2, read=2, status=2, backoff_factor=0.05,
                                  status_forcelist=(500, 502, 503, 504), allowed_methods={"GET"},
                                  raise_on_status=False, redirect=0))

    @classmethod
    def for_client(cls, client: Any, bucket: str, credentials: Any) -> SignedGets | None:
        """None when the fast path could not sign or route as boto3 would: no credentials, or a
        proxy configured in the environment (boto3 honours it, this pool does not)."""
        if credentials is None or any(os.environ.get(v) for v in _PROXY_VARIABLES):
            return None
        if client.meta.config.s3 and client.meta.config.s3.get("addressing_style") != "path":
            return None
        return cls(client, bucket, credentials)

    def get_json(self, key: str) -> dict[str, Any]:
        """The document at ``key``; :class:`NotFoundError`, :class:`ArchivedError`, or
        :class:`Unhandled` for every answer boto3 should interpret itself."""
        if any(part in (".", "..") for part in key.split("/")):
            raise Unhandled(key)  # a URL parser would fold these segments: the signature would not match
        url = f"{self.base}/{self.bucket}/{quote(key, safe='/~')}"
        request = AWSRequest(method="GET", url=url)
        S3SigV4Auth(self.credentials.get_frozen_credentials(), "s3", self.region).add_auth(request)
        try:
            resp = self.pool.request("GET", url, headers=dict(request.headers.items()), redirect=False)
        except urllib3.exceptions.MaxRetryError as exc:
            if isinstance(exc.reason, urllib3.exceptions.SSLError):
                raise Unhandled(f"{key}: {exc}") from exc  # this pool's CA bundle, perhaps not boto3's
            # the store is unreachable: boto3 would retry the same connection and fail the same way
            raise BackendUnavailableError(f"S3 read of {key} failed: {exc.reason}") from exc
        except urllib3.exceptions.HTTPError as exc:
            raise Unhandled(f"{key}: {exc}") from exc
        if resp.status == 200:
            doc: dict[str, Any] = json.loads(resp.data)
            return doc
        if resp.status == 404 and b"<Code>NoSuchKey</Code>" in resp.data:
            raise NotFoundError(f"no object at {key}")
        if resp.status == 403 and b"<Code>InvalidObjectState</Code>" in resp.data:
            raise ArchivedError(f"{key} is in an archive storage class; restore it first")
        if not self.warned:  # once per process: every read that lands here costs boto3's price again
            self.warned = True
            log.warning("S3 GET of %s answered HTTP %s on the fast path; reading through boto3 instead",
                        key, resp.status)
        raise Unhandled(f"{key}: HTTP {resp.status}")
