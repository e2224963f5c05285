"""``cdk bootstrap`` / ``cdk deploy`` / ``cdk destroy`` of the app's own template into host LocalStack.

The project's pinned CDK CLI (``node_modules/.bin/cdk``) does the work, exactly as against AWS; only
the endpoints differ: ``AWS_ENDPOINT_URL`` and ``AWS_ENDPOINT_URL_S3`` point every SDK call at
LocalStack on 127.0.0.1 (npm ``aws-cdk-local`` sets nothing more; its default
``localhost.localstack.cloud`` names do not resolve on machines without outside DNS). The app is
synthesized with ``-c local=true``: the differences from the AWS template are listed, with their
reasons, in ``stacks/options.py`` (``LOCAL_DIFFERENCES``) and the README.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ACCOUNT = "000000000000"
"""LocalStack's account id: bootstrapping names it, so ``cdk bootstrap`` needs no synth."""
STACK = "AgentMemory"
LOCAL_CONTEXT = ["-c", "local=true"]


def cdk_env(endpoint: str, region: str) -> dict[str, str]:
    """The environment of a ``cdk`` call against LocalStack: endpoints, dummy credentials, quiet."""
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_PROFILE", "AWS_SESSION_TOKEN")}
    env.update({
        "AWS_ENDPOINT_URL": endpoint, "AWS_ENDPOINT_URL_S3": endpoint,
        "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": region, "AWS_DEFAULT_REGION": region,
        "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1", "CDK_DISABLE_VERSION_CHECK": "1",
    })
    return env


class CdkError(RuntimeError):
    """A ``cdk`` command failed; the message ends with the tail of its output."""


def run_cdk(args: list[str], endpoint: str, region: str, timeout_s: float, log: Path | None = None,
            app: str | None = None) -> str:
    """``app``: a synthesized cloud assembly folder (no synth), or by default the app itself."""
    cdk = ROOT / "node_modules" / ".bin" / "cdk"
    if not cdk.exists():
        raise CdkError("node_modules/.bin/cdk missing: run `make install` (npm ci)")
    cmd = [str(cdk), *args, "--app", app or f"{sys.executable} app.py", "--no-notices", "--no-version-reporting"]
    out = subprocess.run(cmd, cwd=ROOT, env=cdk_env(endpoint, region), capture_output=True, text=True,
                         timeout=timeout_s)
    text = out.stdout + out.stderr
    if log is not None:
        with log.open("a") as f:
            f.write(f"$ cdk {' '.join(args)}\n{text}\n")
    if out.returncode != 0:
        raise CdkError(f"cdk {args[0]} failed ({out.returncode}):\n{text[-3000:]}")
    return text


@dataclass
class Deployment:
    """What ``cdk deploy`` made: its outputs, each resource's physical id, the template it deployed,
    and how long each step took (seconds)."""

    stack: str
    outputs: dict[str, str]
    physical: dict[str, str]
    types: dict[str, str]
    template: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)


def synth(endpoint: str, region: str, out_dir: Path, stack: str = STACK, log: Path | None = None) -> float:
    """Synthesize the app once with ``-c local=true`` into ``out_dir``; bootstrap, deploy and destroy
    all read that cloud assembly (a ``cdk`` call given the app would synthesize it again each time)."""
    t0 = time.perf_counter()
    run_cdk(["synth", *LOCAL_CONTEXT, "-c", f"stack_name={stack}", "--output", str(out_dir), "--quiet"],
            endpoint, region, 600, log)
    return time.perf_counter() - t0


def bootstrap(endpoint: str, region: str, out_dir: Path, log: Path | None = None) -> float:
    t0 = time.perf_counter()
    run_cdk(["bootstrap", f"aws://{ACCOUNT}/{region}"], endpoint, region, 600, log, app=str(out_dir))
    return time.perf_counter() - t0


def deploy(endpoint: str, region: str, out_dir: Path, stack: str = STACK, log: Path | None = None) -> Deployment:
    """Deploy the synthesized ``stack``; its outputs and resources are read back from CloudFormation
    (not from the CLI's report)."""
    t0 = time.perf_counter()
    run_cdk(["deploy", stack, "--require-approval", "never"], endpoint, region, 900, log, app=str(out_dir))
    took = time.perf_counter() - t0
    template = json.loads((out_dir / f"{stack}.template.json").read_text())
    found = describe(endpoint, region, stack, template)
    found.timings["deploy"] = took
    return found


def describe(endpoint: str, region: str, stack: str, template: dict[str, Any]) -> Deployment:
    import boto3

    cfn = boto3.client("cloudformation", endpoint_url=endpoint, region_name=region)
    desc = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in desc.get("Outputs", [])}
    physical, types = {}, {}
    for page in cfn.get_paginator("list_stack_resources").paginate(StackName=stack):
        for r in page["StackResourceSummaries"]:
            physical[r["LogicalResourceId"]] = r.get("PhysicalResourceId", "")
            types[r["LogicalResourceId"]] = r["ResourceType"]
    return Deployment(stack, outputs, physical, types, template)


def destroy(endpoint: str, region: str, out_dir: Path, stack: str = STACK, log: Path | None = None) -> float:
    """``cdk destroy`` of the assembly ``deploy`` synthesized into ``out_dir`` (no second synth)."""
    t0 = time.perf_counter()
    run_cdk(["destroy", stack, "--force"], endpoint, region, 600, log, app=str(out_dir))
    return time.perf_counter() - t0
