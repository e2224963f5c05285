"""Deployment choices read from CDK context (``cdk deploy -c key=value``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from constructs import Node

IndexMode = Literal["milvus", "helix", "external"]
AuthMode = Literal["api_key", "iam"]


LOCAL_INDEX_URI = "local-runtime"
"""``index_uri`` of the local variant: the runtime opens its own index (Milvus Lite by default)."""

LOCAL_DIFFERENCES = {
    "index": "index=external: ECS, EFS and Cloud Map are not in LocalStack's community edition and no "
             "Docker runs a Milvus container; the runtime uses its own index (Milvus Lite, or INDEX=milvus)",
    "working-memory table": "left out: LocalStack's DynamoDB is DynamoDB Local (Java, and not open source); "
                            "the runtime keeps working memory in-process",
    "queue trigger and rule targets": "left out: the runtime is the executor (it polls the write queue and "
                                      "runs the daily jobs); LocalStack would try to invoke the functions",
    "Lambda code": "bundle=source (our packages only): LocalStack never runs it, the runtime runs the "
                   "handlers from this checkout; the full bundle is ~217 MB to build and upload",
}
"""What ``-c local=true`` changes, each with its reason (the README lists the same)."""


@dataclass(frozen=True)
class DeployOptions:
    index: IndexMode = "milvus"
    """``milvus``: Milvus standalone on ECS Fargate (EFS-backed) in a new VPC; ``helix``: a HelixDB
    container the same way; ``external``: an existing endpoint (Milvus cluster, Zilliz) — no VPC."""
    index_uri: str | None = None
    milvus_image: str = "milvusdb/milvus:v2.5.14"
    helix_image: str = "helixdb/helix:latest"
    auth: AuthMode = "api_key"
    """``api_key``: API keys with a usage plan; ``iam``: SigV4-signed requests (AWS_IAM)."""
    bundle: Literal["full", "source"] = "full"
    """``full`` installs the Lambda dependencies for the Lambda platform; ``source`` packages only
    our code (fast synth for template tests; not deployable)."""
    alarm_email: str | None = None
    throttle_rate: int = 100
    throttle_burst: int = 200
    local: bool = False
    """``-c local=true``: the variant ``make deploy-local`` puts into LocalStack, where the local
    runtime runs the handlers. It differs from the AWS template only by :data:`LOCAL_DIFFERENCES`."""

    @classmethod
    def from_context(cls, node: Node) -> DeployOptions:
        def get(key: str, default: object) -> object:
            value = node.try_get_context(key)
            return default if value is None else value

        local = str(get("local", "false")).lower() in ("true", "1", "yes")
        opts = cls(
            # local=true wins over cdk.json's index/bundle: those are what LocalStack cannot hold
            index="external" if local else str(get("index", cls.index)),  # type: ignore[arg-type]
            index_uri=get("index_uri", LOCAL_INDEX_URI if local else None),  # type: ignore[arg-type]
            milvus_image=str(get("milvus_image", cls.milvus_image)),
            helix_image=str(get("helix_image", cls.helix_image)),
            auth=str(get("auth", cls.auth)),  # type: ignore[arg-type]
            bundle="source" if local else str(get("bundle", cls.bundle)),  # type: ignore[arg-type]
            alarm_email=get("alarm_email", None),  # type: ignore[arg-type]
            throttle_rate=int(get("throttle_rate", cls.throttle_rate)),  # type: ignore[call-overload]
            throttle_burst=int(get("throttle_burst", cls.throttle_burst)),  # type: ignore[call-overload]
            local=local,
        )
        if opts.index not in ("milvus", "helix", "external"):
            raise ValueError(f"context index={opts.index!r}: use milvus, helix or external")
        if opts.index == "external" and not opts.index_uri:
            raise ValueError("context index=external needs index_uri=https://...")
        if opts.auth not in ("api_key", "iam"):
            raise ValueError(f"context auth={opts.auth!r}: use api_key or iam")
        return opts
