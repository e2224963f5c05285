"""The daily canary (EventBridge schedule): publishes ``SelfCheckSuccess`` 1/0 and fails the
invocation when the check fails, so both the metric alarm and the Errors alarm see it."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import runtime
from lambdas import TRACED_MODULES

logger = Logger(service="agent-memory-selfcheck")
tracer = Tracer(service="agent-memory-selfcheck", patch_modules=TRACED_MODULES)
metrics = Metrics(namespace="AgentMemory", service="selfcheck")


class SelfCheckFailed(RuntimeError):
    pass


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    result = runtime.memory().selfcheck()
    metrics.add_metric(name="SelfCheckSuccess", unit="Count", value=1 if result["ok"] else 0)
    metrics.add_metric(name="SelfCheckLatency", unit="Milliseconds", value=result["latency_ms"])
    logger.info("selfcheck", extra={"result": result})
    if not result["ok"]:
        raise SelfCheckFailed(result.get("error", "selfcheck failed"))
    return result
