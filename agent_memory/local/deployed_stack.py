"""Bind the local runtime to the stack ``cdk deploy`` put into LocalStack.

Everything the runtime uses comes from the deployed stack, found through CloudFormation: the
originals bucket and the write queue and DLQ (outputs), the API key's value (API Gateway, from the
key the template created), and the index secret (read by the same code as the Lambda's cold start).
What LocalStack's CloudFormation dropped is applied first (:mod:`agent_memory.local.stack_gaps`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_memory.local.bootstrap import Queues
from agent_memory.local.bootstrap import make_client as client
from agent_memory.local.cdk_local import STACK, Deployment, bootstrap, deploy, synth
from agent_memory.local.stack_gaps import GapReport, StackView, apply_dropped


@dataclass
class StackBinding:
    endpoint: str
    region: str
    out_dir: Path
    deployment: Deployment
    queues: Queues
    api_key: str
    gaps: GapReport

    @property
    def bucket(self) -> str:
        return self.deployment.outputs["BucketName"]

    @property
    def secret_arn(self) -> str:
        return self.deployment.outputs["IndexSecretArn"]

    def logical(self, resource_type: str) -> list[str]:
        return [k for k, t in self.deployment.types.items() if t == resource_type]

    @property
    def rest_api_id(self) -> str:
        [api] = self.logical("AWS::ApiGateway::RestApi")
        return self.deployment.physical[api]

    @property
    def gateway_url(self) -> str:
        """The deployed REST API's stage on LocalStack (path form: no DNS needed)."""
        return f"{self.endpoint}/restapis/{self.rest_api_id}/v1/_user_request_"

    def describe(self) -> dict[str, Any]:
        return {"stack": self.deployment.stack, "stack_resources": len(self.deployment.physical),
                "stack_api_gateway": self.gateway_url, "stack_index_secret": self.secret_arn,
                "stack_out": str(self.out_dir),
                "stack_applied": self.gaps.applied, "stack_not_applied": self.gaps.failed,
                "stack_timings_s": {k: round(v, 1) for k, v in self.deployment.timings.items()}}


def deploy_and_bind(endpoint: str, region: str, work_dir: Path, stack: str = STACK) -> StackBinding:
    """``cdk synth -c local=true``, ``cdk bootstrap``, ``cdk deploy``; apply what was dropped; read
    the bindings."""
    work_dir.mkdir(parents=True, exist_ok=True)
    log = work_dir / "cdk.log"
    out = work_dir / "cdk.out"
    timings = {"synth": synth(endpoint, region, out, stack, log), "bootstrap": bootstrap(endpoint, region, out, log)}
    d = deploy(endpoint, region, out, stack, log)
    d.timings.update(timings)
    t0 = time.perf_counter()
    gaps = apply_dropped(d.template, StackView(d.physical, region), client("s3", endpoint, region),
                         client("logs", endpoint, region), client("cloudwatch", endpoint, region))
    d.timings["apply_dropped"] = time.perf_counter() - t0
    sqs = client("sqs", endpoint, region)

    def arn(url: str) -> str:
        return str(sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"])

    q, dlq = d.outputs["WriteQueueUrl"], d.outputs["DeadLetterQueueUrl"]
    [key_logical] = [k for k, t in d.types.items() if t == "AWS::ApiGateway::ApiKey"]
    key = client("apigateway", endpoint, region).get_api_key(apiKey=d.physical[key_logical], includeValue=True)
    return StackBinding(endpoint, region, work_dir / "cdk.out", d, Queues(q, arn(q), dlq, arn(dlq)),
                        str(key["value"]), gaps)
