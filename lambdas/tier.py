"""Daily index tiering (its own EventBridge rule): moves old, unimportant, unrecalled memories out
of the vector index into the cold tier; see :mod:`agent_memory.tiering`."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import runtime
from agent_memory.tiering import tier_all

logger = Logger(service="agent-memory-tier")
tracer = Tracer(service="agent-memory-tier")
metrics = Metrics(namespace="AgentMemory", service="tier")


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = asdict(tier_all(runtime.memory()))
    report.pop("per_user")
    metrics.add_metric(name="MemoriesMovedCold", unit="Count", value=report["moved_cold"])
    logger.info("tier", extra={"report": report})
    return report
