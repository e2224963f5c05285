"""SQS consumer: index the originals named by each message, reporting partial batch failures.

Idempotency comes from the data, not from a lock table: memory ids are fixed when the
API stores the originals (before the message exists), and every index write replaces
rows by id, so a duplicate delivery rewrites the same rows and never adds a memory.
A message whose originals cannot be loaded or indexed is reported as failed; SQS
retries it and, after ``max_receive_count`` receives, moves it to the DLQ.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import runtime
from agent_memory.errors import NotFoundError
from agent_memory.model import Original
from agent_memory.queue import IndexJob

logger = Logger(service="agent-memory-ingest")
tracer = Tracer(service="agent-memory-ingest")
metrics = Metrics(namespace="AgentMemory", service="ingest")
processor = BatchProcessor(event_type=EventType.SQS)


def index_job(job: IndexJob) -> int:
    m = runtime.memory()
    originals = []
    for mid in job.memory_ids:
        doc = m.store.get_json(m.storage_key(job.user_id, mid))  # NotFound -> retried, then DLQ
        originals.append(Original.model_validate(doc))
    m.index_originals(originals)
    return len(originals)


@tracer.capture_method(capture_response=False)
def record_handler(record: SQSRecord) -> None:
    job = IndexJob.from_body(record.body)
    try:
        n = index_job(job)
    except NotFoundError:
        logger.error("original missing for message", extra={"message_id": record.message_id})
        raise
    metrics.add_metric(name="MemoriesIndexed", unit="Count", value=n)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return dict(process_partial_response(event=event, record_handler=record_handler, processor=processor,
                                         context=context))
