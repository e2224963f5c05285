"""Alarms (errors, throttles, plus those passed in) to an encrypted SNS topic, and a small dashboard."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subs
from aws_cdk import aws_sqs as sqs
from constructs import Construct


class Monitoring(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, functions: list[lambda_.Function],
                 api: apigw.RestApi, queue: sqs.IQueue, dlq: sqs.IQueue, extra_alarms: list[cw.Alarm],
                 alarm_email: str | None) -> None:
        super().__init__(scope, construct_id)
        self.topic = sns.Topic(self, "Alarms", enforce_ssl=True,
                               master_key=kms.Alias.from_alias_name(self, "SnsKey", "alias/aws/sns"))
        if alarm_email:
            self.topic.add_subscription(subs.EmailSubscription(alarm_email))
        self.alarms = list(extra_alarms)
        for fn in functions:
            name = fn.node.id
            self.alarms.append(fn.metric_errors(period=Duration.minutes(5)).create_alarm(
                self, f"{name}Errors", threshold=1, evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                alarm_description=f"{name} function errors"))
            self.alarms.append(fn.metric_throttles(period=Duration.minutes(5)).create_alarm(
                self, f"{name}Throttles", threshold=1, evaluation_periods=1,
                treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
                alarm_description=f"{name} function throttled"))
        for alarm in self.alarms:
            alarm.add_alarm_action(cw_actions.SnsAction(self.topic))
        dash = cw.Dashboard(self, "Dashboard", dashboard_name="agent-memory")
        dash.add_widgets(
            cw.GraphWidget(title="API latency p50/p95", left=[
                api.metric_latency(statistic="p50"), api.metric_latency(statistic="p95")]),
            cw.GraphWidget(title="API 4xx/5xx", left=[api.metric_client_error(), api.metric_server_error()]),
            cw.GraphWidget(title="Function errors", left=[fn.metric_errors() for fn in functions]),
            cw.GraphWidget(title="Write queue / DLQ depth", left=[
                queue.metric_approximate_number_of_messages_visible(),
                dlq.metric_approximate_number_of_messages_visible()]),
            cw.GraphWidget(title="Self-check success", left=[cw.Metric(
                namespace="AgentMemory", metric_name="SelfCheckSuccess", dimensions_map={"service": "selfcheck"},
                statistic="Minimum", period=Duration.hours(1))]),
        )
