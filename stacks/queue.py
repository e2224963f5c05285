"""The write queue, its dead-letter queue and the DLQ alarm."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as sources
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from agent_memory.aws_resources import DLQ_RETENTION_S
from agent_memory.config import Settings


class WriteQueue(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, settings: Settings) -> None:
        super().__init__(scope, construct_id)
        self.settings = settings
        self.dlq = sqs.Queue(
            self,
            "DeadLetters",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.seconds(DLQ_RETENTION_S),
        )
        self.queue = sqs.Queue(
            self,
            "Writes",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            visibility_timeout=Duration.seconds(settings.visibility_timeout_s),
            dead_letter_queue=sqs.DeadLetterQueue(queue=self.dlq, max_receive_count=settings.max_receive_count),
        )
        self.dlq_alarm = cw.Alarm(
            self,
            "DeadLettersNotEmpty",
            metric=self.dlq.metric_approximate_number_of_messages_visible(period=Duration.minutes(1)),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            alarm_description="Write messages failed max_receive_count times; inspect the DLQ, then start a redrive.",
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )

    def feed(self, fn: lambda_.IFunction) -> None:
        """Deliver batches to ``fn``; failed items come back alone (ReportBatchItemFailures)."""
        fn.add_event_source(
            sources.SqsEventSource(
                self.queue,
                batch_size=self.settings.ingest_batch_size,
                max_batching_window=Duration.seconds(self.settings.ingest_batching_window_s),
                max_concurrency=self.settings.ingest_max_concurrency,
                report_batch_item_failures=True,
            )
        )
