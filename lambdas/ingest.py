"""SQS consumer: index the originals named by each message, reporting partial batch failures.

The whole batch is indexed in one go — its originals read in parallel, embedded in one call,
written to the index in one request — because per-write round trips, not embedding, bound the
worker (on a Milvus server: 63 memories/s one message at a time). A message that cannot be parsed
or whose original cannot be read fails alone (``batchItemFailures``) while the rest of the batch
is indexed: SQS retries it and, after ``max_receive_count`` receives, moves it to the DLQ. Should
the index write itself fail, the batch is processed again message by message (Powertools' partial
batch response), so a message the index refuses also fails alone.

Idempotency comes from the data, not from a lock table: memory ids are fixed when the
API stores the originals (before the message exists), and every index write replaces
rows by id, so a duplicate delivery — or the record-by-record pass after a failed batch —
rewrites the same rows and never adds a memory.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools import Logger, Metrics, Tracer
from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import runtime
from agent_memory.errors import NotFoundError
from agent_memory.queue import IndexJob
from lambdas import TRACED_MODULES

logger = Logger(service="agent-memory-ingest")
tracer = Tracer(service="agent-memory-ingest", patch_modules=TRACED_MODULES)
metrics = Metrics(namespace="AgentMemory", service="ingest")
processor = BatchProcessor(event_type=EventType.SQS)


def index_job(job: IndexJob) -> int:
    return runtime.memory().index_stored([(job.user_id, job.memory_ids)])


def index_batch(event: dict[str, Any]) -> tuple[int, list[str]]:
    """Every readable message of the batch in one index write; returns the count indexed and the
    message ids that failed (unparsable body, original missing or unreadable). Raises when the
    index write fails."""
    records = [SQSRecord(r) for r in event["Records"]]
    jobs: list[tuple[int, IndexJob]] = []
    failed: list[str] = []
    for i, record in enumerate(records):
        try:
            jobs.append((i, IndexJob.from_body(record.body)))
        except ValueError:  # json.JSONDecodeError is one
            logger.error("unparsable message", extra={"message_id": record.message_id})
            failed.append(record.message_id)
    memory = runtime.memory()
    originals, unreadable = memory.read_stored([(job.user_id, job.memory_ids) for _, job in jobs])
    for pos, exc in unreadable.items():
        message_id = records[jobs[pos][0]].message_id
        logger.error("original unreadable for message", extra={"message_id": message_id, "error": str(exc)})
        failed.append(message_id)
    memory.index_originals(originals)
    return len(originals), failed


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
    try:
        n, failed = index_batch(event)
    except Exception:
        logger.warning("batch failed as a whole; indexing it message by message", exc_info=True)
        return dict(process_partial_response(event=event, record_handler=record_handler, processor=processor,
                                             context=context))
    metrics.add_metric(name="MemoriesIndexed", unit="Count", value=n)
    if failed:
        metrics.add_metric(name="MessagesFailed", unit="Count", value=len(failed))
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in failed]}
