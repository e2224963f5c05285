"""Daily maintenance (its own EventBridge rule): first erases expired memories (see
:mod:`agent_memory.expiry`), then moves old, unimportant, unrecalled memories out of the vector
index into the cold tier (see :mod:`agent_memory.tiering`). Reports both counts."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import runtime
from agent_memory.expiry import expire_all
from agent_memory.tiering import tier_all
from lambdas import TRACED_MODULES

logger = Logger(service="agent-memory-tier")
tracer = Tracer(service="agent-memory-tier", patch_modules=TRACED_MODULES)
metrics = Metrics(namespace="AgentMemory", service="tier")


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    memory = runtime.memory()
    expired = asdict(expire_all(memory))
    expired.pop("per_user")
    metrics.add_metric(name="MemoriesExpired", unit="Count", value=expired["expired"])
    report = asdict(tier_all(memory))
    report.pop("per_user")
    metrics.add_metric(name="MemoriesMovedCold", unit="Count", value=report["moved_cold"])
    report["expired"] = expired
    logger.info("maintenance", extra={"report": report})
    return report
